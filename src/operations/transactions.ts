/** Transactions: an account's ledger rows, newest first, with what is due at the instant of the read written first. */
import type { Page, PageResult, ReadTx, TransactionRow } from '../store/types.js';
import type { Deps } from './deps.js';
import { ownedAccount, unknownCursor } from './lookups.js';

/**
 * An account's transactions, newest first (of one denomination, or all). What is due on its
 * balances now (grant starts and expiries, expired holds) is written first, so that a list read at
 * an instant holds the transactions of that instant.
 */
export async function listTransactions(
  deps: Deps,
  companyId: string,
  accountId: string,
  denomination: string | undefined,
  page: Page,
): Promise<PageResult<TransactionRow>> {
  const guard = (tx: ReadTx) => ownedAccount(tx, companyId, accountId);
  await deps.ledger.writeDue(deps.store, accountId, denomination, deps.clock.now(), guard);
  const result = await deps.store.read(async (tx) => {
    await guard(tx);
    return tx.transactions.listTransactions(accountId, denomination, page);
  });
  return result ?? unknownCursor();
}
