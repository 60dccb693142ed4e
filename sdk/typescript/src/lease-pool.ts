/**
 * `LeasePool`: a lease per balance, kept open ahead of need, for a gateway that decides every request in its own
 * process (lease.ts decides against one lease). The pool opens the next lease in the background before the current
 * one runs out, so that `tryTake` almost never finds none ready; it closes a lease it has moved on from once every
 * take of it was recorded and sent, which releases what the lease still held.
 */
import { BillingError } from './errors.js';
import { type Lease, type LeaseFailure, type LeaseOptions, type LeaseRecord, refused } from './lease.js';
import type { EventInput } from './resources/events.js';
import type { Leases } from './resources/leases.js';
import { newIdempotencyKey } from './transport.js';

/** The options of `new LeasePool(billing, options)`: the leases' size and lifetime, and a lease's own options. */
export interface LeasePoolOptions extends LeaseOptions {
  /** Units each lease holds, an integer ≥ 1 (less when the balance has less: see `LeasePool`). */
  amount: number;
  /** Each lease's lifetime, 1–3,600 s (default: the server's, 300). */
  ttlSeconds?: number;
  /**
   * The next lease is opened once this fraction of the current one is taken, or of its time until `decidesUntil`
   * has passed (default 0.8).
   */
  refillAt?: number;
  /** After a failed open, the next waits this long, twice as long after each further failure (default 500 ms)… */
  retryMinMs?: number;
  /** …up to this (default 30,000 ms). */
  retryMaxMs?: number;
  /**
   * The most a lease of a busy balance may hold, an integer ≥ `amount` (default 4 × `amount`; `amount`: never
   * more). A balance whose lease ran dry before the next one was ready gets leases twice as large, up to this; one
   * whose lease was left with half of it or more untaken, half as large again, down to `amount`.
   */
  maxAmount?: number;
}

/**
 * Units taken from one lease of a pool: record the events of the usage they allowed on it (`record`), so that the
 * take and its events always name the same lease, or give it up (`release`) when the usage did not happen. The
 * pool closes a lease it moved on from only once each of its takes was recorded or released (or at its expiry).
 */
export class LeaseTake {
  /** The lease the units were taken from. */
  readonly lease: Lease;
  readonly units: number;
  #settle: (() => void) | null;

  /** @internal `LeasePool.tryTake` makes it. */
  constructor(lease: Lease, units: number, settle: () => void) {
    this.lease = lease;
    this.units = units;
    this.#settle = settle;
  }

  /** Whether `record` or `release` was called. */
  get settled(): boolean {
    return this.#settle === null;
  }

  /**
   * Records the events of this usage on the take's lease (`lease.record`: batched, sent with its id and a client id
   * each). Once per take: a second call throws. Throws (and the take stays open) if the lease refuses the events.
   */
  record(events: readonly EventInput[]): void {
    const settle = this.#settle;
    if (settle === null) throw new Error('this take was already recorded or released');
    this.lease.record(events);
    this.#settle = null;
    settle();
  }

  /** Gives the take up with no events (the units stay taken: the lease releases them when it is closed). */
  release(): void {
    const settle = this.#settle;
    this.#settle = null;
    settle?.();
  }
}

/** A lease of the pool, with its takes not yet recorded. */
interface Held {
  lease: Lease;
  open: number;
  retired: boolean;
  /** Resolves once it is retired and every take was recorded or released, or it expired. */
  settled: Promise<void>;
  resolve: () => void;
}

/** What to send to open a lease: kept after a failure that may have opened it, so that the retry replays it. */
interface Intent {
  id: string;
  amount: number;
  since: number;
}

/** One balance's leases. */
interface Slot {
  accountId: string;
  denomination: string;
  current: Held | null;
  next: Held | null;
  opening: Promise<boolean> | null;
  intent: Intent | null;
  failures: number;
  retryAt: number;
  /** Units the next lease asks for: `amount`, doubled while leases run dry, halved while they are half unused. */
  size: number;
  /** The lease whose running dry last doubled `size` (each lease doubles it once). */
  grewFor: Held | null;
}

