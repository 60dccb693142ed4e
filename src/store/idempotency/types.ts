/**
 * Idempotency keys: a request's key and hash, and the answer once it is known, so that a repeated
 * request replays the answer. A part of its own: it belongs to no aggregate of the billing model
 * (any write route may use it) and no other part reads it.
 */

export interface IdempotencyRow {
  scope: string;
  key: string;
  requestHash: string;
  /** null while the first request is still being served. */
  statusCode: number | null;
  responseBody: string | null;
  createdAtMs: number;
}

export interface IdempotencyReadTx {
  findIdempotency(scope: string, key: string): Promise<IdempotencyRow | undefined>;
}

export interface IdempotencyTx extends IdempotencyReadTx {
  /** Inserts the in-progress marker; returns false when the (scope, key) already exists. */
  claimIdempotency(row: IdempotencyRow): Promise<boolean>;
  completeIdempotency(scope: string, key: string, statusCode: number, responseBody: string): Promise<void>;
  releaseIdempotency(scope: string, key: string): Promise<void>;
  deleteIdempotencyBefore(createdBeforeMs: number): Promise<number>;
}
