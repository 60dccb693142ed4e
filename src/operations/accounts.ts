/** Accounts of a company: created (with a plan's balances), read, changed, listed. */
import { metadataViolation } from '../domain/metadata.js';
import { OutcomeError } from '../domain/outcome.js';
import { newId } from '../lib/ids.js';
import type { AccountRow, BalanceRow, Page, PageResult } from '../store/types.js';
import type { Command, Deps } from './deps.js';
import { ownedAccount, unknownCursor } from './lookups.js';
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

/** Metadata beyond the limits (domain/metadata.ts) is refused before anything is written. */
function checkMetadata(metadata: unknown): void {
  if (metadata === undefined) return;
  const refused = metadataViolation(metadata, 'metadata');
  if (refused) throw new OutcomeError(refused);
}

export async function createAccount(deps: Deps, companyId: string, input: AccountInput): Promise<Command<AccountView>> {
  checkMetadata(input.metadata);
  return async (tx) => {
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
    await tx.accounts.insertAccount(account);
    if (input.plan_id !== undefined)
      return {
        account,
        balances: await applyPlanToNewAccount(deps.ledger, tx, account.createdAtMs, account, input.plan_id),
      };
    return { account, balances: [] };
  };
}

/** An account with its balances as they are now (the ledger's view: one read, nothing written). */
export async function getAccount(deps: Deps, companyId: string, accountId: string): Promise<AccountView> {
  const nowMs = deps.clock.now();
  return deps.store.read(async (tx) => {
    const account = await ownedAccount(tx, companyId, accountId);
    return { account, balances: await deps.ledger.viewAccounts(tx, [accountId], nowMs) };
  });
}

export async function updateAccount(
  deps: Deps,
  companyId: string,
  accountId: string,
  input: Omit<AccountInput, 'plan_id'>,
): Promise<Command<AccountView>> {
  checkMetadata(input.metadata);
  return async (tx) => {
    const current = await ownedAccount(tx, companyId, accountId);
    const account: AccountRow = {
      ...current,
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.email !== undefined ? { email: input.email } : {}),
      ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
      ...(input.processor_id !== undefined ? { processorId: input.processor_id } : {}),
    };
    await tx.accounts.updateAccount(account);
    // The card on file is a payment method of the previous customer: the new customer cannot be
    // charged with it. Charges due meanwhile wait for a card (requires_payment_method or
    // no_card_on_file), as for an account that never had one.
    if (account.processorId !== current.processorId) await tx.cards.deleteCard(accountId);
    return { account, balances: await deps.ledger.viewAccounts(tx, [accountId], deps.clock.now()) };
  };
}

/**
 * The company's accounts, newest first, each with its balances as they are now (one view for the
 * page); with `q`, only those it matches (searchAccounts in the store).
 */
export async function listAccounts(
  deps: Deps,
  companyId: string,
  page: Page,
  q?: string,
): Promise<PageResult<AccountView>> {
  const nowMs = deps.clock.now();
  const found = await deps.store.read(async (tx) => {
    const accounts = await (q === undefined
      ? tx.accounts.listAccounts(companyId, page)
      : tx.accounts.searchAccounts(companyId, q, page));
    if (!accounts) return undefined;
    const byAccount = new Map<string, BalanceRow[]>();
    for (const b of await deps.ledger.viewAccounts(
      tx,
      accounts.rows.map((a) => a.accountId),
      nowMs,
    )) {
      const list = byAccount.get(b.accountId) ?? [];
      list.push(b);
      byAccount.set(b.accountId, list);
    }
    return {
      rows: accounts.rows.map((account) => ({ account, balances: byAccount.get(account.accountId) ?? [] })),
      hasMore: accounts.hasMore,
    };
  });
  return found ?? unknownCursor();
}
