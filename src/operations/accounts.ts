/** Accounts, balances, adjustments and prices of a company. */
import { balanceKey } from '../domain/events.js';
import { metadataViolation } from '../domain/metadata.js';
import { OutcomeError, fail } from '../domain/outcome.js';
import { parseUnitAmount } from '../domain/pricing.js';
import { AMOUNT_MAX } from '../domain/money.js';
import { newId } from '../lib/ids.js';
import type { AccountRow, BalanceRow, Page, PageResult, PriceRow, Tx } from '../store/types.js';
import type { Deps } from './deps.js';
import { expireHolds } from './holds.js';
import { lockBalanceMap } from './ledger.js';
import { applyPlanToNewAccount } from './plans.js';

export interface AccountInput {
  name?: string;
  email?: string;
  metadata?: Record<string, unknown>;
  processor_id?: string;
  plan_id?: string;
}

export interface AccountView {
  account: AccountRow;
  balances: BalanceRow[];
}

function unknownCursor(): never {
  fail('unknown_cursor', 'starting_after names no item of this list', 'starting_after');
}

async function ownedAccount(
  tx: { findAccount: Tx['findAccount'] },
  companyId: string,
  accountId: string,
): Promise<AccountRow> {
  const account = await tx.findAccount(companyId, accountId);
  if (!account) fail('not_found', `no such account: ${accountId}`, 'account_id');
  return account;
}

/** Metadata beyond the limits (domain/metadata.ts) is refused before anything is written. */
function checkMetadata(metadata: unknown): void {
  if (metadata === undefined) return;
  const refused = metadataViolation(metadata, 'metadata');
  if (refused) throw new OutcomeError(refused);
}

export async function createAccount(deps: Deps, companyId: string, input: AccountInput): Promise<AccountView> {
  checkMetadata(input.metadata);
  return deps.store.write(async (tx) => {
    const account: AccountRow = {
      accountId: newId('a'),
      companyId,
      name: input.name ?? null,
      email: input.email ?? null,
      metadata: input.metadata ?? null,
      processorId: input.processor_id ?? null,
      planId: input.plan_id ?? null,
      createdAtMs: deps.clock.now(),
    };
    await tx.insertAccount(account);
    if (input.plan_id !== undefined)
      return {
        account,
        balances: await applyPlanToNewAccount(deps.ledger.begin(tx, account.createdAtMs), account, input.plan_id),
      };
    return { account, balances: [] };
  });
}

export async function getAccount(deps: Deps, companyId: string, accountId: string): Promise<AccountView> {
  await expireDueHoldsOfAccount(deps, companyId, accountId);
  return deps.store.read(async (tx) => {
    const account = await ownedAccount(tx, companyId, accountId);
    return { account, balances: await tx.listBalances(accountId) };
  });
}

export async function updateAccount(
  deps: Deps,
  companyId: string,
  accountId: string,
  input: Omit<AccountInput, 'plan_id'>,
): Promise<AccountView> {
  checkMetadata(input.metadata);
  return deps.store.write(async (tx) => {
    const current = await ownedAccount(tx, companyId, accountId);
    const account: AccountRow = {
      ...current,
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.email !== undefined ? { email: input.email } : {}),
      ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
      ...(input.processor_id !== undefined ? { processorId: input.processor_id } : {}),
    };
    await tx.updateAccount(account);
    // The card on file is a payment method of the previous customer: the new customer cannot be
    // charged with it. Charges due meanwhile wait for a card (requires_payment_method or
    // no_card_on_file), as for an account that never had one.
    if (account.processorId !== current.processorId) await tx.deleteCard(accountId);
    return { account, balances: await tx.listBalances(accountId) };
  });
}

/** The company's accounts, newest first; with `q`, only those it matches (searchAccounts in the store). */
export async function listAccounts(
  deps: Deps,
  companyId: string,
  page: Page,
  q?: string,
): Promise<PageResult<AccountRow>> {
  const found = await deps.store.read((tx) =>
    q === undefined ? tx.listAccounts(companyId, page) : tx.searchAccounts(companyId, q, page),
  );
  return found ?? unknownCursor();
}

