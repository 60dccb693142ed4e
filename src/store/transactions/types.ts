/**
 * Transactions: the appended rows that record every change of a balance's amount (the API's
 * `transactions`), read newest first, and the ledger audit. They are written only with the balance
 * change they record, by a posting of the ledger (src/ledger/), through the store's ledger port.
 */
import type { AuditViolation, Page, PageResult } from '../common.js';
import type { Allocation } from '../grants/types.js';

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
  drawnFrom: Allocation[] | null;
  createdAtMs: number;
}

export interface TransactionsReadTx {
  listTransactions(
    accountId: string,
    denomination: string | undefined,
    page: Page,
  ): Promise<PageResult<TransactionRow> | undefined>;
  /**
   * The ledger invariants: amount = Σ transactions, `balance_after` chains, pending = Σ held
   * pending events, no transaction without a balance; and the money-movement audit's findings
   * (charges/, `auditMoneyMovement`).
   */
  auditLedger(): Promise<AuditViolation[]>;
}

/** Transactions are appended only by the ledger's postings (src/ledger/port.ts, `writeLedger`). */
export type TransactionsTx = TransactionsReadTx;