/** The `available` of a 402 `insufficient_balance`, or null for any other error. */
function availableOf(err: unknown): number | null {
  if (!(err instanceof BillingError) || err.status !== 402 || err.code !== 'insufficient_balance') return null;
  const available = (err.details as { available?: unknown } | null | undefined)?.available;
  return typeof available === 'number' && Number.isInteger(available) ? available : null;
}

function checkUnits(units: number, amount: number): void {
  if (!Number.isInteger(units) || units < 1)
    throw new TypeError(`pool.tryTake: units must be an integer ≥ 1, not ${String(units)}`);
  if (units > amount) throw new RangeError(`pool.tryTake: ${units} units is more than a lease of the pool holds`);
}

/**
 * Keeps one lease per (account, denomination) open ahead of need and decides against it in this process.
 *
 * - `tryTake(accountId, denomination, units)` answers at once, never waiting on the network: a `LeaseTake` (the
 *   units are taken; record the usage's events on it) or null (refused). With no lease ready it refuses and starts
 *   opening one; `take` is the variant that waits for that opening.
 * - Once the current lease is `refillAt` (80 %) taken, or 80 % of its time has passed, the next one is opened in
 *   the background; the current one is used until it cannot carry a take, then the next one takes over and the old
 *   one is closed once its takes are recorded and sent, releasing what it still holds.
 * - A 402 `insufficient_balance` with `details.available > 0` opens a lease of what is available instead; other
 *   failures (402 with nothing available, a spend limit, the server unreachable) back off (`retryMinMs` doubling
 *   to `retryMaxMs`) and are retried by later takes. A retry after a failure that may have opened the lease sends
 *   the same client id, so that it answers that lease instead of holding a second.
 * - The server unreachable: the pool keeps deciding against the units it still holds until the lease's expiry
 *   margin (`decidesUntil`), then refuses: it fails closed, never allowing what no lease holds. Events recorded
 *   stay queued with their ids and are sent again until accepted (lease.ts); a batch the server refuses (4xx) is
 *   reported to `onError`, with open and close failures.
 * - `close()` refuses every take from the call on, waits until every take is recorded or released (at most until
 *   its lease expires), sends the events and closes every lease.
 */
export class LeasePool {
  readonly #leases: Leases;
  readonly #amount: number;
  readonly #maxAmount: number;
  readonly #ttlSeconds: number | undefined;
  readonly #refillAt: number;
  readonly #retryMinMs: number;
  readonly #retryMaxMs: number;
  readonly #leaseOptions: LeaseOptions;
  readonly #now: () => number;
  readonly #setTimer: (run: () => void, ms: number) => unknown;
  readonly #clearTimer: (handle: unknown) => void;
  readonly #slots = new Map<string, Slot>();
  readonly #held = new Set<Held>();
  #closed = false;

  /** Throws a TypeError when `amount` is not an integer ≥ 1 or `refillAt` not in (0, 1]. Opens nothing yet. */
  constructor(billing: { readonly leases: Leases }, options: LeasePoolOptions) {
    const { amount, ttlSeconds, refillAt = 0.8, retryMinMs = 500, retryMaxMs = 30_000, ...rest } = options;
    const { maxAmount = 4 * amount, ...leaseOptions } = rest;
    if (!Number.isInteger(amount) || amount < 1)
      throw new TypeError(`new LeasePool: amount must be an integer ≥ 1, not ${String(amount)}`);
    if (!Number.isInteger(maxAmount) || maxAmount < amount)
      throw new TypeError(`new LeasePool: maxAmount must be an integer ≥ amount, not ${String(maxAmount)}`);
    this.#maxAmount = maxAmount;
    if (!(refillAt > 0 && refillAt <= 1)) throw new TypeError('new LeasePool: refillAt must be in (0, 1]');
    this.#leases = billing.leases;
    this.#amount = amount;
    this.#ttlSeconds = ttlSeconds;
    this.#refillAt = refillAt;
    this.#retryMinMs = retryMinMs;
    this.#retryMaxMs = retryMaxMs;
    this.#leaseOptions = leaseOptions;
    this.#now = leaseOptions.now ?? Date.now;
    this.#setTimer = leaseOptions.setTimer ?? ((run, ms) => setTimeout(run, ms));
    this.#clearTimer = leaseOptions.clearTimer ?? ((h) => clearTimeout(h as ReturnType<typeof setTimeout>));
  }

