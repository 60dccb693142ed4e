/**
 * The ledger: the appended transactions that record every balance change, `writeLedger` (a whole
 * posting in one call: the ingest path's write), and the ledger audit. A balance changes only
 * with ledger rows appended in the same transaction (`applyBalanceDeltas` beside
 * `insertTransactions`, or `writeLedger`): the ledger is the one way balances change.
 */
import type { BalanceDelta, BalanceRow } from '../balances/types.js';
import type { AuditViolation, Page, PageResult } from '../common.js';
import type { EventRow } from '../events/types.js';
import type { GrantAllocation } from '../grants/types.js';
import type { UsageRow } from '../usage/types.js';

export type TransactionKind =
  | 'usage'
  | 'grant'
  | 'refill'
  | 'adjustment'
  | 'proration'
  | 'period_reset'
  | 'grant_expiry'
  | 'grant_void';

export interface TransactionRow {
  transactionId: string;
  accountId: string;
  denomination: string;
  amount: number;
  balanceAfter: number;
  kind: TransactionKind;
  eventId: string | null;
  reason: string | null;
  /** The grant a `grant`, `refill`, `grant_expiry`, `grant_void` (…) transaction opened or closed. */
  grantId: string | null;
  /** On a transaction that took units away: the grants they came from. */
  drawnFrom: GrantAllocation[] | null;
  createdAtMs: number;
}

export interface LedgerReadTx {
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

export interface LedgerTx extends LedgerReadTx {
  insertTransactions(rows: TransactionRow[]): Promise<void>;
  /**
   * One posting: inserts `events`, applies `deltas` to their (already locked) balances as
   * `applyBalanceDeltas` does, appends `transactions` in order and adds `usage` to the hourly
   * rollups as `addUsage` does; returns the balances changed, as after. PostgreSQL runs it as one
   * statement (the ingest path's whole write); SQLite as the four steps.
   *
   * It writes the tables of events/, balances/ and usage/ too, and is the ledger's all the same:
   * it is how the ingest path changes balances, and a balance changes only together with the
   * ledger rows that record why; the events and usage it writes are what those rows account for.
   */
  writeLedger(
    events: EventRow[],
    deltas: BalanceDelta[],
    transactions: TransactionRow[],
    usage?: UsageRow[],
  ): Promise<BalanceRow[]>;
}
