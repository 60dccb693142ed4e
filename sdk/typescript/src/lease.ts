/**
 * `Lease`: deciding usage in the caller's own process (contract "Leases"). A lease holds units of a balance on the
 * server; `tryTake` answers from what it holds, in memory and synchronously, so that a gateway allows or refuses a
 * request without a round trip and without ever taking more than the lease holds; `record` sends the events of the
 * usage it allowed, batched, with the lease's id and a client id each, so that a batch sent again (after a lost
 * answer, a 5xx, a failed connection) is never deducted twice. `billing.leases.open` opens one
 * (resources/leases.ts); `LeasePool` (lease-pool.ts) keeps one open per balance ahead of need.
 */
import { BillingError } from './errors.js';
import type { EventInput } from './resources/events.js';
import type { Schemas } from './core.js';
import { newIdempotencyKey } from './transport.js';

/** A lease as the server answers it (`lease_id`, `amount`, `used`, `remaining`, `status`, `expires_at`, …). */
export type LeaseRecord = Schemas['Lease'];

/** At most this many events in one request (the server's limit per request). */
export const LEASE_BATCH_MAX = 1_000;
/** Events recorded wait at most this long before they are sent (unless a batch fills first). */
export const LEASE_FLUSH_INTERVAL_MS = 100;
/** The default expiry margin: this, or a fifth of the lease's lifetime when that is shorter. */
export const LEASE_EXPIRY_MARGIN_MS = 10_000;
/** After a failed batch, the next try waits the flush interval, twice as long after each further failure, to this. */
export const LEASE_RETRY_MAX_MS = 5_000;

/** Something a lease (or a pool of them) could not do, reported to `onError`. */
export interface LeaseFailure {
  /** `batch`: a batch of recorded events; `open` (pools only): opening a lease; `close`: closing one. */
  kind: 'batch' | 'open' | 'close';
  accountId: string;
  denomination: string;
  /** The lease's id; null for an `open` that failed. */
  leaseId: string | null;
  /** The events of the batch (`batch` only; otherwise empty), each with its client id. */
  events: EventInput[];
  /**
   * True when what failed will not be tried again: a batch the server refused with a 4xx (a 400, a 402
   * `spend_limit_reached`, a 409 id reused with other content), whose events are not recorded. Send them again
   * yourself (`billing.events.ingest`) once the cause is fixed: their ids keep that safe. False: it stays queued and
   * is retried (a failed connection, a timeout, a 5xx or 429 that outlived the transport's retries).
   */
  dropped: boolean;
  /** A BillingError, as the transport threw it. */
  error: unknown;
}

/** How a lease keeps time and reports what failed; every option has a default. */
export interface LeaseOptions {
  /** The clock, in ms (default `Date.now`): the expiry margin and a pool's refills and back-offs read it. */
  now?: () => number;
  /** Runs `run` after `ms` (default `setTimeout`): the flush timer, and a pool's retries. */
  setTimer?: (run: () => void, ms: number) => unknown;
  /** Cancels what `setTimer` returned (default `clearTimeout`). */
  clearTimer?: (handle: unknown) => void;
  /**
   * `tryTake` refuses from this long before the lease expires, so that the events of what it allowed reach the
   * server while the lease still holds their units (default: 10 s, or a fifth of the lease's lifetime if shorter).
   */
  expiryMarginMs?: number;
  /** The longest an event recorded waits before it is sent (default 100 ms). */
  flushIntervalMs?: number;
  /** Events per request, at most 1,000 (the default): a full batch is sent at once. */
  batchSize?: number;
  /** Called for every failure (default: a batch dropped is logged with `console.error`; others are not). */
  onError?: (failure: LeaseFailure) => void;
}

/** What a lease asks of the server: `billing.leases` gives it the client's calls (transport and retries). @internal */
export interface LeaseServer {
  /** POST /v1/accounts/{account_id}/events `{events, lease_id}`, with this Idempotency-Key. */
  send(accountId: string, leaseId: string, events: EventInput[], idempotencyKey: string): Promise<unknown>;
  close(leaseId: string): Promise<LeaseRecord>;
  retrieve(leaseId: string): Promise<LeaseRecord>;
}

