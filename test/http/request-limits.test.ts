// Guarantees, on both databases: a request carries only what the documented limits allow (JSON depth,
// metadata size and shape), refused with 400 invalid_request naming the field and changing nothing, never a 5xx;
// a JSON key given twice is refused instead of the last one winning; plan alerts reach only the threshold
// subscriptions without a threshold of their own, with available and pending; modifymidmonth never switches a
// monthly refill on by itself.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import {
  METADATA_BYTES_MAX,
  METADATA_DEPTH_MAX,
  METADATA_ENTRIES_MAX,
  METADATA_KEY_LENGTH_MAX,
  METADATA_STRING_LENGTH_MAX,
} from '../../src/domain/metadata.js';
import { BODY_DEPTH_MAX } from '../../src/http/json-body.js';
import {
  HTTP_DIALECTS,
  assertError,
  createAccountWithBalance,
  signUpCompany,
  startHarness,
  type Harness,
} from '../support/harness.js';
import { balance, createAccount, spend } from '../support/money.js';
import { createWebhook, notificationsOf } from '../support/webhooks.js';

/** `levels` objects nested in one another: `nested(1)` is `{"a":1}`. */
function nested(levels: number): Record<string, unknown> {
  let v: Record<string, unknown> = { a: 1 };
  for (let i = 1; i < levels; i++) v = { a: v };
  return v;
}

/** The same nesting as text, built without recursion (30 KB of `{"a":` like the reported attack). */
const deepText = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

