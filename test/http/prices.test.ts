// Guarantees (contract "Pricing models and the pre-flight check"), on SQLite and PostgreSQL: graduated and package
// prices are set, read and versioned; bad terms are 400 naming the field and leave the old price in force; events are
// charged ceil(C(Q + q)) − ceil(C(Q)) at tier and package edges, with fractions, per account, type and month (a
// backdated event counts in its own month), pending events hold what they would cost and are priced again at
// completion, cancelled and overridden ones never count; 50 concurrent requests for one account sum to exactly
// ceil(C(total)); a price change mid-month keeps the count; the check answers what the events call then charges,
// writes nothing, and refuses what it refuses; usage read-back sums the costs charged; another company sees nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { HTTP_DIALECTS, assertError, signUpCompany, startHarness, type Harness } from '../support/harness.js';

type Auth = [string, string];

const GRADUATED = {
  denomination: 'tokens',
  model: 'graduated',
  tiers: [
    { up_to: 100, unit_amount: '0.5' },
    { up_to: 1000, unit_amount: '0.25', flat_amount: '10' },
    { up_to: null, unit_amount: '0.1', flat_amount: '3' },
  ],
};
const PACKAGE = { denomination: 'tokens', model: 'package', package_size: 1000, package_amount: '5' };

for (const dialect of HTTP_DIALECTS) {
  describe(`pricing models over HTTP (${dialect})`, () => {
    let h: Harness;
    let co: { companyId: string; auth: Auth };
    before(async () => {
      h = await startHarness(dialect);
      co = await signUpCompany(h);
    });
    after(async () => h.close());

    async function put(type: string, body: unknown, auth: Auth = co.auth) {
      return h.request('PUT', `/v1/prices/${type}`, { auth, body });
    }
    async function account(amount = 1_000_000): Promise<string> {
      const a = await h.request('POST', `/v1/companies/${co.companyId}/accounts`, {
        auth: co.auth,
        body: { name: 'U' },
      });
      assert.equal(a.status, 200, a.text);
      const id = a.body.data.account_id as string;
      const b = await h.request('POST', `/v1/accounts/${id}/balance/tokens`, { auth: co.auth, body: { amount } });
      assert.equal(b.status, 200, b.text);
      return id;
    }
    async function send(accountId: string, events: unknown[]): Promise<string[]> {
      const r = await h.request('POST', `/v1/accounts/${accountId}/events`, { auth: co.auth, body: events });
      assert.equal(r.status, 200, r.text);
      return r.body.event_ids;
    }
    async function event(id: string) {
      const r = await h.request('GET', `/v1/events/${id}`, { auth: co.auth });
      assert.equal(r.status, 200, r.text);
      return r.body.data;
    }
    async function costs(accountId: string, events: unknown[]): Promise<number[]> {
      const ids = await send(accountId, events);
      return Promise.all(ids.map(async (id) => (await event(id)).cost.amount as number));
    }
    async function balance(accountId: string) {
      const r = await h.request('GET', `/v1/accounts/${accountId}/balance/tokens`, { auth: co.auth });
      assert.equal(r.status, 200, r.text);
      return r.body.data as { amount: number; pending: number; available: number };
    }
    const q = (type: string, quantity: number, extra: Record<string, unknown> = {}) => ({ type, quantity, ...extra });

    test('set, read and version a graduated and a package price; the same terms again change nothing', async () => {
      const set = await put('g-read', GRADUATED);
      assert.equal(set.status, 200, set.text);
      assert.deepEqual(
        { ...set.body.data, updated_at: undefined, effective_from: undefined },
        {
          type: 'g-read',
          denomination: 'tokens',
          model: 'graduated',
          unit_amount: null,
          tiers: [
            { up_to: 100, unit_amount: '0.5', flat_amount: null },
            { up_to: 1000, unit_amount: '0.25', flat_amount: '10' },
            { up_to: null, unit_amount: '0.1', flat_amount: '3' },
          ],
          package_size: null,
          package_amount: null,
          version: 1,
          updated_at: undefined,
          effective_from: undefined,
        },
      );
      const again = await put('g-read', GRADUATED);
      assert.equal(again.body.data.version, 1, 'the same terms make no new version');
      const pkg = await put('g-read', PACKAGE);
      assert.equal(pkg.status, 200, pkg.text);
      assert.equal(pkg.body.data.version, 2);
      assert.equal(pkg.body.data.package_size, 1000);
      assert.equal(pkg.body.data.package_amount, '5');
      assert.equal(pkg.body.data.tiers, null);
      const unit = await put('g-read', { denomination: 'tokens', unit_amount: 2 });
      assert.equal(unit.body.data.model, 'unit');
      assert.equal(unit.body.data.unit_amount, '2');

      const got = await h.request('GET', '/v1/prices/g-read', { auth: co.auth });
      assert.deepEqual(got.body.data, unit.body.data);
      const v1 = await h.request('GET', '/v1/prices/g-read/versions?limit=1', { auth: co.auth });
      assert.equal(v1.status, 200, v1.text);
      assert.equal(v1.body.data[0].version, 2);
      assert.equal(v1.body.data[0].model, 'package');
      assert.equal(v1.body.data[0].effective_to, unit.body.data.effective_from);
      assert.equal(v1.body.has_more, true);
      const v2 = await h.request('GET', `/v1/prices/g-read/versions?limit=1&starting_after=${v1.body.next_cursor}`, {
        auth: co.auth,
      });
      assert.equal(v2.body.data[0].version, 1);
      assert.equal(v2.body.data[0].model, 'graduated');
      assert.equal(v2.body.data[0].effective_to, pkg.body.data.effective_from);
      assert.equal(v2.body.has_more, false);
      assertError(await h.request('GET', '/v1/prices/nope', { auth: co.auth }), 404, 'not_found');
      assertError(await h.request('GET', '/v1/prices/nope/versions', { auth: co.auth }), 404, 'not_found');
    });

    test('bad terms are 400 naming the field, and the old price stays', async () => {
      assert.equal((await put('bad', GRADUATED)).status, 200);
      const tiers = (t: unknown[]) => ({ denomination: 'tokens', model: 'graduated', tiers: t });
      const bad: [unknown, string][] = [
        [tiers([]), 'tiers'],
        [
          tiers([
            { up_to: 10, unit_amount: '1' },
            { up_to: 5, unit_amount: '1' },
            { up_to: null, unit_amount: '1' },
          ]),
          'tiers[1].up_to',
        ],
        [tiers([{ up_to: 10, unit_amount: '1' }]), 'tiers[0].up_to'],
        [tiers([{ up_to: null, unit_amount: '-0.5' }]), 'tiers[0].unit_amount'],
        [tiers([{ up_to: null, unit_amount: 'abc' }]), 'tiers[0].unit_amount'],
        [tiers([{ up_to: null, unit_amount: '1', flat_amount: '1.2.3' }]), 'tiers[0].flat_amount'],
        [{ ...PACKAGE, package_size: 0 }, 'package_size'],
        [{ ...PACKAGE, package_size: 2.5 }, 'package_size'],
        [{ denomination: 'tokens', model: 'package', package_size: 10 }, 'package_amount'],
        [{ denomination: 'tokens', model: 'volume', tiers: GRADUATED.tiers }, 'model'],
        [{ denomination: 'tokens', model: 'stairstep' }, 'model'],
      ];
      for (const [body, param] of bad) {
        const r = await put('bad', body);
        assertError(r, 400, 'invalid_request');
        assert.equal(r.body.error.param, param, r.text);
      }
      const volume = await put('bad', { denomination: 'tokens', model: 'volume', tiers: GRADUATED.tiers });
      assert.match(volume.body.error.message, /volume pricing .* is not offered/);
      const still = await h.request('GET', '/v1/prices/bad', { auth: co.auth });
      assert.equal(still.body.data.model, 'graduated');
      assert.equal(still.body.data.version, 1);
    });

    test('graduated: an event ending on up_to, one crossing two tiers, a flat amount once, fractions', async () => {
      assert.equal((await put('g', GRADUATED)).status, 200);
      const a = await account();
      // C(100) = 50 | C(101) = 60.25 → 61 | C(1000) = 285 | C(1001) = 288.1 → 289
      assert.deepEqual(await costs(a, [q('g', 100), q('g', 1), q('g', 899), q('g', 1)]), [50, 11, 224, 4]);
      assert.equal((await balance(a)).amount, 1_000_000 - 289, 'the period costs ceil(C(total))');
      const b = await account();
      // C(50) = 25 | C(1050) = 50 + 225 + 10 + 5 + 3 = 293
      assert.deepEqual(await costs(b, [q('g', 50), q('g', 1000)]), [25, 268]);
      const c = await account();
      assert.deepEqual(await costs(c, [q('g', 0.1), q('g', 0.1), q('g', 0.1)]), [1, 0, 0], 'ceil(0.05), …');
      assert.equal((await event((await send(c, [q('g', 1)]))[0]!)).price_model, 'graduated');
    });

    test('package: every started block, per account', async () => {
      assert.equal((await put('p', PACKAGE)).status, 200);
      const a = await account();
      const b = await account();
      assert.deepEqual(await costs(a, [q('p', 1), q('p', 999), q('p', 1), q('p', 1000), q('p', 0.5)]), [5, 0, 5, 5, 0]);
      assert.deepEqual(await costs(b, [q('p', 1)]), [5], "another account's period is its own");
    });

    test('month: a backdated event counts in its own month; the current month starts again', async () => {
      assert.equal((await put('m', PACKAGE)).status, 200);
      const a = await account();
      const now = new Date();
      // The last hour of the previous month: always in the past and within the 35-day age limit.
      const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) - 3_600_000).toISOString();
      assert.deepEqual(await costs(a, [q('m', 600, { timestamp: lastMonth }), q('m', 600)]), [5, 5]);
      assert.deepEqual(await costs(a, [q('m', 600, { timestamp: lastMonth }), q('m', 600)]), [5, 5], 'each month');
      assert.deepEqual(await costs(a, [q('m', 600, { timestamp: lastMonth })]), [0], '1800 of 2000 in that month');
    });

    test('pending holds its cost now; completion prices again against the count then; cancel: no count', async () => {
      assert.equal((await put('h', PACKAGE)).status, 200);
      const a = await account();
      const [p1] = await send(a, [q('h', 10, { state: 'pending' })]);
      assert.equal((await event(p1!)).cost.amount, 5, 'holds the first block');
      assert.equal((await balance(a)).pending, 5);
      assert.deepEqual(await costs(a, [q('h', 995)]), [5], 'the pending event does not count');
      const settled = await h.request('PUT', `/v1/events/${p1}`, { auth: co.auth, body: { state: 'complete' } });
      assert.equal(settled.status, 200, settled.text);
      assert.equal(settled.body.data.cost.amount, 5, '995 + 10 = 1005: it opens the second block');
      assert.equal(settled.body.data.price_model, 'package');
      const [p2] = await send(a, [q('h', 100, { state: 'pending' })]);
      assert.equal((await event(p2!)).cost.amount, 0, 'inside the second block');
      const cancel = await h.request('PUT', `/v1/events/${p2}`, { auth: co.auth, body: { state: 'cancelled' } });
      assert.equal(cancel.status, 200);
      const [p3] = await send(a, [q('h', 2000, { state: 'pending' })]);
      const over = await h.request('PUT', `/v1/events/${p3}`, {
        auth: co.auth,
        body: { state: 'complete', cost_override: { amount: 7, denomination: 'tokens' } },
      });
      assert.equal(over.body.data.cost.amount, 7);
      assert.equal(over.body.data.price_model, null, 'a final cost given: not priced, not counted');
      // Counted so far: 995 + 10 = 1005 (the cancelled 100 and the overridden 2000 are not).
      assert.deepEqual(await costs(a, [q('h', 995), q('h', 1)]), [0, 5]);
      const b = await balance(a);
      assert.equal(b.pending, 0);
      assert.equal(b.amount, 1_000_000 - (5 + 5 + 7 + 0 + 5), '995, the settle, the override, 995, 1');
      await h.audit();
    });

    test('events with a cost_override are neither priced nor counted', async () => {
      assert.equal((await put('o', PACKAGE)).status, 200);
      const a = await account();
      const [id] = await send(a, [{ type: 'o', quantity: 5000, cost_override: { amount: 1, denomination: 'tokens' } }]);
      assert.equal((await event(id!)).price_model, null);
      assert.deepEqual(await costs(a, [q('o', 1)]), [5], 'the period is still empty');
    });

    test('a price change mid-month applies to later events; the count goes on', async () => {
      assert.equal((await put('c', PACKAGE)).status, 200);
      const a = await account();
      assert.deepEqual(await costs(a, [q('c', 1500)]), [10]);
      assert.equal((await put('c', { ...PACKAGE, package_amount: '7' })).status, 200);
      assert.deepEqual(await costs(a, [q('c', 400), q('c', 200)]), [0, 7], 'C(1900) = 14 → C(2100) = 21');
    });

    test('50 concurrent requests for one account sum to exactly ceil(C(total))', async () => {
      assert.equal((await put('cc', GRADUATED)).status, 200);
      const a = await account();
      const quantities = Array.from({ length: 50 }, (_, i) => ((i * 37) % 53) + 0.25);
      await Promise.all(quantities.map((n) => send(a, [q('cc', n)])));
      const total = quantities.reduce((x, y) => x + y, 0); // 50 × 0.25 and integers: exact in binary
      // C(total) by hand: tiers of 100 @ 0.5, 900 @ 0.25 + 10, then 0.1 + 3.
      const c =
        Math.min(total, 100) * 0.5 +
        (total > 100 ? (Math.min(total, 1000) - 100) * 0.25 + 10 : 0) +
        (total > 1000 ? (total - 1000) * 0.1 + 3 : 0);
      assert.equal((await balance(a)).amount, 1_000_000 - Math.ceil(c - 1e-9));
      await h.audit();
    });

    test('check answers what the events call then does, writes nothing, refuses what it refuses', async () => {
      assert.equal((await put('k-g', GRADUATED)).status, 200);
      assert.equal((await put('k-p', PACKAGE)).status, 200);
      assert.equal((await put('k-u', { denomination: 'tokens', unit_amount: '0.3' })).status, 200);
      const a = await account(2_000);
      const arbEvent = fc.record({
        type: fc.constantFrom('k-g', 'k-p', 'k-u'),
        quantity: fc.integer({ min: 0, max: 400_000 }).map((n) => n / 1000),
        state: fc.constantFrom('complete', 'complete', 'pending', 'cancelled'),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(arbEvent, { minLength: 1, maxLength: 6 }), async (events) => {
          const before = await balance(a);
          const check = await h.request('POST', `/v1/accounts/${a}/check`, { auth: co.auth, body: events });
          assert.equal(check.status, 200, check.text);
          assert.deepEqual(await balance(a), before, 'the check wrote nothing');
          const ids = await send(a, events);
          const charged = await Promise.all(ids.map(async (id) => (await event(id)).cost));
          assert.deepEqual(
            check.body.data.events.map((e: { cost: unknown }) => e.cost),
            charged,
          );
          const after = await balance(a);
          const row = check.body.data.balances.find((b: { denomination: string }) => b.denomination === 'tokens');
          if (events.some((e) => e.state !== 'cancelled')) {
            assert.equal(row.available, before.available);
            assert.equal(row.available_after, after.available);
            assert.equal(check.body.data.allowed, after.available >= 0);
            assert.equal(check.body.data.reason, after.available >= 0 ? null : 'insufficient_balance');
          }
        }),
        { numRuns: 25 },
      );
      await h.audit();

      const poor = await account(3);
      const no = await h.request('POST', `/v1/accounts/${poor}/check`, {
        auth: co.auth,
        body: { events: [q('k-u', 100)] },
      });
      assert.equal(no.status, 200, no.text);
      assert.deepEqual(no.body.data, {
        allowed: false,
        reason: 'insufficient_balance',
        events: [{ index: 0, cost: { amount: 30, denomination: 'tokens' } }],
        balances: [{ denomination: 'tokens', available: 3, available_after: -27 }],
      });
      for (const body of [[{ type: 'unpriced' }], [q('k-u', -1)], [], [{ type: 'k-u', timestamp: 'yesterday' }]]) {
        const viaCheck = await h.request('POST', `/v1/accounts/${poor}/check`, { auth: co.auth, body });
        const viaEvents = await h.request('POST', `/v1/accounts/${poor}/events`, { auth: co.auth, body });
        assert.equal(viaCheck.status, 400, viaCheck.text);
        assert.deepEqual(viaCheck.body.error, viaEvents.body.error, 'the same refusal');
      }
      const missing = await h.request('POST', '/v1/accounts/a_missing/check', { auth: co.auth, body: [q('k-u', 1)] });
      assertError(missing, 404, 'not_found');
    });

    test('usage read-back counts the quantities and costs charged', async () => {
      assert.equal((await put('u', GRADUATED)).status, 200);
      const a = await account();
      const charged = await costs(a, [q('u', 99.5), q('u', 2), q('u', 0.25)]);
      const now = Date.now();
      const from = new Date(now - (now % 3_600_000) - 3_600_000).toISOString();
      const to = new Date(now - (now % 3_600_000) + 3_600_000).toISOString();
      const r = await h.request('GET', `/v1/accounts/${a}/usage?from=${from}&to=${to}&window=all`, { auth: co.auth });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.data.length, 1, r.text);
      assert.equal(r.body.data[0].quantity, '101.75');
      assert.equal(
        r.body.data[0].cost,
        charged.reduce((x, y) => x + y, 0),
      );
    });

    test('another company sees none of it: prices, versions, check of a foreign account', async () => {
      assert.equal((await put('iso', PACKAGE)).status, 200);
      const a = await account();
      const other = await signUpCompany(h, 'Other');
      assertError(await h.request('GET', '/v1/prices/iso', { auth: other.auth }), 404, 'not_found');
      assertError(await h.request('GET', '/v1/prices/iso/versions', { auth: other.auth }), 404, 'not_found');
      const foreign = await h.request('POST', `/v1/accounts/${a}/check`, { auth: other.auth, body: [q('iso', 1)] });
      assertError(foreign, 404, 'not_found');
      assert.equal((await put('iso', { denomination: 'tokens', unit_amount: 1 }, other.auth)).body.data.version, 1);
      assert.equal((await h.request('GET', '/v1/prices/iso', { auth: co.auth })).body.data.model, 'package');
    });
  });
}
