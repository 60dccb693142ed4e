// Guarantees (contract "Usage"), on SQLite and PostgreSQL: event timestamps are accepted and refused at their
// edges; event lists are newest timestamp first, filtered and paged exactly; usage counts complete events at their
// final cost in the hour of their timestamp, in any window and grouping, and settles move events in; everything is
// visible as soon as the request is answered, on every server process; another company's ids are 404 and never
// appear; the usage answered equals the sum computed from the event list.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { addDecimal, decimalFromNumber, formatDecimal, type Decimal } from '../../src/lib/decimal.js';
import { HTTP_DIALECTS, assertError, signUpCompany, startHarness, type Harness } from '../support/harness.js';
import { POSTGRES_ONLY_SKIP } from '../support/stores.js';
import { asHarness, serverOn, sharedDatabase, type TestServer } from '../support/webhooks.js';

type Auth = [string, string];

/** The contract's error body with this status, type (from the status) and reason code. */
function assertCode(r: Awaited<ReturnType<Harness['request']>>, status: number, code: string): void {
  assertError(r, status, status === 404 ? 'not_found' : status === 409 ? 'conflict' : 'invalid_request');
  assert.equal(r.body.error.code, code, r.text);
}
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

async function account(h: Pick<Harness, 'request'>, co: { companyId: string; auth: Auth }, amount = 1_000_000) {
  const a = await h.request('POST', `/v1/companies/${co.companyId}/accounts`, { auth: co.auth, body: { name: 'U' } });
  assert.equal(a.status, 200, a.text);
  const id = a.body.data.account_id as string;
  for (const d of ['tokens', 'credits']) {
    const b = await h.request('POST', `/v1/accounts/${id}/balance/${d}`, { auth: co.auth, body: { amount } });
    assert.equal(b.status, 200, b.text);
  }
  return id;
}

const ev = (type: string, cost: number, extra: Record<string, unknown> = {}) => ({
  type,
  cost_override: { amount: cost, denomination: (extra.denomination as string) ?? 'tokens' },
  ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== 'denomination')),
});

async function send(h: Pick<Harness, 'request'>, auth: Auth, accountId: string, events: unknown[]) {
  const r = await h.request('POST', `/v1/accounts/${accountId}/events`, { auth, body: events });
  assert.equal(r.status, 200, r.text);
  return r.body.event_ids as string[];
}

async function usage(h: Pick<Harness, 'request'>, auth: Auth, path: string, query: Record<string, string>) {
  const out: any[] = [];
  let after = '';
  for (;;) {
    const r = await h.request('GET', `${path}?${new URLSearchParams({ ...query, limit: '3' })}${after}`, { auth });
    assert.equal(r.status, 200, r.text);
    out.push(...r.body.data);
    if (!r.body.has_more) return out;
    after = `&starting_after=${encodeURIComponent(r.body.next_cursor)}`;
  }
}

async function allEvents(h: Pick<Harness, 'request'>, auth: Auth, path: string, query = '') {
  const out: any[] = [];
  let after = '';
  for (;;) {
    const r = await h.request('GET', `${path}?limit=7${query}${after}`, { auth });
    assert.equal(r.status, 200, r.text);
    out.push(...r.body.data);
    if (!r.body.has_more) return out;
    after = `&starting_after=${encodeURIComponent(r.body.next_cursor)}`;
  }
}

