// Guarantee: a Lease of the TypeScript client decides in memory and never takes more than it holds, under any number
// of interleaved callers; it refuses from its expiry margin on, by the clock it was given (not the server's); the
// events it records are sent in requests of at most 1,000, within 100 ms by its timer, each with the lease's id and a
// client id of its own; a batch that failed is sent again with the SAME ids (never deducted twice), one the server
// refuses (4xx) is reported and dropped; close() sends what is queued before it closes. A LeasePool opens the next
// lease at 80 %, closes the one it moved on from once its takes are recorded, opens what is available on a 402, and
// fails closed when the server is unreachable past the lease's margin, sending the queued events once it is back.
// No network: a fake fetch answers like the server, and a fake clock and timer stand in for time.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  Billing,
  BillingError,
  type EventInput,
  type LeaseFailure,
  LeasePool,
  type LeaseRecord,
} from '../../sdk/typescript/src/index.js';
import { until } from '../support/wait.js';

const T0 = Date.UTC(2026, 0, 5, 10);

/** A clock and timers that move only when told to. */
class FakeTime {
  now = T0;
  #timers: { at: number; run: () => void }[] = [];
  setTimer = (run: () => void, ms: number): unknown => {
    const t = { at: this.now + ms, run };
    this.#timers.push(t);
    return t;
  };
  clearTimer = (handle: unknown): void => {
    this.#timers = this.#timers.filter((t) => t !== handle);
  };
  get timers(): number {
    return this.#timers.length;
  }
  /** Moves the clock `ms` forward, running each timer that comes due, in order. */
  advance(ms: number): void {
    const to = this.now + ms;
    for (;;) {
      const due = this.#timers.filter((t) => t.at <= to).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.#timers = this.#timers.filter((t) => t !== due);
      this.now = Math.max(this.now, due.at);
      due.run();
    }
    this.now = to;
  }
  get options() {
    return { now: () => this.now, setTimer: this.setTimer, clearTimer: this.clearTimer };
  }
}

interface FakeLease extends Omit<LeaseRecord, 'remaining' | 'expires_at' | 'created_at'> {
  createdMs: number;
  expiresMs: number;
}
interface Seen {
  method: string;
  path: string;
  body: any;
  key: string | null;
}
/** What the next request meets: no answer (`down`), applied then no answer (`lost`), or this status. */
type Fault = 'down' | 'lost' | number;

/** The server's leases and events, in memory: holds, lease-first draws, client ids, close and expiry. */
class FakeEngine {
  readonly requests: Seen[] = [];
  readonly balances = new Map<string, { amount: number; pending: number }>();
  readonly leases = new Map<string, FakeLease>();
  /** Every event recorded, by client id. */
  readonly events = new Map<string, { cost: number; json: string }>();
  readonly faults: Fault[] = [];
  down = false;
  /** How far the server's clock is ahead of the client's. */
  skewMs = 0;
  #n = 0;
  constructor(readonly time: FakeTime) {}

  fetch = async (input: Request): Promise<Response> => {
    const url = new URL(input.url);
    const text = await input.text();
    const seen = {
      method: input.method,
      path: url.pathname,
      body: text ? JSON.parse(text) : null,
      key: input.headers.get('idempotency-key'),
    };
    this.requests.push(seen);
    const fault = this.down ? 'down' : this.faults.shift();
    if (fault === 'down') throw new TypeError('fetch failed (the engine is down)');
    if (typeof fault === 'number') return json(fault, error(fault === 400 ? 'invalid_request' : 'internal', 'test'));
    const answer = this.#route(seen);
    if (fault === 'lost') throw new TypeError('fetch failed (the answer was lost)');
    return answer;
  };

