// Guarantees (contract "Credit grants" and "Transactions"), over HTTP on SQLite and PostgreSQL:
// - one event draws across grants in the drawing order, each tie deciding: priority ascending; expires_at ascending,
//   never-expiring last; promotional before paid; effective_at ascending; grant_id ascending — `drawn_from` lists the
//   grants in that order with the units taken, and each grant's remaining and status follow;
// - what no grant covers is debt (a negative amount); units added later (a grant, a released hold) repay it first:
//   a grant of 500 onto −200 leaves the balance at 300 and the grant's remaining at 300, its transaction still +500;
// - expiry is exact to the instant: an event 1 ms before expires_at draws from the grant, one at the instant does not;
//   a read at the instant shows the grant_expiry transaction of −remaining and a balance without it, whether or not
//   the background job ran (and the job never applies it a second time); next_expiry says when and how much;
// - a scheduled grant is not drawn before effective_at and joins then with one `grant` transaction (repaying debt);
// - holds take units from grants at once; units held from a grant that then expires stay held, and at settle the
//   final cost below the hold lets the rest expire at once, equal uses it all, above draws the difference in drawing
//   order; a cancel, by request or after the hour, gives units back, which expire at once;
// - 100 concurrent single-event requests over two grants never take a grant below 0 and the sums are exact;
// - the ledger audit is clean after every test.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { HTTP_DIALECTS, signUpCompany, startHarness, type Harness } from '../support/harness.js';
import type { GrantJson, TxJson } from './grants-support.js';

type Auth = [string, string];

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();
const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

