// Guarantees (contract "Leases"), over HTTP on SQLite and PostgreSQL:
// - a lease holds its amount like a pending event (pending up, available down), from the balance's grants;
// - events naming it take their cost from what it still holds first, then from the balance; `used`/`remaining`
//   stay exact over many requests, and 50 concurrent requests never draw it below 0;
// - close releases the rest at once (closing again answers the same record); at `expires_at` a read sees it
//   released with no job run, and closing it then is 409; events naming a lease no longer open are ordinary;
// - 402 when available is short or a spend limit would be passed (nothing held); the lease counts as spend once;
// - a client id replays the same lease; pending + lease_id, an unknown lease, another account's or another
//   denomination's are 400 naming the event; another company's account or lease 404; bad input 400, never 500;
// - the ledger audit (pending = Σ pending events + Σ open leases' remaining, grants' held) is clean after each test.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import {
  assertError,
  createAccountWithBalance,
  HTTP_DIALECTS,
  signUpCompany,
  startHarness,
  type Harness,
} from '../support/harness.js';

type Auth = [string, string];

interface LeaseJson {
  lease_id: string;
  id: string | null;
  account_id: string;
  denomination: string;
  amount: number;
  used: number;
  remaining: number;
  released: number;
  status: 'open' | 'closed' | 'expired';
  expires_at: string;
  created_at: string;
  closed_at: string | null;
}