  #route({ method, path, body }: Seen): Response {
    const now = this.time.now + this.skewMs;
    let m = /^\/v1\/accounts\/([^/]+)\/leases$/.exec(path);
    if (m && method === 'POST') return this.#open(m[1]!, body, now);
    m = /^\/v1\/accounts\/([^/]+)\/events$/.exec(path);
    if (m && method === 'POST') return this.#ingest(m[1]!, body, now);
    m = /^\/v1\/leases\/([^/]+)(\/close)?$/.exec(path);
    const l = m ? this.leases.get(m[1]!) : undefined;
    if (l === undefined) return json(404, error('not_found', 'not_found'));
    this.#expire(l, now);
    if (m?.[2] === undefined) return json(200, { data: present(l) });
    if (l.status === 'expired') return json(409, error('conflict', 'lease_expired'));
    if (l.status === 'open') Object.assign(l, this.#release(l), { status: 'closed', closed_at: iso(now) });
    return json(200, { data: present(l) });
  }

  #open(account: string, body: any, now: number): Response {
    const earlier = [...this.leases.values()].find((l) => body.id !== undefined && l.id === body.id);
    if (earlier) return json(201, { data: present(earlier) });
    const b = this.balances.get(account)!;
    const available = b.amount - b.pending;
    if (available < body.amount)
      return json(402, error('insufficient_balance', 'insufficient_balance', { denomination: 'tokens', available }));
    b.pending += body.amount;
    const lease_id = `ls_${++this.#n}x`;
    const expiresMs = now + (body.ttl_seconds ?? 300) * 1000;
    const l: FakeLease = {
      ...{ lease_id, id: body.id ?? null, account_id: account, denomination: body.denomination },
      ...{ amount: body.amount, used: 0, released: 0, status: 'open', closed_at: null, createdMs: now, expiresMs },
    };
    this.leases.set(lease_id, l);
    return json(201, { data: present(l) });
  }

  #ingest(account: string, body: { events: EventInput[]; lease_id?: string }, now: number): Response {
    const b = this.balances.get(account)!;
    for (const e of body.events) {
      const id = e.id!;
      const cost = e.cost_override!.amount;
      const j = JSON.stringify(e);
      const earlier = this.events.get(id);
      if (earlier !== undefined) {
        if (earlier.json !== j) return json(409, error('conflict', 'event_id_reused_with_different_content'));
        continue;
      }
      this.events.set(id, { cost, json: j });
      const l = this.leases.get(e.lease_id ?? body.lease_id ?? '');
      if (l) this.#expire(l, now);
      const covered = l?.status === 'open' ? Math.min(cost, l.amount - l.used - l.released) : 0;
      if (l) l.used += covered;
      b.pending -= covered;
      b.amount -= cost;
    }
    return json(200, { events_submitted: body.events.length, event_ids: body.events.map((e) => e.id) });
  }

  #expire(l: FakeLease, now: number): void {
    if (l.status === 'open' && now >= l.expiresMs)
      Object.assign(l, this.#release(l), { status: 'expired', closed_at: iso(l.expiresMs) });
  }

  #release(l: FakeLease): { released: number } {
    const rest = l.amount - l.used - l.released;
    this.balances.get(l.account_id)!.pending -= rest;
    return { released: l.released + rest };
  }

  /** The requests of one kind: `events`, `leases` (opens) or `close`. */
  sent(kind: 'events' | 'leases' | 'close'): Seen[] {
    return this.requests.filter((r) => r.method === 'POST' && r.path.endsWith(`/${kind}`));
  }
}

const iso = (ms: number) => new Date(ms).toISOString();
const present = ({ createdMs, expiresMs, ...l }: FakeLease): LeaseRecord => ({
  ...l,
  remaining: l.status === 'open' ? l.amount - l.used - l.released : 0,
  created_at: iso(createdMs),
  expires_at: iso(expiresMs),
});
const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const error = (type: string, code: string, details?: unknown) => ({
  error: { type, code, message: `${code} (test)`, ...(details === undefined ? {} : { details }) },
});
const cost = (amount: number): EventInput => ({ type: 'call', cost_override: { amount, denomination: 'tokens' } });
const ids = (r: Seen) => (r.body.events as EventInput[]).map((e) => e.id);