for (const dialect of HTTP_DIALECTS) {
  describe(`usage read back (${dialect})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(dialect);
    });
    after(async () => h.close());

    test(
      'timestamps: accepted at the edges, refused beyond ' + 'them naming the event; returned beside created_at',
      async () => {
        const co = await signUpCompany(h);
        const acc = await account(h, co);
        const now = h.server.clock.now();
        const edgePast = iso(now - 35 * 24 * HOUR + 60_000);
        const edgeFuture = iso(now + 4 * 60_000);
        const [a, b] = await send(h, co.auth, acc, [
          ev('x', 1, { timestamp: edgePast }),
          ev('x', 1, { timestamp: edgeFuture, id: 'future-1' }),
        ]);
        const got = await h.request('GET', `/v1/events/${a}`, { auth: co.auth });
        assert.equal(got.body.data.timestamp, edgePast);
        assert.ok(got.body.data.created_at);
        assert.equal((await h.request('GET', `/v1/events/${b}`, { auth: co.auth })).body.data.timestamp, edgeFuture);
        const [c] = await send(h, co.auth, acc, [ev('x', 1)]);
        const plain = (await h.request('GET', `/v1/events/${c}`, { auth: co.auth })).body.data;
        assert.equal(plain.timestamp, plain.created_at, 'default: when it is recorded');
        for (const [timestamp, code] of <[string, string][]>[
          [iso(now - 36 * 24 * HOUR), 'timestamp_out_of_range'],
          [iso(now + 6 * 60_000), 'timestamp_out_of_range'],
          ['2026-13-01T00:00:00Z', 'invalid_timestamp'],
          ['yesterday', 'invalid_timestamp'],
        ]) {
          const r = await h.request('POST', `/v1/accounts/${acc}/events`, {
            auth: co.auth,
            body: [ev('x', 1), ev('x', 1, { timestamp })],
          });
          assertCode(r, 400, code);
          assert.equal(r.body.error.param, 'events[1].timestamp');
        }
        // The same client id with the same timestamp is a replay; with another timestamp, different content.
        assert.deepEqual(await send(h, co.auth, acc, [ev('x', 1, { timestamp: edgeFuture, id: 'future-1' })]), [
          'future-1',
        ]);
        const other = await h.request('POST', `/v1/accounts/${acc}/events`, {
          auth: co.auth,
          body: [ev('x', 1, { timestamp: iso(now), id: 'future-1' })],
        });
        assertCode(other, 409, 'event_id_reused_with_different_content');
        const bal = await h.request('GET', `/v1/accounts/${acc}/balance/tokens`, { auth: co.auth });
        assert.equal(bal.body.data.amount, 1_000_000 - 3, 'refused requests deducted nothing');
      },
    );

    test(
      'event lists: newest timestamp first, ties newest ' + 'recorded first; every filter; paging; isolation',
      async () => {
        const co = await signUpCompany(h);
        const other = await signUpCompany(h);
        const [a1, a2] = [await account(h, co), await account(h, co)];
        const foreign = await account(h, other);
        const t0 = Math.floor(h.server.clock.now() / HOUR) * HOUR - 10 * HOUR;
        await send(h, co.auth, a1, [
          ev('llm', 5, { timestamp: iso(t0 + HOUR), id: 'e1' }),
          ev('gpu', 7, { timestamp: iso(t0 + 3 * HOUR), id: 'e2', denomination: 'credits' }),
          ev('llm', 1, { timestamp: iso(t0 + 2 * HOUR), id: 'e3', state: 'pending' }),
        ]);
        await send(h, co.auth, a2, [ev('llm', 2, { timestamp: iso(t0 + 2 * HOUR), id: 'e4' })]);
        await send(h, co.auth, a2, [ev('llm', 2, { timestamp: iso(t0 + 2 * HOUR), id: 'e5', state: 'cancelled' })]);
        await send(h, other.auth, foreign, [ev('llm', 9, { timestamp: iso(t0 + 2 * HOUR), id: 'f1' })]);

        const ids = async (path: string, q = '') => (await allEvents(h, co.auth, path, q)).map((e) => e.event_id);
        assert.deepEqual(await ids('/v1/events'), ['e2', 'e5', 'e4', 'e3', 'e1']);
        assert.deepEqual(await ids(`/v1/accounts/${a1}/events`), ['e2', 'e3', 'e1']);
        assert.deepEqual(await ids('/v1/events', `&account_id=${a2}`), ['e5', 'e4']);
        assert.deepEqual(await ids('/v1/events', '&type=llm'), ['e5', 'e4', 'e3', 'e1']);
        assert.deepEqual(await ids('/v1/events', '&state=pending'), ['e3']);
        assert.deepEqual(await ids('/v1/events', '&state=cancelled'), ['e5']);
        assert.deepEqual(await ids('/v1/events', '&denomination=credits'), ['e2']);
        assert.deepEqual(
          await ids('/v1/events', `&from=${iso(t0 + 2 * HOUR)}&to=${iso(t0 + 3 * HOUR)}`),
          ['e5', 'e4', 'e3'],
          'from inclusive, to exclusive',
        );
        assert.deepEqual(await ids(`/v1/accounts/${a1}/events`, '&type=llm&state=complete'), ['e1']);
        const first = (await h.request('GET', '/v1/events?limit=2', { auth: co.auth })).body;
        assert.deepEqual(
          [first.data.map((e: any) => e.event_id), first.has_more, first.next_cursor],
          [['e2', 'e5'], true, 'e5'],
        );
        assert.deepEqual(first.data[0].timestamp, iso(t0 + 3 * HOUR));
        // Another company's account and cursor are answered like ones that do not exist.
        assertCode(await h.request('GET', `/v1/accounts/${foreign}/events`, { auth: co.auth }), 404, 'not_found');
        assertCode(await h.request('GET', `/v1/events?account_id=${foreign}`, { auth: co.auth }), 404, 'not_found');
        assertCode(await h.request('GET', '/v1/events?starting_after=f1', { auth: co.auth }), 400, 'unknown_cursor');
        assertCode(await h.request('GET', '/v1/events?from=nope', { auth: co.auth }), 400, 'invalid_timestamp');
        assertError(await h.request('GET', '/v1/events?state=done', { auth: co.auth }), 400, 'invalid_request');
      },
    );

    test(
      'usage: windows, groups, filters; only complete ' + 'events at their final cost; settles move events in',
      async () => {
        const co = await signUpCompany(h);
        const other = await signUpCompany(h);
        const [a1, a2] = [await account(h, co), await account(h, co)];
        const foreign = await account(h, other);
        // The day before yesterday, 00:00: the two days from it (the window asked for) are wholly past at any hour,
        // so no event in them is in the future (at 00:10 UTC, yesterday 00:00 + 25 h would be).
        const day = Math.floor(h.server.clock.now() / (24 * HOUR)) * 24 * HOUR - 2 * 24 * HOUR;
        await send(h, co.auth, a1, [
          { ...ev('llm', 3, { timestamp: iso(day + HOUR + 5) }), quantity: 0.1 },
          { ...ev('llm', 4, { timestamp: iso(day + HOUR + 9) }), quantity: 0.2 },
          ev('gpu', 10, { timestamp: iso(day + 5 * HOUR), denomination: 'credits' }),
          ev('llm', 100, { timestamp: iso(day + 2 * HOUR), state: 'cancelled' }),
          ev('llm', 50, { timestamp: iso(day + 2 * HOUR), state: 'pending', id: 'hold-1' }),
          ev('llm', 60, { timestamp: iso(day + 2 * HOUR), state: 'pending', id: 'hold-2' }),
        ]);
        await send(h, co.auth, a2, [ev('llm', 2, { timestamp: iso(day + 25 * HOUR) })]);
        await send(h, other.auth, foreign, [ev('llm', 1000, { timestamp: iso(day + HOUR) })]);
        const q = { from: iso(day), to: iso(day + 48 * HOUR) };
        const rows = (xs: any[]) =>
          xs.map((g) => [
            g.window_start.slice(0, 13),
            g.type,
            g.denomination,
            g.account_id,
            g.events,
            g.quantity,
            g.cost,
          ]);

        assert.deepEqual(rows(await usage(h, co.auth, '/v1/usage', q)), [
          [iso(day).slice(0, 13), 'gpu', 'credits', undefined, 1, '1', 10],
          [iso(day).slice(0, 13), 'llm', 'tokens', undefined, 2, '0.3', 7],
          [iso(day + 24 * HOUR).slice(0, 13), 'llm', 'tokens', undefined, 1, '1', 2],
        ]);
        assert.deepEqual(rows(await usage(h, co.auth, '/v1/usage', { ...q, window: 'hour', group_by: 'type' })), [
          [iso(day + HOUR).slice(0, 13), 'llm', undefined, undefined, 2, '0.3', 7],
          [iso(day + 5 * HOUR).slice(0, 13), 'gpu', undefined, undefined, 1, '1', 10],
          [iso(day + 25 * HOUR).slice(0, 13), 'llm', undefined, undefined, 1, '1', 2],
        ]);
        assert.deepEqual(
          rows(await usage(h, co.auth, '/v1/usage', { ...q, window: 'all', group_by: 'account_id', type: 'llm' })),
          [
            [iso(day).slice(0, 13), undefined, undefined, a1, 2, '0.3', 7],
            [iso(day).slice(0, 13), undefined, undefined, a2, 1, '1', 2],
          ].sort((x, y) => (String(x[3]) < String(y[3]) ? -1 : 1)),
        );
        assert.deepEqual(rows(await usage(h, co.auth, `/v1/accounts/${a2}/usage`, { ...q, window: 'all' })), [
          [iso(day).slice(0, 13), 'llm', 'tokens', undefined, 1, '1', 2],
        ]);
        assert.deepEqual(
          rows(await usage(h, co.auth, '/v1/usage', { ...q, window: 'all', denomination: 'credits', account_id: a1 })),
          [[iso(day).slice(0, 13), 'gpu', 'credits', undefined, 1, '1', 10]],
        );
        const all = await usage(h, co.auth, '/v1/usage', { ...q, window: 'all' });
        assert.deepEqual([all[0].window_start, all[0].window_end], [iso(day), iso(day + 48 * HOUR)]);

        // Settling: complete at a final cost moves the event in (at that cost); cancel never counts.
        const settle = async (id: string, body: unknown) => {
          const r = await h.request('PUT', `/v1/events/${id}`, { auth: co.auth, body });
          assert.equal(r.status, 200, r.text);
        };
        await settle('hold-1', { state: 'complete', cost_override: { amount: 45, denomination: 'tokens' } });
        await settle('hold-2', { state: 'cancelled' });
        assert.deepEqual(
          rows(await usage(h, co.auth, `/v1/accounts/${a1}/usage`, { ...q, window: 'hour', type: 'llm' })),
          [
            [iso(day + HOUR).slice(0, 13), 'llm', 'tokens', undefined, 2, '0.3', 7],
            [iso(day + 2 * HOUR).slice(0, 13), 'llm', 'tokens', undefined, 1, '1', 45],
          ],
        );

        // Bad input names the parameter; another company's account is 404; its usage never shows.
        const bad: [Record<string, string>, number, string, string][] = [
          [{ to: q.to }, 400, 'invalid_request', 'from'],
          [{ ...q, from: 'x' }, 400, 'invalid_timestamp', 'from'],
          [{ ...q, to: q.from }, 400, 'from_must_be_before_to', 'from'],
          [{ ...q, from: iso(day + 1) }, 400, 'time_not_on_the_hour', 'from'],
          [{ ...q, window: 'week' }, 400, 'unknown_window', 'window'],
          [{ ...q, group_by: 'type,price' }, 400, 'unknown_group_by', 'group_by'],
          [{ from: iso(day - 100 * 24 * HOUR), to: q.to, window: 'hour' }, 400, 'too_many_windows', 'window'],
          [{ from: iso(day - 500 * 24 * HOUR), to: q.to, window: 'month' }, 400, 'usage_retention_exceeded', 'from'],
          [{ ...q, account_id: foreign }, 404, 'not_found', 'account_id'],
          [{ ...q, starting_after: 'garbage' }, 400, 'unknown_cursor', 'starting_after'],
        ];
        for (const [query, status, code, param] of bad) {
          const r = await h.request('GET', `/v1/usage?${new URLSearchParams(query)}`, { auth: co.auth });
          if (code === 'invalid_request') assertError(r, status, code);
          else {
            assertCode(r, status, code);
            assert.equal(r.body.error.param, param, code);
          }
        }
        assertCode(
          await h.request('GET', `/v1/accounts/${foreign}/usage?${new URLSearchParams(q)}`, { auth: co.auth }),
          404,
          'not_found',
        );
        const theirs = await usage(h, other.auth, '/v1/usage', { ...q, window: 'all' });
        assert.deepEqual(rows(theirs), [[iso(day).slice(0, 13), 'llm', 'tokens', undefined, 1, '1', 1000]]);
      },
    );

    test('many concurrent requests land in one hour bucket exactly (group commits)', async () => {
      const co = await signUpCompany(h);
      const accounts = [await account(h, co), await account(h, co), await account(h, co)];
      const hour = Math.floor(h.server.clock.now() / HOUR) * HOUR - HOUR;
      const n = 60;
      await Promise.all(
        Array.from({ length: n }, (_, i) =>
          send(h, co.auth, accounts[i % 3]!, [
            { ...ev('llm', i + 1, { timestamp: iso(hour + i * 1000) }), quantity: 1.5 },
            ev('llm', 1, { timestamp: iso(hour + i * 1000) }),
          ]),
        ),
      );
      const got = await usage(h, co.auth, '/v1/usage', {
        from: iso(hour),
        to: iso(hour + HOUR),
        window: 'hour',
        group_by: 'type',
      });
      assert.deepEqual(
        got.map((g) => [g.events, g.quantity, g.cost]),
        [[2 * n, String(1.5 * n + n), (n * (n + 1)) / 2 + n]],
      );
      const byAccount = await usage(h, co.auth, '/v1/usage', {
        from: iso(hour),
        to: iso(hour + HOUR),
        window: 'all',
        group_by: 'account_id',
      });
      assert.equal(
        byAccount.reduce((s, g) => s + g.events, 0),
        2 * n,
      );
    });

    test('property: for random event streams, usage equals the sums computed from the event list', async () => {
      const base = Math.floor(h.server.clock.now() / HOUR) * HOUR - 30 * HOUR;
      const eventArb = fc.record({
        a: fc.integer({ min: 0, max: 1 }),
        type: fc.constantFrom('llm', 'gpu', 'api'),
        denomination: fc.constantFrom('tokens', 'credits'),
        hour: fc.integer({ min: 0, max: 29 }),
        cost: fc.integer({ min: 0, max: 10_000 }),
        quantity: fc.constantFrom(0, 1, 0.5, 2.25, 1e-7, 1000, 0.1),
        state: fc.constantFrom('complete', 'complete', 'pending', 'cancelled'),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(eventArb, { minLength: 1, maxLength: 12 }), async (stream) => {
          // A company of its own per run, so that a shrunk counterexample is the whole story.
          const co = await signUpCompany(h);
          const accounts = [await account(h, co, 1e12), await account(h, co, 1e12)];
          for (const e of stream) {
            await send(h, co.auth, accounts[e.a]!, [
              {
                ...ev(e.type, e.cost, { timestamp: iso(base + e.hour * HOUR + 17), denomination: e.denomination }),
                quantity: e.quantity,
                state: e.state,
              },
            ]);
          }
          const listed = await allEvents(h, co.auth, '/v1/events');
          assert.equal(listed.length, stream.length);
          const want = new Map<string, { events: number; cost: number; q: Decimal }>();
          for (const e of listed.filter((x) => x.state === 'complete')) {
            const t = Date.parse(e.timestamp);
            const k = `${t - (t % (24 * HOUR))}|${e.type}|${e.cost.denomination}`;
            const w = want.get(k) ?? { events: 0, cost: 0, q: { coef: 0n, scale: 0 } };
            w.events++;
            w.cost += e.cost.amount;
            w.q = addDecimal(w.q, decimalFromNumber(e.quantity)!);
            want.set(k, w);
          }
          const from = base - (base % (24 * HOUR));
          const got = await usage(h, co.auth, '/v1/usage', { from: iso(from), to: iso(from + 3 * 24 * HOUR) });
          assert.equal(got.length, want.size, JSON.stringify({ got, want: [...want.keys()] }));
          for (const g of got) {
            const w = want.get(`${Date.parse(g.window_start)}|${g.type}|${g.denomination}`);
            assert.ok(w, JSON.stringify(g));
            assert.deepEqual([g.events, g.cost, g.quantity], [w.events, w.cost, formatDecimal(w.q)]);
          }
        }),
        { numRuns: 6 },
      );
    });
  });
}

for (const dialect of HTTP_DIALECTS) {
  test(
    `usage retention: rollups of hours older than ` +
      `BILLING_USAGE_RETENTION_DAYS are deleted, and not asked for (${dialect})`,
    async () => {
      const h = await startHarness(dialect, { BILLING_USAGE_RETENTION_DAYS: '2' });
      try {
        const co = await signUpCompany(h);
        const acc = await account(h, co);
        const hour = Math.floor(h.server.clock.now() / HOUR) * HOUR;
        await send(h, co.auth, acc, [ev('llm', 3, { timestamp: iso(hour - 30 * HOUR) }), ev('llm', 4)]);
        const rollup = () =>
          h.store.read((tx) =>
            tx.usage.listUsage(
              { companyId: co.companyId, byAccount: true, fromMs: 0, toMs: hour + 100 * 24 * HOUR },
              10,
            ),
          );
        assert.equal((await rollup()).length, 2);
        const adv = await h.request('POST', '/v1/test_clock/advance', { auth: co.auth, body: { seconds: 20 * 3600 } });
        assert.equal(adv.status, 200, adv.text);
        assert.deepEqual(
          (await rollup()).map((r) => r.hourMs),
          [hour],
          'the hour now older than two days is gone; the recent one stays',
        );
        const old = await h.request('GET', `/v1/usage?from=${iso(hour - 30 * HOUR)}&to=${iso(hour + HOUR)}`, {
          auth: co.auth,
        });
        assertCode(old, 400, 'usage_retention_exceeded');
        const recent = await usage(h, co.auth, '/v1/usage', { from: iso(hour), to: iso(hour + HOUR), window: 'all' });
        assert.deepEqual(
          recent.map((g) => [g.events, g.cost]),
          [[1, 4]],
        );
      } finally {
        await h.close();
      }
    },
  );
}

describe('usage across server processes (postgres)', { skip: POSTGRES_ONLY_SKIP }, () => {
  test('an event answered by one process is listed and counted by the other at once', async () => {
    const db = sharedDatabase('postgres');
    const servers: TestServer[] = [];
    try {
      servers.push(await serverOn(await db.open()), await serverOn(await db.open()));
      const [a, b] = servers as [TestServer, TestServer];
      const co = await signUpCompany(asHarness(a));
      const acc = await account(a, co);
      const hour = Math.floor(a.server.clock.now() / HOUR) * HOUR;
      for (let i = 0; i < 5; i++) {
        const [id] = await send(i % 2 === 0 ? a : b, co.auth, acc, [ev('llm', i + 1)]);
        const reader = i % 2 === 0 ? b : a;
        // (Each test server has its own frozen test clock, so list order across the two is not creation order.)
        const listed = await reader.request('GET', `/v1/accounts/${acc}/events?limit=100`, { auth: co.auth });
        assert.ok(
          listed.body.data.some((e: { event_id: string }) => e.event_id === id),
          'listed at once by the other process',
        );
        const u = await usage(reader, co.auth, '/v1/usage', {
          from: iso(hour - HOUR),
          to: iso(hour + 2 * HOUR),
          window: 'all',
        });
        assert.deepEqual(
          u.map((g) => [g.events, g.cost]),
          [[i + 1, ((i + 1) * (i + 2)) / 2]],
          'counted at once by the other process',
        );
      }
    } finally {
      for (const s of servers) await s.close();
      await db.drop();
    }
  });
});