for (const dialect of HTTP_DIALECTS) {
  describe(`credit grants: drawing, debt, expiry, holds (${dialect})`, () => {
    let h: Harness;
    let auth: Auth;
    let companyId: string;
    before(async () => {
      h = await startHarness(dialect);
      const co = await signUpCompany(h);
      auth = co.auth;
      companyId = co.companyId;
    });
    after(async () => h.close());
    afterEach(async () => h.audit());

    const call = (method: string, path: string, body?: unknown) =>
      h.request(method, path, body === undefined ? { auth } : { auth, body });
    async function now(): Promise<number> {
      const r = await call('GET', '/v1/test_clock');
      assert.equal(r.status, 200, r.text);
      return Date.parse(r.body.data.now);
    }
    /** Moves the clock through the advance route (which runs every job due before it answers). */
    async function advance(toMs: number): Promise<void> {
      const r = await call('POST', '/v1/test_clock/advance', { to: iso(toMs) });
      assert.equal(r.status, 200, r.text);
    }
    /** Moves the clock without running any job: what is due must still be seen by every read and write. */
    function jump(toMs: number): void {
      assert.ok((h.server.clock as unknown as { advanceTo(ms: number): boolean }).advanceTo(toMs));
    }
    async function account(): Promise<string> {
      const a = await call('POST', `/v1/companies/${companyId}/accounts`, { name: 'G' });
      assert.equal(a.status, 200, a.text);
      const id = a.body.data.account_id as string;
      const b = await call('POST', `/v1/accounts/${id}/balance/tokens`, { amount: 0 });
      assert.equal(b.status, 200, b.text);
      return id;
    }
    async function grant(acc: string, body: Record<string, unknown>): Promise<GrantJson> {
      const r = await call('POST', `/v1/accounts/${acc}/balance/tokens/grants`, body);
      assert.equal(r.status, 201, r.text);
      return r.body.data;
    }
    async function getGrant(id: string): Promise<GrantJson> {
      const r = await call('GET', `/v1/grants/${id}`);
      assert.equal(r.status, 200, r.text);
      return r.body.data;
    }
    /** [remaining, held, status] of each grant. */
    const figures = async (...ids: string[]) =>
      Promise.all(
        ids.map(async (id) => {
          const g = await getGrant(id);
          return [g.remaining, g.held, g.status];
        }),
      );
    async function balance(acc: string) {
      const r = await call('GET', `/v1/accounts/${acc}/balance/tokens`);
      assert.equal(r.status, 200, r.text);
      return r.body.data as {
        amount: number;
        pending: number;
        available: number;
        next_expiry: { expires_at: string; amount: number } | null;
      };
    }
    const figuresOf = async (acc: string) => {
      const b = await balance(acc);
      return [b.amount, b.pending, b.available];
    };
    /** Every transaction of the balance, oldest first. */
    async function txs(acc: string): Promise<TxJson[]> {
      const out: TxJson[] = [];
      let cursor: string | null = null;
      for (;;) {
        const page = `limit=100${cursor === null ? '' : `&starting_after=${cursor}`}`;
        const r = await call('GET', `/v1/accounts/${acc}/transactions?denomination=tokens&${page}`);
        assert.equal(r.status, 200, r.text);
        out.push(...r.body.data);
        if (!r.body.has_more) return out.reverse();
        cursor = r.body.next_cursor;
      }
    }
    /** Transactions as [kind, amount, balance_after, grant (label), drawn_from ([label, amount])]. */
    function show(list: TxJson[], names: Record<string, string>) {
      const label = (id: string) => names[id] ?? id;
      return list.map((t) => [
        t.kind,
        t.amount,
        t.balance_after,
        t.grant_id === undefined ? null : label(t.grant_id),
        t.drawn_from === undefined ? null : t.drawn_from.map((d) => [label(d.grant_id), d.amount]),
      ]);
    }
    async function events(acc: string, list: Record<string, unknown>[]): Promise<string[]> {
      const r = await call('POST', `/v1/accounts/${acc}/events`, list);
      assert.equal(r.status, 200, r.text);
      return r.body.event_ids;
    }
    const use = async (acc: string, amount: number) =>
      (await events(acc, [{ type: 'use', cost_override: { amount, denomination: 'tokens' } }]))[0]!;
    const hold = async (acc: string, amount: number) =>
      (await events(acc, [{ type: 'use', state: 'pending', cost_override: { amount, denomination: 'tokens' } }]))[0]!;
    async function settle(id: string, state: 'complete' | 'cancelled', cost?: number) {
      const body: Record<string, unknown> = { state };
      if (cost !== undefined) body.cost_override = { amount: cost, denomination: 'tokens' };
      const r = await call('PUT', `/v1/events/${id}`, body);
      assert.equal(r.status, 200, r.text);
      return r.body.data;
    }

    test('one event draws across every tie of the drawing order, and drawn_from says so in order', async () => {
      const acc = await account();
      const n = await now();
      // [label, body]: each pair of neighbours in the expected order is decided by one rule.
      const planned: [string, Record<string, unknown>][] = [
        ['p10-never-paid', { amount: 11, priority: 10, category: 'paid' }], // priority beats expiry and category
        ['exp2d-paid', { amount: 12, expires_at: iso(n + 2 * DAY), category: 'paid' }], // sooner expiry beats category
        ['exp3d-promo', { amount: 13, expires_at: iso(n + 3 * DAY) }],
        ['exp3d-paid', { amount: 14, expires_at: iso(n + 3 * DAY), category: 'paid' }], // promotional before paid
        ['never-promo-1d', { amount: 15, effective_at: iso(n - DAY) }], // an expiry beats never
        ['never-promo-1h', { amount: 16, effective_at: iso(n - HOUR) }], // older effective_at first
        ['never-promo-1m-a', { amount: 17, effective_at: iso(n - MINUTE) }], // same effective_at: grant_id
        ['never-promo-1m-b', { amount: 18, effective_at: iso(n - MINUTE) }],
        ['never-paid-2d', { amount: 19, category: 'paid', effective_at: iso(n - 2 * DAY) }], // category beats age
        ['p90-exp1d', { amount: 20, priority: 90, expires_at: iso(n + DAY) }], // priority beats the soonest expiry
      ];
      const made = new Map<string, GrantJson>();
      for (const [label, body] of [...planned].reverse()) made.set(label, await grant(acc, body));
      const names: Record<string, string> = {};
      for (const [label, g] of made) names[g.grant_id] = label;
      // The grant_id tie: whichever of the two identical grants has the smaller id comes first.
      const [a, b] = [made.get('never-promo-1m-a')!, made.get('never-promo-1m-b')!].sort((x, y) =>
        byId(x.grant_id, y.grant_id),
      );
      const order = planned.map(([label]) => made.get(label)!);
      order.splice(6, 2, a!, b!);

      const listed = await call('GET', `/v1/accounts/${acc}/balance/tokens/grants`);
      assert.equal(listed.status, 200, listed.text);
      assert.deepEqual(
        listed.body.data.map((g: GrantJson) => names[g.grant_id]),
        order.map((g) => names[g.grant_id]),
        'the balance lists its grants in drawing order',
      );
      assert.deepEqual(await figuresOf(acc), [155, 0, 155]);

      const ev = await use(acc, 150);
      const usage = (await txs(acc)).at(-1)!;
      assert.deepEqual(
        [usage.kind, usage.amount, usage.balance_after, usage.event_id, usage.grant_id],
        ['usage', -150, 5, ev, undefined],
      );
      assert.deepEqual(
        usage.drawn_from!.map((d) => [names[d.grant_id], d.amount]),
        order.map((g, i) => [names[g.grant_id], i === order.length - 1 ? 15 : g.amount]),
      );
      assert.deepEqual(await figuresOf(acc), [5, 0, 5]);
      const after = await figures(...order.map((g) => g.grant_id));
      assert.deepEqual(after, [...order.slice(0, -1).map(() => [0, 0, 'depleted']), [5, 0, 'active']]);
      // Each grant joined with one `grant` transaction of +amount naming it.
      assert.deepEqual(
        show((await txs(acc)).slice(0, -1), names),
        [...planned]
          .reverse()
          .map(([label, body], i, all) => [
            'grant',
            body.amount,
            all.slice(0, i + 1).reduce((s, [, x]) => s + (x.amount as number), 0),
            label,
            null,
          ]),
      );
    });

    test('one event across three grants, then debt: what no grant covers makes the balance negative', async () => {
      const acc = await account();
      const g1 = await grant(acc, { amount: 100, priority: 10 });
      const g2 = await grant(acc, { amount: 200, priority: 20 });
      const g3 = await grant(acc, { amount: 300, priority: 30 });
      const names = { [g1.grant_id]: 'g1', [g2.grant_id]: 'g2', [g3.grant_id]: 'g3' };
      await use(acc, 450);
      assert.deepEqual(show((await txs(acc)).slice(-1), names), [
        [
          'usage',
          -450,
          150,
          null,
          [
            ['g1', 100],
            ['g2', 200],
            ['g3', 150],
          ],
        ],
      ]);
      assert.deepEqual(await figures(g1.grant_id, g2.grant_id, g3.grant_id), [
        [0, 0, 'depleted'],
        [0, 0, 'depleted'],
        [150, 0, 'active'],
      ]);
      await use(acc, 200);
      assert.deepEqual(show((await txs(acc)).slice(-1), names), [['usage', -200, -50, null, [['g3', 150]]]]);
      assert.deepEqual(await figuresOf(acc), [-50, 0, -50]);
      assert.deepEqual((await figures(g3.grant_id))[0], [0, 0, 'depleted']);
      await use(acc, 25);
      assert.deepEqual(show((await txs(acc)).slice(-1), names), [['usage', -25, -75, null, []]]);
      assert.deepEqual(await figuresOf(acc), [-75, 0, -75]);
    });

    test('debt then grant: 500 onto −200 → balance 300, grant remaining 300, transaction +500', async () => {
      const acc = await account();
      const adj = await call('POST', `/v1/accounts/${acc}/balance/tokens/adjustments`, { amount: -200, reason: 'x' });
      assert.equal(adj.status, 200, adj.text);
      assert.deepEqual([adj.body.data.amount, adj.body.data.available], [-200, -200]);
      const g = await grant(acc, { amount: 500 });
      assert.deepEqual([g.amount, g.remaining, g.held, g.status, g.source], [500, 300, 0, 'active', 'grant']);
      assert.deepEqual(await figuresOf(acc), [300, 0, 300]);
      assert.deepEqual(show(await txs(acc), { [g.grant_id]: 'g' }), [
        ['adjustment', -200, -200, null, []],
        ['grant', 500, 300, 'g', null],
      ]);
      assert.deepEqual(await figures(g.grant_id), [[300, 0, 'active']]);
    });

    test('a grant the debt takes whole is depleted at once, out of the default list, and its 201 says so', async () => {
      const acc = await account();
      const g = await grant(acc, { amount: 300 });
      await call('POST', `/v1/accounts/${acc}/balance/tokens/adjustments`, { amount: -500 });
      assert.deepEqual(await figures(g.grant_id), [[0, 0, 'depleted']]);
      const small = await grant(acc, { amount: 100 });
      assert.deepEqual(await figures(small.grant_id), [[0, 0, 'depleted']]);
      assert.equal((await balance(acc)).amount, -100);
      assert.deepEqual(show((await txs(acc)).slice(-1), { [small.grant_id]: 's' }), [['grant', 100, -100, 's', null]]);
      const listed = await call('GET', `/v1/accounts/${acc}/balance/tokens/grants`);
      assert.deepEqual(listed.body.data, []);
      const depleted = await call('GET', `/v1/accounts/${acc}/balance/tokens/grants?status=depleted`);
      assert.deepEqual(
        depleted.body.data.map((x: GrantJson) => [x.grant_id, x.remaining]),
        [
          [g.grant_id, 0],
          [small.grant_id, 0],
        ].sort((x, y) => byId(x[0] as string, y[0] as string)),
      );
      assert.deepEqual(
        [small.remaining, small.held, small.status],
        [0, 0, 'depleted'],
        'the 201 answer shows the grant as it is after the debt took it',
      );
    });

    test('a released hold repays debt first: the grant keeps only what the debt did not take', async () => {
      const acc = await account();
      const a = await grant(acc, { amount: 100 });
      const held = await hold(acc, 100);
      assert.deepEqual(await figures(a.grant_id), [[100, 100, 'active']]);
      assert.deepEqual(await figuresOf(acc), [100, 100, 0]);
      await use(acc, 30); // no unheld units anywhere: all of it is debt
      assert.deepEqual(show((await txs(acc)).slice(-1), {}), [['usage', -30, 70, null, []]]);
      assert.deepEqual(await figuresOf(acc), [70, 100, -30]);
      assert.deepEqual(await figures(a.grant_id), [[100, 100, 'active']]);
      await settle(held, 'cancelled');
      assert.deepEqual(await figuresOf(acc), [70, 0, 70]);
      assert.deepEqual(await figures(a.grant_id), [[70, 0, 'active']], 'the 100 given back repaid the 30 first');
      assert.equal((await txs(acc)).length, 2, 'a cancel moves no amount: no transaction');
      const b = await grant(acc, { amount: 50 });
      assert.deepEqual([b.remaining, (await balance(acc)).amount], [50, 120]);
    });

    test('expiry: drawn 1 ms before expires_at, not at it; reads see it with or without the job', async () => {
      const n = await now();
      const T = n + HOUR;
      // read: a read at the instant; event: an event at the instant; job: nobody touches it, the job applies it.
      const read = await account();
      const eRead = await grant(read, { amount: 100, priority: 10, expires_at: iso(T), name: 'expiring' });
      const pRead = await grant(read, { amount: 1000 });
      const ev = await account();
      const eEv = await grant(ev, { amount: 100, priority: 10, expires_at: iso(T) });
      const pEv = await grant(ev, { amount: 100 });
      const job = await account();
      const eJob = await grant(job, { amount: 40, expires_at: iso(T) });
      await grant(job, { amount: 60 });
      assert.deepEqual((await balance(read)).next_expiry, { expires_at: iso(T), amount: 100 });

      await advance(T - 1);
      await use(read, 10);
      const names = {
        [eRead.grant_id]: 'E',
        [pRead.grant_id]: 'P',
        [eEv.grant_id]: 'E',
        [pEv.grant_id]: 'P',
        [eJob.grant_id]: 'E',
      };
      assert.deepEqual(show((await txs(read)).slice(-1), names), [['usage', -10, 1090, null, [['E', 10]]]]);
      assert.deepEqual((await balance(read)).next_expiry, { expires_at: iso(T), amount: 90 });
      assert.deepEqual(await figures(eRead.grant_id), [[90, 0, 'active']]);

      jump(T); // no job runs
      assert.deepEqual(await figures(eRead.grant_id), [[0, 0, 'expired']], 'a grant read at the instant');
      const b = await balance(read);
      assert.deepEqual([b.amount, b.pending, b.available, b.next_expiry], [1000, 0, 1000, null]);
      const expiry = (await txs(read)).at(-1)!;
      assert.deepEqual(show([expiry], names), [['grant_expiry', -90, 1000, 'E', null]]);
      assert.equal(expiry.created_at, iso(T));
      await use(read, 10);
      assert.deepEqual(show((await txs(read)).slice(-1), names), [['usage', -10, 990, null, [['P', 10]]]]);

      await use(ev, 10); // the event itself applies the expiry first
      assert.deepEqual(show((await txs(ev)).slice(-2), names), [
        ['grant_expiry', -100, 100, 'E', null],
        ['usage', -10, 90, null, [['P', 10]]],
      ]);

      assert.deepEqual(await figuresOf(job), [60, 0, 60], 'read before the job ran');
      await advance(T);
      assert.deepEqual(
        show(
          (await txs(job)).filter((t) => t.kind === 'grant_expiry'),
          names,
        ),
        [['grant_expiry', -40, 60, 'E', null]],
        'applied once',
      );
      for (const acc of [read, ev, job])
        assert.equal((await txs(acc)).filter((t) => t.kind === 'grant_expiry').length, 1, 'never applied twice');
      assert.deepEqual(await figures(eJob.grant_id, eEv.grant_id), [
        [0, 0, 'expired'],
        [0, 0, 'expired'],
      ]);
      const expired = await call('GET', `/v1/accounts/${read}/balance/tokens/grants?status=expired`);
      assert.deepEqual(
        expired.body.data.map((g: GrantJson) => [g.grant_id, g.name, g.remaining, g.expires_at]),
        [[eRead.grant_id, 'expiring', 0, iso(T)]],
      );
    });

    test('the transaction list read at the instant, before anything else, shows the expiry and the start', async () => {
      const n = await now();
      const T = n + HOUR;
      const acc = await account();
      const e = await grant(acc, { amount: 100, expires_at: iso(T) });
      const s = await grant(acc, { amount: 30, effective_at: iso(T) });
      jump(T); // nothing touches the balance: the first read is the transaction list
      assert.deepEqual(show(await txs(acc), { [e.grant_id]: 'E', [s.grant_id]: 'S' }), [
        ['grant', 100, 100, 'E', null],
        ['grant_expiry', -100, 0, 'E', null],
        ['grant', 30, 30, 'S', null],
      ]);
      assert.deepEqual(await figuresOf(acc), [30, 0, 30]);
    });

    test('the pre-flight check sees an expiry and a start at the instant, as the events call does', async () => {
      const n = await now();
      const T = n + HOUR;
      const acc = await account();
      await grant(acc, { amount: 100, expires_at: iso(T) });
      await grant(acc, { amount: 30, effective_at: iso(T) });
      const body = { events: [{ type: 'use', cost_override: { amount: 50, denomination: 'tokens' } }] };
      const before = await call('POST', `/v1/accounts/${acc}/check`, body);
      assert.equal(before.status, 200, before.text);
      assert.deepEqual(
        [before.body.data.allowed, before.body.data.balances],
        [true, [{ denomination: 'tokens', available: 100, available_after: 50 }]],
      );
      jump(T); // nothing has touched the balance since: no read, no write, no job
      const check = await call('POST', `/v1/accounts/${acc}/check`, body);
      assert.equal(check.status, 200, check.text);
      assert.deepEqual(
        [check.body.data.allowed, check.body.data.balances],
        [false, [{ denomination: 'tokens', available: 30, available_after: -20 }]],
        'the expired 100 no longer counts, the 30 that started does',
      );
      await events(acc, body.events);
      assert.deepEqual(await figuresOf(acc), [-20, 0, -20], 'what the events call then did');
    });

    test('a scheduled grant is not drawn before effective_at and joins then with one grant transaction', async () => {
      const n = await now();
      const start = n + HOUR;
      const acc = await account();
      const p = await grant(acc, { amount: 100 });
      const s = await grant(acc, {
        amount: 200,
        priority: 0,
        effective_at: iso(start),
        expires_at: iso(start + 2 * HOUR),
      });
      assert.deepEqual(
        [s.status, s.amount, s.remaining, s.held, s.effective_at, s.expires_at],
        ['scheduled', 200, 200, 0, iso(start), iso(start + 2 * HOUR)],
      );
      const names = { [p.grant_id]: 'P', [s.grant_id]: 'S' };
      const b0 = await balance(acc);
      assert.deepEqual([b0.amount, b0.available, b0.next_expiry], [100, 100, null]);
      assert.deepEqual(show(await txs(acc), names), [['grant', 100, 100, 'P', null]]);
      await use(acc, 150);
      assert.deepEqual(show((await txs(acc)).slice(-1), names), [['usage', -150, -50, null, [['P', 100]]]]);

      const later = await account(); // joined by the job, nobody reading it
      const sLater = await grant(later, { amount: 70, effective_at: iso(start) });

      await advance(start - 1);
      assert.deepEqual(await figures(s.grant_id, sLater.grant_id), [
        [200, 0, 'scheduled'],
        [70, 0, 'scheduled'],
      ]);
      assert.deepEqual(await figuresOf(acc), [-50, 0, -50]);

      jump(start);
      assert.deepEqual(await figures(s.grant_id), [[150, 0, 'active']], 'joined, and repaid the debt of 50 first');
      const b = await balance(acc);
      assert.deepEqual(
        [b.amount, b.available, b.next_expiry],
        [150, 150, { expires_at: iso(start + 2 * HOUR), amount: 150 }],
      );
      const joined = (await txs(acc)).at(-1)!;
      assert.deepEqual(show([joined], names), [['grant', 200, 150, 'S', null]]);
      assert.equal(joined.created_at, iso(start));
      await use(acc, 10);
      assert.deepEqual(show((await txs(acc)).slice(-1), names), [['usage', -10, 140, null, [['S', 10]]]]);

      await advance(start);
      assert.deepEqual(show(await txs(later), { [sLater.grant_id]: 'S' }), [['grant', 70, 70, 'S', null]]);
      assert.deepEqual(await figures(sLater.grant_id), [[70, 0, 'active']]);
      assert.equal((await txs(acc)).filter((t) => t.kind === 'grant').length, 2, 'the job added nothing twice');
    });

    test(
      'holds across an expiry: settle below, equal to and above the hold, cancel by request and after the ' + 'hour',
      async () => {
        const n = await now();
        const T = n + 30 * MINUTE;
        const acc = await account();
        const e = await grant(acc, { amount: 400, priority: 10, expires_at: iso(T) });
        const p = await grant(acc, { amount: 1000 });
        const names = { [e.grant_id]: 'E', [p.grant_id]: 'P' };
        const below = await hold(acc, 60);
        const equal = await hold(acc, 60);
        const above = await hold(acc, 60);
        const cancel = await hold(acc, 60);
        const lapse = await hold(acc, 20);
        assert.deepEqual(await figures(e.grant_id, p.grant_id), [
          [400, 260, 'active'],
          [1000, 0, 'active'],
        ]);
        const b0 = await balance(acc);
        assert.deepEqual(
          [b0.amount, b0.pending, b0.available, b0.next_expiry],
          [1400, 260, 1140, { expires_at: iso(T), amount: 140 }],
          'next_expiry counts unheld units only',
        );
        assert.equal((await txs(acc)).length, 2, 'a hold moves no amount');

        await advance(T);
        assert.deepEqual(show((await txs(acc)).slice(-1), names), [['grant_expiry', -140, 1260, 'E', null]]);
        assert.deepEqual(await figures(e.grant_id), [[260, 260, 'expired']], 'held units stay held');
        const b1 = await balance(acc);
        assert.deepEqual([b1.amount, b1.pending, b1.available, b1.next_expiry], [1260, 260, 1000, null]);

        await settle(below, 'complete', 25);
        assert.deepEqual(show((await txs(acc)).slice(-2), names), [
          ['usage', -25, 1235, null, [['E', 25]]],
          ['grant_expiry', -35, 1200, 'E', null],
        ]);
        assert.deepEqual(await figuresOf(acc), [1200, 200, 1000]);
        assert.deepEqual(await figures(e.grant_id), [[200, 200, 'expired']]);

        const eq = await settle(equal, 'complete');
        assert.deepEqual([eq.state, eq.cost.amount], ['complete', 60]);
        assert.deepEqual(show((await txs(acc)).slice(-1), names), [['usage', -60, 1140, null, [['E', 60]]]]);
        assert.deepEqual(await figuresOf(acc), [1140, 140, 1000]);

        await settle(above, 'complete', 90);
        assert.deepEqual(show((await txs(acc)).slice(-1), names), [
          [
            'usage',
            -90,
            1050,
            null,
            [
              ['E', 60],
              ['P', 30],
            ],
          ],
        ]);
        assert.deepEqual(await figuresOf(acc), [1050, 80, 970]);
        assert.deepEqual(await figures(e.grant_id, p.grant_id), [
          [80, 80, 'expired'],
          [970, 0, 'active'],
        ]);

        await settle(cancel, 'cancelled');
        assert.deepEqual(show((await txs(acc)).slice(-1), names), [['grant_expiry', -60, 990, 'E', null]]);
        assert.deepEqual(await figuresOf(acc), [990, 20, 970]);

        await advance(n + HOUR + 1); // the last hold lapses after its hour: cancelled, its units expire at once
        const lapsed = await call('GET', `/v1/events/${lapse}`);
        assert.equal(lapsed.body.data.state, 'cancelled');
        assert.deepEqual(show((await txs(acc)).slice(-1), names), [['grant_expiry', -20, 970, 'E', null]]);
        assert.deepEqual(await figuresOf(acc), [970, 0, 970]);
        assert.deepEqual(await figures(e.grant_id, p.grant_id), [
          [0, 0, 'expired'],
          [970, 0, 'active'],
        ]);
        assert.deepEqual(
          (await txs(acc)).filter((t) => t.kind === 'grant_expiry').map((t) => t.amount),
          [-140, -35, -60, -20],
          'the grant left in four parts: 400 = 25 + 60 + 60 used + 255 expired',
        );
      },
    );

    test('a hold takes unheld units only: a later event skips held units, the settle uses them', async () => {
      const acc = await account();
      const a = await grant(acc, { amount: 100, priority: 10 });
      const b = await grant(acc, { amount: 100, priority: 20 });
      const names = { [a.grant_id]: 'A', [b.grant_id]: 'B' };
      const held = await hold(acc, 70);
      await use(acc, 50);
      assert.deepEqual(show((await txs(acc)).slice(-1), names), [
        [
          'usage',
          -50,
          150,
          null,
          [
            ['A', 30],
            ['B', 20],
          ],
        ],
      ]);
      assert.deepEqual(await figures(a.grant_id, b.grant_id), [
        [70, 70, 'active'],
        [80, 0, 'active'],
      ]);
      await settle(held, 'complete', 70);
      assert.deepEqual(show((await txs(acc)).slice(-1), names), [['usage', -70, 80, null, [['A', 70]]]]);
      assert.deepEqual(await figures(a.grant_id, b.grant_id), [
        [0, 0, 'depleted'],
        [80, 0, 'active'],
      ]);
    });

    test('a hold beyond the grants: pending counts it all, grants hold theirs, the settle draws the rest', async () => {
      const acc = await account();
      const a = await grant(acc, { amount: 100 });
      const held = await hold(acc, 150);
      assert.deepEqual(await figures(a.grant_id), [[100, 100, 'active']]);
      assert.deepEqual(await figuresOf(acc), [100, 150, -50]);
      const b = await grant(acc, { amount: 80 });
      assert.deepEqual(await figures(b.grant_id), [[80, 0, 'active']], 'a hold is not debt: nothing repaid');
      assert.deepEqual(await figuresOf(acc), [180, 150, 30]);
      await settle(held, 'complete');
      const names = { [a.grant_id]: 'A', [b.grant_id]: 'B' };
      assert.deepEqual(show((await txs(acc)).slice(-1), names), [
        [
          'usage',
          -150,
          30,
          null,
          [
            ['A', 100],
            ['B', 50],
          ],
        ],
      ]);
      assert.deepEqual(await figures(a.grant_id, b.grant_id), [
        [0, 0, 'depleted'],
        [30, 0, 'active'],
      ]);
      assert.deepEqual(await figuresOf(acc), [30, 0, 30]);
    });

    test('100 concurrent single-event requests over two grants: no grant below 0, the sums exact', async () => {
      const acc = await account();
      const a = await grant(acc, { amount: 3000, priority: 10 });
      const b = await grant(acc, { amount: 3000, priority: 20 });
      const replies = await Promise.all(
        Array.from({ length: 100 }, () =>
          h.request('POST', `/v1/accounts/${acc}/events`, {
            auth,
            body: [{ type: 'use', cost_override: { amount: 70, denomination: 'tokens' } }],
          }),
        ),
      );
      for (const r of replies) assert.equal(r.status, 200, r.text);
      assert.deepEqual(await figuresOf(acc), [-1000, 0, -1000]);
      assert.deepEqual(await figures(a.grant_id, b.grant_id), [
        [0, 0, 'depleted'],
        [0, 0, 'depleted'],
      ]);
      const usage = (await txs(acc)).filter((t) => t.kind === 'usage');
      assert.equal(usage.length, 100);
      assert.ok(usage.every((t) => t.amount === -70));
      // In ledger order (balance_after falling by 70 each time): A's units first, then B's, then debt.
      usage.sort((x, y) => y.balance_after - x.balance_after);
      assert.deepEqual(
        usage.map((t) => t.balance_after),
        Array.from({ length: 100 }, (_, i) => 6000 - 70 * (i + 1)),
      );
      const drawn = usage.flatMap((t) => t.drawn_from ?? []);
      const sum = (id: string) => drawn.filter((d) => d.grant_id === id).reduce((s, d) => s + d.amount, 0);
      assert.deepEqual([sum(a.grant_id), sum(b.grant_id)], [3000, 3000]);
      assert.ok(drawn.every((d) => d.amount > 0));
      let left = { [a.grant_id]: 3000, [b.grant_id]: 3000 };
      for (const t of usage) {
        const taken = (t.drawn_from ?? []).reduce((s, d) => s + d.amount, 0);
        const covered = Math.min(70, left[a.grant_id]! + left[b.grant_id]!);
        assert.equal(taken, covered, 'each event takes what the grants still had, up to its cost');
        const fromA = Math.min(70, left[a.grant_id]!);
        const expected = [
          ...(fromA > 0 ? [{ grant_id: a.grant_id, amount: fromA }] : []),
          ...(covered > fromA ? [{ grant_id: b.grant_id, amount: covered - fromA }] : []),
        ];
        assert.deepEqual(t.drawn_from, expected);
        left = { [a.grant_id]: left[a.grant_id]! - fromA, [b.grant_id]: left[b.grant_id]! - (covered - fromA) };
      }
    });
  });
}
