// Guarantees (contract "Credit grants"), over HTTP on SQLite and PostgreSQL:
// - void removes a grant's unheld remaining with one grant_void transaction and sets `voided`; units held by pending
//   events are voided when those events settle (what the final cost does not use); voiding a voided grant answers
//   the same record (200) and moves nothing; a voided grant is never drawn; an expired or depleted one is 409, as is
//   a PATCH of an expired, depleted or voided grant; a scheduled grant is voided with no transaction, never joining;
// - PATCH changes priority (the drawing order follows), expires_at (null: never; at or before now: it expires at
//   once, held units staying held; before effective_at: 400), name and metadata;
// - another company's grant ids are 404 on GET, PATCH and void and stay unchanged; another company's balance is 404
//   on the grant routes; /v1/grants never lists another company's grants;
// - lists: a balance's grants in drawing order with a status filter (default scheduled,active) and paging (limit,
//   starting_after, an unknown cursor 400); /v1/grants by expires_at (never-expiring last) then grant_id, with
//   account_id, denomination, status and expires_before filters that combine, and paging;
// - bad input is 400 (or 404 for what does not exist) with the contract's error body naming the field in `param`,
//   never a 5xx, and changes nothing; the edges the contract allows are accepted;
// - the ledger audit is clean after every test.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { HTTP_DIALECTS, assertError, signUpCompany, startHarness, type Harness } from '../support/harness.js';
import type { GrantJson, TxJson } from './grants-support.js';

type Auth = [string, string];
interface Co {
  companyId: string;
  auth: Auth;
}

const SECOND = 1000;
const HOUR = 3600 * SECOND;
const DAY = 24 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();
const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const ALL = 'scheduled,active,depleted,expired,voided';

