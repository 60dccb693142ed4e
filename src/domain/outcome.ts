/**
 * Expected outcomes are values. A failure carries a reason code that reads as a sentence
 * (`event_not_pending`), one of the closed vocabulary in reasons.ts; the HTTP layer maps each
 * reason to a status and error body through one registry (src/http/errors.ts).
 */
import type { Reason } from './reasons.js';

export type { Reason } from './reasons.js';

export interface Failure {
  ok: false;
  reason: Reason;
  message: string;
  param?: string;
  details?: Record<string, unknown>;
}

export type Outcome<T> = { ok: true; value: T } | Failure;

export function failure(reason: Reason, message: string, param?: string, details?: Record<string, unknown>): Failure {
  const f: Failure = { ok: false, reason, message };
  if (param !== undefined) f.param = param;
  if (details !== undefined) f.details = details;
  return f;
}

/**
 * A request with an Idempotency-Key that another request holds (still running), or that was taken
 * from this one (its lease lapsed): retry shortly, and get the holder's answer.
 */
export const idempotencyKeyInUse = (): Failure =>
  failure('idempotency_key_in_use', 'a request with this Idempotency-Key is in progress; retry shortly');

/** Thrown by operations to abort a transaction with an expected outcome; nothing it wrote is kept. */
export class OutcomeError extends Error {
  readonly failure: Failure;
  constructor(f: Failure) {
    super(f.message);
    this.failure = f;
  }
}

export function fail(reason: Reason, message: string, param?: string, details?: Record<string, unknown>): never {
  throw new OutcomeError(failure(reason, message, param, details));
}
