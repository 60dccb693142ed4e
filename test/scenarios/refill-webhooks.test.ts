// Guarantee: money movement and webhooks work together — a threshold refill that succeeds
// sends one signed auto_refill notification, and every balance change reaches the receiver.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { HTTP_DIALECTS, signUpCompany, startHarness, type Harness } from '../support/harness.js';
import { attachCard, balance, createBalance, putAutoRefill } from '../support/money.js';
import { createWebhook, runJobs, startReceiver, verifySignature, type Receiver } from '../support/webhooks.js';

for (const dialect of HTTP_DIALECTS) {
  describe(`refills notify (${dialect})`, () => {
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

    test('threshold refill: charge, units, one auto_refill webhook, balance_change after it', async () => {
      const co = await signUpCompany(h);
      const refillHook = await createWebhook(h, co.auth, { type: 'auto_refill', url: rx.url });
      const changeHook = await createWebhook(h, co.auth, { type: 'balance_change', url: rx.url });
      const a = await h.request('POST', `/v1/companies/${co.companyId}/accounts`, {
        auth: co.auth,
        body: { name: 'R' },
      });
      const acc = a.body.data.account_id as string;
      await createBalance(h, co, acc, 'tokens', 500);
      await attachCard(h, co, acc, 'tok_visa');
      await putAutoRefill(h, co, acc, 'tokens', { threshold: 100, amount: 1000, usd_charge: 900 });
      const spend = await h.request('POST', `/v1/accounts/${acc}/events`, {
        auth: co.auth,
        body: [{ type: 'x', cost_override: { amount: 450, denomination: 'tokens' } }],
      });
      assert.equal(spend.status, 200, spend.text);
      await runJobs(h, co.auth);
      await runJobs(h, co.auth);
      assert.equal((await balance(h, co, acc)).amount, 50 + 1000, 'refilled once');
      const charges = await h.request('GET', `/v1/accounts/${acc}/charges`, { auth: co.auth });
      assert.deepEqual(
        charges.body.data.map((c: { usd_amount: number; status: string }) => [c.usd_amount, c.status]),
        [[900, 'succeeded']],
      );

      const byType = (t: string) => rx.requests.filter((r) => r.json.type === t && r.json.account_id === acc);
      const refills = byType('auto_refill');
      assert.equal(refills.length, 1, 'one auto_refill notification');
      verifySignature(refillHook.secret, refills[0]!);
      assert.equal(refills[0]!.json.account_balance, 1050);
      assert.equal(refills[0]!.json.account_denomination, 'tokens');
      assert.equal(refills[0]!.json.company_id, co.companyId);
      assert.match(refills[0]!.json.callback_id, /^cl_/);
      const changes = byType('balance_change');
      assert.ok(changes.length >= 2, 'the spend and the refill both notify');
      for (const c of changes) verifySignature(changeHook.secret, c);
      // Deliveries run concurrently, so their order is not guaranteed: check the set.
      assert.deepEqual(
        [...new Set(changes.map((c) => c.json.account_balance))].sort((x, y) => x - y),
        [50, 500, 1050],
        'grant, spend and refill each notify',
      );
    });
  });
}