for (const dialect of HTTP_DIALECTS) {
  describe(`leases (${dialect})`, () => {
    let h: Harness;
    let co: { companyId: string; auth: Auth };
    let other: { companyId: string; auth: Auth };
    before(async () => {
      h = await startHarness(dialect);
      co = await signUpCompany(h);
      other = await signUpCompany(h, 'Other');
    });
    after(async () => h.close());
    afterEach(async () => h.audit());

    const call = (method: string, path: string, body?: unknown, auth: Auth = co.auth) =>
      h.request(method, path, body === undefined ? { auth } : { auth, body });
    const cost = (amount: number, extra: object = {}) => ({
      type: 'call',
      cost_override: { amount, denomination: 'tokens' },
      ...extra,
    });
    async function balance(acc: string) {
      const r = await call('GET', `/v1/accounts/${acc}/balance/tokens`);
      assert.equal(r.status, 200, r.text);
      return r.body.data as { amount: number; pending: number; available: number; spend: { day: number } };
    }
    async function open(acc: string, body: object): Promise<LeaseJson> {
      const r = await call('POST', `/v1/accounts/${acc}/leases`, { denomination: 'tokens', ...body });
      assert.equal(r.status, 201, r.text);
      return r.body.data;
    }
    async function lease(id: string): Promise<LeaseJson> {
      const r = await call('GET', `/v1/leases/${id}`);
      assert.equal(r.status, 200, r.text);
      return r.body.data;
    }
    async function ingest(acc: string, events: object[], extra: object = {}) {
      const r = await call('POST', `/v1/accounts/${acc}/events`, { events, ...extra });
      assert.equal(r.status, 200, r.text);
      return r.body;
    }
    async function now(): Promise<number> {
      const r = await call('GET', '/v1/test_clock');
      assert.equal(r.status, 200, r.text);
      return Date.parse(r.body.data.now);
    }
    /** Moves the clock without running any job: reads and writes must see the lease released by themselves. */
    function jump(toMs: number): void {
      assert.ok((h.server.clock as unknown as { advanceTo(ms: number): boolean }).advanceTo(toMs));
    }

    test('a lease holds its amount; events take from it first, then from the balance', async () => {
      const acc = await createAccountWithBalance(h, co, 'tokens', 1000);
      const l = await open(acc, { amount: 100 });
      assert.match(l.lease_id, /^ls_/);
      assert.deepEqual(
        { ...l, lease_id: '', expires_at: '', created_at: '' },
        {
          lease_id: '',
          id: null,
          account_id: acc,
          denomination: 'tokens',
          amount: 100,
          used: 0,
          remaining: 100,
          released: 0,
          status: 'open',
          expires_at: '',
          created_at: '',
          closed_at: null,
        },
      );
      assert.equal(Date.parse(l.expires_at) - Date.parse(l.created_at), 300_000, 'ttl_seconds defaults to 300');
      assert.deepEqual(await balance(acc), { ...(await balance(acc)), amount: 1000, pending: 100, available: 900 });
      const grants = await call('GET', `/v1/accounts/${acc}/balance/tokens/grants`);
      assert.equal(grants.body.data[0].held, 100, 'the lease holds units of the grant');

      await ingest(acc, [cost(30, { lease_id: l.lease_id })]);
      assert.deepEqual([(await lease(l.lease_id)).used, (await lease(l.lease_id)).remaining], [30, 70]);
      let b = await balance(acc);
      assert.deepEqual([b.amount, b.pending, b.available], [970, 70, 900], 'covered usage leaves available as it was');

      // 100 more: 70 from the lease, 30 from the balance.
      await ingest(acc, [cost(100)], { lease_id: l.lease_id });
      const used = await lease(l.lease_id);
      assert.deepEqual([used.used, used.remaining, used.status], [100, 0, 'open']);
      b = await balance(acc);
      assert.deepEqual([b.amount, b.pending, b.available], [870, 0, 870]);
      const listed = await call('GET', `/v1/accounts/${acc}/events?limit=5`);
      assert.ok(listed.body.data.every((e: { lease_id?: string }) => e.lease_id === l.lease_id));
      const txs = await call('GET', `/v1/accounts/${acc}/transactions?limit=10`);
      assert.deepEqual(
        txs.body.data.filter((t: { kind: string }) => t.kind === 'usage').map((t: { amount: number }) => t.amount),
        [-100, -30],
        'events are ordinary usage in the ledger',
      );
    });

    test('used and remaining stay exact over many requests, and the check sees the lease', async () => {
      const acc = await createAccountWithBalance(h, co, 'tokens', 1000);
      const l = await open(acc, { amount: 100 });
      const check = await call('POST', `/v1/accounts/${acc}/check`, { events: [cost(120)], lease_id: l.lease_id });
      assert.equal(check.status, 200, check.text);
      assert.deepEqual(check.body.data.balances, [{ denomination: 'tokens', available: 900, available_after: 880 }]);
      for (let i = 0; i < 20; i++) await ingest(acc, [cost(7, { lease_id: l.lease_id, id: `many-${acc}-${i}` })]);
      // A replayed client id is not charged again, lease or not.
      await ingest(acc, [cost(7, { lease_id: l.lease_id, id: `many-${acc}-0` })]);
      const after = await lease(l.lease_id);
      assert.deepEqual([after.used, after.remaining], [100, 0]);
      const b = await balance(acc);
      assert.deepEqual([b.amount, b.pending, b.available], [1000 - 140, 0, 860]);
    });

    test('50 concurrent requests on one lease never draw it below 0', async () => {
      const acc = await createAccountWithBalance(h, co, 'tokens', 1000);
      const l = await open(acc, { amount: 100 });
      const replies = await Promise.all(
        Array.from({ length: 50 }, () =>
          call('POST', `/v1/accounts/${acc}/events`, [cost(3, { lease_id: l.lease_id })]),
        ),
      );
      for (const r of replies) assert.equal(r.status, 200, r.text);
      const after = await lease(l.lease_id);
      assert.deepEqual([after.used, after.remaining], [100, 0]);
      const b = await balance(acc);
      assert.deepEqual([b.amount, b.pending], [1000 - 150, 0]);
    });

    test('close releases the rest at once; again: the same record; afterwards events are ordinary', async () => {
      const acc = await createAccountWithBalance(h, co, 'tokens', 1000);
      const l = await open(acc, { amount: 100 });
      await ingest(acc, [cost(40, { lease_id: l.lease_id })]);
      const closed = await call('POST', `/v1/leases/${l.lease_id}/close`);
      assert.equal(closed.status, 200, closed.text);
      assert.deepEqual(
        [closed.body.data.status, closed.body.data.used, closed.body.data.remaining, closed.body.data.released],
        ['closed', 40, 0, 60],
      );
      assert.equal(typeof closed.body.data.closed_at, 'string');
      let b = await balance(acc);
      assert.deepEqual([b.amount, b.pending, b.available], [960, 0, 960]);
      const again = await call('POST', `/v1/leases/${l.lease_id}/close`);
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(again.body.data, closed.body.data);
      await ingest(acc, [cost(10, { lease_id: l.lease_id })]);
      b = await balance(acc);
      assert.deepEqual([b.amount, b.pending], [950, 0]);
      assert.equal((await lease(l.lease_id)).used, 40, 'a closed lease is not drawn');
      const list = await call('GET', `/v1/accounts/${acc}/leases?status=closed`);
      assert.deepEqual(
        list.body.data.map((x: LeaseJson) => x.lease_id),
        [l.lease_id],
      );
    });

    test('at expires_at a read sees the lease released, with no job run; closing it then is 409', async () => {
      const acc = await createAccountWithBalance(h, co, 'tokens', 1000);
      const l = await open(acc, { amount: 100, ttl_seconds: 60 });
      await ingest(acc, [cost(25, { lease_id: l.lease_id })]);
      const expiresAt = Date.parse(l.expires_at);
      assert.equal(expiresAt, (await now()) + 60_000);
      jump(expiresAt - 1);
      assert.equal((await lease(l.lease_id)).status, 'open');
      assert.equal((await balance(acc)).pending, 75);
      jump(expiresAt);
      const expired = await lease(l.lease_id);
      assert.deepEqual(
        [expired.status, expired.used, expired.remaining, expired.released, expired.closed_at],
        ['expired', 25, 0, 75, l.expires_at],
      );
      let b = await balance(acc);
      assert.deepEqual([b.amount, b.pending, b.available], [975, 0, 975]);
      const open_ = await call('GET', `/v1/accounts/${acc}/leases?status=open`);
      assert.deepEqual(open_.body.data, []);
      const listed = await call('GET', `/v1/accounts/${acc}/leases?status=expired`);
      assert.deepEqual(
        listed.body.data.map((x: LeaseJson) => x.lease_id),
        [l.lease_id],
      );
      // An event naming it now is charged to the balance alone (and its write releases the lease first).
      await ingest(acc, [cost(5, { lease_id: l.lease_id })]);
      b = await balance(acc);
      assert.deepEqual([b.amount, b.pending], [970, 0]);
      assertError(await call('POST', `/v1/leases/${l.lease_id}/close`), 409, 'conflict');
      assert.equal((await lease(l.lease_id)).used, 25);
    });

    test('the test clock advance releases expired leases by the job', async () => {
      const acc = await createAccountWithBalance(h, co, 'tokens', 1000);
      const l = await open(acc, { amount: 100, ttl_seconds: 1 });
      const r = await call('POST', '/v1/test_clock/advance', { seconds: 2 });
      assert.equal(r.status, 200, r.text);
      const rows = await h.store.read((tx) => tx.leases.findLease(co.companyId, l.lease_id));
      assert.equal(rows?.status, 'expired', 'written by the job, not only seen by a read');
      assert.equal(rows?.released, 100);
      assert.equal((await balance(acc)).pending, 0);
    });

    test('a used-up lease expires too: a close after expires_at is 409, the job writes it expired', async () => {
      const acc = await createAccountWithBalance(h, co, 'tokens', 1000);
      const l = await open(acc, { amount: 10, ttl_seconds: 60 });
      await ingest(acc, [cost(10, { lease_id: l.lease_id })]);
      assert.equal((await balance(acc)).pending, 0);
      jump(Date.parse(l.expires_at));
      assert.equal((await lease(l.lease_id)).status, 'expired');
      assertError(await call('POST', `/v1/leases/${l.lease_id}/close`), 409, 'conflict');
      const stored = () => h.store.read((tx) => tx.leases.findLease(co.companyId, l.lease_id));
      assert.equal((await stored())?.status, 'open', 'no write has met it yet');
      assert.equal((await call('POST', '/v1/test_clock/advance', { seconds: 0 })).status, 200);
      const after = await stored();
      assert.deepEqual([after?.status, after?.used, after?.released], ['expired', 10, 0]);
      assert.equal(after?.closedAtMs, Date.parse(l.expires_at));
    });

    test('402 when available is short or a spend limit would be passed; the lease is spend once', async () => {
      const acc = await createAccountWithBalance(h, co, 'tokens', 100);
      const short = await call('POST', `/v1/accounts/${acc}/leases`, { denomination: 'tokens', amount: 101 });
      assertError(short, 402, 'insufficient_balance');
      assert.deepEqual(short.body.error.details, { denomination: 'tokens', available: 100 });
      assert.equal((await balance(acc)).pending, 0, 'nothing held');
      const limits = await call('PUT', `/v1/accounts/${acc}/balance/tokens/limits`, { daily: 50 });
      assert.equal(limits.status, 200, limits.text);
      const limited = await call('POST', `/v1/accounts/${acc}/leases`, { denomination: 'tokens', amount: 51 });
      assertError(limited, 402, 'spend_limit_reached');
      assert.equal(limited.body.error.details.limit, 50);
      assert.equal((await balance(acc)).pending, 0, 'nothing held');
      const l = await open(acc, { amount: 40 });
      assert.equal((await balance(acc)).spend.day, 40, 'the hold counts as spend when the lease opens');
      await ingest(acc, [cost(30, { lease_id: l.lease_id })]);
      assert.equal((await balance(acc)).spend.day, 40, 'usage the lease covers is not counted again');
      // 10 left in the lease: 20 more is 10 from it and 10 from the balance (spend 50, at the limit).
      await ingest(acc, [cost(20, { lease_id: l.lease_id })]);
      assert.equal((await balance(acc)).spend.day, 50);
      const over = await call('POST', `/v1/accounts/${acc}/events`, [cost(1, { lease_id: l.lease_id })]);
      assertError(over, 402, 'spend_limit_reached');
      const l2 = await call('POST', `/v1/accounts/${acc}/leases`, { denomination: 'tokens', amount: 1 });
      assertError(l2, 402, 'spend_limit_reached');
      const closed = await call('POST', `/v1/leases/${l.lease_id}/close`);
      assert.equal(closed.body.data.released, 0);
      assert.equal((await balance(acc)).spend.day, 50);
    });

    test('what a lease gives back leaves the spend', async () => {
      const acc = await createAccountWithBalance(h, co, 'tokens', 1000);
      const l = await open(acc, { amount: 300 });
      await ingest(acc, [cost(100, { lease_id: l.lease_id })]);
      assert.equal((await balance(acc)).spend.day, 300);
      await call('POST', `/v1/leases/${l.lease_id}/close`);
      assert.equal((await balance(acc)).spend.day, 100);
    });

    test('a client id answers the same lease; another body with it is 409', async () => {
      const acc = await createAccountWithBalance(h, co, 'tokens', 1000);
      const id = `lease-${acc}`;
      const first = await open(acc, { amount: 50, id });
      assert.equal(first.id, id);
      const again = await open(acc, { amount: 50, id, ttl_seconds: 30 });
      assert.deepEqual(again, first);
      assert.equal((await balance(acc)).pending, 50, 'held once');
      assertError(await call('POST', `/v1/accounts/${acc}/leases`, { denomination: 'tokens', amount: 51, id }), 409);
      await call('POST', `/v1/leases/${first.lease_id}/close`);
      const closed = await open(acc, { amount: 50, id });
      assert.equal(closed.status, 'closed', 'the same lease, with the same status');
    });

    const naming = 'events: pending + lease_id, an unknown lease, another account’s or denomination’s: 400 naming it';
    test(naming, async () => {
      const acc = await createAccountWithBalance(h, co, 'tokens', 1000);
      const acc2 = await createAccountWithBalance(h, co, 'tokens', 1000);
      const credits = await call('POST', `/v1/accounts/${acc}/balance/credits`, { amount: 1000 });
      assert.equal(credits.status, 200, credits.text);
      const l = await open(acc, { amount: 100 });
      const l2 = await open(acc2, { amount: 100 });
      const foreignAcc = await createAccountWithBalance(h, other, 'tokens', 1000);
      const foreign = await call(
        'POST',
        `/v1/accounts/${foreignAcc}/leases`,
        { denomination: 'tokens', amount: 10 },
        other.auth,
      );
      assert.equal(foreign.status, 201, foreign.text);
      const cases: [object[], string][] = [
        [[cost(1), cost(5, { state: 'pending', lease_id: l.lease_id })], 'events[1].lease_id'],
        [[cost(5, { lease_id: 'ls_nope' })], 'events[0].lease_id'],
        [[cost(1), cost(5, { lease_id: l2.lease_id })], 'events[1].lease_id'],
        [[cost(5, { lease_id: foreign.body.data.lease_id })], 'events[0].lease_id'],
        [
          [{ type: 'x', cost_override: { amount: 5, denomination: 'credits' }, lease_id: l.lease_id }],
          'events[0].lease_id',
        ],
      ];
      for (const [events, param] of cases) {
        const r = await call('POST', `/v1/accounts/${acc}/events`, events);
        assertError(r, 400, 'invalid_request');
        assert.equal(r.body.error.param, param, r.text);
      }
      const b = await balance(acc);
      assert.deepEqual([b.amount, b.pending], [1000, 100], 'nothing recorded');
      assert.equal((await lease(l.lease_id)).used, 0);
    });

    test('another company’s account or lease is 404; bad input is 400', async () => {
      const acc = await createAccountWithBalance(h, co, 'tokens', 1000);
      const l = await open(acc, { amount: 10 });
      assertError(
        await call('POST', `/v1/accounts/${acc}/leases`, { denomination: 'tokens', amount: 5 }, other.auth),
        404,
      );
      assertError(await call('GET', `/v1/leases/${l.lease_id}`, undefined, other.auth), 404);
      assertError(await call('POST', `/v1/leases/${l.lease_id}/close`, undefined, other.auth), 404);
      assertError(await call('GET', `/v1/accounts/${acc}/leases`, undefined, other.auth), 404);
      assertError(await call('GET', '/v1/leases/ls_unknown'), 404);
      for (const body of [
        { amount: 0 },
        { amount: 1.5 },
        { amount: -1 },
        { amount: 5, ttl_seconds: 0 },
        { amount: 5, ttl_seconds: 3601 },
        { amount: 5, ttl_seconds: 1.5 },
        {},
      ]) {
        const r = await call('POST', `/v1/accounts/${acc}/leases`, { denomination: 'tokens', ...body });
        assertError(r, 400, 'invalid_request');
      }
      const noBalance = await call('POST', `/v1/accounts/${acc}/leases`, { denomination: 'gpu', amount: 5 });
      assertError(noBalance, 400, 'invalid_request');
      assert.equal(noBalance.body.error.param, 'denomination');
      assert.equal((await balance(acc)).pending, 10, 'nothing held by a refused request');
    });
  });
}
