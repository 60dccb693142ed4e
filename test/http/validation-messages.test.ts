// Guarantee: a refused request says what would be accepted: an enum lists its values, a single event where
// an array is expected names both accepted forms, and a field is spelt one way (`events[1].state`) whether
// the schema or a billing rule refuses it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  HTTP_DIALECTS,
  assertError,
  createAccountWithBalance,
  signUpCompany,
  startHarness,
  type Harness,
} from '../support/harness.js';

for (const dialect of HTTP_DIALECTS) {
  describe(`validation messages (${dialect})`, () => {
    let h: Harness;
    let co: Awaited<ReturnType<typeof signUpCompany>>;
    let acc: string;
    before(async () => {
      h = await startHarness(dialect);
      co = await signUpCompany(h);
      acc = await createAccountWithBalance(h, co, 'tokens', 100);
    });
    after(async () => h.close());
    const send = (method: string, path: string, body?: unknown) => h.request(method, path, { auth: co.auth, body });
    const over = { cost_override: { amount: 1, denomination: 'tokens' } };

    test('an enum error lists the allowed values', async () => {
      const state = await send('POST', `/v1/accounts/${acc}/events`, [{ type: 'x', ...over, state: 'done' }]);
      assertError(state, 400, 'invalid_request');
      assert.equal(
        state.body.error.message,
        'events[0].state must be one of: "pending", "complete", "completed", "cancelled"',
      );
      const settle = await send('PUT', '/v1/events/ev_x', { state: 'pending' });
      assert.equal(settle.body.error.message, 'state must be one of: "complete", "completed", "cancelled"');
      assert.equal(settle.body.error.param, 'state');
      const hook = await send('POST', '/v1/webhooks', { type: 'nope', url: 'https://example.com/h' });
      assert.match(hook.body.error.message, /^type must be one of: "balance_change", "negative_balance", /);
      const query = await send('GET', '/v1/events?state=done');
      assert.equal(query.body.error.message, 'querystring state must be one of: "pending", "complete", "cancelled"');
      // A route that names its own reason code keeps it, and the message still lists the values.
      const plan = await send('POST', `/v1/companies/${co.companyId}/plan`, {
        name: 'P',
        charge_amount: 1,
        billing_period: 'weekly',
        balances: [{ amount: 1, denomination: 'tokens', overage_charge_amount: 1 }],
      });
      assertError(plan, 400, 'invalid_request');
      assert.equal(plan.body.error.code, 'unknown_billing_period');
      assert.equal(plan.body.error.message, 'billing_period must be one of: "month", "monthly", null');
      for (const r of [state, settle, hook, query, plan]) assert.doesNotMatch(r.body.error.message, /constant/);
    });

    test('a single event where an array is expected names both accepted forms', async () => {
      const one = await send('POST', `/v1/accounts/${acc}/events`, { type: 'x', ...over });
      assertError(one, 400, 'invalid_request');
      assert.match(one.body.error.message, /single item/);
      assert.ok(one.body.error.message.includes('[{"type": …}, …]'), one.text);
      assert.ok(one.body.error.message.includes('{"events": [{"type": …}, …]}'), one.text);
      const text = await send('POST', `/v1/accounts/${acc}/events`, 'x');
      assert.match(text.body.error.message, /^body must be an array of events, .* or \{"events": /);
      // The {events} form is checked as that form, not as "body must be array".
      const wrapped = await send('POST', `/v1/accounts/${acc}/events`, { events: [{ type: 'x', ...over, qty: 1 }] });
      assert.equal(wrapped.body.error.param, 'events[0].qty');
      assert.doesNotMatch(wrapped.body.error.message, /must be array/);
      const empty = await send('POST', `/v1/accounts/${acc}/events`, []);
      assert.equal(empty.body.error.param, 'events');
    });

    test('param is spelt events[i].field by the schema and by the billing rules alike', async () => {
      const bad = { type: 'x', ...over, state: 'done' };
      const asArray = await send('POST', `/v1/accounts/${acc}/events`, [{ type: 'x', ...over }, bad]);
      const asObject = await send('POST', `/v1/accounts/${acc}/events`, { events: [{ type: 'x', ...over }, bad] });
      const withAccount = await send('POST', '/v1/events', { account_id: acc, events: [{ type: 'x', ...over }, bad] });
      for (const r of [asArray, asObject, withAccount]) assert.equal(r.body.error.param, 'events[1].state', r.text);
      // A billing rule (no price, no override) names the event the same way.
      const unpriced = await send('POST', `/v1/accounts/${acc}/events`, [{ type: 'x', ...over }, { type: 'x' }]);
      assertError(unpriced, 400, 'invalid_request');
      assert.equal(unpriced.body.error.param, 'events[1]');
      assert.match(unpriced.body.error.message, /^events\[1\]: /);
      const late = await send('POST', `/v1/accounts/${acc}/events`, [
        { type: 'x', ...over },
        { type: 'x', ...over, timestamp: '2000-01-01T00:00:00Z' },
      ]);
      assert.equal(late.body.error.param, 'events[1].timestamp');
      await h.audit();
    });
  });
}