for (const dialect of HTTP_DIALECTS) {
  describe(`credit grants API: void, PATCH, isolation, lists, bad input (${dialect})`, () => {
    let h: Harness;
    let co: Co;
    before(async () => {
      h = await startHarness(dialect);
      co = await signUpCompany(h);
    });
    after(async () => h.close());
    afterEach(async () => h.audit());

    const call = (method: string, path: string, body?: unknown, as: Co = co) =>
      h.request(method, path, body === undefined ? { auth: as.auth } : { auth: as.auth, body });
    async function now(): Promise<number> {
      const r = await call('GET', '/v1/test_clock');
      assert.equal(r.status, 200, r.text);
      return Date.parse(r.body.data.now);
    }
    async function advance(toMs: number): Promise<void> {
      const r = await call('POST', '/v1/test_clock/advance', { to: iso(toMs) });
      assert.equal(r.status, 200, r.text);
    }
    async function account(as: Co = co, denominations = ['tokens']): Promise<string> {
      const a = await call('POST', `/v1/companies/${as.companyId}/accounts`, { name: 'G' }, as);
      assert.equal(a.status, 200, a.text);
      const id = a.body.data.account_id as string;
      for (const d of denominations) {
        const b = await call('POST', `/v1/accounts/${id}/balance/${d}`, { amount: 0 }, as);
        assert.equal(b.status, 200, b.text);
      }
      return id;
    }
    async function grant(acc: string, body: Record<string, unknown>, as: Co = co, d = 'tokens'): Promise<GrantJson> {
      const r = await call('POST', `/v1/accounts/${acc}/balance/${d}/grants`, body, as);
      assert.equal(r.status, 201, r.text);
      return r.body.data;
    }
    async function getGrant(id: string): Promise<GrantJson> {
      const r = await call('GET', `/v1/grants/${id}`);
      assert.equal(r.status, 200, r.text);
      return r.body.data;
    }
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
    async function txs(acc: string): Promise<TxJson[]> {
      const r = await call('GET', `/v1/accounts/${acc}/transactions?denomination=tokens&limit=100`);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.has_more, false);
      return r.body.data.reverse();
    }
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
    async function event(acc: string, amount: number, state: 'complete' | 'pending' = 'complete'): Promise<string> {
      const r = await call('POST', `/v1/accounts/${acc}/events`, [
        { type: 'use', state, cost_override: { amount, denomination: 'tokens' } },
      ]);
      assert.equal(r.status, 200, r.text);
      return r.body.event_ids[0];
    }
    async function settle(id: string, body: Record<string, unknown>): Promise<void> {
      const r = await call('PUT', `/v1/events/${id}`, body);
      assert.equal(r.status, 200, r.text);
    }
    const voidGrant = (id: string, body?: unknown, as: Co = co) => call('POST', `/v1/grants/${id}/void`, body, as);
    const patch = (id: string, body: unknown, as: Co = co) => call('PATCH', `/v1/grants/${id}`, body, as);
    /** Every item of a list, page by page (`limit` per page). */
    async function pages(path: string, limit: number, as: Co = co): Promise<GrantJson[]> {
      const out: GrantJson[] = [];
      let cursor: string | null = null;
      for (;;) {
        const sep = path.includes('?') ? '&' : '?';
        const r = await call(
          'GET',
          `${path}${sep}limit=${limit}${cursor ? `&starting_after=${cursor}` : ''}`,
          undefined,
          as,
        );
        assert.equal(r.status, 200, r.text);
        assert.ok(r.body.data.length <= limit);
        out.push(...r.body.data);
        if (!r.body.has_more) {
          assert.equal(r.body.next_cursor, null);
          return out;
        }
        assert.equal(r.body.next_cursor, r.body.data.at(-1).grant_id);
        cursor = r.body.next_cursor;
      }
    }

    test('void with open holds: unheld units leave now, held ones at their settle; twice is the same', async () => {
      const acc = await account();
      const v = await grant(acc, { amount: 300, priority: 10, name: 'promo' });
      const p = await grant(acc, { amount: 1000 });
      const names = { [v.grant_id]: 'V', [p.grant_id]: 'P' };
      const held = await event(acc, 100, 'pending');
      const n = await now();
      const voided = await voidGrant(v.grant_id, { reason: 'withdrawn' });
      assert.equal(voided.status, 200, voided.text);
      const g = voided.body.data as GrantJson;
      assert.deepEqual(
        [g.status, g.amount, g.remaining, g.held, g.voided_at, g.name],
        ['voided', 300, 100, 100, iso(n), 'promo'],
      );
      const last = (await txs(acc)).at(-1)!;
      assert.deepEqual(show([last], names), [['grant_void', -200, 1100, 'V', null]]);
      assert.equal(last.reason, 'withdrawn', 'the reason is kept on the transaction');
      const b = await balance(acc);
      assert.deepEqual([b.amount, b.pending, b.available], [1100, 100, 1000]);

      const again = await voidGrant(v.grant_id);
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(again.body.data, g, 'voiding a voided grant answers the same record');
      assert.equal((await txs(acc)).length, 3, 'and moves nothing');

      await event(acc, 50);
      assert.deepEqual(show((await txs(acc)).slice(-1), names), [['usage', -50, 1050, null, [['P', 50]]]]);
      await settle(held, { state: 'complete', cost_override: { amount: 40, denomination: 'tokens' } });
      assert.deepEqual(show((await txs(acc)).slice(-2), names), [
        ['usage', -40, 1010, null, [['V', 40]]],
        ['grant_void', -60, 950, 'V', null],
      ]);
      const after = await getGrant(v.grant_id);
      assert.deepEqual([after.status, after.remaining, after.held], ['voided', 0, 0]);
      const third = await voidGrant(v.grant_id, {});
      assert.equal(third.status, 200, third.text);
      assert.deepEqual(third.body.data, after);
      const refused = await patch(v.grant_id, { name: 'x' });
      assertError(refused, 409, 'conflict');
      assert.equal(refused.body.error.code, 'grant_voided');
      assert.deepEqual((await balance(acc)).amount, 950);
      assert.equal((await txs(acc)).length, 6);
    });

    test('a voided hold cancelled gives its units back to nothing: they are voided at once', async () => {
      const acc = await account();
      const v = await grant(acc, { amount: 100 });
      const held = await event(acc, 30, 'pending');
      assert.equal((await voidGrant(v.grant_id)).status, 200);
      await settle(held, { state: 'cancelled' });
      assert.deepEqual(show((await txs(acc)).slice(-2), { [v.grant_id]: 'V' }), [
        ['grant_void', -70, 30, 'V', null],
        ['grant_void', -30, 0, 'V', null],
      ]);
      const b = await balance(acc);
      assert.deepEqual([b.amount, b.pending, b.available], [0, 0, 0]);
    });

    test('void or PATCH of an expired or depleted grant: 409; a scheduled grant voided never joins', async () => {
      const acc = await account();
      const n = await now();
      const spent = await grant(acc, { amount: 30, priority: 0 });
      const lapsing = await grant(acc, { amount: 50, expires_at: iso(n + SECOND) });
      const later = await grant(acc, { amount: 70, effective_at: iso(n + HOUR) });
      await grant(acc, { amount: 5 });
      await event(acc, 30);
      await advance(n + SECOND);
      assert.equal((await getGrant(spent.grant_id)).status, 'depleted');
      assert.equal((await getGrant(lapsing.grant_id)).status, 'expired');
      const before = await txs(acc);
      for (const [id, code] of [
        [spent.grant_id, 'grant_depleted'],
        [lapsing.grant_id, 'grant_expired'],
      ] as const) {
        for (const r of [
          await voidGrant(id),
          await patch(id, { priority: 1 }),
          await patch(id, { name: 'late' }),
          await patch(id, { expires_at: null }),
        ]) {
          assertError(r, 409, 'conflict');
          assert.equal(r.body.error.code, code, r.text);
        }
      }
      assert.deepEqual(await txs(acc), before, 'nothing changed');
      assert.deepEqual(
        [(await getGrant(lapsing.grant_id)).expires_at, (await getGrant(spent.grant_id)).name],
        [iso(n + SECOND), null],
      );

      const v = await voidGrant(later.grant_id);
      assert.equal(v.status, 200, v.text);
      assert.deepEqual([v.body.data.status, v.body.data.remaining, v.body.data.held], ['voided', 0, 0]);
      assert.deepEqual(await txs(acc), before, 'a scheduled grant is voided with no transaction');
      await advance(n + HOUR);
      assert.deepEqual(await txs(acc), before, 'and never joins');
      assert.deepEqual([(await balance(acc)).amount, (await getGrant(later.grant_id)).status], [5, 'voided']);
    });

    test('PATCH: priority reorders the drawing, expires_at moves or ends the expiry, name, metadata', async () => {
      const acc = await account();
      const a = await grant(acc, { amount: 100, priority: 50 });
      const b = await grant(acc, { amount: 100, priority: 60, name: 'b', metadata: { k: 'v' } });
      const names = { [a.grant_id]: 'A', [b.grant_id]: 'B' };
      await event(acc, 10);
      assert.deepEqual(show((await txs(acc)).slice(-1), names), [['usage', -10, 190, null, [['A', 10]]]]);
      const p1 = await patch(b.grant_id, { priority: 10 });
      assert.equal(p1.status, 200, p1.text);
      assert.deepEqual([p1.body.data.priority, p1.body.data.name, p1.body.data.metadata], [10, 'b', { k: 'v' }]);
      const order = await call('GET', `/v1/accounts/${acc}/balance/tokens/grants`);
      assert.deepEqual(
        order.body.data.map((x: GrantJson) => names[x.grant_id]),
        ['B', 'A'],
      );
      await event(acc, 10);
      assert.deepEqual(show((await txs(acc)).slice(-1), names), [['usage', -10, 180, null, [['B', 10]]]]);

      const n = await now();
      const p2 = await patch(a.grant_id, { expires_at: iso(n + DAY) });
      assert.equal(p2.status, 200, p2.text);
      assert.deepEqual([p2.body.data.expires_at, p2.body.data.status], [iso(n + DAY), 'active']);
      assert.deepEqual((await balance(acc)).next_expiry, { expires_at: iso(n + DAY), amount: 90 });
      const p3 = await patch(a.grant_id, { expires_at: null });
      assert.deepEqual([p3.status, p3.body.data.expires_at], [200, null]);
      assert.equal((await balance(acc)).next_expiry, null);

      const p4 = await patch(b.grant_id, { name: 'renamed', metadata: { campaign: 'spring', n: 2 } });
      assert.equal(p4.status, 200, p4.text);
      const read = await getGrant(b.grant_id);
      assert.deepEqual(
        [read.name, read.metadata, read.priority, read.remaining],
        ['renamed', { campaign: 'spring', n: 2 }, 10, 90],
      );
      assert.deepEqual(p4.body.data, read);
      const p5 = await patch(b.grant_id, {});
      assert.deepEqual([p5.status, p5.body.data], [200, read], 'an empty PATCH changes nothing');
      const p6 = await patch(b.grant_id, { name: null, metadata: null });
      assert.deepEqual([p6.body.data.name, p6.body.data.metadata], [null, null]);
      assert.equal((await txs(acc)).length, 4, 'none of these moved units');

      // An expiry at or before now: it expires at once (unheld units); held units stay held until their settle.
      const held = await event(acc, 30, 'pending');
      assert.deepEqual([(await getGrant(b.grant_id)).held, (await getGrant(b.grant_id)).remaining], [30, 90]);
      await advance(n + 2 * SECOND);
      const early = await patch(b.grant_id, { expires_at: iso(Date.parse(b.effective_at) - 1) });
      assertError(early, 400, 'invalid_request');
      assert.deepEqual(
        [early.body.error.code, early.body.error.param],
        ['expires_at_must_be_after_effective_at', 'expires_at'],
      );
      const p7 = await patch(b.grant_id, { expires_at: iso(n + SECOND) });
      assert.equal(p7.status, 200, p7.text);
      assert.deepEqual(
        [p7.body.data.status, p7.body.data.remaining, p7.body.data.held, p7.body.data.expires_at],
        ['expired', 30, 30, iso(n + SECOND)],
      );
      assert.deepEqual(show((await txs(acc)).slice(-1), names), [['grant_expiry', -60, 120, 'B', null]]);
      await settle(held, { state: 'cancelled' });
      assert.deepEqual(show((await txs(acc)).slice(-1), names), [['grant_expiry', -30, 90, 'B', null]]);
      const p8 = await patch(a.grant_id, { expires_at: iso(n + 2 * SECOND) }); // exactly now
      assert.deepEqual([p8.status, p8.body.data.status, p8.body.data.remaining], [200, 'expired', 0]);
      assert.deepEqual(show((await txs(acc)).slice(-1), names), [['grant_expiry', -90, 0, 'A', null]]);
      const b2 = await balance(acc);
      assert.deepEqual([b2.amount, b2.pending, b2.next_expiry], [0, 0, null]);
    });

    test("isolation: another company's grants are 404 everywhere and unchanged, its balances too", async () => {
      const other = await signUpCompany(h, 'Other');
      const acc = await account();
      const g = await grant(acc, { amount: 100, expires_at: iso((await now()) + DAY) });
      const theirs = await account(other);
      const tg = await grant(theirs, { amount: 7 }, other);
      for (const r of [
        await call('GET', `/v1/grants/${g.grant_id}`, undefined, other),
        await patch(g.grant_id, { priority: 1 }, other),
        await patch(g.grant_id, { expires_at: null }, other),
        await voidGrant(g.grant_id, undefined, other),
        await voidGrant(g.grant_id, { reason: 'x' }, other),
        await call('GET', `/v1/accounts/${acc}/balance/tokens/grants`, undefined, other),
        await call('POST', `/v1/accounts/${acc}/balance/tokens/grants`, { amount: 5 }, other),
        await call('GET', `/v1/grants?account_id=${acc}`, undefined, other),
        await call('GET', `/v1/grants/${tg.grant_id}`),
        await voidGrant(tg.grant_id),
        await patch(tg.grant_id, { name: 'mine' }),
        await call('GET', `/v1/accounts/${theirs}/balance/tokens/grants`),
        await call('POST', `/v1/accounts/${theirs}/balance/tokens/grants`, { amount: 5 }),
      ]) {
        assertError(r, 404, 'not_found');
        assert.equal(r.body.data, undefined);
      }
      assert.deepEqual(await getGrant(g.grant_id), g, 'unchanged');
      assert.deepEqual((await balance(acc)).amount, 100);
      const listed = await pages(`/v1/grants?status=${ALL}`, 100, other);
      assert.deepEqual(
        listed.map((x) => x.grant_id),
        [tg.grant_id],
        '/v1/grants lists only the caller’s grants',
      );
      assert.ok(!(await pages(`/v1/grants?status=${ALL}`, 100)).some((x) => x.grant_id === tg.grant_id));
      const theirsNow = await call('GET', `/v1/grants/${tg.grant_id}`, undefined, other);
      assert.deepEqual([theirsNow.body.data.remaining, theirsNow.body.data.name], [7, null]);
    });

    test('lists: per balance in drawing order with status and paging; /v1/grants by expiry with filters', async () => {
      const lc = await signUpCompany(h, 'Lists'); // a company of its own: /v1/grants holds only this test's grants
      const acc1 = await account(lc, ['tokens', 'credits']);
      const acc2 = await account(lc);
      const n = await now();
      const make = (acc: string, body: Record<string, unknown>, d = 'tokens') => grant(acc, body, lc, d);
      const g = {
        a: await make(acc1, { amount: 10, expires_at: iso(n + 2 * DAY) }),
        b: await make(acc1, { amount: 10, priority: 10 }),
        c: await make(acc1, { amount: 10, expires_at: iso(n + DAY) }),
        s: await make(acc1, { amount: 10, effective_at: iso(n + HOUR), expires_at: iso(n + 3 * DAY) }),
        d: await make(acc1, { amount: 5, priority: 0 }),
        e: await make(acc1, { amount: 10, priority: 90, expires_at: iso(n + 10 * SECOND) }),
        v: await make(acc1, { amount: 10, priority: 80 }),
        x: await make(acc1, { amount: 10, expires_at: iso(n + 12 * HOUR) }, 'credits'),
        y: await make(acc2, { amount: 10 }),
        z: await make(acc2, { amount: 10, expires_at: iso(n + DAY) }),
      };
      const names: Record<string, string> = {};
      for (const [k, v] of Object.entries(g)) names[v.grant_id] = k;
      const ids = (list: GrantJson[]) => list.map((x) => names[x.grant_id]);
      const ordered = (...keys: (keyof typeof g)[]) => keys.sort((p, q) => byId(g[p].grant_id, g[q].grant_id));
      const r = await call(
        'POST',
        `/v1/accounts/${acc1}/events`,
        [{ type: 'use', cost_override: { amount: 5, denomination: 'tokens' } }],
        lc,
      );
      assert.equal(r.status, 200, r.text); // d used up
      assert.equal((await voidGrant(g.v.grant_id, undefined, lc)).status, 200);
      await advance(n + 10 * SECOND); // e expires

      const balanceList = `/v1/accounts/${acc1}/balance/tokens/grants`;
      assert.deepEqual(ids(await pages(balanceList, 100, lc)), ['b', 'c', 'a', 's'], 'default: scheduled,active');
      assert.deepEqual(ids(await pages(balanceList, 1, lc)), ['b', 'c', 'a', 's'], 'one a page');
      assert.deepEqual(ids(await pages(`${balanceList}?status=depleted`, 100, lc)), ['d']);
      assert.deepEqual(ids(await pages(`${balanceList}?status=voided,expired`, 100, lc)), ['v', 'e']);
      assert.deepEqual(ids(await pages(`${balanceList}?status=active,depleted`, 100, lc)), ['d', 'b', 'c', 'a']);
      assert.deepEqual(ids(await pages(`${balanceList}?status=scheduled`, 100, lc)), ['s']);
      assert.deepEqual(ids(await pages(`${balanceList}?status=${ALL}`, 3, lc)), ['d', 'b', 'c', 'a', 's', 'v', 'e']);
      const first = await call('GET', `${balanceList}?limit=2`, undefined, lc);
      assert.deepEqual(
        [ids(first.body.data), first.body.has_more, first.body.next_cursor],
        [['b', 'c'], true, g.c.grant_id],
      );
      const unknown = await call('GET', `${balanceList}?starting_after=g_nope`, undefined, lc);
      assertError(unknown, 400, 'invalid_request');
      assert.equal(unknown.body.error.param, 'starting_after');

      const company = '/v1/grants';
      const never = ordered('b', 'y');
      const day = ordered('c', 'z');
      assert.deepEqual(ids(await pages(company, 100, lc)), ['x', ...day, 'a', 's', ...never]);
      assert.deepEqual(ids(await pages(company, 2, lc)), ['x', ...day, 'a', 's', ...never]);
      assert.deepEqual(ids(await pages(`${company}?account_id=${acc2}`, 100, lc)), ['z', 'y']);
      assert.deepEqual(ids(await pages(`${company}?denomination=credits`, 100, lc)), ['x']);
      assert.deepEqual(ids(await pages(`${company}?status=expired`, 100, lc)), ['e']);
      assert.deepEqual(ids(await pages(`${company}?status=voided,depleted`, 100, lc)), ordered('d', 'v'));
      assert.deepEqual(ids(await pages(`${company}?expires_before=${iso(n + DAY + 1)}`, 100, lc)), ['x', ...day]);
      assert.deepEqual(ids(await pages(`${company}?expires_before=${iso(n + DAY)}`, 100, lc)), ['x'], 'strictly');
      assert.deepEqual(
        ids(await pages(`${company}?account_id=${acc1}&denomination=tokens&expires_before=${iso(n + 3 * DAY)}`, 1, lc)),
        ['c', 'a'],
      );
      assert.deepEqual(ids(await pages(`${company}?status=${ALL}&expires_before=${iso(n + 5 * DAY)}`, 100, lc)), [
        'e',
        'x',
        ...day,
        'a',
        's',
      ]);
      const unknownCompany = await call('GET', `${company}?starting_after=g_nope`, undefined, lc);
      assertError(unknownCompany, 400, 'invalid_request');
      assert.equal(unknownCompany.body.error.param, 'starting_after');
      assert.deepEqual(ids(await pages(`${company}?account_id=${acc1}&denomination=nothing`, 100, lc)), []);
    });

    test('bad input is 400 or 404 naming the field, never a 5xx, and changes nothing', async () => {
      const acc = await account();
      await grant(acc, { amount: 10 });
      const n = await now();
      const path = `/v1/accounts/${acc}/balance/tokens/grants`;
      const snapshot = async () => [
        await balance(acc),
        await txs(acc),
        (await call('GET', `${path}?status=${ALL}&limit=100`)).body.data,
        (await call('GET', `/v1/grants?status=${ALL}&limit=100`)).body.data.length,
      ];
      const before = await snapshot();
      const g = (await call('GET', path)).body.data[0] as GrantJson;
      const refused: [string, string, string, unknown, number, string][] = [
        ['amount 0', 'POST', path, { amount: 0 }, 400, 'amount'],
        ['amount negative', 'POST', path, { amount: -5 }, 400, 'amount'],
        ['amount fractional', 'POST', path, { amount: 1.5 }, 400, 'amount'],
        ['amount a string', 'POST', path, { amount: '10' }, 400, 'amount'],
        ['amount missing', 'POST', path, { priority: 1 }, 400, 'amount'],
        ['amount beyond safe integers', 'POST', path, { amount: 2 ** 60 }, 400, 'amount'],
        ['priority −1', 'POST', path, { amount: 1, priority: -1 }, 400, 'priority'],
        ['priority 101', 'POST', path, { amount: 1, priority: 101 }, 400, 'priority'],
        ['priority fractional', 'POST', path, { amount: 1, priority: 2.5 }, 400, 'priority'],
        ['unknown category', 'POST', path, { amount: 1, category: 'gift' }, 400, 'category'],
        [
          'expires_at = effective_at',
          'POST',
          path,
          { amount: 1, effective_at: iso(n + HOUR), expires_at: iso(n + HOUR) },
          400,
          'expires_at',
        ],
        [
          'expires_at before effective_at',
          'POST',
          path,
          { amount: 1, effective_at: iso(n + 2 * HOUR), expires_at: iso(n + HOUR) },
          400,
          'expires_at',
        ],
        ['expires_at now', 'POST', path, { amount: 1, expires_at: iso(n) }, 400, 'expires_at'],
        [
          'expires_at in the past',
          'POST',
          path,
          { amount: 1, effective_at: iso(n - 2 * HOUR), expires_at: iso(n - HOUR) },
          400,
          'expires_at',
        ],
        [
          'effective_at 366 days + 1 ms',
          'POST',
          path,
          { amount: 1, effective_at: iso(n + 366 * DAY + 1) },
          400,
          'effective_at',
        ],
        ['effective_at in words', 'POST', path, { amount: 1, effective_at: 'tomorrow' }, 400, 'effective_at'],
        [
          'effective_at 30 February',
          'POST',
          path,
          { amount: 1, effective_at: '2031-02-30T00:00:00Z' },
          400,
          'effective_at',
        ],
        ['effective_at empty', 'POST', path, { amount: 1, effective_at: '' }, 400, 'effective_at'],
        ['effective_at a number', 'POST', path, { amount: 1, effective_at: n }, 400, 'effective_at'],
        ['expires_at a date only', 'POST', path, { amount: 1, expires_at: '2031-01-01' }, 400, 'expires_at'],
        ['expires_at month 13', 'POST', path, { amount: 1, expires_at: '2031-13-01T00:00:00Z' }, 400, 'expires_at'],
        ['cost_basis negative', 'POST', path, { amount: 1, category: 'paid', cost_basis: '-1' }, 400, 'cost_basis'],
        ['cost_basis −0.5 number', 'POST', path, { amount: 1, category: 'paid', cost_basis: -0.5 }, 400, 'cost_basis'],
        [
          'cost_basis not a number',
          'POST',
          path,
          { amount: 1, category: 'paid', cost_basis: 'abc' },
          400,
          'cost_basis',
        ],
        [
          'cost_basis promotional',
          'POST',
          path,
          { amount: 1, category: 'promotional', cost_basis: '0.5' },
          400,
          'cost_basis',
        ],
        ['cost_basis no category', 'POST', path, { amount: 1, cost_basis: '0.5' }, 400, 'cost_basis'],
        ['name too long', 'POST', path, { amount: 1, name: 'x'.repeat(201) }, 400, 'name'],
        ['name a number', 'POST', path, { amount: 1, name: 5 }, 400, 'name'],
        ['metadata not an object', 'POST', path, { amount: 1, metadata: 'x' }, 400, 'metadata'],
        [
          'metadata too deep',
          'POST',
          path,
          { amount: 1, metadata: { a: { b: { c: { d: { e: { f: 1 } } } } } } },
          400,
          'metadata',
        ],
        ['unknown field', 'POST', path, { amount: 1, colour: 'red' }, 400, 'colour'],
        [
          'no balance of that denomination',
          'POST',
          `/v1/accounts/${acc}/balance/gold/grants`,
          { amount: 1 },
          404,
          'denomination',
        ],
        ['no such account', 'POST', '/v1/accounts/a_nope/balance/tokens/grants', { amount: 1 }, 404, 'account_id'],
        ['list: unknown status', 'GET', `${path}?status=gone`, undefined, 400, 'status'],
        ['list: one unknown status', 'GET', `${path}?status=active,Active`, undefined, 400, 'status'],
        ['list: limit 0', 'GET', `${path}?limit=0`, undefined, 400, 'limit'],
        ['list: limit 101', 'GET', `${path}?limit=101`, undefined, 400, 'limit'],
        ['list: no such balance', 'GET', `/v1/accounts/${acc}/balance/gold/grants`, undefined, 404, 'denomination'],
        ['company list: unknown status', 'GET', '/v1/grants?status=spent', undefined, 400, 'status'],
        ['company list: bad expires_before', 'GET', '/v1/grants?expires_before=soon', undefined, 400, 'expires_before'],
        ['company list: unknown filter', 'GET', '/v1/grants?colour=red', undefined, 400, 'colour'],
        ['company list: unknown category', 'GET', '/v1/grants?category=gift', undefined, 400, 'category'],
        ['company list: no such account', 'GET', '/v1/grants?account_id=a_nope', undefined, 404, 'account_id'],
        ['get: no such grant', 'GET', '/v1/grants/g_nope', undefined, 404, 'grant_id'],
        ['patch: no such grant', 'PATCH', '/v1/grants/g_nope', { priority: 1 }, 404, 'grant_id'],
        ['void: no such grant', 'POST', '/v1/grants/g_nope/void', {}, 404, 'grant_id'],
        ['patch: priority 101', 'PATCH', `/v1/grants/${g.grant_id}`, { priority: 101 }, 400, 'priority'],
        ['patch: expires_at unparseable', 'PATCH', `/v1/grants/${g.grant_id}`, { expires_at: 'x' }, 400, 'expires_at'],
        ['patch: amount', 'PATCH', `/v1/grants/${g.grant_id}`, { amount: 5 }, 400, 'amount'],
        ['patch: name too long', 'PATCH', `/v1/grants/${g.grant_id}`, { name: 'y'.repeat(201) }, 400, 'name'],
        ['void: unknown field', 'POST', `/v1/grants/${g.grant_id}/void`, { why: 'x' }, 400, 'why'],
      ];
      for (const [what, method, at, body, status, param] of refused) {
        const r = await call(method, at, body);
        assert.equal(r.status, status, `${what}: ${r.text}`);
        assertError(r, status, status === 400 ? 'invalid_request' : 'not_found');
        assert.equal(r.body.error.param, param, `${what}: ${r.text}`);
      }
      assert.deepEqual(await snapshot(), before, 'nothing changed');
    });

    test('edges the contract allows: 366 days ahead, priorities 0 and 100, cost_basis on paid', async () => {
      const acc = await account();
      const n = await now();
      const path = `/v1/accounts/${acc}/balance/tokens/grants`;
      const far = await grant(acc, { amount: 1, effective_at: iso(n + 366 * DAY) });
      assert.deepEqual([far.status, far.effective_at, far.expires_at], ['scheduled', iso(n + 366 * DAY), null]);
      const past = await grant(acc, { amount: 2, effective_at: iso(n - DAY), expires_at: iso(n + 1) });
      assert.deepEqual([past.status, past.remaining], ['active', 2]);
      const lo = await grant(acc, { amount: 3, priority: 0, category: 'paid', cost_basis: '0' });
      const hi = await grant(acc, { amount: 4, priority: 100, category: 'paid', cost_basis: 0.25 });
      assert.deepEqual(
        [lo.priority, lo.cost_basis, lo.category, hi.priority, hi.cost_basis],
        [0, '0', 'paid', 100, '0.25'],
      );
      const full = await grant(acc, {
        amount: Number.MAX_SAFE_INTEGER - 20,
        name: 'n'.repeat(200),
        metadata: { order: 'o-1' },
        category: 'paid',
        cost_basis: '12.345678',
      });
      assert.deepEqual(
        [full.amount, full.remaining, full.name?.length, full.metadata, full.cost_basis, full.source],
        [Number.MAX_SAFE_INTEGER - 20, Number.MAX_SAFE_INTEGER - 20, 200, { order: 'o-1' }, '12.345678', 'grant'],
      );
      assert.match(full.grant_id, /^g_/);
      assert.deepEqual(Object.keys(full).sort(), [
        'account_id',
        'amount',
        'category',
        'cost_basis',
        'created_at',
        'denomination',
        'effective_at',
        'expires_at',
        'grant_id',
        'held',
        'metadata',
        'name',
        'priority',
        'remaining',
        'source',
        'status',
        'voided_at',
      ]);
      assert.deepEqual(await call('GET', `/v1/grants/${full.grant_id}`).then((r) => r.body.data), full);
      const listed = await call('GET', `${path}?status=${ALL}&limit=100`);
      assert.equal(listed.body.data.length, 5); // before the sixth, below
      const offset = await grant(acc, { amount: 3, effective_at: '2020-01-01T02:00:00+02:00', expires_at: iso(n + 1) });
      assert.deepEqual([offset.effective_at, offset.status], ['2020-01-01T00:00:00.000Z', 'active']);
      const b = await balance(acc);
      assert.deepEqual(
        [b.amount, b.next_expiry],
        [Number.MAX_SAFE_INTEGER - 8, { expires_at: iso(n + 1), amount: 5 }],
        'next_expiry sums the grants expiring at that instant',
      );
    });

    test('Idempotency-Key: the same body replays the grant, another body is 409; nothing granted twice', async () => {
      const acc = await account();
      const path = `/v1/accounts/${acc}/balance/tokens/grants`;
      const send = (body: unknown, key: string) =>
        h.request('POST', path, { auth: co.auth, body, headers: { 'idempotency-key': key } });
      const first = await send({ amount: 25, name: 'once' }, `grant-${dialect}`);
      assert.equal(first.status, 201, first.text);
      const again = await send({ amount: 25, name: 'once' }, `grant-${dialect}`);
      assert.deepEqual([again.status, again.headers.get('idempotent-replayed'), again.body], [201, 'true', first.body]);
      assertError(await send({ amount: 26, name: 'once' }, `grant-${dialect}`), 409, 'conflict');
      assert.equal((await balance(acc)).amount, 25);
      assert.equal((await txs(acc)).length, 1);
      const voided = await h.request('POST', `/v1/grants/${first.body.data.grant_id}/void`, {
        auth: co.auth,
        body: {},
        headers: { 'idempotency-key': `void-${dialect}` },
      });
      assert.equal(voided.status, 200, voided.text);
      assert.equal((await balance(acc)).amount, 0);
    });

    test('property: any grant body gets 201 or a 400 error body, never a 5xx; refusals create nothing', async () => {
      const acc = await account();
      const path = `/v1/accounts/${acc}/balance/tokens/grants`;
      const count = async () => (await pages(`${path}?status=${ALL}`, 100)).length;
      const before = await count();
      let created = 0;
      const fields = ['amount', 'priority', 'category', 'effective_at', 'expires_at', 'cost_basis', 'name', 'metadata'];
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...fields), fc.jsonValue(), async (k, v) => {
          const r = await call('POST', path, { amount: 1, category: 'paid', [k]: v });
          if (r.status === 201) created++;
          else {
            assertError(r, 400, 'invalid_request');
            // A key named __proto__ anywhere is refused as malformed JSON, for the whole body.
            if (r.body.error.code !== 'malformed_request') assert.equal(typeof r.body.error.param, 'string', r.text);
          }
        }),
        { numRuns: 150 },
      );
      assert.equal(await count(), before + created);
    });
  });
}

