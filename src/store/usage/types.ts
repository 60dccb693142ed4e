/**
 * Usage: the hourly rollups of complete events (domain/usage.ts `UsageRow`), per account and per
 * company, written in the transaction that records or settles the events (the ledger port's
 * `writeLedger`), read back by `listUsage`, and deleted after the retention period.
 */
import type { UsageRow } from '../../domain/usage.js';

export type { UsageRow };

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

export interface UsageReadTx {
  /** Hourly rollup rows of [fromMs, toMs), at most `limit` (callers ask one more to see an overflow). */
  listUsage(filter: UsageFilter, limit: number): Promise<UsageRow[]>;
}

/** Usage is added only with the events it counts, by the ledger's postings (src/ledger/port.ts, `writeLedger`). */
export interface UsageTx extends UsageReadTx {
  /** Deletes up to `limit` rollup rows of hours before `hourMs` (retention); returns how many. */
  deleteUsageBefore(hourMs: number, limit: number): Promise<number>;
}
