/**
 * Accounts and balances: a company's end users and what they hold of each denomination. Balances
 * change only through `applyBalanceDeltas` (or `writeLedger`, events/types.ts) after
 * `lockBalances`, with ledger rows appended in the same transaction.
 */
import type { Page, PageResult } from '../common.js';

export interface AccountRow {
  accountId: string;
  companyId: string;
  name: string | null;
  email: string | null;
  metadata: Record<string, unknown> | null;
  processorId: string | null;
  planId: string | null;
  createdAtMs: number;
}

export interface BalanceRow {
  accountId: string;
  companyId: string;
  denomination: string;
  amount: number;
  pending: number;
  refillThreshold: number | null;
  refillAmount: number | null;
  refillUsdCents: number | null;
  refillOnDay: string | null;
  createdAtMs: number;
  // --- money movement: filled by every read of a balance row (their columns' defaults on a new balance)
  /** Monthly refill switched on. */
  refillMonthly: boolean;
  /** Start instant of the monthly schedule (the day rule counts from it). */
  monthlyAnchorAtMs: number | null;
  /** When the next monthly refill is due. */
  nextRefillAtMs: number | null;
  /** The refill charge in flight for this balance (at most one), or null. */
  refillChargeId: string | null;
  consecutiveDeclines: number;
  /** Threshold and monthly refills stopped after repeated declines, until a new card is attached. */
  autoRefillPaused: boolean;
  /**
   * Plan balances: the included amount per period, the alert percentage, and whether it was
   * alerted this period.
   */
  planIncluded: number | null;
  planAlertPercentage: string | null;
  planAlerted: boolean;
}

/** The money-movement fields of a balance row: set by charges/ and plans/ methods, never by insertBalance. */
type BalanceMoneyFields =
  | 'refillMonthly'
  | 'monthlyAnchorAtMs'
  | 'nextRefillAtMs'
  | 'refillChargeId'
  | 'consecutiveDeclines'
  | 'autoRefillPaused'
  | 'planIncluded'
  | 'planAlertPercentage'
  | 'planAlerted';

/**
 * A balance as code builds it for `insertBalance`: the money-movement fields may be left out
 * (insertBalance writes none of them; a new balance starts with their columns' defaults).
 */
export type NewBalanceRow = Omit<BalanceRow, BalanceMoneyFields> & Partial<Pick<BalanceRow, BalanceMoneyFields>>;

export interface BalanceDelta {
  accountId: string;
  denomination: string;
  amount: number;
  pending: number;
}

export interface BalanceKey {
  accountId: string;
  denomination: string;
}

export interface AccountsReadTx {
  findAccount(companyId: string, accountId: string): Promise<AccountRow | undefined>;
  /** The owning company of each existing account among `accountIds` (one query for a whole ingest group). */
  findAccountOwners(accountIds: string[]): Promise<{ accountId: string; companyId: string }[]>;
  /** Paged lists resolve to undefined when `startingAfter` names no row of the list. */
  listAccounts(companyId: string, page: Page): Promise<PageResult<AccountRow> | undefined>;
  /**
   * The accounts of listAccounts() that match `q` (accountSearch() in sql-core.ts says how), in the
   * same order and paging; a cursor is any account of the company.
   */
  searchAccounts(companyId: string, q: string, page: Page): Promise<PageResult<AccountRow> | undefined>;
  findBalance(accountId: string, denomination: string): Promise<BalanceRow | undefined>;
  listBalances(accountId: string): Promise<BalanceRow[]>;
  /** The balances of several accounts (a page of them) in one query, by account then denomination. */
  listBalancesOfAccounts(accountIds: string[]): Promise<BalanceRow[]>;
}

export interface AccountsTx extends AccountsReadTx {
  insertAccount(row: AccountRow): Promise<void>;
  updateAccount(row: AccountRow): Promise<void>;
  /** Inserts a zero balance; returns false when that balance already exists. */
  insertBalance(row: NewBalanceRow): Promise<boolean>;
  /**
   * Locks the balances (PostgreSQL: `SELECT … FOR UPDATE` in sorted key order) and returns
   * them. Missing keys are simply absent from the result.
   */
  lockBalances(keys: BalanceKey[]): Promise<BalanceRow[]>;
  /**
   * `amount = amount + Δ, pending = pending + Δ` for each (already locked) balance; returns each
   * changed balance once, as after every delta.
   */
  applyBalanceDeltas(deltas: BalanceDelta[]): Promise<BalanceRow[]>;
}
