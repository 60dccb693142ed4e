/** Balances of an account: created (with an initial grant), read as they are now, adjusted. */
import { AMOUNT_MAX } from '../domain/money.js';
import { fail, failure, type Outcome } from '../domain/outcome.js';
import { balanceKey } from '../lib/keys.js';
import { grantEntry, headroom, takeEntry } from '../ledger/grants.js';
import type { Ledger } from '../ledger/ledger.js';
import type { BalanceRow, ReadTx } from '../store/types.js';
import { AccountOwners } from './account-owners.js';
import type { Command, Deps } from './deps.js';
import { ownedAccount } from './lookups.js';

function noBalance(denomination: string): never {
  fail('not_found', `the account has no balance of denomination "${denomination}"`, 'denomination');
}

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
    const created = await tx.balances.insertBalance({
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
    const p = await deps.ledger.open(tx, [{ accountId, denomination }], now);
    if (initialAmount === 0) return p.balance(accountId, denomination)!;
    const entry = grantEntry(
      { companyId, accountId, denomination },
      { amount: initialAmount, source: 'initial' },
      now,
      'grant',
      'initial grant',
    );
    return (await p.post([entry])).balances.get(balanceKey(accountId, denomination))!;
  };
}

/** A company's read of one balance. */
export interface BalanceRead {
  companyId: string;
  accountId: string;
  denomination: string;
}

/** How the server answers balance reads: several in one read (src/ingest/group-commits.ts). */
export interface BalanceReads {
  read(req: BalanceRead): Promise<Outcome<BalanceRow>>;
}

/**
 * Balance reads, several in one read of the store (the group read of balances): each balance as it is
 * now, what is due (grant starts and expiries, holds that outlived their hour) applied in the ledger's
 * view, nothing written. Another company's account is answered like a missing one.
 */
export async function readBalanceGroup(
  ledger: Ledger,
  tx: ReadTx,
  nowMs: number,
  requests: BalanceRead[],
  accountOwners: AccountOwners = new AccountOwners(),
): Promise<Outcome<BalanceRow>[]> {
  const owners = await accountOwners.of(
    tx,
    requests.map((r) => r.accountId),
  );
  const owned = requests.filter((r) => owners.get(r.accountId) === r.companyId);
  const balances = await ledger.view(tx, owned, nowMs);
  return requests.map((r) => {
    if (owners.get(r.accountId) !== r.companyId)
      return failure('not_found', `no such account: ${r.accountId}`, 'account_id');
    const b = balances.get(balanceKey(r.accountId, r.denomination));
    return b
      ? { ok: true, value: b }
      : failure('not_found', `the account has no balance of denomination "${r.denomination}"`, 'denomination');
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
    const now = deps.clock.now();
    const p = await deps.ledger.open(tx, [{ accountId, denomination }], now);
    const before = p.balance(accountId, denomination) ?? noBalance(denomination);
    const amount = before.amount + input.amount;
    if (
      Math.abs(amount) > AMOUNT_MAX ||
      Math.abs(amount - before.pending) > AMOUNT_MAX ||
      input.amount > headroom(before)
    )
      fail('amount_out_of_range', 'the adjustment would take the balance beyond the exact integer range', 'amount');
    const reason = input.reason ?? null;
    // A credit is a grant of its own (promotional, priority 50, no expiry); a debit takes units in drawing order.
    const entry =
      input.amount > 0
        ? grantEntry(before, { amount: input.amount, source: 'adjustment' }, now, 'adjustment', reason)
        : takeEntry(before, -input.amount, now, 'adjustment', { reason });
    return (await p.post([entry])).balances.get(balanceKey(accountId, denomination))!;
  };
}

/** `PUT …/balance/{denomination}/limits`: a field left out keeps its value; null removes the limit. */
export interface SpendLimitsInput {
  daily?: number | null;
  monthly?: number | null;
}

/**
 * Sets a balance's spend limits, its row locked (a posting in flight on it finishes first). A limit below
 * the spend already taken is accepted: usage is refused until its window resets (domain/spend.ts).
 */
export async function setSpendLimits(
  deps: Deps,
  companyId: string,
  accountId: string,
  denomination: string,
  input: SpendLimitsInput,
): Promise<Command<BalanceRow>> {
  return async (tx) => {
    await ownedAccount(tx, companyId, accountId);
    const p = await deps.ledger.open(tx, [{ accountId, denomination }], deps.clock.now());
    const before = p.balance(accountId, denomination) ?? noBalance(denomination);
    const limits = {
      daily: input.daily !== undefined ? input.daily : before.limits.daily,
      monthly: input.monthly !== undefined ? input.monthly : before.limits.monthly,
    };
    await tx.balances.setSpendLimits(accountId, denomination, limits);
    return { ...before, limits };
  };
}
