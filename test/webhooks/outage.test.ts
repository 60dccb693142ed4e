// Guarantee: a receiver outage loses no notification — each is retried with backoff under the same webhook-id and body
// until it is answered 2xx, for at least 24 hours; 410 Gone stops delivery to that subscription.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import {
  HTTP_DIALECTS,
  createAccountWithBalance,
  signUpCompany,
  startHarness,
  type Harness,
} from '../support/harness.js';
import { createWebhook, runJobs, startReceiver, verifySignature } from '../support/webhooks.js';

const HOUR_S = 3600;

async function deliveries(h: Harness, auth: [string, string], webhookId: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  do {
    const r = await h.request(
      'GET',
      `/v1/webhooks/${webhookId}/deliveries?limit=100${cursor ? `&starting_after=${cursor}` : ''}`,
      { auth },
    );
    assert.equal(r.status, 200, r.text);
    out.push(...r.body.data);
    cursor = r.body.next_cursor;
  } while (cursor !== null);
  return out;
}

for (const dialect of HTTP_DIALECTS) {
  describe(`webhook outage (${dialect})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(dialect);
    });
    after(async () => h.close());
    afterEach(async () => h.audit());

    test(
      '500 for a while, then 200: every notification arrives, ' + 'with the same webhook-id and body on every attempt',
      async () => {
        let down = true;
        const rx = await startReceiver({ respond: () => (down ? 500 : 200) });
        try {
          const co = await signUpCompany(h);
          const w = await createWebhook(h, co.auth, { type: 'balance_change', url: rx.url });
          const accounts = [];
          for (let i = 0; i < 12; i++) accounts.push(await createAccountWithBalance(h, co, 'tokens', 100 + i));
          for (let i = 0; i < 4; i++) await runJobs(h, co.auth, 120); // the outage: every attempt fails
          const failed = new Set(rx.requests.map((r) => r.id));
          assert.equal(failed.size, 12, 'every notification was attempted during the outage');
          assert.ok(rx.requests.length >= 12 * 3, 'and retried');
          const during = await deliveries(h, co.auth, w.webhook_id);
          for (const d of during) {
            assert.equal(d.status, 'pending');
            assert.ok(d.attempts.length >= 3);
            assert.ok(d.attempts.every((a: any) => a.status_code === 500 && !a.success));
            assert.equal(d.last_error, 'HTTP 500');
            assert.ok(
              Date.parse(d.next_attempt_at) > Date.parse(d.attempts.at(-1).attempted_at),
              'next attempt scheduled after the last',
            );
          }
          down = false;
          for (let i = 0; i < 12 && rx.delivered().size < 12; i++) await runJobs(h, co.auth, HOUR_S);
          const delivered = rx.delivered();
          assert.deepEqual(
            [...delivered.keys()].sort(),
            [...failed].sort(),
            'every notification arrived, under the id it was first sent with',
          );
          for (const [id, oks] of delivered) {
            assert.equal(oks.length, 1, 'delivered once');
            const all = rx.requests.filter((r) => r.id === id);
            assert.ok(all.length >= 4);
            assert.ok(
              all.every((r) => r.body === all[0]!.body),
              'the same body on every attempt',
            );
            assert.equal(verifySignature(w.secret, oks[0]!).callback_id, id);
          }
          const after = await deliveries(h, co.auth, w.webhook_id);
          assert.ok(
            after.every(
              (d) =>
                d.status === 'delivered' &&
                d.attempts.at(-1).status_code === 200 &&
                d.next_attempt_at === null &&
                d.last_error === null,
            ),
          );
        } finally {
          await rx.close();
        }
      },
    );

    test(
      'a receiver that never recovers is retried for at ' + 'least 24 hours, then the notification is marked failed',
      async () => {
        const rx = await startReceiver({ respond: () => 503 });
        try {
          const co = await signUpCompany(h);
          const w = await createWebhook(h, co.auth, { type: 'balance_change', url: rx.url });
          await createAccountWithBalance(h, co, 'tokens', 1);
          const [created] = await deliveries(h, co.auth, w.webhook_id);
          await runJobs(h, co.auth);
          for (let i = 0; i < 30; i++) await runJobs(h, co.auth, HOUR_S);
          const [d] = await deliveries(h, co.auth, w.webhook_id);
          assert.equal(d.status, 'failed');
          assert.match(d.last_error, /^retry_window_exceeded/);
          assert.equal(d.next_attempt_at, null);
          const first = Date.parse(d.attempts[0].attempted_at);
          const last = Date.parse(d.attempts.at(-1).attempted_at);
          assert.ok(last - Date.parse(created.created_at) >= 24 * HOUR_S * 1000, 'retried for at least 24 hours');
          assert.ok(first <= Date.parse(created.created_at) + 1000);
          const gaps = d.attempts
            .slice(1)
            .map((a: any, i: number) => Date.parse(a.attempted_at) - Date.parse(d.attempts[i].attempted_at));
          assert.ok(gaps.every((g: number) => g > 0));
          const count = rx.requests.length;
          await runJobs(h, co.auth, 48 * HOUR_S);
          assert.equal(rx.requests.length, count, 'given up: nothing more is sent');
        } finally {
          await rx.close();
        }
      },
    );

    test(
      '410 Gone disables the subscription: pending ' + 'notifications are closed unsent, no new ones are written',
      async () => {
        let code = 500;
        const rx = await startReceiver({ respond: () => code });
        try {
          const co = await signUpCompany(h);
          const w = await createWebhook(h, co.auth, { type: 'balance_change', url: rx.url });
          const accountId = await createAccountWithBalance(h, co, 'tokens', 1);
          await h.request('POST', `/v1/accounts/${accountId}/balance/tokens/adjustments`, {
            auth: co.auth,
            body: { amount: 5 },
          });
          await runJobs(h, co.auth);
          assert.equal(rx.requests.length, 2);
          const [second, first] = await deliveries(h, co.auth, w.webhook_id);
          code = 410;
          const retried = await h.request('POST', `/v1/webhooks/deliveries/${first.callback_id}/retry`, {
            auth: co.auth,
          });
          assert.equal(retried.status, 200, retried.text);
          assert.equal(retried.body.data.status, 'failed');
          assert.equal(retried.body.data.attempts.at(-1).status_code, 410);
          const sub = (await h.request('GET', '/v1/webhooks', { auth: co.auth })).body.data.find(
            (x: any) => x.webhook_id === w.webhook_id,
          );
          assert.ok(sub.disabled_at !== null, 'disabled');
          assert.match(sub.disabled_reason, /410/);
          await runJobs(h, co.auth, HOUR_S);
          assert.equal(rx.requests.length, 3, 'the other pending notification was not sent again');
          const closed = (await deliveries(h, co.auth, w.webhook_id)).find((d) => d.callback_id === second.callback_id);
          assert.deepEqual(
            [closed.status, closed.last_error, closed.attempts.length],
            ['failed', 'subscription_disabled', 1],
          );
          await h.request('POST', `/v1/accounts/${accountId}/balance/tokens/adjustments`, {
            auth: co.auth,
            body: { amount: 5 },
          });
          await runJobs(h, co.auth, HOUR_S);
          assert.equal(
            (await deliveries(h, co.auth, w.webhook_id)).length,
            2,
            'no notification is written for a disabled subscription',
          );
          assert.equal(rx.requests.length, 3);
        } finally {
          await rx.close();
        }
      },
    );
  });
}