/** A request's worth of events, sent as one unit: sent again, it is the same body with the same Idempotency-Key. */
interface Batch {
  key: string;
  events: EventInput[];
  /** The sequence number of its first event (events are numbered as recorded). */
  first: number;
}

/** @internal Whether a failed send is final: a 4xx the server would answer again (not 408, 429, 409 key in use). */
export function refused(error: unknown): boolean {
  if (!(error instanceof BillingError)) return false;
  const { status, code } = error;
  if (status < 400 || status >= 500 || status === 408 || status === 429) return false;
  return !(status === 409 && code === 'idempotency_key_in_use');
}

function logDropped(f: LeaseFailure): void {
  if (!f.dropped) return;
  const what = f.kind === 'batch' ? `${f.events.length} events of lease ${f.leaseId}` : `${f.kind} ${f.leaseId}`;
  console.error(`@billing-engine/client: ${what} refused and not sent again:`, f.error);
}

/** Eight random characters: the part of a generated event id that tells this Lease object from another. */
function instanceTag(): string {
  return newIdempotencyKey().slice(3, 11);
}

function checkEvents(leaseId: string, events: readonly EventInput[]): void {
  if (!Array.isArray(events)) throw new TypeError('lease.record(events): events must be an array');
  events.forEach((e, i) => {
    if (typeof e !== 'object' || e === null) throw new TypeError(`lease.record: events[${i}] must be an object`);
    if (e.lease_id !== undefined && e.lease_id !== leaseId)
      throw new TypeError(`lease.record: events[${i}] names another lease (${e.lease_id})`);
    if (e.state === 'pending') throw new TypeError(`lease.record: events[${i}] is pending, which a lease cannot carry`);
  });
}

/**
 * An open lease and the decisions taken against it in this process. `tryTake` never waits and never does I/O:
 * callers in one process (however many promises interleave) can never take more than `amount` in all. Events
 * `record`ed are sent in the background; `close()` sends what is left and releases the rest on the server.
 *
 * Failure modes: the server unreachable, `tryTake` keeps answering from the units the lease holds (they are held
 * on the server, whatever happens to this process) until `expiryMarginMs` before its expiry, then refuses: it fails
 * closed. Events that could not be sent stay queued with their ids and are sent again at the next flush (every
 * 100 ms, backing off to 5 s): never dropped, never sent under another id. Only a batch the server refuses (a 4xx)
 * is dropped, and reported to `onError`. A lease's units are its own only if one Lease object uses it: open a lease
 * per process.
 */
export class Lease {
  readonly leaseId: string;
  readonly accountId: string;
  readonly denomination: string;
  /** Units this lease may take: what the lease held when it was opened (0 if it was no longer open). */
  readonly amount: number;
  /** The lease as the server answered when it was opened. */
  readonly opened: LeaseRecord;
  /** When the open request was sent, on this lease's clock. */
  readonly openedAt: number;
  /**
   * When the lease expires, on this lease's clock: when the open request was sent plus the lease's lifetime
   * (`expires_at − created_at`), so never later than on the server, whatever the difference of the two clocks.
   */
  readonly expiresAt: number;
  /** The last instant `tryTake` may allow anything: `expiresAt` minus the expiry margin. */
  readonly decidesUntil: number;
  readonly #server: LeaseServer;
  readonly #now: () => number;
  readonly #setTimer: (run: () => void, ms: number) => unknown;
  readonly #clearTimer: (handle: unknown) => void;
  readonly #flushMs: number;
  readonly #batchSize: number;
  readonly #onError: (failure: LeaseFailure) => void;
  readonly #tag = instanceTag();
  #taken = 0;
  #state: 'open' | 'closing' | 'closed' = 'open';
  /** Events recorded, numbered: the last number given. */
  #seq = 0;
  #queue: { seq: number; event: EventInput }[] = [];
  /** The batch that failed last, sent again first. */
  #retry: Batch | null = null;
  #inFlight: Batch | null = null;
  #running: Promise<void> | null = null;
  #timer: { handle: unknown } | null = null;
  #failures = 0;
  #closing: Promise<LeaseRecord> | null = null;

