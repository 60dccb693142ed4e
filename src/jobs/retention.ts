/**
 * Retention: the outbox and the webhook delivery log grow by a row per notification, and the usage
 * rollups by a row per account, type and hour, so at ingest volume they would grow without bound. These jobs delete
 * what is finished and old,
 * oldest first, a bounded batch per transaction (the runner repeats them until nothing is due),
 * so a large backlog never holds the write lock for long. What is still to do stays whatever its
 * age: an outbox row not yet done, a delivery still pending or being sent.
 * Safe with many processes: PostgreSQL's SKIP LOCKED splits the rows; SQLite has one writer.
 */
import { HOUR_MS } from '../domain/time.js';
import type { Deps } from '../operations/deps.js';
import type { Job } from './runner.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Days an ended (expired or revoked) customer portal session is kept before it is deleted. */
export const PORTAL_SESSION_RETENTION_DAYS = 30;
/** Rows deleted per transaction. */
export const RETENTION_BATCH = 500;

export interface RetentionOptions {
  outboxRetentionDays: number;
  webhookLogRetentionDays: number;
}

export function retentionJobs(deps: Deps, opts: RetentionOptions): Job[] {
  return [
    {
      name: 'forget-finished-outbox',
      runOnce: (nowMs) =>
        deps.store.write((tx) =>
          tx.outbox.deleteFinishedOutbox(nowMs - opts.outboxRetentionDays * DAY_MS, RETENTION_BATCH),
        ),
    },
    {
      name: 'forget-old-usage',
      // Whole hours older than the retention: a usage query cannot ask for them (400), so no
      // answer ever counts a half-deleted window.
      runOnce: (nowMs) =>
        deps.store.write((tx) =>
          tx.usage.deleteUsageBefore(Math.floor((nowMs - deps.usage.retentionMs) / HOUR_MS) * HOUR_MS, RETENTION_BATCH),
        ),
    },
    {
      name: 'forget-ended-portal-sessions',
      // An ended session's page and token answer as an unknown one's: its row is kept a while for support only.
      runOnce: (nowMs) =>
        deps.store.write((tx) =>
          tx.portalSessions.deleteEndedPortalSessions(nowMs - PORTAL_SESSION_RETENTION_DAYS * DAY_MS, RETENTION_BATCH),
        ),
    },
    {
      name: 'forget-old-webhook-deliveries',
      // Leases are on the wall clock (a send's timeout is real time), ages on the injected one.
      runOnce: (nowMs) =>
        deps.store.write((tx) =>
          tx.webhooks.deleteWebhookDeliveriesBefore(
            nowMs - opts.webhookLogRetentionDays * DAY_MS,
            Date.now(),
            RETENTION_BATCH,
          ),
        ),
    },
  ];
}
