/**
 * Events and the ledger: usage events (their holds included), the prices that turn an event's
 * quantity into its cost, the appended ledger transactions, `writeLedger` (the ingest path's
 * whole write) and the ledger audit.
 *
 * Prices sit here rather than with accounts: a price belongs to a company, not to an account or
 * a balance, and it is read only to cost events (`findPrices`, once per ingest group, next to
 * `findEventsByIds`).
 */
import type { BalanceDelta, BalanceKey, BalanceRow } from '../accounts/types.js';
import type { AuditViolation, Page, PageResult } from '../common.js';

export interface PriceRow {
  companyId: string;
  type: string;
  denomination: string;
  unitAmount: string;
  updatedAtMs: number;
}

export type EventStateValue = 'pending' | 'complete' | 'cancelled';

export interface EventRow {
  eventId: string;
  companyId: string;
  accountId: string;
  clientSupplied: boolean;
  type: string;
  quantity: number;
  costAmount: number;
  denomination: string;
  metadata: Record<string, unknown> | null;
  state: EventStateValue;
  contentHash: string | null;
  /** When the usage happened: the request's `timestamp`, else when it was recorded. */
  occurredAtMs: number;
  createdAtMs: number;
  updatedAtMs: number;
  expiresAtMs: number | null;
}

export type TransactionKind = 'usage' | 'grant' | 'refill' | 'adjustment' | 'proration' | 'period_reset';

export interface TransactionRow {
  transactionId: string;
  accountId: string;
  denomination: string;
  amount: number;
  balanceAfter: number;
  kind: TransactionKind;
  eventId: string | null;
  reason: string | null;
  createdAtMs: number;
}

/**
 * Usage of one account, denomination and type in one UTC hour: complete events, the exact decimal
 * sum of their quantities, the sum of their costs. As written, a group's addition; as read, the
 * rollup (the company-wide rollup has no account: `accountId` null).
 */
export interface UsageRow {
  companyId: string;
  accountId: string | null;
  denomination: string;
  type: string;
  hourMs: number;
  events: number;
  quantity: string;
  cost: number;
}

/** Which rollup rows a usage query reads. */
export interface UsageFilter {
  companyId: string;
  /** One account's rows (the caller has checked that it is the company's). */
  accountId?: string;
  /** Rows per account (from the per-account rollup) even without `accountId`. */
  byAccount: boolean;
  fromMs: number;
  toMs: number;
  types?: string[];
  denominations?: string[];
}

/** The filters of an event list; `fromMs` inclusive, `toMs` exclusive on `occurredAtMs`. */
export interface EventFilter {
  /** One account's events (the caller has checked that it is the company's). */
  accountId?: string;
  type?: string;
  state?: EventStateValue;
  denomination?: string;
  fromMs?: number;
  toMs?: number;
}

/** An event as a company names it. */
export interface EventKey {
  companyId: string;
  eventId: string;
}

export interface EventsReadTx {
  listPrices(companyId: string, page: Page): Promise<PageResult<PriceRow> | undefined>;
  findPrices(companyId: string, types: string[]): Promise<PriceRow[]>;

  findEvent(companyId: string, eventId: string): Promise<EventRow | undefined>;
  /** Events of the company with these ids (for client-id de-duplication). */
  findEventsByIds(companyId: string, eventIds: string[]): Promise<EventRow[]>;
  /**
   * Pending events whose hold has expired by `nowMs`, oldest first; optionally only of these
   * balances. Inside a write transaction on PostgreSQL the rows are locked (`FOR UPDATE SKIP
   * LOCKED`: a hold another transaction is settling right now is left to it).
   */
  findExpiredHolds(nowMs: number, limit: number, only?: BalanceKey[]): Promise<EventRow[]>;
  listTransactions(
    accountId: string,
    denomination: string | undefined,
    page: Page,
  ): Promise<PageResult<TransactionRow> | undefined>;

  /**
   * The ledger invariants: amount = Σ transactions, `balance_after` chains, pending = Σ held
   * pending events, no transaction without a balance; and `auditMoneyMovement`'s findings.
   */
  auditLedger(): Promise<AuditViolation[]>;

  /**
   * Events newest `occurredAtMs` first (ties: newest recorded first), through the index of
   * their scope (company, or account); undefined when the cursor names no event of the list.
   */
  listEvents(companyId: string, filter: EventFilter, page: Page): Promise<PageResult<EventRow> | undefined>;
  /** Hourly rollup rows of [fromMs, toMs), at most `limit` (callers ask one more to see an overflow). */
  listUsage(filter: UsageFilter, limit: number): Promise<UsageRow[]>;
}

export interface EventsTx extends EventsReadTx {
  upsertPrice(row: PriceRow): Promise<void>;

  insertEvents(rows: EventRow[]): Promise<void>;
  /**
   * Locks events for settling (PostgreSQL `FOR UPDATE`, in (company_id, event_id) order, so that
   * groups of settles never wait on each other in a cycle). Each event once, however often it
   * is named; missing ones are absent.
   */
  lockEvents(keys: EventKey[]): Promise<EventRow[]>;
  /**
   * Sets the state, cost and updated_at of each event (expires_at cleared); each event at most
   * once per call.
   */
  updateEvents(
    changes: { companyId: string; eventId: string; state: EventStateValue; costAmount: number; updatedAtMs: number }[],
  ): Promise<void>;
  insertTransactions(rows: TransactionRow[]): Promise<void>;
  /**
   * One posting: inserts `events`, applies `deltas` to their (already locked) balances as
   * `applyBalanceDeltas` does, and appends `transactions` in order; returns the balances changed,
   * as after. PostgreSQL runs it as one statement (the ingest path's whole write); SQLite as the
   * three steps.
   */
  writeLedger(
    events: EventRow[],
    deltas: BalanceDelta[],
    transactions: TransactionRow[],
    usage?: UsageRow[],
  ): Promise<BalanceRow[]>;
  /**
   * Adds to the hourly rollups (per account, and per company), creating rows as needed. Rows of
   * one call name distinct (account, hour, denomination, type) and come in that order: concurrent
   * writers take the rows' locks in one order.
   */
  addUsage(rows: UsageRow[]): Promise<void>;
  /** Deletes up to `limit` rollup rows of hours before `hourMs` (retention); returns how many. */
  deleteUsageBefore(hourMs: number, limit: number): Promise<number>;
}
