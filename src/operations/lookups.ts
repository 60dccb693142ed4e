/** Look-ups several operations share: a company's own account, and the refusal of a cursor no list knows. */
import { fail } from '../domain/outcome.js';
import type { AccountRow, ReadTx } from '../store/types.js';

/** The list's cursor names nothing of it (400 unknown_cursor). */
export function unknownCursor(): never {
  fail('unknown_cursor', 'starting_after names no item of this list', 'starting_after');
}

/** The company's account, or 404: another company's account is answered like a missing one. */
export async function ownedAccount(tx: ReadTx, companyId: string, accountId: string): Promise<AccountRow> {
  const account = await tx.accounts.findAccount(companyId, accountId);
  if (!account) fail('not_found', `no such account: ${accountId}`, 'account_id');
  return account;
}
