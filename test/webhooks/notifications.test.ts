// Guarantee: every balance change notifies the company's subscriptions of the right type, written with the change (a
// rejected request notifies nothing), coalesced to one per balance per request, signed verifiably (standardwebhooks),
// and logged with every attempt.
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
import { createWebhook, runJobs, startReceiver, verifySignature, type Receiver } from '../support/webhooks.js';

type Auth = [string, string];

async function deliveries(h: Harness, auth: Auth, webhookId: string): Promise<any[]> {
  const r = await h.request('GET', `/v1/webhooks/${webhookId}/deliveries?limit=100`, { auth });
  assert.equal(r.status, 200, r.text);
  return r.body.data;
}

async function events(h: Harness, auth: Auth, accountId: string, list: unknown[], query = ''): Promise<any> {
  return h.request('POST', `/v1/accounts/${accountId}/events${query}`, { auth, body: list });
}

const cost = (amount: number, extra: Record<string, unknown> = {}) => ({
  type: 'call',
  cost_override: { amount, denomination: 'tokens' },
  ...extra,
});

for (const dialect of HTTP_DIALECTS) {
  describe(`webhook notifications (${dialect})`, () => {
    let h: Harness;
    let rx: Receiver;
    before(async () => {
      h = await startHarness(dialect);
      rx = await startReceiver();
    });
    after(async () => {
      await h.close();
      await rx.close();
    });
    afterEach(async () => h.audit());

    test(
      'balance_change for grants, adjustments, usage, holds, ' +
        'settling and auto-cancelled holds; signed; spec payload',
      async () => {
        const co = await signUpCompany(h);
        const w = await createWebhook(h, co.auth, { type: 'balance_change', url: rx.url });
        const accountId = await createAccountWithBalance(h, co, 'tokens', 1000);
        assert.equal(
          (
            await h.request('POST', `/v1/accounts/${accountId}/balance/tokens/adjustments`, {
              auth: co.auth,
              body: { amount: -50, reason: 'fix' },
            })
          ).status,
          200,
        );
        assert.equal((await events(h, co.auth, accountId, [cost(100)])).status, 200);
        const held = await events(h, co.auth, accountId, [
          cost(30, { state: 'pending' }),
          cost(20, { state: 'pending' }),
        ]);
        assert.equal(held.status, 200, held.text);
        const [settled, expiring] = held.body.event_ids;
        assert.equal(
          (await h.request('PUT', `/v1/events/${settled}`, { auth: co.auth, body: { state: 'complete' } })).status,
          200,
        );
        await runJobs(h, co.auth, 3601); // the other hold expires and is cancelled automatically
        const ev = await h.request('GET', `/v1/events/${expiring}`, { auth: co.auth });
        assert.equal(ev.body.data.state, 'cancelled');

        const list = await deliveries(h, co.auth, w.webhook_id);
        // grant, adjustment, usage, hold (one request), settle, auto-cancel: oldest first below.
        const bodies = list.map((d) => d.payload).reverse();
        assert.deepEqual(
          bodies.map((p) => [p.account_balance, p.available, p.pending]),
          [
            [1000, 1000, 0],
            [950, 950, 0],
            [850, 850, 0],
            [850, 800, 50],
            [820, 800, 20],
            [820, 820, 0],
          ],
        );
        for (const d of list) {
          assert.equal(d.status, 'delivered', JSON.stringify(d));
          assert.equal(d.attempts.length, 1);
          assert.equal(d.attempts[0].status_code, 200);
          assert.equal(d.attempts[0].success, true);
          assert.equal(d.attempts[0].response_snippet, 'ok');
          assert.equal(typeof d.attempts[0].latency_ms, 'number');
        }
        const got = rx.requests.filter((r) => list.some((d) => d.callback_id === r.id));
        assert.equal(got.length, list.length);
        const first = got[0]!;
        const otherSecret = `whsec_${Buffer.from('another secret, 32 bytes long....').toString('base64')}`;
        assert.throws(() => verifySignature(otherSecret, first), /webhook-signature/, 'another secret');
        assert.throws(() => verifySignature(w.secret, { ...first, body: `${first.body} ` }), /webhook-signature/);
        assert.throws(
          () => verifySignature(w.secret, { ...first, receivedAtMs: first.receivedAtMs + 600_000 }),
          /webhook-timestamp/,
          'a timestamp ten minutes before its arrival',
        );
        for (const r of got) {
          const payload = verifySignature(w.secret, r);
          assert.equal(payload.callback_id, r.id, 'webhook-id is the callback_id');
          assert.match(r.id, /^cl_/);
          assert.deepEqual(
            {
              company_id: payload.company_id,
              account_id: payload.account_id,
              type: payload.type,
              account_denomination: payload.account_denomination,
            },
            { company_id: co.companyId, account_id: accountId, type: 'balance_change', account_denomination: 'tokens' },
          );
          assert.equal(typeof payload.account_balance, 'number');
          const ts = Number(r.headers['webhook-timestamp']);
          assert.ok(
            Math.abs(ts - Date.now() / 1000) < 300,
            'timestamp from the wall clock, although the test clock moved an hour',
          );
        }
      },
    );

    test(
      'coalescing: a 100-event request on one balance is one ' +
        'balance_change (and one negative_balance) with the balance ' +
        'after',
      async () => {
        const co = await signUpCompany(h);
        const change = await createWebhook(h, co.auth, { type: 'balance_change', url: rx.url });
        const negative = await createWebhook(h, co.auth, { type: 'negative_balance', url: rx.url });
        const accountId = await createAccountWithBalance(h, co, 'tokens', 50);
        const before = (await deliveries(h, co.auth, change.webhook_id)).length;
        const r = await events(
          h,
          co.auth,
          accountId,
          Array.from({ length: 100 }, () => cost(1)),
        );
        assert.equal(r.status, 200, r.text);
        await runJobs(h, co.auth);
        const changes = await deliveries(h, co.auth, change.webhook_id);
        assert.equal(changes.length - before, 1);
        assert.equal(changes[0].payload.account_balance, -50);
        const negatives = await deliveries(h, co.auth, negative.webhook_id);
        assert.equal(negatives.length, 1);
        assert.equal(negatives[0].payload.account_balance, -50);
        assert.equal(negatives[0].payload.type, 'negative_balance');
      },
    );

    test(
      'negative_balance only when a change lowers the balance ' +
        'below zero; threshold only when crossing from ≥ to <',
      async () => {
        const co = await signUpCompany(h);
        const negative = await createWebhook(h, co.auth, { type: 'negative_balance', url: rx.url });
        const threshold = await createWebhook(h, co.auth, { type: 'threshold', url: rx.url, threshold: 500 });
        const accountId = await createAccountWithBalance(h, co, 'tokens', 1000);
        const adjust = (amount: number) =>
          h.request('POST', `/v1/accounts/${accountId}/balance/tokens/adjustments`, {
            auth: co.auth,
            body: { amount },
          });
        for (const step of [-400, -100, -100, 300, -350, -400, 100, -10])
          assert.equal((await adjust(step)).status, 200);
        // 1000 → 600 → 500 → 400 (cross) → 700 → 350 (cross) → -50 (negative) → 50 → 40
        await runJobs(h, co.auth);
        const crossings = (await deliveries(h, co.auth, threshold.webhook_id)).map((d) => d.payload).reverse();
        assert.deepEqual(
          crossings.map((p) => [p.account_balance, p.threshold, p.type]),
          [
            [400, 500, 'threshold'],
            [350, 500, 'threshold'],
          ],
        );
        const negatives = (await deliveries(h, co.auth, negative.webhook_id)).map((d) => d.payload.account_balance);
        assert.deepEqual(negatives, [-50], 'a credit leaving it ≥ 0, and a debit while positive, do not notify');
        await adjust(-100); // 40 → -60: negative again
        await adjust(10); // -60 → -50: a credit, still negative, not notified
        await runJobs(h, co.auth);
        assert.deepEqual(
          (await deliveries(h, co.auth, negative.webhook_id)).map((d) => d.payload.account_balance),
          [-60, -50],
        );
      },
    );

    test(
      'nothing is written for companies without a ' + 'subscription of that type, nor by a rejected request',
      async () => {
        const co = await signUpCompany(h);
        const other = await createWebhook(h, co.auth, { type: 'auto_refill', url: rx.url });
        const change = await createWebhook(h, co.auth, { type: 'balance_change', url: rx.url });
        const accountId = await createAccountWithBalance(h, co, 'tokens', 10);
        const before = (await deliveries(h, co.auth, change.webhook_id)).length;
        await events(h, co.auth, accountId, [cost(20)]); // → -10
        assertError(
          await events(h, co.auth, accountId, [cost(1)], '?gate_on_balance=true'),
          402,
          'insufficient_balance',
        );
        assertError(await events(h, co.auth, accountId, [cost(1), { type: 'unpriced' }]), 400);
        await runJobs(h, co.auth);
        assert.equal(
          (await deliveries(h, co.auth, change.webhook_id)).length - before,
          1,
          'only the accepted request notified',
        );
        assert.deepEqual(await deliveries(h, co.auth, other.webhook_id), []);
        const quiet = await signUpCompany(h);
        const quietAccount = await createAccountWithBalance(h, quiet, 'tokens', 10);
        await events(h, quiet.auth, quietAccount, [cost(1)]);
        const rows = await h.store.read(async (tx) => tx.webhooks.findWebhookTargets([quiet.companyId]));
        assert.deepEqual(rows, []);
      },
    );

    test(
      'auto_refill and plan threshold notifications are ' + 'written with their change, once, to their type only',
      async () => {
        const co = await signUpCompany(h);
        const refill = await createWebhook(h, co.auth, { type: 'auto_refill', url: rx.url });
        const alert = await createWebhook(h, co.auth, { type: 'threshold', url: rx.url });
        const change = await createWebhook(h, co.auth, { type: 'balance_change', url: rx.url });
        const plan = await h.request('POST', `/v1/companies/${co.companyId}/plans`, {
          auth: co.auth,
          body: {
            name: 'Alerted',
            charge_amount: 0,
            threshold_alert_percentage: '50',
            balances: [{ amount: 100, denomination: 'tokens', overage_charge_amount: 0 }],
          },
        });
        assert.equal(plan.status, 200, plan.text);
        const a = await h.request('POST', `/v1/companies/${co.companyId}/accounts`, {
          auth: co.auth,
          body: { name: 'P', plan_id: plan.body.data.plan_id },
        });
        assert.equal(a.status, 200, a.text);
        const accountId = a.body.data.account_id as string;
        const card = await h.request('POST', `/v1/accounts/${accountId}/card`, {
          auth: co.auth,
          body: { token: 'tok_visa' },
        });
        assert.equal(card.status, 200, card.text);
        const put = await h.request('PUT', `/v1/accounts/${accountId}/balance/tokens/autorefill`, {
          auth: co.auth,
          body: { threshold: 20, amount: 1000, usd_charge: 500 },
        });
        assert.equal(put.status, 200, put.text);
        const before = (await deliveries(h, co.auth, change.webhook_id)).length;
        // 100 → 40: below 50 % of the included amount (one plan alert) and not yet below the refill threshold.
        await events(h, co.auth, accountId, [cost(60)]);
        // 40 → 10: below the refill threshold (one refill of 1,000), no second plan alert this period.
        await events(h, co.auth, accountId, [cost(30)]);
        await runJobs(h, co.auth);
        await runJobs(h, co.auth);

        const alerts = await deliveries(h, co.auth, alert.webhook_id);
        assert.deepEqual(
          alerts.map((d) => [d.payload.type, d.payload.account_balance, d.payload.available, d.payload.pending]),
          [['threshold', 40, 40, 0]],
        );
        const refills = await deliveries(h, co.auth, refill.webhook_id);
        assert.equal(refills.length, 1);
        assert.equal(refills[0].status, 'delivered');
        assert.deepEqual(
          (({ company_id, account_id, type, account_balance, account_denomination, available }) => ({
            company_id,
            account_id,
            type,
            account_balance,
            account_denomination,
            available,
          }))(refills[0].payload),
          {
            company_id: co.companyId,
            account_id: accountId,
            type: 'auto_refill',
            account_balance: 1010,
            account_denomination: 'tokens',
            available: 1010,
          },
        );
        const changes = await deliveries(h, co.auth, change.webhook_id);
        assert.deepEqual(
          changes.slice(0, changes.length - before).map((d) => d.payload.type),
          ['balance_change', 'balance_change', 'balance_change'],
          'the two spends and the refill, each once, and nothing of the other types',
        );
        // Nothing waits in the outbox for webhooks: only the charge row was ever written there.
        const outbox = await h.store.read((tx) => tx.outbox.listOutboxOfCompany(co.companyId, ''));
        assert.deepEqual(
          outbox.map((r) => r.topic),
          ['charge.refill'],
        );
      },
    );

    test('retry sends again now with the same webhook-id and body; the log keeps every attempt', async () => {
      const co = await signUpCompany(h);
      const w = await createWebhook(h, co.auth, { type: 'balance_change', url: rx.url });
      await createAccountWithBalance(h, co, 'tokens', 5);
      await runJobs(h, co.auth);
      const [d] = await deliveries(h, co.auth, w.webhook_id);
      assert.equal(d.status, 'delivered');
      const r = await h.request('POST', `/v1/webhooks/deliveries/${d.callback_id}/retry`, { auth: co.auth });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.data.status, 'delivered');
      assert.deepEqual(
        r.body.data.attempts.map((a: any) => [a.status_code, a.manual]),
        [
          [200, false],
          [200, true],
        ],
      );
      const copies = rx.requests.filter((x) => x.id === d.callback_id);
      assert.equal(copies.length, 2);
      assert.equal(copies[0]!.body, copies[1]!.body, 'the same body');
      for (const c of copies) verifySignature(w.secret, c);
      assertError(
        await h.request('POST', '/v1/webhooks/deliveries/cl_missing/retry', { auth: co.auth }),
        404,
        'not_found',
      );
    });
  });
}