/** A server of its own (a balance broken by these would break every later advance of the test clock), a balance
 * holding 2^53 − 6 units, and the ledger audit at the end. */
async function nearTheLimit(
  dialect: (typeof HTTP_DIALECTS)[number],
  run: (
    call: (method: string, path: string, body?: unknown) => ReturnType<Harness['request']>,
    acc: string,
  ) => Promise<void>,
): Promise<void> {
  const h = await startHarness(dialect);
  try {
    const co = await signUpCompany(h);
    const call = (method: string, path: string, body?: unknown) =>
      h.request(method, path, body === undefined ? { auth: co.auth } : { auth: co.auth, body });
    const a = await call('POST', `/v1/companies/${co.companyId}/accounts`, { name: 'Big' });
    const acc = a.body.data.account_id as string;
    assert.equal((await call('POST', `/v1/accounts/${acc}/balance/tokens`, { amount: 0 })).status, 200);
    const g = await call('POST', `/v1/accounts/${acc}/balance/tokens/grants`, { amount: Number.MAX_SAFE_INTEGER - 5 });
    assert.equal(g.status, 201, g.text);
    await run(call, acc);
    await h.audit();
  } finally {
    await h.close();
  }
}

for (const dialect of HTTP_DIALECTS) {
  test(`a grant taking the balance beyond 2^53 − 1 now is 400 naming amount, not a 500 (${dialect})`, async () => {
    await nearTheLimit(dialect, async (call, acc) => {
      // As an adjustment beyond the range is (400 amount_out_of_range, param amount).
      const r = await call('POST', `/v1/accounts/${acc}/balance/tokens/grants`, { amount: 9 });
      assertError(r, 400, 'invalid_request');
      assert.equal(r.body.error.param, 'amount', r.text);
      const b = await call('GET', `/v1/accounts/${acc}/balance/tokens`);
      assert.equal(b.body.data.amount, Number.MAX_SAFE_INTEGER - 5);
    });
  });

  test(`a scheduled grant beyond 2^53 − 1 at its start: refused, or breaks nothing when due (${dialect})`, async () => {
    await nearTheLimit(dialect, async (call, acc) => {
      const path = `/v1/accounts/${acc}/balance/tokens/grants`;
      const n = Date.parse((await call('GET', '/v1/test_clock')).body.data.now);
      const later = await call('POST', path, { amount: 100, effective_at: iso(n + HOUR) });
      if (later.status !== 201) {
        assertError(later, 400, 'invalid_request');
        assert.equal(later.body.error.param, 'amount', later.text);
      }
      const adv = await call('POST', '/v1/test_clock/advance', { seconds: 3600 });
      assert.equal(adv.status, 200, `the test clock's jobs: ${adv.text}`);
      for (const at of [`/v1/accounts/${acc}/balance/tokens`, path, '/v1/grants']) {
        const r = await call('GET', at);
        assert.equal(r.status, 200, `GET ${at}: ${r.text}`);
      }
      const ev = await call('POST', `/v1/accounts/${acc}/events`, [
        { type: 'use', cost_override: { amount: 1, denomination: 'tokens' } },
      ]);
      assert.equal(ev.status, 200, ev.text);
    });
  });
}
