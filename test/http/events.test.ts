// Guarantee: usage events are priced exactly, applied all-or-nothing, de-duplicated by client id,
// gated on balance when asked, held while pending and settled or expired exactly once — on both databases.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import {
  HTTP_DIALECTS,
  assertError,
  createAccountWithBalance,
  signUpCompany,
  startHarness,
  type Harness,
} from '../support/harness.js';

for (const dialect of HTTP_DIALECTS) {
  describe(`events over HTTP (${dialect})`, () => {
    let h: Harness;
    let co: Awaited<ReturnType<typeof signUpCompany>>;
    before(async () => {
      h = await startHarness(dialect);
      co = await signUpCompany(h);
    });
    after(async () => h.close());
    afterEach(async () => h.audit());

    const balance = async (accountId: string, denomination = 'tokens') => {
      const r = await h.request('GET', `/v1/accounts/${accountId}/balance/${denomination}`, { auth: co.auth });
      assert.equal(r.status, 200, r.text);
      return r.body.data as { amount: number; pending: number; available: number };
    };

    test('three body forms and both cost_override spellings deduct exactly', async () => {
      const acc = await createAccountWithBalance(h, co, 'tokens', 1000);
      const a = await h.request('POST', `/v1/accounts/${acc}/events`, {
        auth: co.auth,
        body: [{ type: 'x', cost_override: { amount: 10, denomination: 'tokens' } }],
      });
      assert.equal(a.status, 200, a.text);
      assert.equal(a.body.events_submitted, 1);
      assert.match(a.body.event_ids[0], /^ev_/);
      const b = await h.request('POST', `/v1/accounts/${acc}/events`, {
        auth: co.auth,
        body: { events: [{ type: 'x', cost_override_amount: 20, cost_override_denomination: 'tokens' }] },
      });
      assert.equal(b.status, 200, b.text);
      const c = await h.request('POST', '/v1/events', {
        auth: co.auth,
        body: {
          account_id: acc,
          events: [
            { type: 'x', cost_override: { amount: 30, denomination: 'tokens' } },
            { type: 'y', cost_override: { amount: 40, denomination: 'tokens' } },
          ],
        },
      });
      assert.equal(c.status, 200, c.text);
      assert.equal(c.body.events_submitted, 2);
      assert.deepEqual(await balance(acc), { ...(await balance(acc)), amount: 900, pending: 0, available: 900 });
      const tx = await h.request('GET', `/v1/accounts/${acc}/transactions`, { auth: co.auth });
      assert.deepEqual(
        tx.body.data.map((t: { amount: number }) => t.amount),
        [-40, -30, -20, -10, 1000],
      );
      assert.deepEqual(
        tx.body.data.map((t: { balance_after: number }) => t.balance_after),
        [900, 940, 970, 990, 1000],
      );
      assert.deepEqual(
        tx.body.data.map((t: { kind: string }) => t.kind),
        ['usage', 'usage', 'usage', 'usage', 'grant'],
      );
    });

    test('prices: cost = quantity × unit_amount exactly, rounded up to a whole unit', async () => {
      const acc = await createAccountWithBalance(h, co, 'credits', 1000);
      assert.equal(
        (
          await h.request('PUT', '/v1/prices/llm', {
            auth: co.auth,
            body: { denomination: 'credits', unit_amount: '0.1' },
          })
        ).status,
        200,
      );
      assert.equal(
        (
          await h.request('PUT', '/v1/prices/gpu', {
            auth: co.auth,
            body: { denomination: 'credits', unit_amount: 0.3 },
          })
        ).status,
        200,
      );
      // 3 × 0.1 is exactly 0.3 → 1 (rounded up); 10 × 0.3 is exactly 3; 0.5 default quantity 1 × 0.1 → 1
      const r = await h.request('POST', `/v1/accounts/${acc}/events`, {
        auth: co.auth,
        body: [
          { type: 'llm', quantity: 3 },
          { type: 'gpu', quantity: 10 },
          { type: 'llm' },
          { type: 'llm', quantity: 0 },
        ],
      });
      assert.equal(r.status, 200, r.text);
      const ev = await h.request('GET', `/v1/events/${r.body.event_ids[1]}`, { auth: co.auth });
      assert.deepEqual(ev.body.data.cost, { amount: 3, denomination: 'credits' });
      assert.equal((await balance(acc, 'credits')).amount, 1000 - 1 - 3 - 1 - 0);
      const prices = await h.request('GET', '/v1/prices', { auth: co.auth });
      assert.deepEqual(
        prices.body.data.map((p: { type: string; unit_amount: string }) => [p.type, p.unit_amount]),
        [
          ['gpu', '0.3'],
          ['llm', '0.1'],
        ],
      );
    });

    test('a request is all or nothing; a missing price or balance names the event index', async () => {
      const acc = await createAccountWithBalance(h, co, 'tokens', 500);
      const r = await h.request('POST', `/v1/accounts/${acc}/events`, {
        auth: co.auth,
        body: [{ type: 'x', cost_override: { amount: 5, denomination: 'tokens' } }, { type: 'unpriced-type' }],
      });
      assertError(r, 400, 'invalid_request');
      assert.equal(r.body.error.param, 'events[1]');
      const r2 = await h.request('POST', `/v1/accounts/${acc}/events`, {
        auth: co.auth,
        body: [
          { type: 'x', cost_override: { amount: 5, denomination: 'tokens' } },
          { type: 'x', cost_override: { amount: 5, denomination: 'gold' } },
        ],
      });
      assertError(r2, 400, 'invalid_request');
      assert.equal(r2.body.error.details.index, 1);
      assert.equal((await balance(acc)).amount, 500);
      const tx = await h.request('GET', `/v1/accounts/${acc}/transactions`, { auth: co.auth });
      assert.equal(tx.body.data.length, 1, 'only the grant');
    });

    test('client ids: the same event again is not deducted twice; different content is 409', async () => {
      const acc = await createAccountWithBalance(h, co, 'tokens', 100);
      const body = [
        { id: 'req-1', type: 'x', cost_override: { amount: 7, denomination: 'tokens' }, metadata: { a: 1, b: [1, 2] } },
      ];
      const first = await h.request('POST', `/v1/accounts/${acc}/events`, { auth: co.auth, body });
      assert.equal(first.status, 200, first.text);
      const again = await h.request('POST', `/v1/accounts/${acc}/events`, {
        auth: co.auth,
        body: [{ ...body[0], metadata: { b: [1, 2], a: 1 } }],
      });
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(again.body, first.body);
      assert.equal((await balance(acc)).amount, 93);
      const diff = await h.request('POST', `/v1/accounts/${acc}/events`, {
        auth: co.auth,
        body: [{ ...body[0], cost_override: { amount: 8, denomination: 'tokens' } }],
      });
      assertError(diff, 409, 'conflict');
      const within = await h.request('POST', `/v1/accounts/${acc}/events`, {
        auth: co.auth,
        body: [
          { id: 'req-2', type: 'x', cost_override: { amount: 1, denomination: 'tokens' } },
          { id: 'req-2', type: 'x', cost_override: { amount: 1, denomination: 'tokens' } },
        ],
      });
      assert.equal(within.status, 200, within.text);
      assert.deepEqual(within.body.event_ids, ['req-2', 'req-2']);
      assert.equal((await balance(acc)).amount, 92);
      const ev = await h.request('GET', '/v1/events/req-1', { auth: co.auth });
      assert.equal(ev.body.data.event_id, 'req-1');
      assert.deepEqual(ev.body.data.metadata, { a: 1, b: [1, 2] });
    });

    test('concurrent requests are each applied once and exactly', async () => {
      const acc = await createAccountWithBalance(h, co, 'tokens', 1_000_000);
      const replies = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          h.request('POST', `/v1/accounts/${acc}/events`, {
            auth: co.auth,
            body: Array.from({ length: 20 }, () => ({
              type: 'x',
              cost_override: { amount: i + 1, denomination: 'tokens' },
            })),
          }),
        ),
      );
      for (const r of replies) assert.equal(r.status, 200, r.text);
      const spent = Array.from({ length: 50 }, (_, i) => 20 * (i + 1)).reduce((a, b) => a + b, 0);
      assert.equal((await balance(acc)).amount, 1_000_000 - spent);
    });

    test(
      'ingest groups and other writes interleave: events, ' +
        'adjustments and settles at once, each applied exactly once',
      async () => {
        // On SQLite the groups are written by the ingest thread and the adjustments and settles by
        // the main thread's connection: the two must take turns, never contend or lose a write.
        const acc = await createAccountWithBalance(h, co, 'tokens', 1_000_000);
        const holds = await h.request('POST', `/v1/accounts/${acc}/events`, {
          auth: co.auth,
          body: Array.from({ length: 20 }, (_, i) => ({
            id: `mix-hold-${i}`,
            type: 'x',
            state: 'pending',
            cost_override: { amount: 7, denomination: 'tokens' },
          })),
        });
        assert.equal(holds.status, 200, holds.text);
        const replies = await Promise.all([
          ...Array.from({ length: 60 }, (_, i) =>
            h.request('POST', `/v1/accounts/${acc}/events`, {
              auth: co.auth,
              body: [{ type: 'x', cost_override: { amount: i + 1, denomination: 'tokens' } }],
            }),
          ),
          ...Array.from({ length: 30 }, (_, i) =>
            h.request('POST', `/v1/accounts/${acc}/balance/tokens/adjustments`, {
              auth: co.auth,
              body: { amount: i % 2 === 0 ? 1000 : -3 },
            }),
          ),
          ...Array.from({ length: 20 }, (_, i) =>
            h.request('PUT', `/v1/events/mix-hold-${i}`, {
              auth: co.auth,
              body: { state: i % 2 === 0 ? 'complete' : 'cancelled' },
            }),
          ),
        ]);
        for (const r of replies) assert.equal(r.status, 200, r.text);
        const events = Array.from({ length: 60 }, (_, i) => i + 1).reduce((a, b) => a + b, 0);
        const adjustments = 15 * 1000 - 15 * 3;
        const settled = 10 * 7;
        assert.deepEqual(await balance(acc), {
          ...(await balance(acc)),
          amount: 1_000_000 - events + adjustments - settled,
          pending: 0,
        });
      },
    );

    test(
      'concurrent settles of one hold: exactly one takes effect, repeats of its state are no-ops, the other state ' +
        'is 409',
      async () => {
        // On SQLite these land in one settle group on the writer thread: each settle must see the one before it.
        const acc = await createAccountWithBalance(h, co, 'tokens', 1000);
        const r = await h.request('POST', `/v1/accounts/${acc}/events`, {
          auth: co.auth,
          body: [
            { id: 'race-hold', type: 'x', state: 'pending', cost_override: { amount: 40, denomination: 'tokens' } },
          ],
        });
        assert.equal(r.status, 200, r.text);
        const replies = await Promise.all([
          ...Array.from({ length: 10 }, () =>
            h.request('PUT', '/v1/events/race-hold', {
              auth: co.auth,
              body: { state: 'complete', cost_override: { amount: 25, denomination: 'tokens' } },
            }),
          ),
          ...Array.from({ length: 10 }, () =>
            h.request('PUT', '/v1/events/race-hold', { auth: co.auth, body: { state: 'cancelled' } }),
          ),
        ]);
        const completed = replies.slice(0, 10).filter((x) => x.status === 200).length;
        const cancelled = replies.slice(10).filter((x) => x.status === 200).length;
        assert.ok(
          (completed === 10 && cancelled === 0) || (completed === 0 && cancelled === 10),
          `one state wins: ${completed} completes, ${cancelled} cancels`,
        );
        for (const x of replies) {
          if (x.status === 200) continue;
          assertError(x, 409, 'conflict');
          assert.equal(x.body.error.code, 'event_not_pending', x.text);
        }
        const b = await balance(acc);
        assert.deepEqual(
          { amount: b.amount, pending: b.pending },
          completed === 10 ? { amount: 975, pending: 0 } : { amount: 1000, pending: 0 },
        );
      },
    );

    test(
      'gate_on_balance: query, top-level field or event ' + 'field refuses the whole request while available < 0',
      async () => {
        const acc = await createAccountWithBalance(h, co, 'tokens', 10);
        const spend = (amount: number) => ({ type: 'x', cost_override: { amount, denomination: 'tokens' } });
        assert.equal(
          (
            await h.request('POST', `/v1/accounts/${acc}/events?gate_on_balance=true`, {
              auth: co.auth,
              body: [spend(15)],
            })
          ).status,
          200,
          'not negative before: accepted',
        );
        assert.equal((await balance(acc)).amount, -5);
        assertError(
          await h.request('POST', `/v1/accounts/${acc}/events?gate_on_balance=true`, {
            auth: co.auth,
            body: [spend(1)],
          }),
          402,
          'insufficient_balance',
        );
        assertError(
          await h.request('POST', `/v1/accounts/${acc}/events`, {
            auth: co.auth,
            body: { events: [spend(1)], gate_on_balance: true },
          }),
          402,
          'insufficient_balance',
        );
        assertError(
          await h.request('POST', `/v1/accounts/${acc}/events`, {
            auth: co.auth,
            body: [spend(1), { ...spend(1), gate_on_balance: true }],
          }),
          402,
          'insufficient_balance',
        );
        assertError(
          await h.request('POST', '/v1/events', {
            auth: co.auth,
            body: { account_id: acc, events: [spend(1)], gate_on_balance: true },
          }),
          402,
          'insufficient_balance',
        );
        assert.equal(
          (await h.request('POST', `/v1/accounts/${acc}/events`, { auth: co.auth, body: [spend(1)] })).status,
          200,
          'without the flag it always succeeds',
        );
        assert.equal((await balance(acc)).amount, -6);
      },
    );

    test(
      'pending holds: held apart, settled once (final ' + 'cost may differ), repeats are no-ops, others 409',
      async () => {
        const acc = await createAccountWithBalance(h, co, 'tokens', 1000);
        const r = await h.request('POST', `/v1/accounts/${acc}/events`, {
          auth: co.auth,
          body: [
            { id: 'hold-a', type: 'x', state: 'pending', cost_override: { amount: 100, denomination: 'tokens' } },
            { id: 'hold-b', type: 'x', state: 'pending', cost_override: { amount: 50, denomination: 'tokens' } },
          ],
        });
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(await balance(acc), { ...(await balance(acc)), amount: 1000, pending: 150, available: 850 });
        const ev = await h.request('GET', '/v1/events/hold-a', { auth: co.auth });
        assert.equal(ev.body.data.state, 'pending');
        assert.equal(typeof ev.body.data.expires_at, 'string');

        const done = await h.request('PUT', '/v1/events/hold-a', {
          auth: co.auth,
          body: { state: 'complete', cost_override: { amount: 80, denomination: 'tokens' } },
        });
        assert.equal(done.status, 200, done.text);
        assert.equal(done.body.data.state, 'complete');
        assert.deepEqual(done.body.data.cost, { amount: 80, denomination: 'tokens' });
        assert.equal(done.body.data.expires_at, undefined);
        assert.deepEqual(await balance(acc), { ...(await balance(acc)), amount: 920, pending: 50, available: 870 });

        assert.equal(
          (await h.request('PUT', '/v1/events/hold-a', { auth: co.auth, body: { state: 'completed' } })).status,
          200,
          'same state again: no-op',
        );
        const sameCost = await h.request('PUT', '/v1/events/hold-a', {
          auth: co.auth,
          body: { state: 'complete', cost_override: { amount: 80, denomination: 'tokens' } },
        });
        assert.equal(sameCost.status, 200, 'the same final cost again: no-op');
        const otherCost = await h.request('PUT', '/v1/events/hold-a', {
          auth: co.auth,
          body: { state: 'complete', cost_override: { amount: 70, denomination: 'tokens' } },
        });
        assertError(otherCost, 409, 'conflict');
        assert.equal(otherCost.body.error.code, 'event_completed_at_another_cost');
        assert.equal(otherCost.body.error.param, 'cost_override');
        assert.equal((await balance(acc)).amount, 920, 'a refused final cost changes nothing');
        assertError(
          await h.request('PUT', '/v1/events/hold-a', { auth: co.auth, body: { state: 'cancelled' } }),
          409,
          'conflict',
        );
        const cancel = await h.request('PUT', '/v1/events/hold-b', { auth: co.auth, body: { state: 'cancelled' } });
        assert.equal(cancel.status, 200, cancel.text);
        assertError(
          await h.request('PUT', '/v1/events/hold-b', { auth: co.auth, body: { state: 'complete' } }),
          409,
          'conflict',
        );
        assert.deepEqual(await balance(acc), { ...(await balance(acc)), amount: 920, pending: 0, available: 920 });
        assertError(
          await h.request('PUT', '/v1/events/hold-b', {
            auth: co.auth,
            body: { state: 'complete', cost_override: { amount: 1, denomination: 'gold' } },
          }),
          409,
        );
        assertError(
          await h.request('PUT', '/v1/events/nope', { auth: co.auth, body: { state: 'complete' } }),
          404,
          'not_found',
        );
      },
    );

    test('a hold still pending after an hour is cancelled, and a read never shows it (sweeper not run)', async () => {
      const acc = await createAccountWithBalance(h, co, 'tokens', 1000);
      await h.request('POST', `/v1/accounts/${acc}/events`, {
        auth: co.auth,
        body: [
          { id: `exp-${dialect}`, type: 'x', state: 'pending', cost_override: { amount: 300, denomination: 'tokens' } },
        ],
      });
      assert.equal((await balance(acc)).pending, 300);
      // Move the clock directly (the advance route would run the sweeper): reads must still not show the hold.
      (h.server.clock as unknown as { advanceTo(ms: number): boolean }).advanceTo(
        h.server.clock.now() + 60 * 60 * 1000,
      );
      assert.deepEqual(await balance(acc), { ...(await balance(acc)), amount: 1000, pending: 0, available: 1000 });
      const ev = await h.request('GET', `/v1/events/exp-${dialect}`, { auth: co.auth });
      assert.equal(ev.body.data.state, 'cancelled');
      assertError(
        await h.request('PUT', `/v1/events/exp-${dialect}`, { auth: co.auth, body: { state: 'complete' } }),
        409,
        'conflict',
      );
      assert.equal(
        (await h.request('PUT', `/v1/events/exp-${dialect}`, { auth: co.auth, body: { state: 'cancelled' } })).status,
        200,
      );
    });

    test('the test clock advance runs the sweeper before it answers', async () => {
      const acc = await createAccountWithBalance(h, co, 'tokens', 1000);
      await h.request('POST', `/v1/accounts/${acc}/events`, {
        auth: co.auth,
        body: [
          { id: `adv-${dialect}`, type: 'x', state: 'pending', cost_override: { amount: 30, denomination: 'tokens' } },
        ],
      });
      const before = await h.request('GET', '/v1/test_clock', { auth: co.auth });
      const adv = await h.request('POST', '/v1/test_clock/advance', { auth: co.auth, body: { seconds: 3601 } });
      assert.equal(adv.status, 200, adv.text);
      assert.equal(Date.parse(adv.body.data.now) - Date.parse(before.body.data.now), 3601_000);
      const stored = await h.store.read((tx) => tx.events.findEvent(co.companyId, `adv-${dialect}`));
      assert.equal(stored?.state, 'cancelled', 'cancelled in the database, not only on read');
      assertError(
        await h.request('POST', '/v1/test_clock/advance', { auth: co.auth, body: { to: '2001-01-01T00:00:00Z' } }),
        400,
      );
    });

    test('an event held on a balance of another company is answered as missing', async () => {
      const other = await signUpCompany(h, 'Other');
      const acc = await createAccountWithBalance(h, co, 'tokens', 100);
      const r = await h.request('POST', `/v1/accounts/${acc}/events`, {
        auth: other.auth,
        body: [{ type: 'x', cost_override: { amount: 1, denomination: 'tokens' } }],
      });
      const missing = await h.request('POST', '/v1/accounts/a_doesnotexist/events', {
        auth: other.auth,
        body: [{ type: 'x', cost_override: { amount: 1, denomination: 'tokens' } }],
      });
      assertError(r, 404, 'not_found');
      assert.equal(r.text.replace(acc, 'ID'), missing.text.replace('a_doesnotexist', 'ID'));
      await h.request('POST', `/v1/accounts/${acc}/events`, {
        auth: co.auth,
        body: [{ id: 'mine', type: 'x', state: 'pending', cost_override: { amount: 1, denomination: 'tokens' } }],
      });
      assertError(await h.request('GET', '/v1/events/mine', { auth: other.auth }), 404, 'not_found');
      assertError(
        await h.request('PUT', '/v1/events/mine', { auth: other.auth, body: { state: 'complete' } }),
        404,
        'not_found',
      );
      assert.equal((await balance(acc)).pending, 1);
    });
  });
}
