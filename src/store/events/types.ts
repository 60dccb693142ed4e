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
  writeLedger(events: EventRow[], deltas: BalanceDelta[], transactions: TransactionRow[]): Promise<BalanceRow[]>;
}
