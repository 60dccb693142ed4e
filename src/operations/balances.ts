/** Balances of an account: created (with an initial grant), read, adjusted. */
import { balanceKey } from '../domain/events.js';
import { AMOUNT_MAX } from '../domain/money.js';
import { fail } from '../domain/outcome.js';
import type { BalanceRow } from '../store/types.js';
import type { Command, Deps } from './deps.js';
import { applyDueOfAccount } from './events.js';
import { grantEntry, headroom, takeEntry } from './grants.js';
import { lotsOf } from './ledger.js';
import { ownedAccount } from './lookups.js';

export async function createBalance(
  deps: Deps,
  companyId: string,
  accountId: string,
  denomination: string,
  initialAmount: number,
): Promise<Command<BalanceRow>> {
  return async (tx) => {
    await ownedAccount(tx, companyId, accountId);
    const now = deps.clock.now();
    const created = await tx.insertBalance({
      accountId,
      companyId,
      denomination,
      amount: 0,
      pending: 0,
      refillThreshold: null,
      refillAmount: null,
      refillUsdCents: null,
      refillOnDay: null,
      createdAtMs: now,
    });
    if (!created)
      fail(
        'balance_already_exists',
        `the account already has a balance of denomination "${denomination}"`,
        'denomination',
      );
    const key = balanceKey(accountId, denomination);
    const p = deps.ledger.begin(tx, now);
    const locked = await p.lock([{ accountId, denomination }]);
    if (initialAmount === 0) return locked.get(key)!;
    const entry = grantEntry(
      { companyId, accountId, denomination },
      { amount: initialAmount, source: 'initial' },
      now,
      'grant',
      'initial grant',
    );
    return (await p.post(locked, [entry])).balances.get(key)!;
  };
}

/** A balance as read now: holds that expired are cancelled first, even before the sweeper runs. */
export async function getBalance(
  deps: Deps,
  companyId: string,
  accountId: string,
  denomination: string,
): Promise<BalanceRow> {
  await applyDueOfAccount(deps, companyId, accountId, denomination);
  return deps.store.read(async (tx) => {
    await ownedAccount(tx, companyId, accountId);
    const balance = await tx.findBalance(accountId, denomination);
    if (!balance) fail('not_found', `the account has no balance of denomination "${denomination}"`, 'denomination');
    return balance;
  });
}

export async function adjustBalance(
  deps: Deps,
  companyId: string,
  accountId: string,
  denomination: string,
  input: { amount: number; reason?: string },
): Promise<Command<BalanceRow>> {
  if (input.amount === 0) fail('adjustment_amount_must_not_be_zero', 'an adjustment must change the balance', 'amount');
  return async (tx) => {
    await ownedAccount(tx, companyId, accountId);
    const key = balanceKey(accountId, denomination);
    const now = deps.clock.now();
    const p = deps.ledger.begin(tx, now);
    const locked = await p.lock([{ accountId, denomination }]);
    const before = locked.get(key);
    if (!before) fail('not_found', `the account has no balance of denomination "${denomination}"`, 'denomination');
    const amount = before.amount + input.amount;
    if (
      Math.abs(amount) > AMOUNT_MAX ||
      Math.abs(amount - before.pending) > AMOUNT_MAX ||
      input.amount > headroom(lotsOf(before))
    )
      fail('amount_out_of_range', 'the adjustment would take the balance beyond the exact integer range', 'amount');
    const reason = input.reason ?? null;
    // A credit is a grant of its own (promotional, priority 50, no expiry); a debit takes units in drawing order.
    const entry =
      input.amount > 0
        ? grantEntry(before, { amount: input.amount, source: 'adjustment' }, now, 'adjustment', reason)
        : takeEntry(before, -input.amount, now, 'adjustment', { reason });
    return (await p.post(locked, [entry])).balances.get(key)!;
  };
}