export async function createBalance(
  deps: Deps,
  companyId: string,
  accountId: string,
  denomination: string,
  initialAmount: number,
): Promise<BalanceRow> {
  return deps.store.write(async (tx) => {
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
    const locked = await lockBalanceMap(tx, [{ accountId, denomination }]);
    if (initialAmount === 0) return locked.get(key)!;
    const after = await deps.ledger
      .begin(tx, now)
      .post(
        locked,
        [{ accountId, denomination, amount: initialAmount, kind: 'grant', reason: 'initial grant' }],
        new Map([[key, { amount: initialAmount, pending: 0 }]]),
      );
    return after.balances.get(key)!;
  });
}

/** A balance as read now: holds that expired are cancelled first, even before the sweeper runs. */
export async function getBalance(
  deps: Deps,
  companyId: string,
  accountId: string,
  denomination: string,
): Promise<BalanceRow> {
  await expireDueHoldsOfAccount(deps, companyId, accountId, denomination);
  return deps.store.read(async (tx) => {
    await ownedAccount(tx, companyId, accountId);
    const balance = await tx.findBalance(accountId, denomination);
    if (!balance) fail('not_found', `the account has no balance of denomination "${denomination}"`, 'denomination');
    return balance;
  });
}

export async function expireDueHoldsOfAccount(
  deps: Deps,
  companyId: string,
  accountId: string,
  denomination?: string,
): Promise<void> {
  const now = deps.clock.now();
  const due = await deps.store.read(async (tx) => {
    const account = await tx.findAccount(companyId, accountId);
    if (!account) return false;
    const keys =
      denomination !== undefined
        ? [{ accountId, denomination }]
        : (await tx.listBalances(accountId)).map((b) => ({ accountId, denomination: b.denomination }));
    return (await tx.findExpiredHolds(now, 1, keys)).length > 0;
  });
  if (!due) return;
  await deps.store.write(async (tx) => {
    const keys =
      denomination !== undefined
        ? [{ accountId, denomination }]
        : (await tx.listBalances(accountId)).map((b) => ({ accountId, denomination: b.denomination }));
    await expireHolds(deps.ledger.begin(tx, now), keys);
  });
}

export async function adjustBalance(
  deps: Deps,
  companyId: string,
  accountId: string,
  denomination: string,
  input: { amount: number; reason?: string },
): Promise<BalanceRow> {
  if (input.amount === 0) fail('adjustment_amount_must_not_be_zero', 'an adjustment must change the balance', 'amount');
  return deps.store.write(async (tx) => {
    await ownedAccount(tx, companyId, accountId);
    const key = balanceKey(accountId, denomination);
    const locked = await lockBalanceMap(tx, [{ accountId, denomination }]);
    const before = locked.get(key);
    if (!before) fail('not_found', `the account has no balance of denomination "${denomination}"`, 'denomination');
    const amount = before.amount + input.amount;
    if (Math.abs(amount) > AMOUNT_MAX || Math.abs(amount - before.pending) > AMOUNT_MAX)
      fail('amount_out_of_range', 'the adjustment would take the balance beyond the exact integer range', 'amount');
    const after = await deps.ledger
      .begin(tx, deps.clock.now())
      .post(
        locked,
        [{ accountId, denomination, amount: input.amount, kind: 'adjustment', reason: input.reason ?? null }],
        new Map([[key, { amount: input.amount, pending: 0 }]]),
      );
    return after.balances.get(key)!;
  });
}

export async function putPrice(
  deps: Deps,
  companyId: string,
  type: string,
  input: { denomination: string; unit_amount: string | number },
): Promise<PriceRow> {
  const unit = parseUnitAmount(input.unit_amount);
  if (!unit.ok) fail(unit.reason, unit.message, unit.param);
  return deps.store.write(async (tx) => {
    const row: PriceRow = {
      companyId,
      type,
      denomination: input.denomination,
      unitAmount: unit.value,
      updatedAtMs: deps.clock.now(),
    };
    await tx.upsertPrice(row);
    return row;
  });
}

export async function listPrices(deps: Deps, companyId: string, page: Page): Promise<PageResult<PriceRow>> {
  return (await deps.store.read((tx) => tx.listPrices(companyId, page))) ?? unknownCursor();
}

export async function listTransactions(
  deps: Deps,
  companyId: string,
  accountId: string,
  denomination: string | undefined,
  page: Page,
) {
  const result = await deps.store.read(async (tx) => {
    await ownedAccount(tx, companyId, accountId);
    return tx.listTransactions(accountId, denomination, page);
  });
  return result ?? unknownCursor();
}