  /** @internal `billing.leases.open` builds it. */
  constructor(server: LeaseServer, record: LeaseRecord, openedAt: number, options: LeaseOptions = {}) {
    this.#server = server;
    this.opened = record;
    this.leaseId = record.lease_id;
    this.accountId = record.account_id;
    this.denomination = record.denomination;
    this.amount = record.status === 'open' ? record.remaining : 0;
    this.openedAt = openedAt;
    const lifetimeMs = Math.max(0, Date.parse(record.expires_at) - Date.parse(record.created_at));
    this.expiresAt = openedAt + lifetimeMs;
    const marginMs = options.expiryMarginMs ?? Math.min(LEASE_EXPIRY_MARGIN_MS, lifetimeMs / 5);
    this.decidesUntil = this.expiresAt - marginMs;
    this.#now = options.now ?? Date.now;
    this.#setTimer = options.setTimer ?? ((run, ms) => setTimeout(run, ms));
    this.#clearTimer = options.clearTimer ?? ((h) => clearTimeout(h as ReturnType<typeof setTimeout>));
    this.#flushMs = options.flushIntervalMs ?? LEASE_FLUSH_INTERVAL_MS;
    this.#batchSize = Math.max(1, Math.min(LEASE_BATCH_MAX, Math.floor(options.batchSize ?? LEASE_BATCH_MAX)));
    this.#onError = options.onError ?? logDropped;
  }

  /** Units taken so far. */
  get taken(): number {
    return this.#taken;
  }

  /** Units still free to take: `amount − taken`. */
  get remaining(): number {
    return this.amount - this.#taken;
  }

  /** Whether `tryTake` may still allow anything now: open, before `decidesUntil`, units left. */
  get usable(): boolean {
    return this.#state === 'open' && this.#now() < this.decidesUntil && this.remaining > 0;
  }

  /** `open`; `closing` once `close()` was called (nothing more taken or recorded); `closed` once it succeeded. */
  get state(): 'open' | 'closing' | 'closed' {
    return this.#state;
  }

  /** Events recorded and not yet accepted by the server (queued, in flight, or waiting to be sent again). */
  get unsent(): number {
    return this.#queue.length + (this.#retry?.events.length ?? 0) + (this.#inFlight?.events.length ?? 0);
  }

