/**
 * Limits that several aggregates share, each a named constant (the limits of one aggregate live
 * beside its rules: EVENTS_PER_REQUEST_MAX in domain/events.ts, METADATA_*_MAX in domain/metadata.ts,
 * USAGE_ROWS_MAX in domain/usage.ts, …).
 */

/** Default and largest page of every list endpoint. */
export const PAGE_LIMIT_DEFAULT = 20;
export const PAGE_LIMIT_MAX = 100;

/** How long an Idempotency-Key and its first response are kept (the contract says at least 24 hours). */
export const IDEMPOTENCY_RETENTION_MS = 48 * 60 * 60 * 1000;