function setup(balance = 1_000_000) {
  const time = new FakeTime();
  const engine = new FakeEngine(time);
  engine.balances.set('a_1', { amount: balance, pending: 0 });
  const billing = new Billing({
    baseUrl: 'http://engine.test',
    companyId: 'c_test',
    apiKey: 'sk_test',
    fetch: engine.fetch,
    maxRetries: 0,
  });
  const failures: LeaseFailure[] = [];
  const options = { ...time.options, onError: (f: LeaseFailure) => failures.push(f) };
  const open = (amount: number, extra: { ttlSeconds?: number; expiryMarginMs?: number } = {}) =>
    billing.leases.open('a_1', 'tokens', { amount, ...extra }, { ...options, ...extra });
  return { time, engine, billing, failures, options, open, balance: () => engine.balances.get('a_1')! };
}

describe('Lease: local decisions', () => {
  test('tryTake keeps exact accounting and never takes more than the lease holds', async () => {
    const { open, engine } = setup();
    const lease = await open(100);
    assert.deepEqual([lease.amount, lease.taken, lease.remaining, lease.state], [100, 0, 100, 'open']);
    assert.match(lease.leaseId, /^ls_/);
    const allowed = [7, 30, 50, 20, 13, 1].filter((u) => lease.tryTake(u));
    assert.deepEqual(allowed, [7, 30, 50, 13], '20 would pass the 100 held; 13 fits exactly; then nothing');
    assert.deepEqual([lease.taken, lease.remaining, lease.usable], [100, 0, false]);
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '3' as unknown as number])
      assert.throws(() => lease.tryTake(bad), TypeError);
    let seed = 7;
    const other = await open(1_000);
    let sum = 0;
    for (let i = 0; i < 5_000; i++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      const units = 1 + (seed % 9);
      if (other.tryTake(units)) sum += units;
      assert.ok(other.taken <= other.amount);
    }
    assert.equal(sum, other.taken);
    assert.equal(sum, 1_000, 'takes of 1 unit come until the last unit is taken');
    assert.equal(engine.sent('events').length, 0, 'deciding sends nothing');
  });

  test('10,000 interleaved async callers in one process never take more than the lease holds', async () => {
    const { open } = setup();
    const lease = await open(5_000);
    const units = await Promise.all(
      Array.from({ length: 10_000 }, async (_, i) => {
        for (let k = 0; k < i % 7; k++) await null;
        const u = 1 + (i % 3);
        return lease.tryTake(u) ? u : 0;
      }),
    );
    const sum = units.reduce((a, b) => a + b, 0);
    assert.equal(sum, lease.taken);
    assert.equal(sum, 5_000, 'every unit taken once, none twice');
  });

  test('tryTake refuses from the expiry margin on, by its own clock, whatever the server’s clock', async () => {
    const { open, time, engine } = setup();
    engine.skewMs = 3_600_000; // the server's clock an hour ahead: the lease's lifetime is what counts
    const lease = await open(100, { ttlSeconds: 60 });
    assert.equal(lease.expiresAt, T0 + 60_000);
    assert.equal(lease.decidesUntil, T0 + 50_000, 'the default margin: 10 s');
    time.advance(49_999);
    assert.equal(lease.tryTake(1), true);
    time.advance(1);
    assert.deepEqual([lease.tryTake(1), lease.usable, lease.taken], [false, false, 1]);
    const tight = await open(100, { ttlSeconds: 60, expiryMarginMs: 1_000 });
    time.advance(58_999);
    assert.equal(tight.tryTake(1), true);
    time.advance(1);
    assert.equal(tight.tryTake(1), false);
  });

  test('events go in requests of at most 1,000, within 100 ms, with the lease id and unique ids', async () => {
    const { open, time, engine, balance } = setup();
    const lease = await open(10_000);
    lease.record([cost(1), cost(2), { ...cost(3), id: 'mine-1' }]);
    time.advance(99);
    await new Promise((r) => setImmediate(r));
    assert.equal(engine.sent('events').length, 0, 'not before 100 ms');
    time.advance(1);
    await until('the first batch', () => engine.sent('events').length === 1);
    const [first] = engine.sent('events');
    assert.equal(first!.body.lease_id, lease.leaseId);
    assert.equal(ids(first!)[2], 'mine-1', 'an id of the caller’s is kept');
    assert.match(String(ids(first!)[0]), new RegExp(`^${lease.leaseId}\\.[0-9a-f]{8}\\.1$`));
    lease.record(Array.from({ length: 2_500 }, () => cost(1)));
    await until('2,500 more sent', () => engine.events.size === 2_503);
    for (let i = 0; i < 1_200; i++) lease.record([cost(1)]);
    await lease.flush();
    const sizes = engine.sent('events').map((r) => r.body.events.length);
    assert.deepEqual(sizes.slice(0, 4), [3, 1_000, 1_000, 500], 'a full batch goes at once, without the timer');
    assert.ok(
      sizes.every((s) => s <= 1_000),
      String(sizes),
    );
    const all = engine.sent('events').flatMap(ids);
    assert.equal(new Set(all).size, all.length, 'every event has its own id');
    assert.deepEqual([engine.events.size, lease.unsent], [3_703, 0]);
    assert.deepEqual([balance().amount, engine.leases.get(lease.leaseId)!.used], [1_000_000 - 3_706, 3_706]);
  });

  test('a failed batch stays queued, sent again with the SAME ids; a lost answer: not deducted twice', async () => {
    const { open, time, engine, failures, balance } = setup();
    const lease = await open(100);
    engine.faults.push('down');
    lease.record([cost(5), cost(6)]);
    time.advance(100);
    await until('the failure reported', () => failures.length === 1);
    assert.deepEqual([failures[0]!.kind, failures[0]!.dropped, failures[0]!.events.length], ['batch', false, 2]);
    assert.ok(failures[0]!.error instanceof BillingError && failures[0]!.error.type === 'connection_error');
    assert.deepEqual([lease.unsent, engine.events.size], [2, 0]);
    time.advance(200); // the retry timer: twice the interval after one failure
    await until('sent again', () => engine.events.size === 2);
    const [a, b] = engine.sent('events');
    assert.deepEqual(ids(b!), ids(a!), 'the same event ids');
    assert.equal(b!.key, a!.key, 'the same Idempotency-Key');
    engine.faults.push('lost'); // applied by the server, the answer never arrives
    lease.record([cost(7)]);
    await assert.rejects(lease.flush(), BillingError);
    engine.down = true;
    await assert.rejects(lease.flush(), BillingError, 'flush rejects while the batch cannot be sent');
    engine.down = false;
    await lease.flush();
    const sent = engine.sent('events');
    assert.deepEqual(ids(sent.at(-1)!), ids(sent.at(-2)!));
    assert.deepEqual([engine.events.size, lease.unsent], [3, 0]);
    assert.deepEqual([balance().amount, engine.leases.get(lease.leaseId)!.used], [1_000_000 - 18, 18], 'once each');
  });

  test('a batch the server refuses (4xx) is reported to onError and dropped, never sent again', async () => {
    const { open, time, engine, failures } = setup();
    const lease = await open(100);
    engine.faults.push(400);
    lease.record([cost(1), cost(2)]);
    await lease.flush();
    assert.deepEqual([failures.length, failures[0]!.dropped, failures[0]!.events.length], [1, true, 2]);
    assert.equal((failures[0]!.error as BillingError).status, 400);
    time.advance(60_000);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual([engine.sent('events').length, lease.unsent, time.timers], [1, 0, 0], 'not retried');
    lease.record([cost(3)]);
    await lease.flush();
    assert.deepEqual([engine.events.size, engine.sent('events').length], [1, 2], 'later events are sent as usual');
  });

  test('close() sends queued events, then closes; nothing taken after, events recorded after are sent', async () => {
    const { open, time, engine, balance } = setup();
    const lease = await open(100);
    assert.equal(lease.tryTake(30), true);
    lease.record([cost(30)]);
    const closed = await lease.close();
    const after = engine.requests.slice(1).map((r) => r.path);
    assert.deepEqual(after, ['/v1/accounts/a_1/events', `/v1/leases/${lease.leaseId}/close`], 'events, then close');
    assert.deepEqual([closed.status, closed.used, closed.released], ['closed', 30, 70]);
    assert.deepEqual([lease.state, lease.tryTake(1)], ['closed', false]);
    assert.deepEqual(await lease.close(), closed, 'closing again answers the same record');
    assert.deepEqual([balance().amount, balance().pending], [1_000_000 - 30, 0]);
    // Usage recorded late (the call outlived the lease) is never lost: charged to the balance as ordinary usage.
    lease.record([cost(4)]);
    await lease.flush();
    assert.deepEqual([balance().amount, balance().pending], [1_000_000 - 34, 0]);
    assert.equal(engine.sent('events').length, 2);
    const expiring = await open(50, { ttlSeconds: 10 });
    time.advance(10_000);
    const expired = await expiring.close(); // the server answers 409 lease_expired: the client reads it
    assert.deepEqual([expired.status, expired.released, balance().pending], ['expired', 50, 0]);
  });
});

