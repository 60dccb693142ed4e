/**
 * Usage: the hourly rollups of complete events, per account and per company, written in the
 * transaction that records or settles the events (`addUsage`, or within `writeLedger`), read
 * back by `listUsage`, and deleted after the retention period.
 */

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

export interface UsageReadTx {
  /** Hourly rollup rows of [fromMs, toMs), at most `limit` (callers ask one more to see an overflow). */
  listUsage(filter: UsageFilter, limit: number): Promise<UsageRow[]>;
}

export interface UsageTx extends UsageReadTx {
  /**
   * Adds to the hourly rollups (per account, and per company), creating rows as needed. Rows of
   * one call name distinct (account, hour, denomination, type) and come in that order: concurrent
   * writers take the rows' locks in one order.
   */
  addUsage(rows: UsageRow[]): Promise<void>;
  /** Deletes up to `limit` rollup rows of hours before `hourMs` (retention); returns how many. */
  deleteUsageBefore(hourMs: number, limit: number): Promise<number>;
}
