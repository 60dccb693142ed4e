/**
 * The webhook workers.
 * - fan-out: `webhook.*` outbox rows become deliveries, claimed and written in one transaction.
 * - delivery: leases due deliveries (safe across processes), POSTs them with bounded
 *   concurrency in a sliding window (a slow receiver holds one slot, not a whole batch), and
 *   writes outcomes in batches (one transaction per batch, not per delivery: on SQLite every
 *   commit is an fsync). A crash loses at most the outcomes not yet written; their leases
 *   expire and the deliveries are sent again with the same webhook-id (at least once).
 */
import { newId } from '../lib/ids.js';
import type { Deps } from '../operations/deps.js';
import { DELIVERY_LEASE_MS, sendClaimedDelivery } from '../operations/webhook-delivery.js';
import { WEBHOOK_TOPIC_PREFIX, configureWebhooks, fanOutWebhookOutbox, type WebhookSettings } from '../operations/webhooks.js';
import type { ClaimedWebhookDelivery, WebhookDeliveryUpdate } from '../store/types.js';
import type { Job } from './runner.js';

/** Attempts in flight at once per process (the delivery agent keeps 64 sockets per host). */
export const DELIVERY_CONCURRENCY_DEFAULT = 64;
/** Deliveries leased per claim. */
const CLAIM_BATCH_MAX = 64;
/** Outcomes written per transaction at most. */
const RECORD_BATCH_MAX = 500;
/** Deliveries one run handles before handing back to the runner (other jobs get their turn). */
const DELIVERIES_PER_RUN_MAX = 20_000;
/** Outbox rows fanned out per transaction. */
const FAN_OUT_BATCH_MAX = 200;
const FAN_OUT_LEASE_MS = 60_000;

export interface WebhookJobOptions extends WebhookSettings {
  concurrency?: number;
}

/** Turns webhooks on for this server and returns its workers (registered in server.ts). */
export function webhookJobs(deps: Deps, opts: WebhookJobOptions): Job[] {
  configureWebhooks(deps, opts);
  return [fanOutJob(deps), deliveryJob(deps, opts)];
}

function fanOutJob(deps: Deps): Job {
  return {
    name: 'webhook-fan-out',
    runOnce: (nowMs) => deps.store.write(async (tx) => {
      const rows = await tx.claimOutbox(WEBHOOK_TOPIC_PREFIX, nowMs, FAN_OUT_LEASE_MS, FAN_OUT_BATCH_MAX);
      await fanOutWebhookOutbox(tx, nowMs, rows);
      return rows.length;
    }),
  };
}

export function deliveryJob(deps: Deps, opts: WebhookJobOptions): Job {
  const concurrency = Math.max(1, opts.concurrency ?? DELIVERY_CONCURRENCY_DEFAULT);
  return {
    name: 'webhook-delivery',
    async runOnce(nowMs) {
      const queue: ClaimedWebhookDelivery[] = [];
      const outcomes: WebhookDeliveryUpdate[] = [];
      let claimed = 0;
      let exhausted = false;
      let claiming: Promise<void> | null = null;
      let recording: Promise<void> | null = null;
      let recordError: unknown = null;

      const claimMore = (): Promise<void> => {
        claiming ??= (async () => {
          const limit = Math.min(CLAIM_BATCH_MAX, DELIVERIES_PER_RUN_MAX - claimed);
          const rows = limit <= 0 ? [] : await deps.store.write((tx) => tx.claimWebhookDeliveries(nowMs, Date.now(), DELIVERY_LEASE_MS, limit, newId('cl')));
          claimed += rows.length;
          if (rows.length === 0) exhausted = true;
          queue.push(...rows);
        })().finally(() => {
          claiming = null;
        });
        return claiming;
      };

      const record = (): void => {
        recording ??= (async () => {
          while (outcomes.length > 0) {
            const batch = outcomes.splice(0, RECORD_BATCH_MAX);
            await deps.store.write((tx) => tx.recordWebhookDeliveries(batch));
          }
        })().catch((err: unknown) => {
          recordError = err;
          outcomes.length = 0;
        }).finally(() => {
          recording = null;
        });
      };

      const worker = async (): Promise<void> => {
        for (;;) {
          const next = queue.shift();
          if (next === undefined) {
            if (exhausted || recordError !== null) return;
            await claimMore();
            continue;
          }
          outcomes.push(await sendClaimedDelivery(next, deps.clock, opts, { manual: false }));
          record();
        }
      };

      await Promise.all(Array.from({ length: concurrency }, worker));
      while (recording !== null) await recording;
      if (recordError !== null) throw recordError;
      return claimed;
    },
  };
}
