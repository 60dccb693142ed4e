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

/**
 * A secret as stored (sealed by the operations' SecretBox, or plaintext in a row from before
 * encryption) and the id of the row holding it: what the start and `billing secrets rotate` re-seal.
 */
export interface StoredSecret {
  id: string;
  value: string;
}

/**
 * A write failed at a point where its transaction may nevertheless have committed (the
 * connection was lost during COMMIT; the SQLite writer thread committed, then could not send the
 * answer back). Running the same work again could apply it twice, so nobody retries it.
 */
export class CommitOutcomeUnknownError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CommitOutcomeUnknownError';
  }
}
