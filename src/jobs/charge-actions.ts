/**
 * The watch of charges waiting for the customer at Stripe (operations/charge-watch.ts): their `charge_action.check`
 * outbox rows, claimed like every outbox worker's (leased, PostgreSQL SKIP LOCKED, SQLite's single writer), so two
 * processes never check one at once. Each check reads the PaymentIntent and records it once it ended; past the
 * deadline (BILLING_CHARGE_ACTION_TIMEOUT_MINUTES after the charge began to wait) it is cancelled and recorded failed.
 * Bounded: a batch of rows per round, a few Stripe calls at once, each row checked again only after a backoff.
 */
import { CHARGE_LEASE_MS } from '../operations/charges.js';
import { settleWaitingCharge } from '../operations/charge-actions.js';
import { CHARGE_ACTION_TOPIC } from '../operations/charge-watch.js';
import type { Deps } from '../operations/deps.js';
import { outboxJob } from './outbox.js';
import type { Job } from './runner.js';

const CHARGE_ACTION_BATCH_SIZE = 20;
/** Stripe calls in flight at once per worker. */
const CHARGE_ACTION_CONCURRENCY = 4;

export function chargeActionJob(deps: Deps, opts: { timeoutMs: number }): Job {
  return outboxJob(
    deps,
    'charge-actions',
    CHARGE_ACTION_TOPIC,
    async (row, nowMs) => {
      const checked = await settleWaitingCharge(deps, String(row.payload.charge_id), {
        outboxId: row.outboxId,
        attempts: row.attempts,
        nowMs,
        deadlineMs: row.createdAtMs + opts.timeoutMs,
      });
      if ('retryAtMs' in checked) return { done: false, retryAtMs: checked.retryAtMs, error: checked.message };
      return { done: true, completed: checked.completed };
    },
    { leaseMs: CHARGE_LEASE_MS, batchSize: CHARGE_ACTION_BATCH_SIZE, concurrency: CHARGE_ACTION_CONCURRENCY },
  );
}
