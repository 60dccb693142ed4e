/** Types that several aggregates' interfaces share: keyset pages and the ledger audit's findings. */

export interface Page {
  limit: number;
  /** Public id of the last row of the previous page (`starting_after`). */
  startingAfter?: string | undefined;
}

export interface PageResult<T> {
  rows: T[];
  hasMore: boolean;
}

/** A broken ledger invariant found by `auditLedger` (empty list: the ledger is exact). */
export interface AuditViolation {
  accountId: string;
  denomination: string;
  problem: string;
}