  /**
   * Takes `units` if the lease can spare them now: true, and they are taken; false, and nothing is. Synchronous,
   * no I/O. Refuses once `close()` was called, from `decidesUntil` on, and when fewer than `units` are left. Throws a
   * TypeError unless `units` is an integer ≥ 1.
   */
  tryTake(units: number): boolean {
    if (!Number.isInteger(units) || units < 1)
      throw new TypeError(`lease.tryTake(units): units must be an integer ≥ 1, not ${String(units)}`);
    if (this.#state !== 'open' || this.#taken + units > this.amount || this.#now() >= this.decidesUntil) return false;
    this.#taken += units;
    return true;
  }

  /**
   * Queues events of usage this lease allowed, to be sent with its `lease_id`: their cost is taken from its held
   * units first. An event without an `id` gets one, `${leaseId}.${tag}.${n}` (unique to this Lease object), so that
   * sending it again can never deduct it twice. Sent within `flushIntervalMs`, or at once when a batch is full.
   * All or nothing: throws a TypeError for an event naming another lease or pending. Usage is never lost: events
   * recorded after `close()` (or after the lease expired) are still sent, and the server charges them to the balance
   * as ordinary events, since the lease no longer holds anything for them.
   */
  record(events: readonly EventInput[]): void {
    checkEvents(this.leaseId, events);
    for (const e of events) {
      const seq = ++this.#seq;
      this.#queue.push({ seq, event: { ...e, id: e.id ?? `${this.leaseId}.${this.#tag}.${seq}` } });
    }
    if (this.#queue.length >= this.#batchSize) void this.#pump().catch(() => undefined);
    else this.#schedule(this.#flushMs);
  }

  /**
   * Resolves once every event recorded before the call has been accepted by the server (or dropped as refused,
   * reported to `onError`). Rejects with the error of a batch that failed and stays queued (sent again later).
   */
  async flush(): Promise<void> {
    const upTo = this.#seq;
    while (this.#oldestUnsent() <= upTo) await this.#pump();
  }

  /**
   * Sends every event recorded (`flush`), then closes the lease on the server, releasing what it still holds;
   * resolves with its record. Nothing can be taken or recorded from the call on. A lease already expired on the
   * server resolves with its record (`status: 'expired'`, its units released at expiry). Rejects when the flush or
   * the close failed: call it again later (the events stay queued and keep being retried meanwhile).
   */
  close(): Promise<LeaseRecord> {
    this.#closing ??= this.#closeOnce().catch((err: unknown) => {
      this.#closing = null;
      throw err;
    });
    return this.#closing;
  }

  async #closeOnce(): Promise<LeaseRecord> {
    if (this.#state === 'open') this.#state = 'closing';
    await this.flush();
    let record: LeaseRecord;
    try {
      record = await this.#server.close(this.leaseId);
    } catch (err) {
      if (!(err instanceof BillingError && err.code === 'lease_expired')) {
        this.#onError(this.#failure('close', [], false, err));
        throw err;
      }
      record = await this.#server.retrieve(this.leaseId);
    }
    this.#state = 'closed';
    this.#cancelTimer();
    return record;
  }

  /** The number of the oldest event not yet accepted; Infinity when there is none. */
  #oldestUnsent(): number {
    return Math.min(this.#inFlight?.first ?? Infinity, this.#retry?.first ?? Infinity, this.#queue[0]?.seq ?? Infinity);
  }

  /** Sends what is waiting, one batch at a time; the run in progress if there is one. */
  #pump(): Promise<void> {
    if (this.#running) return this.#running;
    this.#cancelTimer();
    const run = this.#sendAll().finally(() => {
      this.#running = null;
      if (this.#oldestUnsent() !== Infinity)
        this.#schedule(Math.min(LEASE_RETRY_MAX_MS, this.#flushMs * 2 ** this.#failures));
    });
    run.catch(() => undefined); // reported to onError, and to the caller of flush()
    this.#running = run;
    return run;
  }

  async #sendAll(): Promise<void> {
    for (;;) {
      const batch = this.#retry ?? this.#cut();
      this.#retry = null;
      if (batch === undefined) return;
      this.#inFlight = batch;
      try {
        await this.#server.send(this.accountId, this.leaseId, batch.events, batch.key);
        this.#inFlight = null;
        this.#failures = 0;
      } catch (err) {
        const dropped = refused(err);
        this.#inFlight = null;
        if (!dropped) {
          this.#retry = batch;
          this.#failures++;
        }
        this.#onError(this.#failure('batch', batch.events, dropped, err));
        if (!dropped) throw err;
      }
    }
  }

  /** The next batch from the queue, with a new Idempotency-Key; undefined when the queue is empty. */
  #cut(): Batch | undefined {
    if (this.#queue.length === 0) return undefined;
    const items = this.#queue.splice(0, this.#batchSize);
    return { key: newIdempotencyKey(), events: items.map((q) => q.event), first: items[0]!.seq };
  }

  #schedule(ms: number): void {
    if (this.#timer !== null || this.#running !== null) return;
    const timer = {
      handle: this.#setTimer(() => {
        if (this.#timer === timer) this.#timer = null;
        void this.#pump().catch(() => undefined);
      }, ms),
    };
    this.#timer = timer;
  }

  #cancelTimer(): void {
    if (this.#timer === null) return;
    this.#clearTimer(this.#timer.handle);
    this.#timer = null;
  }

  #failure(kind: LeaseFailure['kind'], events: EventInput[], dropped: boolean, error: unknown): LeaseFailure {
    const { accountId, denomination, leaseId } = this;
    return { kind, accountId, denomination, leaseId, events, dropped, error };
  }
}