describe('LeasePool', () => {
  test('opens the next lease at 80 % and closes the old one once its takes are recorded and sent', async () => {
    const { billing, engine, options, balance } = setup();
    const pool = new LeasePool(billing, { amount: 100, ...options });
    assert.equal(pool.tryTake('a_1', 'tokens', 10), null, 'no lease yet: refused, and one is being opened');
    await until('a lease', () => pool.current('a_1', 'tokens'));
    const t1 = pool.tryTake('a_1', 'tokens', 70)!;
    assert.equal(engine.sent('leases').length, 1, '70 %: no second lease');
    const t2 = pool.tryTake('a_1', 'tokens', 10)!;
    await until('the next lease opened at 80 %', () => engine.sent('leases').length === 2);
    const t3 = await until('a take from the next lease', () => pool.tryTake('a_1', 'tokens', 25));
    assert.notEqual(t3.lease, t1.lease, '20 units left: the next lease takes over');
    assert.equal(t2.lease, t1.lease);
    t1.record([cost(70)]);
    await t1.lease.flush();
    assert.equal(engine.sent('close').length, 0, 'not closed while a take of it is not recorded');
    t2.record([cost(10)]);
    await until('the old lease closed', () => engine.sent('close').length === 1);
    assert.equal(engine.requests.at(-2)!.path, '/v1/accounts/a_1/events', 'its events were sent first');
    const old = engine.leases.get(t1.lease.leaseId)!;
    assert.deepEqual([old.status, old.used, old.released], ['closed', 80, 20]);
    t3.record([cost(25)]);
    const records = await pool.close();
    assert.deepEqual(
      records.map((r) => [r.status, r.used]),
      [['closed', 25]],
    );
    assert.deepEqual([balance().amount, balance().pending], [1_000_000 - 105, 0]);
    assert.equal(pool.tryTake('a_1', 'tokens', 1), null, 'a closed pool refuses');
  });

  test('a balance whose lease runs dry gets larger leases, up to maxAmount; half untaken, smaller again', async () => {
    const { billing, engine, options, time, failures } = setup();
    const pool = new LeasePool(billing, { amount: 100, maxAmount: 300, ttlSeconds: 100, ...options });
    const asked = () => engine.sent('leases').map((r) => r.body.amount);
    const take = (units: number, what: string) => until(what, () => pool.tryTake('a_1', 'tokens', units));
    const first = (await pool.take('a_1', 'tokens', 1))!;
    // The next lease cannot be opened (the engine unreachable) when the current one reaches 80 %.
    engine.down = true;
    const second = pool.tryTake('a_1', 'tokens', 89)!;
    await until('the next lease asked for, in vain', () => failures.length === 1);
    assert.equal(pool.tryTake('a_1', 'tokens', 20), null, '10 units left: dry');
    assert.equal(pool.tryTake('a_1', 'tokens', 20), null, 'refused again: the size grows once per lease');
    engine.down = false;
    time.advance(1_000); // past the back-off
    // The open that may have reached the engine is sent again as it was (its id, its 100: never a second lease)…
    const third = await take(20, 'the lease opened again');
    assert.equal(third.lease.amount, 100);
    // …and the next one holds twice as much.
    time.advance(50_000);
    const fourth = pool.tryTake('a_1', 'tokens', 70)!;
    await until('a lease of 200', () => asked().includes(200));
    // The 100 goes past its time (its margin), the 200 takes over and is hardly used before its own time is up.
    time.advance(45_000);
    const fifth = await take(1, 'a take from the 200');
    assert.equal(fifth.lease.amount, 200);
    time.advance(50_000);
    assert.equal(pool.tryTake('a_1', 'tokens', 1), null, 'the 200 is past its time, no next one yet');
    const sixth = await take(1, 'a take from the lease after the 200');
    assert.equal(sixth.lease.amount, 200, 'asked for before the 200 was given up');
    // The 200 left 199 untaken: the lease after the next holds 100 again.
    time.advance(80_000);
    const seventh = await take(1, 'a take at 80 % of its time');
    await until('one more lease asked for', () => asked().length === 6);
    assert.deepEqual(asked(), [100, 100, 100, 200, 200, 100], 'never above maxAmount');
    for (const t of [first, second, third, fourth, fifth, sixth, seventh]) t.record([cost(t.units)]);
    await pool.close();
    assert.throws(() => new LeasePool(billing, { amount: 100, maxAmount: 99 }), TypeError);
  });

  test('opens a smaller lease of what is available on a 402 insufficient_balance', async () => {
    const { billing, engine, options, failures, balance } = setup(30);
    const pool = new LeasePool(billing, { amount: 100, ...options });
    const t = (await pool.take('a_1', 'tokens', 5))!;
    assert.deepEqual(
      engine.sent('leases').map((r) => r.body.amount),
      [100, 30],
    );
    assert.equal(t.lease.amount, 30);
    assert.deepEqual([failures[0]!.kind, (failures[0]!.error as BillingError).code], ['open', 'insufficient_balance']);
    t.record([cost(5)]);
    let taken = 5;
    for (let t2 = pool.tryTake('a_1', 'tokens', 5); t2 !== null; t2 = pool.tryTake('a_1', 'tokens', 5)) {
      t2.record([cost(5)]);
      taken += 5;
    }
    assert.equal(taken, 30);
    assert.equal(await pool.take('a_1', 'tokens', 1), null, 'nothing available: refused');
    await pool.close();
    assert.deepEqual([balance().amount, balance().pending], [0, 0], 'never below 0');
  });

  test('fails closed when the server is unreachable past the margin; queued events go once it is back', async () => {
    const { billing, engine, options, time, balance } = setup(10_000);
    const pool = new LeasePool(billing, { amount: 1_000, ttlSeconds: 60, ...options });
    const first = (await pool.take('a_1', 'tokens', 1))!;
    first.record([cost(1)]);
    engine.down = true;
    let taken = 1;
    let refusedAt: number | null = null;
    for (let s = 1; s <= 54; s++) {
      time.advance(1_000);
      await new Promise((r) => setImmediate(r));
      const t = pool.tryTake('a_1', 'tokens', 3);
      if (t === null) refusedAt ??= time.now;
      else {
        assert.equal(refusedAt, null, 'no take once refused');
        t.record([cost(3)]);
        taken += 3;
      }
    }
    assert.equal(refusedAt, first.lease.decidesUntil, 'refused from the margin on (50 s), never on no lease held');
    assert.equal(await pool.take('a_1', 'tokens', 1), null, 'take does not wait: it fails closed');
    assert.deepEqual([taken, engine.events.size, first.lease.unsent], [1 + 49 * 3, 0, 50], 'nothing lost meanwhile');
    engine.down = false;
    time.advance(5_000); // the lease's retry timer (backed off to 5 s)
    await until('the queued events sent', () => engine.events.size === 50);
    const sent = engine.sent('events').flatMap(ids);
    assert.equal(new Set(sent).size, 50, 'the same ids on every attempt');
    await pool.close();
    assert.deepEqual([balance().amount, balance().pending], [10_000 - taken, 0]);
    assert.equal(engine.leases.get(first.lease.leaseId)!.used, taken, 'all covered by the lease');
  });
});
