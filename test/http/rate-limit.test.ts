// Guarantee: a company over its request or event rate limit gets 429 rate_limited with Retry-After,
// while another company's requests keep succeeding; a limited request applies nothing.
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
  describe(`per-company request limit (${dialect})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(dialect, {
        BILLING_RATE_LIMIT_REQUESTS_PER_SECOND: '5',
        BILLING_RATE_LIMIT_EVENTS_PER_SECOND: '0',
      });
    });
    after(async () => h.close());

    test('one company over its limit gets 429 with Retry-After; another company is served', async () => {
      const flooder = await signUpCompany(h, 'Flood');
      const quiet = await signUpCompany(h, 'Quiet');
      const replies = await Promise.all(
        Array.from({ length: 30 }, () => h.request('GET', '/v1/accounts', { auth: flooder.auth })),
      );
      const limited = replies.filter((r) => r.status === 429);
      assert.ok(limited.length > 0, 'some of 30 requests at once exceed 5 per second');
      for (const r of limited) {
        assertError(r, 429, 'rate_limited');
        assert.match(r.body.error.message, /5 requests per second/);
        assert.ok(Number(r.headers.get('retry-after')) >= 1, `Retry-After: ${r.headers.get('retry-after')}`);
      }
      for (const r of replies) assert.ok(r.status === 200 || r.status === 429, r.text);
      const other = await h.request('GET', '/v1/accounts', { auth: quiet.auth });
      assert.equal(other.status, 200, other.text);
      const health = await h.request('GET', '/healthz');
      assert.equal(health.status, 200, 'unauthenticated routes are not counted');
    });
  });

  describe(`per-company event limit (${dialect})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(dialect, {
        BILLING_RATE_LIMIT_REQUESTS_PER_SECOND: '0',
        BILLING_RATE_LIMIT_EVENTS_PER_SECOND: '10',
      });
    });
    after(async () => h.close());

    test('events over the limit are 429 with Retry-After and not recorded; another company ingests', async () => {
      const flooder = await signUpCompany(h, 'Flood');
      const quiet = await signUpCompany(h, 'Quiet');
      const accF = await createAccountWithBalance(h, flooder, 'tokens', 1_000);
      const accQ = await createAccountWithBalance(h, quiet, 'tokens', 1_000);
      const events = (n: number) =>
        Array.from({ length: n }, () => ({ type: 'x', cost_override: { amount: 1, denomination: 'tokens' } }));
      // 10 events a second, as a bucket of 10: of five requests of 10 events at once, most must wait.
      const replies = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          i % 2 === 0
            ? h.request('POST', `/v1/accounts/${accF}/events`, { auth: flooder.auth, body: events(10) })
            : h.request('POST', '/v1/events', { auth: flooder.auth, body: { account_id: accF, events: events(10) } }),
        ),
      );
      const accepted = replies.filter((r) => r.status === 200).length;
      const limited = replies.filter((r) => r.status === 429);
      assert.ok(limited.length > 0, replies.map((r) => r.status).join(' '));
      assert.equal(accepted + limited.length, 5, replies.map((r) => r.text).join('\n'));
      for (const over of limited) {
        assertError(over, 429, 'rate_limited');
        assert.match(over.body.error.message, /10 events per second/);
        assert.ok(Number(over.headers.get('retry-after')) >= 1);
      }
      const mine = await h.request('POST', `/v1/accounts/${accQ}/events`, { auth: quiet.auth, body: events(10) });
      assert.equal(mine.status, 200, 'another company’s bucket is its own');
      const b = await h.request('GET', `/v1/accounts/${accF}/balance/tokens`, { auth: flooder.auth });
      assert.equal(b.body.data.amount, 1_000 - 10 * accepted, 'only the accepted events were applied');
      assert.equal(
        (await h.request('GET', '/v1/accounts', { auth: flooder.auth })).status,
        200,
        'other routes are not counted as events',
      );
      await h.audit();
    });
  });
}
