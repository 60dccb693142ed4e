/**
 * Idempotency keys: a request's key and hash, and the answer once it is known, so that a repeated
 * request replays the answer. A part of its own: it belongs to no aggregate of the billing model
 * (any write route may use it) and no other part reads it.
 *
 * While the first request runs, its row is a leased claim: `owner` (the request's random token) and
 * `leaseExpiresAtMs`, renewed while the request is still being served. A claim whose lease is over
 * (its owner crashed) may be taken over by a request with the same key and the same content.
 */

import type { StoredSecret } from '../common.js';

export interface IdempotencyRow {
  scope: string;
  key: string;
  requestHash: string;
  /** null while the first request is still being served. */
  statusCode: number | null;
  responseBody: string | null;
  createdAtMs: number;
  /** The claiming request's token; null on rows claimed before leases existed. */
  owner: string | null;
  /** Wall-clock epoch ms when the claim lapses unless renewed; null: lapsed. */
  leaseExpiresAtMs: number | null;
}

export interface IdempotencyReadTx {
  findIdempotency(scope: string, key: string): Promise<IdempotencyRow | undefined>;
  /**
   * Answers stored sealed (those that carry a secret: operations/secrets.ts), by (scope, key) after
   * `afterId`, `limit` at most; `id` is `scope` and `key` joined by a newline.
   */
  listSealedIdempotencyAnswers(afterId: string | null, limit: number): Promise<StoredSecret[]>;
}

export interface IdempotencyTx extends IdempotencyReadTx {
  /**
   * Inserts the in-progress claim, or takes over an unanswered claim of the same request whose lease
   * ended by `nowWallMs`. Returns false when the key is answered, held by a live claim, or used by
   * another request.
   */
  claimIdempotency(row: IdempotencyRow, nowWallMs: number): Promise<boolean>;
  /** Extends the claim while `owner` still holds it; false when it was lost. */
  renewIdempotency(scope: string, key: string, owner: string, leaseExpiresAtMs: number): Promise<boolean>;
  /** Records the answer, only while `owner` still holds the claim; false when it was lost (nothing written). */
  completeIdempotency(
    scope: string,
    key: string,
    owner: string,
    statusCode: number,
    responseBody: string,
  ): Promise<boolean>;
  /** Drops `owner`'s unanswered claim (a 5xx: a retry runs again). */
  releaseIdempotency(scope: string, key: string, owner: string): Promise<void>;
  deleteIdempotencyBefore(createdBeforeMs: number): Promise<number>;
  /** Replaces a stored answer if it is still `from`; `id` as listSealedIdempotencyAnswers gives it. */
  replaceIdempotencyAnswer(id: string, from: string, to: string): Promise<boolean>;
}
