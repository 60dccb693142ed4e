// Guarantee: a threshold refill charges the card once per trigger (never once per event, at most one in flight per
// balance), adds units only after the charge succeeded, and pauses after 3 declines until a new card — on both
// databases.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { HTTP_DIALECTS, assertError, signUpCompany, startHarness, type Harness } from '../support/harness.js';
import {
  attachCard,
  balance,
  charges,
  createAccount,
  createBalance,
  putAutoRefill,
  runDue,
  spend,
  transactions,
  type Co,
} from '../support/money.js';
import { createWebhook, notificationsOf, startReceiver, type Receiver } from '../support/webhooks.js';

for (const dialect of HTTP_DIALECTS) {
  describe(`cards and threshold refills (${dialect})`, () => {
    let h: Harness;
    let co: Co;
    let rx: Receiver;
    let refillHook: { webhook_id: string };
    before(async () => {
      h = await startHarness(dialect);
      rx = await startReceiver();
      co = await signUpCompany(h);
      refillHook = await createWebhook(h, co.auth, { type: 'auto_refill', url: rx.url });
    });
    after(async () => {
      await h.close();
      await rx.close();
    });
    afterEach(async () => h.audit());

    async function accountWithBalance(amount: number, token: string | null = 'tok_visa'): Promise<string> {
      const acc = (await createAccount(h, co)).account_id;
      await createBalance(h, co, acc, 'tokens', amount);
      if (token !== null) await attachCard(h, co, acc, token);
      return acc;
    }

    test(
      'attaching a card: details back, a processor customer created lazily; bad tokens 400; a declined card 402 and ' +
        'nothing changes',
      async () => {
        const acc = (await createAccount(h, co)).account_id;
        for (const token of ['tok_unknown', 'pm_card_visa'])
          assertError(
            await h.request('POST', `/v1/accounts/${acc}/card`, { auth: co.auth, body: { token } }),
            400,
            'invalid_request',
          );
        for (const body of [
          { token: '' },
          { token: 'tok visa' },
          { token: 42 },
          {},
          { token: 'tok_visa', extra: 1 },
          { token: 'x'.repeat(300) },
        ]) {
          assertError(
            await h.request('POST', `/v1/accounts/${acc}/card`, { auth: co.auth, body }),
            400,
            'invalid_request',
          );
        }
        const declined = await h.request('POST', `/v1/accounts/${acc}/card`, {
          auth: co.auth,
          body: { token: 'tok_chargeDeclined' },
        });
        assertError(declined, 402, 'payment_failed');
        const untouched = await h.request('GET', `/v1/accounts/${acc}`, { auth: co.auth });
        assert.equal(untouched.body.data.processor_id, null, 'nothing changed');
        assertError(await h.request('GET', `/v1/accounts/${acc}/card`, { auth: co.auth }), 404, 'not_found');
        const card = await attachCard(h, co, acc, 'tok_mastercard');
        assert.deepEqual(card, { brand: 'mastercard', last4: '4444', exp_month: 12, exp_year: 2034 });
        const onFile = await h.request('GET', `/v1/accounts/${acc}/card`, { auth: co.auth });
        assert.equal(onFile.status, 200, onFile.text);
        assert.deepEqual(onFile.body.data, card, 'GET reads back the card on file');
        const account = await h.request('GET', `/v1/accounts/${acc}`, { auth: co.auth });
        assert.match(
          account.body.data.processor_id,
          /^cus_sandbox_/,
          'the customer is created when the first card arrives',
        );
        const again = await attachCard(h, co, acc, 'tok_visa');
        assert.equal(again.last4, '4242');
        assert.equal(
          (await h.request('GET', `/v1/accounts/${acc}`, { auth: co.auth })).body.data.processor_id,
          account.body.data.processor_id,
          'the customer is kept',
        );
        const other = await signUpCompany(h, 'Other');
        assertError(
          await h.request('POST', `/v1/accounts/${acc}/card`, { auth: other.auth, body: { token: 'tok_visa' } }),
          404,
          'not_found',
        );
        assertError(await h.request('GET', `/v1/accounts/${acc}/card`, { auth: other.auth }), 404, 'not_found');
        assert.equal((await h.request('GET', `/v1/accounts/${acc}/card`, { auth: co.auth })).body.data.last4, '4242');
      },
    );

    test(
      'many events and requests below the threshold make ' + 'one charge; units arrive only when it succeeded',
      async () => {
        const acc = await accountWithBalance(1000);
        const saved = await putAutoRefill(h, co, acc, 'tokens', { threshold: 500, amount: 1000, usd_charge: 700 });
        assert.deepEqual(
          [
            saved.refill_threshold,
            saved.refill_amount,
            saved.refill_usd_amount,
            saved.refill_monthly,
            saved.refill_on_day,
          ],
          [500, 1000, 700, false, null],
        );
        await spend(h, co, acc, 60, 'tokens', 10);
        await spend(h, co, acc, 50);
        await Promise.all([spend(h, co, acc, 10), spend(h, co, acc, 10), spend(h, co, acc, 10)]);
        let cs = await charges(h, co, acc);
        assert.deepEqual(
          cs.map((c) => [c.reason, c.status, c.usd_amount]),
          [['refill', 'pending', 700]],
          'one charge in flight',
        );
        assert.equal((await balance(h, co, acc)).amount, 320, 'nothing added before the charge succeeded');
        await runDue(h, co);
        assert.equal((await balance(h, co, acc)).amount, 1320);
        cs = await charges(h, co, acc);
        assert.deepEqual(
          cs.map((c) => [c.reason, c.status]),
          [['refill', 'succeeded']],
        );
        const refills = (await transactions(h, co, acc)).filter((t) => t.kind === 'refill');
        assert.deepEqual(
          refills.map((t) => [t.amount, t.balance_after]),
          [[1000, 1320]],
        );
        const hooks = await notificationsOf(h, co.auth, refillHook.webhook_id);
        assert.deepEqual(
          hooks
            .filter((p) => p.account_id === acc)
            .map((p) => [p.account_id, p.account_denomination, p.account_balance, p.type]),
          [[acc, 'tokens', 1320, 'auto_refill']],
        );
        await runDue(h, co);
        assert.equal(
          (await charges(h, co, acc)).length,
          1,
          'a refill that leaves the balance above the threshold starts nothing more',
        );
        await spend(h, co, acc, 900);
        await runDue(h, co);
        assert.equal((await balance(h, co, acc)).amount, 1420, 'the next drop is the next trigger');
        assert.equal((await charges(h, co, acc)).length, 2);
      },
    );

    test('many concurrent requests below the threshold still make one charge', async () => {
      const acc = await accountWithBalance(1000);
      await putAutoRefill(h, co, acc, 'tokens', { threshold: 900, amount: 500, usd_charge: 500 });
      await Promise.all(Array.from({ length: 30 }, () => spend(h, co, acc, 10, 'tokens', 2)));
      assert.deepEqual(
        (await charges(h, co, acc)).map((c) => c.status),
        ['pending'],
      );
      await runDue(h, co);
      assert.equal((await balance(h, co, acc)).amount, 1000 - 600 + 500);
      assert.deepEqual(
        (await charges(h, co, acc)).map((c) => c.status),
        ['succeeded'],
      );
    });

    test('the OpenAPI document describes the money routes and the lazy customer creation', async () => {
      const r = await h.request('GET', '/openapi.json');
      assert.equal(r.status, 200);
      for (const path of [
        '/v1/accounts/{account_id}/card',
        '/v1/accounts/{account_id}/balance/{denomination}/autorefill',
        '/v1/accounts/{account_id}/auto_refill',
        '/v1/accounts/{account_id}/modifymidmonth',
        '/v1/companies/{company_id}/plan',
        '/v1/companies/{company_id}/plans',
        '/v1/plans/{plan_id}',
        '/v1/accounts/{account_id}/charges',
      ]) {
        assert.ok(r.body.paths[path], `documented: ${path}`);
      }
      assert.match(r.body.paths['/v1/accounts/{account_id}/card'].post.description, /customer is created/);
    });

    test('a pending hold that lowers available triggers a refill; releasing it does not', async () => {
      const acc = await accountWithBalance(1000);
      await putAutoRefill(h, co, acc, 'tokens', { threshold: 500, amount: 100, usd_charge: 100 });
      const r = await h.request('POST', `/v1/accounts/${acc}/events`, {
        auth: co.auth,
        body: [
          {
            id: `hold-${dialect}`,
            type: 'x',
            state: 'pending',
            cost_override: { amount: 600, denomination: 'tokens' },
          },
        ],
      });
      assert.equal(r.status, 200, r.text);
      await runDue(h, co);
      assert.deepEqual(await balance(h, co, acc), {
        ...(await balance(h, co, acc)),
        amount: 1100,
        pending: 600,
        available: 500,
      });
      assert.equal(
        (await h.request('PUT', `/v1/events/hold-${dialect}`, { auth: co.auth, body: { state: 'cancelled' } })).status,
        200,
      );
      await runDue(h, co);
      assert.equal((await charges(h, co, acc)).length, 1);
    });

    test(
      'a declining card: each decline adds nothing, 3 in a row ' +
        'pause auto-refill until a new card; the new card refills ' +
        'on the next change',
      async () => {
        const acc = await accountWithBalance(500, 'tok_chargeCustomerFail');
        await putAutoRefill(h, co, acc, 'tokens', { threshold: 500, amount: 1000, usd_charge: 900 });
        for (let i = 1; i <= 3; i++) {
          await spend(h, co, acc, 50);
          await runDue(h, co);
          const b = await balance(h, co, acc);
          assert.equal(b.consecutive_declines, i);
          assert.equal(b.auto_refill_paused, i >= 3);
        }
        await spend(h, co, acc, 50);
        await spend(h, co, acc, 50);
        await runDue(h, co);
        const cs = await charges(h, co, acc);
        assert.deepEqual(
          cs.map((c) => [c.status, c.failure_code]),
          Array(3).fill(['failed', 'card_declined']),
          'paused: no fourth charge',
        );
        assert.equal((await balance(h, co, acc)).amount, 250, 'no units without a successful charge');
        assert.ok(!(await transactions(h, co, acc)).some((t) => t.kind === 'refill'));

        await attachCard(h, co, acc, 'tok_visa');
        const unpaused = await balance(h, co, acc);
        assert.deepEqual([unpaused.auto_refill_paused, unpaused.consecutive_declines], [false, 0]);
        await spend(h, co, acc, 50);
        await runDue(h, co);
        assert.equal((await balance(h, co, acc)).amount, 1200);
        assert.deepEqual(
          (await charges(h, co, acc)).map((c) => c.status),
          ['failed', 'failed', 'failed', 'succeeded'],
        );
      },
    );

    test('no card on file: the refill charge fails as no_card_on_file and counts toward the pause', async () => {
      const acc = await accountWithBalance(100, null);
      await putAutoRefill(h, co, acc, 'tokens', { threshold: 500, amount: 100, usd_charge: 100 });
      for (let i = 0; i < 4; i++) {
        await spend(h, co, acc, 1);
        await runDue(h, co);
      }
      assert.deepEqual(
        (await charges(h, co, acc)).map((c) => [c.status, c.failure_code]),
        Array(3).fill(['failed', 'no_card_on_file']),
      );
      assert.equal((await balance(h, co, acc)).auto_refill_paused, true);
    });

    test('a new processor_id detaches the card of the previous customer; the same processor_id keeps it', async () => {
      const acc = await accountWithBalance(100);
      const account = async () => (await h.request('GET', `/v1/accounts/${acc}`, { auth: co.auth })).body.data;
      const customer = (await account()).processor_id;
      const same = await h.request('PUT', `/v1/accounts/${acc}`, {
        auth: co.auth,
        body: { processor_id: customer, name: 'Renamed' },
      });
      assert.equal(same.status, 200, same.text);
      await putAutoRefill(h, co, acc, 'tokens', { threshold: 500, amount: 100, usd_charge: 100 });
      const refill = async () => {
        await spend(h, co, acc, 1);
        await runDue(h, co);
        return (await charges(h, co, acc)).map((c) => `${c.status} ${c.failure_code}`).sort();
      };
      assert.deepEqual(await refill(), ['succeeded null'], 'the card is kept');

      const moved = await h.request('PUT', `/v1/accounts/${acc}`, {
        auth: co.auth,
        body: { processor_id: 'cus_sandbox_elsewhere' },
      });
      assert.equal(moved.status, 200, moved.text);
      assert.equal(moved.body.data.processor_id, 'cus_sandbox_elsewhere');
      assert.deepEqual(
        await refill(),
        ['failed no_card_on_file', 'succeeded null'],
        "no charge to the previous customer's card",
      );

      await attachCard(h, co, acc, 'tok_visa');
      assert.equal(
        (await account()).processor_id,
        'cus_sandbox_elsewhere',
        'the card goes to the new customer, none is created',
      );
      assert.deepEqual(await refill(), ['failed no_card_on_file', 'succeeded null', 'succeeded null']);
      assert.equal((await balance(h, co, acc)).amount, 100 - 1 + 100 - 1 - 1 + 100);
    });

    test(
      'auto-refill settings: three paths, fields kept ' + 'when left out, bad bodies 400 and change nothing',
      async () => {
        const acc = await accountWithBalance(100);
        const a = await h.request('PUT', `/v1/accounts/${acc}/balance/tokens/auto_refill`, {
          auth: co.auth,
          body: { threshold: 10, amount: 50, usd_charge: 60 },
        });
        assert.equal(a.status, 200, a.text);
        const b = await h.request('PUT', `/v1/accounts/${acc}/auto_refill`, {
          auth: co.auth,
          body: { denomination: 'tokens', usd_charge: 75 },
        });
        assert.equal(b.status, 200, b.text);
        assert.deepEqual(
          [b.body.data.refill_threshold, b.body.data.refill_amount, b.body.data.refill_usd_amount],
          [10, 50, 75],
        );
        const cleared = await putAutoRefill(h, co, acc, 'tokens', { threshold: null });
        assert.equal(cleared.refill_threshold, null);
        const fresh = (await createAccount(h, co)).account_id;
        await createBalance(h, co, fresh, 'tokens', 0);
        const bad: [string, string, unknown][] = [
          ['PUT', `/v1/accounts/${fresh}/balance/tokens/autorefill`, { threshold: 10 }],
          ['PUT', `/v1/accounts/${fresh}/balance/tokens/autorefill`, { refill_monthly: true, amount: 10 }],
          ['PUT', `/v1/accounts/${fresh}/balance/tokens/autorefill`, { amount: 0, usd_charge: 1, threshold: 1 }],
          ['PUT', `/v1/accounts/${fresh}/balance/tokens/autorefill`, { amount: 1.5, usd_charge: 1, threshold: 1 }],
          ['PUT', `/v1/accounts/${fresh}/balance/tokens/autorefill`, { amount: 10, usd_charge: -1, threshold: 1 }],
          ['PUT', `/v1/accounts/${fresh}/balance/tokens/autorefill`, { amount: '10', usd_charge: 1, threshold: 1 }],
          [
            'PUT',
            `/v1/accounts/${fresh}/balance/tokens/autorefill`,
            { amount: 10, usd_charge: 1, refill_period: 'weekly' },
          ],
          [
            'PUT',
            `/v1/accounts/${fresh}/balance/tokens/autorefill`,
            { amount: 10, usd_charge: 1, refill_period: 'monthly', refill_monthly: false },
          ],
          [
            'PUT',
            `/v1/accounts/${fresh}/balance/tokens/autorefill`,
            { amount: 10, usd_charge: 1, denomination: 'gold' },
          ],
          ['PUT', `/v1/accounts/${fresh}/balance/tokens/autorefill`, { amount: 10, usd_charge: 1, colour: 'red' }],
          ['PUT', `/v1/accounts/${fresh}/auto_refill`, { amount: 10, usd_charge: 1 }],
        ];
        for (const [method, path, body] of bad)
          assertError(await h.request(method, path, { auth: co.auth, body }), 400, 'invalid_request');
        assertError(
          await h.request('PUT', `/v1/accounts/${fresh}/balance/gold/autorefill`, {
            auth: co.auth,
            body: { amount: 1, usd_charge: 1 },
          }),
          404,
          'not_found',
        );
        const untouched = await balance(h, co, fresh);
        assert.deepEqual(
          [untouched.refill_threshold, untouched.refill_amount, untouched.refill_usd_amount, untouched.refill_monthly],
          [null, null, null, false],
        );
      },
    );

    test('charges are listed newest first with cursor paging', async () => {
      const acc = await accountWithBalance(100);
      await putAutoRefill(h, co, acc, 'tokens', { threshold: 1000, amount: 1, usd_charge: 50 });
      for (let i = 0; i < 3; i++) {
        await spend(h, co, acc, 1);
        await runDue(h, co);
      }
      const first = await h.request('GET', `/v1/accounts/${acc}/charges?limit=2`, { auth: co.auth });
      assert.equal(first.status, 200, first.text);
      assert.equal(first.body.data.length, 2);
      assert.equal(first.body.has_more, true);
      assert.deepEqual(Object.keys(first.body.data[0]).sort(), [
        'charge_id',
        'created_at',
        'denomination',
        'failure_code',
        'failure_reason',
        'next_action_url',
        'reason',
        'receipt_number',
        'status',
        'usd_amount',
      ]);
      const second = await h.request(
        'GET',
        `/v1/accounts/${acc}/charges?limit=2&starting_after=${first.body.next_cursor}`,
        { auth: co.auth },
      );
      assert.equal(second.body.data.length, 1);
      assert.equal(second.body.has_more, false);
      const ids = [...first.body.data, ...second.body.data].map((c: { charge_id: string }) => c.charge_id);
      assert.equal(new Set(ids).size, 3);
      assert.ok(ids.every((id: string) => id.startsWith('ch_')));
      assertError(await h.request('GET', `/v1/accounts/${acc}/charges?starting_after=ch_nope`, { auth: co.auth }), 400);
      const other = await signUpCompany(h, 'Other');
      assertError(await h.request('GET', `/v1/accounts/${acc}/charges`, { auth: other.auth }), 404, 'not_found');
    });
  });
}