for (const dialect of HTTP_DIALECTS) {
  describe(`request limits (${dialect})`, () => {
    let h: Harness;
    let co: Awaited<ReturnType<typeof signUpCompany>>;
    let acc: string;
    before(async () => {
      h = await startHarness(dialect);
      co = await signUpCompany(h);
      acc = await createAccountWithBalance(h, co, 'tokens', 1000);
    });
    after(async () => h.close());
    afterEach(async () => h.audit());

    const event = (extra: Record<string, unknown> = {}) => ({
      type: 'x',
      cost_override: { amount: 1, denomination: 'tokens' },
      ...extra,
    });
    const tokens = async () => (await balance(h, co, acc)).amount;

    test('metadata within every limit is accepted and read back whole', async () => {
      const metadata = {
        ...Object.fromEntries(Array.from({ length: METADATA_ENTRIES_MAX - 2 }, (_, i) => [`k${i}`, i])),
        ['k'.repeat(METADATA_KEY_LENGTH_MAX)]: 's'.repeat(METADATA_STRING_LENGTH_MAX),
        deep: nested(METADATA_DEPTH_MAX - 1),
      };
      const r = await h.request('POST', `/v1/accounts/${acc}/events`, { auth: co.auth, body: [event({ metadata })] });
      assert.equal(r.status, 200, r.text);
      const got = await h.request('GET', `/v1/events/${r.body.event_ids[0]}`, { auth: co.auth });
      assert.deepEqual(got.body.data.metadata, metadata);
    });

    test('event metadata beyond a limit is 400 naming the event and its metadata; nothing recorded', async () => {
      const before = await tokens();
      const cases: [string, unknown, string][] = [
        ['too deep', nested(METADATA_DEPTH_MAX + 1), 'metadata_nested_too_deeply'],
        ['an array too deep', { a: [[[[[1]]]]] }, 'metadata_nested_too_deeply'],
        [
          'too many keys in a nested object',
          { a: Object.fromEntries(Array.from({ length: METADATA_ENTRIES_MAX + 1 }, (_, i) => [`k${i}`, i])) },
          'metadata_has_too_many_entries',
        ],
        [
          'an array too long',
          { a: Array.from({ length: METADATA_ENTRIES_MAX + 1 }, () => 1) },
          'metadata_has_too_many_entries',
        ],
        ['a key too long', { ['k'.repeat(METADATA_KEY_LENGTH_MAX + 1)]: 1 }, 'metadata_key_too_long'],
        ['a string too long', { a: { b: 's'.repeat(METADATA_STRING_LENGTH_MAX + 1) } }, 'metadata_string_too_long'],
        [
          'too many bytes',
          Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, 'é'.repeat(METADATA_STRING_LENGTH_MAX)])),
          'metadata_too_large',
        ],
      ];
      assert.ok(40 * 2 * METADATA_STRING_LENGTH_MAX > METADATA_BYTES_MAX);
      for (const [name, metadata, code] of cases) {
        const r = await h.request('POST', `/v1/accounts/${acc}/events`, {
          auth: co.auth,
          body: [event(), event({ metadata })],
        });
        assertError(r, 400, 'invalid_request');
        assert.equal(r.body.error.code, code, `${name}: ${r.text}`);
        assert.equal(r.body.error.param, 'events[1].metadata', name);
      }
      const top = await h.request('POST', `/v1/accounts/${acc}/events`, {
        auth: co.auth,
        body: [
          event({ metadata: Object.fromEntries(Array.from({ length: METADATA_ENTRIES_MAX + 1 }, (_, i) => [i, i])) }),
        ],
      });
      assertError(top, 400, 'invalid_request');
      assert.match(top.body.error.param, /metadata$/);
      assert.equal(await tokens(), before, 'nothing was recorded');
    });

    test('a body nested thousands of levels deep is 400, never a 500, on every route that takes metadata', async () => {
      const paths: [string, string, (deep: string) => string][] = [
        ['POST', `/v1/accounts/${acc}/events`, (d) => `[{"type":"x","metadata":${d}}]`],
        ['POST', '/v1/events', (d) => `{"account_id":"${acc}","events":[{"type":"x","metadata":${d}}]}`],
        ['POST', `/v1/companies/${co.companyId}/accounts`, (d) => `{"name":"n","metadata":${d}}`],
        ['PUT', `/v1/accounts/${acc}`, (d) => `{"metadata":${d}}`],
      ];
      for (const [method, path, body] of paths) {
        for (const levels of [BODY_DEPTH_MAX + 1, 6_000, 100_000]) {
          const r = await h.request(method, path, { auth: co.auth, raw: body(deepText(levels)) });
          assertError(r, 400, 'invalid_request');
          assert.equal(r.body.error.code, 'json_nested_too_deeply', `${method} ${path}: ${r.text}`);
        }
        // Deep enough for the body limit, not for the metadata one: the metadata limit names the field.
        const r = await h.request(method, path, { auth: co.auth, raw: body(deepText(METADATA_DEPTH_MAX + 1)) });
        assertError(r, 400, 'invalid_request');
        assert.equal(r.body.error.code, 'metadata_nested_too_deeply', r.text);
        assert.match(r.body.error.param, /metadata$/);
      }
      // With a NUL character too (its check used to recurse).
      const r = await h.request('POST', `/v1/accounts/${acc}/events`, {
        auth: co.auth,
        raw: `[{"type":"x\\u0000","metadata":${deepText(50_000)}}]`,
      });
      assertError(r, 400, 'invalid_request');
      const health = await h.request('GET', '/healthz');
      assert.equal(health.status, 200);
    });

    test("one company's hostile requests never fail another company's concurrent ones", async () => {
      const other = await signUpCompany(h);
      const otherAcc = await createAccountWithBalance(h, other, 'tokens', 1000);
      const hostile = Array.from({ length: 40 }, (_, i) =>
        h.request('POST', `/v1/accounts/${acc}/events`, {
          auth: co.auth,
          raw: `[{"type":"x","cost_override":{"amount":1,"denomination":"tokens"},"metadata":${deepText(2_000 + i)}}]`,
        }),
      );
      const ordinary = Array.from({ length: 100 }, (_, i) =>
        h.request('POST', `/v1/accounts/${otherAcc}/events`, {
          auth: other.auth,
          body: [{ type: 'x', id: `ok-${i}`, cost_override: { amount: 1, denomination: 'tokens' } }],
        }),
      );
      const [bad, good] = await Promise.all([Promise.all(hostile), Promise.all(ordinary)]);
      assert.deepEqual([...new Set(bad.map((r) => r.status))], [400]);
      assert.deepEqual([...new Set(good.map((r) => r.status))], [200]);
      assert.equal((await balance(h, other, otherAcc)).amount, 900, 'each ordinary event deducted once');
    });

    test('account metadata beyond a limit is 400 on create and on PUT; the account keeps its metadata', async () => {
      const a = await createAccount(h, co, { name: 'M', metadata: { plan: 'gold' } });
      const tooLong = { note: 's'.repeat(METADATA_STRING_LENGTH_MAX + 1) };
      const created = await h.request('POST', `/v1/companies/${co.companyId}/accounts`, {
        auth: co.auth,
        body: { name: 'N', metadata: tooLong },
      });
      assertError(created, 400, 'invalid_request');
      assert.equal(created.body.error.param, 'metadata');
      const put = await h.request('PUT', `/v1/accounts/${a.account_id}`, {
        auth: co.auth,
        body: { metadata: { a: nested(METADATA_DEPTH_MAX) } },
      });
      assertError(put, 400, 'invalid_request');
      assert.equal(put.body.error.code, 'metadata_nested_too_deeply');
      assert.equal(put.body.error.param, 'metadata');
      const got = await h.request('GET', `/v1/accounts/${a.account_id}`, { auth: co.auth });
      assert.deepEqual(got.body.data.metadata, { plan: 'gold' });
    });

    test('a JSON key given twice is 400 naming it, anywhere in the body; nothing applied', async () => {
      const before = await tokens();
      const cases: [string, string, string][] = [
        [`/v1/accounts/${acc}/balance/tokens/adjustments`, '{"amount":5,"amount":-3}', 'amount'],
        [`/v1/accounts/${acc}/balance/tokens/adjustments`, '{"amount":5,"reason":"r","amount":-3}', 'amount'],
        [
          `/v1/accounts/${acc}/events`,
          '[{"type":"x","cost_override":{"amount":1,"denomination":"tokens","amount":500}}]',
          '[0].cost_override.amount',
        ],
        [
          `/v1/accounts/${acc}/events`,
          '{"events":[{"type":"x","cost_override":{"amount":1,"denomination":"tokens"}}],' +
            '"events":[{"type":"x","cost_override":{"amount":900,"denomination":"tokens"}}]}',
          'events',
        ],
        [`/v1/accounts/${acc}/events`, '[{"type":"x","metadata":{"a":1,"a":1}}]', '[0].metadata.a'],
      ];
      for (const [path, raw, param] of cases) {
        const r = await h.request('POST', path, { auth: co.auth, raw });
        assertError(r, 400, 'invalid_request');
        assert.equal(r.body.error.code, 'json_key_appears_twice', r.text);
        assert.equal(r.body.error.param, param, r.text);
      }
      assert.equal(await tokens(), before, 'nothing was applied');
      // The same key in two different objects is no duplicate.
      const ok = await h.request('POST', `/v1/accounts/${acc}/events`, {
        auth: co.auth,
        raw: '[{"type":"x","cost_override":{"amount":1,"denomination":"tokens"}},{"type":"x","metadata":{"type":"y"}}]',
      });
      assert.notEqual(ok.status, 500, ok.text);
    });

    test("the plan body bounds its free-text numbers: 400 with the field's own code", async () => {
      const plan = (over: Record<string, unknown>, balance: Record<string, unknown> = {}) => ({
        name: 'Pro',
        charge_amount: 0,
        balances: [{ amount: 1000, denomination: 'tokens', overage_charge_amount: 1, ...balance }],
        ...over,
      });
      const cases: [Record<string, unknown>, string, string][] = [
        [
          plan({ threshold_alert_percentage: `1${'0'.repeat(40_000)}` }),
          'threshold_alert_percentage',
          'threshold_alert_percentage_must_be_a_number_from_0_to_100',
        ],
        [plan({}, { amount: '9'.repeat(40_000) }), 'balances[0].amount', 'plan_balance_amount_exceeds_maximum'],
      ];
      for (const [body, param, code] of cases) {
        const r = await h.request('POST', `/v1/companies/${co.companyId}/plan`, { auth: co.auth, body });
        assertError(r, 400, 'invalid_request');
        assert.deepEqual([r.body.error.param, r.body.error.code], [param, code], r.text);
      }
    });

    test('plan alerts go only to threshold subscriptions without a threshold, with available and pending', async () => {
      const c = await signUpCompany(h);
      const rx = 'http://127.0.0.1:9/hook';
      const plain = await createWebhook(h, c.auth, { type: 'threshold', url: rx });
      const own = await createWebhook(h, c.auth, { type: 'threshold', url: `${rx}/own`, threshold: 5 });
      const plan = await h.request('POST', `/v1/companies/${c.companyId}/plan`, {
        auth: c.auth,
        body: {
          name: 'Pro',
          charge_amount: 0,
          charge_denomination: 'usd',
          billing_period: 'month',
          overage_charge_mode: 'postpay',
          threshold_alert_percentage: '20',
          balances: [
            { amount: 1000, denomination: 'tokens', overage_charge_amount: 1, overage_charge_denomination: 'usd' },
          ],
        },
      });
      assert.equal(plan.status, 200, plan.text);
      const account = await createAccount(h, c, { name: 'P', plan_id: plan.body.data.plan_id });
      await spend(h, c, account.account_id, 850);

      const alerts = await notificationsOf(h, c.auth, plain.webhook_id);
      assert.equal(alerts.length, 1, JSON.stringify(alerts));
      assert.deepEqual(
        [alerts[0]!.type, alerts[0]!.account_balance, alerts[0]!.available, alerts[0]!.pending],
        ['threshold', 150, 150, 0],
      );
      assert.equal(alerts[0]!.threshold_alert_percentage, '20');
      assert.deepEqual(
        await notificationsOf(h, c.auth, own.webhook_id),
        [],
        'its own threshold (5) was not crossed: a plan alert is none of its business',
      );
      await spend(h, c, account.account_id, 148);
      const crossed = await notificationsOf(h, c.auth, own.webhook_id);
      assert.deepEqual(
        crossed.map((n) => [n.available, n.threshold]),
        [[2, 5]],
        'its own threshold crossed: notified',
      );
    });

    test('modifymidmonth without a monthly refill is 400 saying how to enable it; nothing changes', async () => {
      const a = await createAccountWithBalance(h, co, 'credits', 100);
      const r = await h.request('POST', `/v1/accounts/${a}/modifymidmonth`, {
        auth: co.auth,
        body: { denomination: 'credits', amount: 500, usd_charge: 0 },
      });
      assertError(r, 400, 'invalid_request');
      assert.equal(r.body.error.code, 'monthly_refill_not_enabled');
      assert.match(r.body.error.message, /refill_monthly/);
      const b = await h.request('GET', `/v1/accounts/${a}/balance/credits`, { auth: co.auth });
      assert.equal(b.status, 200, b.text);
      assert.equal(b.body.data.amount, 100);
      assert.equal(b.body.data.refill_monthly ?? false, false, JSON.stringify(b.body.data));
    });
  });
}
