// Guarantee (contract "Spend limits and alerts": max_refills_per_month), on both databases: with a card that keeps
// paying, threshold refills stop at max_refills_per_month in a UTC month (no charge is even attempted past it), one
// refill_capped notification is written for the balance that month however many changes the cap stops, and the
// next month refills again; 0 or a fraction is 400 naming the field, null removes the cap.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { HTTP_DIALECTS, assertError, signUpCompany, startHarness, type Harness } from '../support/harness.js';
import {
  advanceTo,
  attachCard,
  balance,
  charges,
  createAccount,
  createBalance,
  putAutoRefill,
  runDue,
  spend,
  type Co,
} from '../support/money.js';
import { createWebhook, notificationsOf } from '../support/webhooks.js';

for (const dialect of HTTP_DIALECTS) {
  describe(`max_refills_per_month (${dialect})`, () => {
    let h: Harness;
    let co: Co;
    let capped: { webhook_id: string };
    before(async () => {
      h = await startHarness(dialect);
      co = await signUpCompany(h);
      capped = await createWebhook(h, co.auth, { type: 'refill_capped', url: 'https://example.com/hooks' });
    });
    after(async () => h.close());
    afterEach(async () => h.audit());

    test('two refills a month with a paying card, then none and one refill_capped; the next month again', async () => {
      const now = Date.parse((await h.request('GET', '/v1/test_clock', { auth: co.auth })).body.data.now);
      const d = new Date(now);
      // Early in a month, so that the next steps stay in it.
      await advanceTo(h, co, new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 2)).toISOString());
      const acc = (await createAccount(h, co)).account_id;
      await createBalance(h, co, acc, 'tokens', 150);
      await attachCard(h, co, acc, 'tok_visa');
      const set = await putAutoRefill(h, co, acc, 'tokens', {
        threshold: 100,
        amount: 50,
        usd_charge: 100,
        max_refills_per_month: 2,
      });
      assert.equal(set.max_refills_per_month, 2);
      for (const expected of [140, 130]) {
        await spend(h, co, acc, 60);
        await runDue(h, co);
        assert.equal((await balance(h, co, acc)).available, expected, 'refilled');
      }
      assert.equal((await charges(h, co, acc)).length, 2);
      for (const expected of [70, 60, 50]) {
        await spend(h, co, acc, 60 - (expected === 70 ? 0 : 50));
        await runDue(h, co);
        assert.equal((await balance(h, co, acc)).available, expected, 'not refilled past the cap');
      }
      assert.equal((await charges(h, co, acc)).length, 2, 'no charge attempted past the cap');
      const notes = (await notificationsOf(h, co.auth, capped.webhook_id)).filter((n) => n.account_id === acc);
      assert.equal(notes.length, 1, 'one refill_capped for the month');
      assert.equal(notes[0]!.type, 'refill_capped');
      assert.deepEqual([notes[0]!.max_refills_per_month, notes[0]!.refills_this_month], [2, 2]);

      // The next month: the count starts again.
      const first = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 2, 1, 1));
      await advanceTo(h, co, first.toISOString());
      await spend(h, co, acc, 1);
      await runDue(h, co);
      assert.equal((await balance(h, co, acc)).available, 99);
      assert.equal((await charges(h, co, acc)).length, 3);
    });

    test('bad max_refills_per_month is 400 naming the field; null removes the cap; left out, it is kept', async () => {
      const acc = (await createAccount(h, co)).account_id;
      await createBalance(h, co, acc, 'tokens', 10);
      await putAutoRefill(h, co, acc, 'tokens', { threshold: 5, amount: 10, usd_charge: 10, max_refills_per_month: 3 });
      for (const bad of [0, -1, 1.5, '2']) {
        const r = await h.request('PUT', `/v1/accounts/${acc}/balance/tokens/autorefill`, {
          auth: co.auth,
          body: { max_refills_per_month: bad },
        });
        assertError(r, 400, 'invalid_request');
        assert.match(`${r.body.error.param} ${r.body.error.message}`, /max_refills_per_month/, r.text);
      }
      assert.equal((await balance(h, co, acc)).max_refills_per_month, 3);
      assert.equal((await putAutoRefill(h, co, acc, 'tokens', { amount: 20 })).max_refills_per_month, 3);
      assert.equal(
        (await putAutoRefill(h, co, acc, 'tokens', { max_refills_per_month: null })).max_refills_per_month,
        null,
      );
    });
  });
}