  /**
   * Takes `units` from the balance's current lease, synchronously: a LeaseTake to record the usage's events on, or
   * null when no lease ready can carry them (none is open yet, the balance ran short, the server is unreachable
   * and the lease is past its margin, or the pool is closed). Throws a TypeError unless `units` is an integer ≥ 1,
   * and a RangeError when it is more than the pool's `amount`.
   */
  tryTake(accountId: string, denomination: string, units: number): LeaseTake | null {
    checkUnits(units, this.#amount);
    if (this.#closed) return null;
    const slot = this.#slot(accountId, denomination);
    for (;;) {
      const held = slot.current;
      if (held?.lease.tryTake(units)) {
        if (slot.next === null && slot.opening === null && this.#due(held.lease)) this.#startOpening(slot);
        held.open++;
        return new LeaseTake(held.lease, units, () => this.#settle(held));
      }
      if (slot.next === null) {
        // Ran out of units (not of time) before the next lease was ready: the next ones hold more (once per lease).
        const dry = held !== null && held.lease.remaining < units && this.#now() < held.lease.decidesUntil;
        if (dry && slot.grewFor !== held) {
          slot.grewFor = held;
          slot.size = Math.min(this.#maxAmount, slot.size * 2);
        }
        break;
      }
      if (held !== null) this.#retire(held);
      slot.current = slot.next;
      slot.next = null;
    }
    this.#startOpening(slot);
    return null;
  }

  /**
   * `tryTake`, waiting for the lease being opened when none is ready. Null when that opening failed, or the pool
   * is backing off after failures (it fails closed instead of waiting), or the lease opened cannot carry `units`.
   */
  async take(accountId: string, denomination: string, units: number): Promise<LeaseTake | null> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const take = this.tryTake(accountId, denomination, units);
      if (take !== null) return take;
      const opening = this.#slots.get(`${accountId}\n${denomination}`)?.opening ?? null;
      if (opening === null || !(await opening)) return null;
    }
    return null;
  }

  /** The lease takes are taken from now for this balance, or null (none opened yet, or the pool is closed). */
  current(accountId: string, denomination: string): Lease | null {
    return this.#slots.get(`${accountId}\n${denomination}`)?.current?.lease ?? null;
  }

  /** Sends every event recorded so far on any lease of the pool (`lease.flush` of each). */
  async flush(): Promise<void> {
    await Promise.all([...this.#held].map((h) => h.lease.flush()));
  }

  /**
   * Refuses every take from now on, waits for leases being opened, then for each lease waits until its takes are
   * recorded or released (at most until it expires), sends its events and closes it. Resolves with the records of
   * every lease the pool still had; rejects with an AggregateError of the closes that failed (call it again).
   */
  async close(): Promise<LeaseRecord[]> {
    this.#closed = true;
    await Promise.all([...this.#slots.values()].map((s) => s.opening));
    for (const slot of this.#slots.values()) {
      slot.current = null;
      slot.next = null;
    }
    const held = [...this.#held];
    for (const h of held) this.#retire(h);
    const outcomes = await Promise.allSettled(
      held.map(async (h) => {
        await h.settled;
        return h.lease.close();
      }),
    );
    const errors = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
    if (errors.length > 0)
      throw new AggregateError(errors, `${errors.length} of ${held.length} leases could not be flushed and closed`);
    return outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
  }

  #slot(accountId: string, denomination: string): Slot {
    const key = `${accountId}\n${denomination}`;
    let slot = this.#slots.get(key);
    if (slot === undefined) {
      if (typeof accountId !== 'string' || accountId === '' || typeof denomination !== 'string' || denomination === '')
        throw new TypeError('pool.tryTake: accountId and denomination must be non-empty strings');
      slot = {
        accountId,
        denomination,
        current: null,
        next: null,
        opening: null,
        intent: null,
        failures: 0,
        retryAt: 0,
        size: this.#amount,
        grewFor: null,
      };
      this.#slots.set(key, slot);
    }
    return slot;
  }

  /** Whether the next lease should be opened: this one is `refillAt` taken or through its time, or unusable. */
  #due(lease: Lease): boolean {
    if (!lease.usable || lease.taken >= this.#refillAt * lease.amount) return true;
    return this.#now() >= lease.openedAt + this.#refillAt * (lease.decidesUntil - lease.openedAt);
  }

  #startOpening(slot: Slot): void {
    if (this.#closed || slot.opening !== null || slot.next !== null || this.#now() < slot.retryAt) return;
    const opening = this.#open(slot).finally(() => {
      slot.opening = null;
    });
    slot.opening = opening;
  }

  /** Opens a lease for the slot; true once one is installed. Never rejects: failures back off and are reported. */
  async #open(slot: Slot): Promise<boolean> {
    let amount = slot.size;
    for (let attempt = 0; attempt < 3; attempt++) {
      // A lease an earlier attempt may have opened has expired by now: no use replaying it.
      if (slot.intent !== null && this.#now() - slot.intent.since >= (this.#ttlSeconds ?? 300) * 1000)
        slot.intent = null;
      slot.intent ??= { id: `lp_${newIdempotencyKey().slice(3)}`, amount, since: this.#now() };
      const { id, since, amount: sent } = slot.intent;
      const ttl = this.#ttlSeconds === undefined ? {} : { ttlSeconds: this.#ttlSeconds };
      try {
        const params = { amount: sent, id, since, ...ttl };
        const lease = await this.#leases.open(slot.accountId, slot.denomination, params, this.#leaseOptions);
        slot.intent = null;
        slot.failures = 0;
        return this.#install(slot, lease);
      } catch (error) {
        this.#report(slot, error);
        // A refusal opened nothing under the id; another failure may have: its retry sends the same intent.
        if (refused(error)) slot.intent = null;
        const available = availableOf(error);
        if (available === null || available <= 0 || available >= sent || this.#closed) break;
        amount = available;
      }
    }
    slot.failures++;
    slot.retryAt = this.#now() + Math.min(this.#retryMaxMs, this.#retryMinMs * 2 ** (slot.failures - 1));
    return false;
  }

  /** Makes the lease opened the slot's current one (or its next, while the current one is still usable). */
  #install(slot: Slot, lease: Lease): boolean {
    let resolve = () => {};
    const settled = new Promise<void>((r) => {
      resolve = r;
    });
    const held: Held = { lease, open: 0, retired: false, settled, resolve };
    this.#held.add(held);
    if (this.#closed || !lease.usable) {
      this.#retire(held);
      return false;
    }
    if (slot.current?.lease.usable) slot.next = held;
    else {
      if (slot.current !== null) this.#retire(slot.current);
      slot.current = held;
    }
    return true;
  }

  #settle(held: Held): void {
    held.open--;
    if (held.retired && held.open === 0) held.resolve();
  }

  /** No more takes from it: closed once its takes are recorded or released, or at its expiry. */
  #retire(held: Held): void {
    if (held.retired) return;
    held.retired = true;
    // Half of it or more left untaken: the next leases of the balance hold less again.
    const { lease } = held;
    const slot = this.#slots.get(`${lease.accountId}\n${lease.denomination}`);
    if (slot !== undefined && 2 * lease.taken <= lease.amount)
      slot.size = Math.max(this.#amount, Math.floor(slot.size / 2));
    if (held.open === 0) held.resolve();
    else {
      const timer = this.#setTimer(held.resolve, Math.max(0, held.lease.expiresAt - this.#now()));
      void held.settled.then(() => this.#clearTimer(timer));
    }
    void held.settled.then(() => this.#closeRetired(held, 0));
  }

  /** Closes a retired lease (flushing first), retrying with back-off until it succeeds or the pool is closed. */
  #closeRetired(held: Held, failures: number): void {
    held.lease.close().then(
      () => {
        this.#held.delete(held);
      },
      () => {
        if (this.#closed) return;
        const waitMs = Math.min(this.#retryMaxMs, this.#retryMinMs * 2 ** failures);
        this.#setTimer(() => this.#closeRetired(held, failures + 1), waitMs);
      },
    );
  }

  #report(slot: Slot, error: unknown): void {
    const { accountId, denomination } = slot;
    const failure: LeaseFailure = {
      kind: 'open',
      accountId,
      denomination,
      leaseId: null,
      events: [],
      dropped: false,
      error,
    };
    try {
      this.#leaseOptions.onError?.(failure);
    } catch {
      // A throwing onError must not stop the pool from backing off and retrying.
    }
  }
}
