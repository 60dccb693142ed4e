/**
 * The webhook delivery worker: leases due deliveries (safe across processes), POSTs them with
 * bounded concurrency in a sliding window (a slow receiver holds one slot, not a whole batch),
 * and writes outcomes in batches (one transaction per batch, not per delivery: on SQLite every
 * commit is an fsync). A crash loses at most the outcomes not yet written; their leases expire
 * and the deliveries are sent again with the same webhook-id (at least once).
 */
import { newId } from '../lib/ids.js';
import type { Deps } from '../operations/deps.js';
import { DELIVERY_LEASE_MS, sendClaimedDelivery } from '../operations/webhooks.js';
import { DELIVERY_TIMEOUT_MS } from '../webhooks/notifications.js';
import type { ClaimedWebhookDelivery, WebhookDeliveryUpdate } from '../store/types.js';
import type { Job } from './runner.js';

/** Attempts in flight at once per process (the delivery agent keeps 64 sockets per host). */
export const DELIVERY_CONCURRENCY_DEFAULT = 64;
/** Deliveries leased per claim. */
const CLAIM_BATCH_MAX = 256;
/** Outcomes written per transaction at most; reaching it also triggers a write. */
const RECORD_BATCH_MAX = 256;
/** Longest an outcome waits for company before it is written. */
const RECORD_DELAY_MS = 100;
/** Deliveries one run handles before handing back to the runner (other jobs get their turn). */
const DELIVERIES_PER_RUN_MAX = 20_000;
/**
 * An attempt starts only while its lease has this much left beyond the attempt's timeout
 * (time to write the outcome); otherwise the delivery is released unsent, so an attempt can
 * never outlive its lease and overlap another sender's.
 */
const LEASE_MARGIN_MS = 20_000;
export interface WebhookJobOptions {
  /** Attempts in flight at once (default DELIVERY_CONCURRENCY_DEFAULT). */
  concurrency?: number;
}

/** The webhook workers of a server (registered in server.ts); settings come from `deps.webhooks`. */
export function webhookJobs(deps: Deps, opts: WebhookJobOptions = {}): Job[] {
  return [deliveryJob(deps, opts)];
}

export function deliveryJob(deps: Deps, opts: WebhookJobOptions = {}): Job {
  const concurrency = Math.max(1, opts.concurrency ?? DELIVERY_CONCURRENCY_DEFAULT);
  const timeoutMs = deps.webhooks.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  // Room for a full attempt after waiting in the queue, whatever timeout a test configures.
  const leaseMs = Math.max(DELIVERY_LEASE_MS, 3 * (timeoutMs + LEASE_MARGIN_MS));
  return {
    name: 'webhook-delivery',
    async runOnce(nowMs) {
      const queue: ClaimedWebhookDelivery[] = [];
      const outcomes: WebhookDeliveryUpdate[] = [];
      let claimed = 0;
      let exhausted = false;
      let failure: unknown = null;
      let syncing: Promise<void> | null = null;
      let timer: NodeJS.Timeout | null = null;

      // One transaction writes the outcomes so far and, when the queue runs low, leases more:
      // on SQLite every commit is an fsync, so fewer, fuller transactions are what scales.
      const sync = (): Promise<void> => {
        syncing ??= (async () => {
          const batch = outcomes.splice(0, RECORD_BATCH_MAX);
          const want =
            !exhausted && queue.length < concurrency ? Math.min(CLAIM_BATCH_MAX, DELIVERIES_PER_RUN_MAX - claimed) : 0;
          if (batch.length === 0 && want <= 0) {
            if (!exhausted && want <= 0 && queue.length === 0) exhausted = true;
            return;
          }
          try {
            const rows = await deps.store.write(async (tx) => {
              await tx.webhooks.recordWebhookDeliveries(batch);
              return want > 0 ? tx.webhooks.claimWebhookDeliveries(nowMs, Date.now(), leaseMs, want, newId('cl')) : [];
            });
            if (want > 0) {
              claimed += rows.length;
              if (rows.length < want) exhausted = true;
              queue.push(...rows);
            }
          } catch (err) {
            // Unwritten outcomes keep their leases; when those run out the deliveries are sent again.
            failure ??= err;
            exhausted = true;
            queue.length = 0;
          }
        })().finally(() => {
          syncing = null;
        });
        return syncing;
      };

      const recordSoon = (): void => {
        if (outcomes.length >= RECORD_BATCH_MAX) void sync();
        else
          timer ??= setTimeout(() => {
            timer = null;
            void sync();
          }, RECORD_DELAY_MS);
      };

      const send = async (d: ClaimedWebhookDelivery): Promise<WebhookDeliveryUpdate> => {
        if (Date.now() + timeoutMs + LEASE_MARGIN_MS > d.claimedUntilMs) {
          // Waited too long in the queue: hand it back untouched rather than risk outliving the lease.
          return {
            callbackId: d.callbackId,
            claimToken: d.claimToken,
            attempt: null,
            status: d.status,
            nextAttemptAtMs: d.nextAttemptAtMs,
            deliveredAtMs: d.deliveredAtMs,
            lastError: d.lastError,
            disable: null,
          };
        }
        return sendClaimedDelivery(d, deps, { manual: false });
      };

      const worker = async (): Promise<void> => {
        for (;;) {
          const next = queue.shift();
          if (next === undefined) {
            if (exhausted) return;
            await sync();
            continue;
          }
          if (queue.length < concurrency && !exhausted && syncing === null) void sync();
          outcomes.push(await send(next));
          recordSoon();
        }
      };

      try {
        await Promise.all(Array.from({ length: concurrency }, worker));
      } finally {
        if (timer !== null) clearTimeout(timer);
        while (syncing !== null || (outcomes.length > 0 && failure === null)) await (syncing ?? sync());
      }
      if (failure !== null) throw failure;
      return claimed;
    },
  };
}
