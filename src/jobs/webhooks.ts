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
    runOnce: (nowMs) => new DeliveryRun(deps, { concurrency, timeoutMs, leaseMs }, nowMs).run(),
  };
}

/** One run of the delivery worker: `concurrency` senders over a queue that one write at a time refills. */
class DeliveryRun {
  readonly #queue: ClaimedWebhookDelivery[] = [];
  readonly #outcomes: WebhookDeliveryUpdate[] = [];
  #claimed = 0;
  #exhausted = false;
  #failure: unknown = null;
  #syncing: Promise<void> | null = null;
  #timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly deps: Deps,
    private readonly settings: { concurrency: number; timeoutMs: number; leaseMs: number },
    private readonly nowMs: number,
  ) {}

  /** Sends until nothing is due (or DELIVERIES_PER_RUN_MAX), writes every outcome; returns how many were claimed. */
  async run(): Promise<number> {
    try {
      await Promise.all(Array.from({ length: this.settings.concurrency }, () => this.#worker()));
    } finally {
      if (this.#timer !== null) clearTimeout(this.#timer);
      while (this.#syncing !== null || (this.#outcomes.length > 0 && this.#failure === null))
        await (this.#syncing ?? this.#sync());
    }
    if (this.#failure !== null) throw this.#failure;
    return this.#claimed;
  }

  /**
   * One transaction writes the outcomes so far and, when the queue runs low, leases more: on SQLite
   * every commit is an fsync, so fewer, fuller transactions are what scales.
   */
  #sync(): Promise<void> {
    this.#syncing ??= this.#write().finally(() => {
      this.#syncing = null;
    });
    return this.#syncing;
  }

  async #write(): Promise<void> {
    const { concurrency, leaseMs } = this.settings;
    const batch = this.#outcomes.splice(0, RECORD_BATCH_MAX);
    const want =
      !this.#exhausted && this.#queue.length < concurrency
        ? Math.min(CLAIM_BATCH_MAX, DELIVERIES_PER_RUN_MAX - this.#claimed)
        : 0;
    if (batch.length === 0 && want <= 0) {
      if (!this.#exhausted && this.#queue.length === 0) this.#exhausted = true;
      return;
    }
    try {
      const rows = await this.deps.store.write(async (tx) => {
        await tx.webhooks.recordWebhookDeliveries(batch);
        return want > 0 ? tx.webhooks.claimWebhookDeliveries(this.nowMs, Date.now(), leaseMs, want, newId('cl')) : [];
      });
      if (want > 0) {
        this.#claimed += rows.length;
        if (rows.length < want) this.#exhausted = true;
        this.#queue.push(...rows);
      }
    } catch (err) {
      // Unwritten outcomes keep their leases; when those run out the deliveries are sent again.
      this.#failure ??= err;
      this.#exhausted = true;
      this.#queue.length = 0;
    }
  }

  #recordSoon(): void {
    if (this.#outcomes.length >= RECORD_BATCH_MAX) void this.#sync();
    else
      this.#timer ??= setTimeout(() => {
        this.#timer = null;
        void this.#sync();
      }, RECORD_DELAY_MS);
  }

  async #send(d: ClaimedWebhookDelivery): Promise<WebhookDeliveryUpdate> {
    if (Date.now() + this.settings.timeoutMs + LEASE_MARGIN_MS > d.claimedUntilMs) {
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
    return sendClaimedDelivery(d, this.deps, { manual: false });
  }

  async #worker(): Promise<void> {
    for (;;) {
      const next = this.#queue.shift();
      if (next === undefined) {
        if (this.#exhausted) return;
        await this.#sync();
        continue;
      }
      if (this.#queue.length < this.settings.concurrency && !this.#exhausted && this.#syncing === null)
        void this.#sync();
      this.#outcomes.push(await this.#send(next));
      this.#recordSoon();
    }
  }
}
