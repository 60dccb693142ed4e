// Guarantee: a plan configures a new account's balances and charges it at once (or when a card arrives), and renews it
// monthly under the day rule — overage charged postpay, reset or rollover, charged again, one threshold alert per
// period — on both databases.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { HTTP_DIALECTS, assertError, signUpCompany, startHarness, type Harness } from '../support/harness.js';
import {
  FUTURE_YEAR,
  advanceTo,
  attachCard,
  balance,
  charges,
  createAccount,
  iso,
  runDue,
  spend,
  transactions,
  type Co,
} from '../support/money.js';
import { createWebhook, notificationsOf, startReceiver } from '../support/webhooks.js';

const PLAN = {
  name: 'Pro',
  charge_amount: 2000,
  charge_denomination: 'USD',
  billing_period: 'month',
  overage_charge_mode: 'postpay',
  threshold_alert_percentage: '20',
  balances: [{ amount: '1000', denomination: 'tokens', overage_charge_amount: 2, overage_charge_denomination: 'usd' }],
};

async function createPlan(h: Harness, co: Co, body: Record<string, unknown> = PLAN, path = 'plan'): Promise<string> {
  const r = await h.request('POST', `/v1/companies/${co.companyId}/${path}`, { auth: co.auth, body });
  assert.equal(r.status, 200, r.text);
  return r.body.data.plan_id;
}

/** Each scenario company's subscriptions of the notification types the scenarios read back. */
const subscriptions = new Map<string, Record<string, string>>();

/** The notifications of `type` about one account, oldest first: the spec's fields. */
async function webhooks(h: Harness, co: Co, accountId: string, type: string) {
  const webhookId = subscriptions.get(co.companyId)?.[type];
  assert.ok(webhookId, `the scenario subscribed ${type}`);
  return (await notificationsOf(h, co.auth, webhookId))
    .filter((p) => p.account_id === accountId)
    .map((p) => ({
      account_id: p.account_id,
      denomination: p.account_denomination,
      account_balance: p.account_balance,
      type: p.type,
    }));
}

async function scenario(
  dialect: (typeof HTTP_DIALECTS)[number],
  start: string,
  run: (h: Harness, co: Co) => Promise<void>,
): Promise<void> {
  // These scenarios read a year of notifications back from the delivery log: keep it that long.
  const h = await startHarness(dialect, { BILLING_WEBHOOK_LOG_RETENTION_DAYS: '3650' });
  const rx = await startReceiver();
  try {
    const co = await signUpCompany(h);
    const hooks: Record<string, string> = {};
    for (const type of ['threshold', 'auto_refill'])
      hooks[type] = (await createWebhook(h, co.auth, { type, url: rx.url })).webhook_id;
    subscriptions.set(co.companyId, hooks);
    await advanceTo(h, co, start);
    await run(h, co);
    await h.audit();
  } finally {
    await h.close();
    await rx.close();
  }
}

for (const dialect of HTTP_DIALECTS) {
  describe(`plans (${dialect})`, () => {
    let h: Harness;
    let co: Co;
    before(async () => {
      h = await startHarness(dialect);
      co = await signUpCompany(h);
    });
    after(async () => h.close());
    afterEach(async () => h.audit());

    test('create at /plan or /plans, list and get; USD in any case; rollover defaults to false', async () => {
      const r = await h.request('POST', `/v1/companies/${co.companyId}/plan`, { auth: co.auth, body: PLAN });
      assert.equal(r.status, 200, r.text);
      const plan = r.body.data;
      assert.match(plan.plan_id, /^p_/);
      assert.deepEqual(
        { ...plan, plan_id: 'P', created_at: 'T' },
        {
          plan_id: 'P',
          name: 'Pro',
          charge_amount: 2000,
          charge_denomination: 'usd',
          billing_period: 'month',
          overage_charge_mode: 'postpay',
          threshold_alert_percentage: '20',
          rollover: false,
          created_at: 'T',
          balances: [
            { amount: '1000', denomination: 'tokens', overage_charge_amount: 2, overage_charge_denomination: 'usd' },
          ],
          features: [],
        },
      );
      const second = await createPlan(
        h,
        co,
        {
          name: 'Roll',
          charge_amount: 0,
          rollover: true,
          balances: [{ amount: 5, denomination: 'gpu', overage_charge_amount: 0 }],
        },
        'plans',
      );
      const got = await h.request('GET', `/v1/plans/${second}`, { auth: co.auth });
      assert.equal(got.status, 200, got.text);
      assert.deepEqual(
        [got.body.data.rollover, got.body.data.balances[0].amount, got.body.data.threshold_alert_percentage],
        [true, '5', null],
      );
      const list = await h.request('GET', `/v1/companies/${co.companyId}/plans?limit=1`, { auth: co.auth });
      assert.equal(list.status, 200, list.text);
      assert.deepEqual([list.body.data[0].plan_id, list.body.has_more], [second, true]);
      const rest = await h.request(
        'GET',
        `/v1/companies/${co.companyId}/plans?starting_after=${list.body.next_cursor}`,
        { auth: co.auth },
      );
      assert.deepEqual(
        rest.body.data.map((p: { plan_id: string }) => p.plan_id),
        [plan.plan_id],
      );
      const other = await signUpCompany(h, 'Other');
      assertError(await h.request('GET', `/v1/plans/${second}`, { auth: other.auth }), 404, 'not_found');
      assertError(
        await h.request('GET', `/v1/companies/${co.companyId}/plans`, { auth: other.auth }),
        404,
        'not_found',
      );
      assertError(
        await h.request('POST', `/v1/companies/${co.companyId}/plan`, { auth: other.auth, body: PLAN }),
        404,
        'not_found',
      );
      assertError(
        await h.request('POST', `/v1/companies/${other.companyId}/accounts`, {
          auth: other.auth,
          body: { plan_id: second },
        }),
        400,
        'invalid_request',
      );
    });

    test(
      'bad plans are 400 and create nothing: no balances, ' + 'a negative charge, an unknown billing period, …',
      async () => {
        const before = (await h.request('GET', `/v1/companies/${co.companyId}/plans?limit=100`, { auth: co.auth })).body
          .data.length;
        const entry = PLAN.balances[0]!;
        const bad: [Record<string, unknown>, string][] = [
          [{ ...PLAN, balances: [] }, 'plan_needs_at_least_one_balance'],
          [{ ...PLAN, balances: undefined }, 'plan_needs_at_least_one_balance'],
          [{ ...PLAN, charge_amount: -1 }, 'charge_amount_must_be_a_non_negative_integer'],
          [{ ...PLAN, billing_period: 'fortnight' }, 'unknown_billing_period'],
          [{ ...PLAN, overage_charge_mode: 'prepay' }, 'unknown_overage_charge_mode'],
          [{ ...PLAN, charge_denomination: 'eur' }, 'charge_denomination_must_be_usd'],
          [{ ...PLAN, threshold_alert_percentage: '101' }, 'threshold_alert_percentage_must_be_a_number_from_0_to_100'],
          [{ ...PLAN, balances: [entry, entry] }, 'denomination_appears_twice_in_plan'],
          [{ ...PLAN, balances: [{ ...entry, amount: '-5' }] }, 'plan_balance_amount_must_be_a_non_negative_integer'],
          [{ ...PLAN, balances: [{ ...entry, denomination: 'bad denomination' }] }, 'denomination_is_invalid'],
          [{ ...PLAN, name: '' }, 'name_must_be_a_non_empty_string'],
        ];
        for (const [body, code] of bad) {
          const r = await h.request('POST', `/v1/companies/${co.companyId}/plan`, { auth: co.auth, body });
          assertError(r, 400, 'invalid_request');
          assert.equal(r.body.error.code, code, r.text);
        }
        for (const body of [
          { ...PLAN, colour: 'red' },
          { ...PLAN, charge_amount: 1.5 },
          { ...PLAN, balances: [{ ...entry, extra: 1 }] },
          { ...PLAN, rollover: 'yes' },
        ]) {
          assertError(
            await h.request('POST', `/v1/companies/${co.companyId}/plan`, { auth: co.auth, body }),
            400,
            'invalid_request',
          );
        }
        assertError(
          await h.request('POST', `/v1/companies/${co.companyId}/accounts`, {
            auth: co.auth,
            body: { plan_id: 'p_nope' },
          }),
          400,
          'invalid_request',
        );
        assert.equal(
          (await h.request('GET', `/v1/companies/${co.companyId}/plans?limit=100`, { auth: co.auth })).body.data.length,
          before,
        );
      },
    );

    test(
      'an account created on a plan without a card: balances hold the included amounts, the charge waits for a card ' +
        'and is collected when one is attached',
      async () => {
        const planId = await createPlan(h, co, {
          ...PLAN,
          balances: [...PLAN.balances, { amount: '50', denomination: 'gpu', overage_charge_amount: 10 }],
        });
        const account = await createAccount(h, co, { name: 'Planned', plan_id: planId });
        assert.equal(account.plan_id, planId);
        assert.deepEqual(
          account.balances.map((b) => [(b as unknown as { denomination: string }).denomination, b.amount]),
          [
            ['gpu', 50],
            ['tokens', 1000],
          ],
        );
        const acc = account.account_id;
        assert.deepEqual(
          (await transactions(h, co, acc)).map((t) => [t.kind, t.amount]),
          [['grant', 1000]],
        );
        await runDue(h, co);
        assert.deepEqual(
          (await charges(h, co, acc)).map((c) => [c.reason, c.status, c.usd_amount, c.denomination]),
          [['plan', 'requires_payment_method', 2000, null]],
        );
        await attachCard(h, co, acc, 'tok_visa');
        assert.deepEqual(
          (await charges(h, co, acc)).map((c) => c.status),
          ['pending'],
        );
        await runDue(h, co);
        assert.deepEqual(
          (await charges(h, co, acc)).map((c) => [c.reason, c.status]),
          [['plan', 'succeeded']],
        );
        await attachCard(h, co, acc, 'tok_mastercard');
        await runDue(h, co);
        assert.equal((await charges(h, co, acc)).length, 1, 'collected once');
      },
    );
  });

  describe(`plan renewals over a year (${dialect})`, () => {
    test(
      'reset: overage charged postpay, balance back to the included ' +
        'amount, charged again monthly; one threshold alert ' +
        'per period',
      async () => {
        const Y = FUTURE_YEAR;
        await scenario(dialect, iso(Y, 1, 10, '14:00:00'), async (h, co) => {
          const planId = await createPlan(h, co);
          const acc = (await createAccount(h, co, { name: 'A', plan_id: planId })).account_id;
          await attachCard(h, co, acc, 'tok_visa');
          await runDue(h, co);
          await spend(h, co, acc, 850);
          assert.deepEqual(await webhooks(h, co, acc, 'threshold'), [
            { account_id: acc, denomination: 'tokens', account_balance: 150, type: 'threshold' },
          ]);
          await spend(h, co, acc, 100);
          await spend(h, co, acc, 350);
          assert.equal((await webhooks(h, co, acc, 'threshold')).length, 1, 'only the first drop in a period');
          assert.equal((await balance(h, co, acc)).amount, -300);

          await advanceTo(h, co, iso(Y, 2, 9, '23:59:59'));
          assert.equal((await balance(h, co, acc)).amount, -300, 'not before the day');
          await advanceTo(h, co, iso(Y, 2, 10));
          assert.equal((await balance(h, co, acc)).amount, 1000);
          const after1 = await charges(h, co, acc);
          assert.deepEqual(
            after1.map((c) => [c.reason, c.status, c.usd_amount]),
            [
              ['plan', 'succeeded', 2000],
              ['overage', 'succeeded', 600],
              ['plan', 'succeeded', 2000],
            ],
          );
          const reset = (await transactions(h, co, acc)).at(-1)!;
          assert.deepEqual(
            [reset.kind, reset.amount, reset.balance_after, reset.created_at.slice(0, 10)],
            ['period_reset', 1300, 1000, iso(Y, 2, 10).slice(0, 10)],
          );
          assert.deepEqual(await webhooks(h, co, acc, 'auto_refill'), [
            { account_id: acc, denomination: 'tokens', account_balance: 1000, type: 'auto_refill' },
          ]);

          await spend(h, co, acc, 900);
          assert.equal((await webhooks(h, co, acc, 'threshold')).length, 2, 'a new period alerts again');
          for (let m = 3; m <= 13; m++) await advanceTo(h, co, iso(m > 12 ? Y + 1 : Y, ((m - 1) % 12) + 1, 10));
          const all = await charges(h, co, acc);
          assert.equal(
            all.filter((c) => c.reason === 'plan').length,
            13,
            'charged at creation and on each of 12 renewals',
          );
          assert.deepEqual(
            all.filter((c) => c.reason === 'overage').map((c) => c.usd_amount),
            [600],
          );
          const resets = (await transactions(h, co, acc)).filter((t) => t.kind === 'period_reset');
          assert.deepEqual(
            resets.map((t) => [t.created_at.slice(0, 10), t.amount]),
            [
              [iso(Y, 2, 10).slice(0, 10), 1300],
              [iso(Y, 3, 10).slice(0, 10), 900],
            ],
          );
          assert.equal((await balance(h, co, acc)).amount, 1000);
          assert.equal((await webhooks(h, co, acc, 'auto_refill')).length, 12);
        });
      },
    );

    test(
      'rollover from 31 January: renewals on 1 March, 1 April, …; unused units carry over, overage is charged and ' +
        'not carried',
      async () => {
        const Y = FUTURE_YEAR;
        await scenario(dialect, iso(Y, 1, 31, '20:00:00'), async (h, co) => {
          const planId = await createPlan(h, co, {
            name: 'Roll',
            charge_amount: 500,
            rollover: true,
            balances: [{ amount: '500', denomination: 'tokens', overage_charge_amount: 3 }],
          });
          const acc = (await createAccount(h, co, { plan_id: planId })).account_id;
          await attachCard(h, co, acc, 'tok_visa');
          await spend(h, co, acc, 200);
          await advanceTo(
            h,
            co,
            iso(Y, 2, 28 + (new Date(Date.UTC(Y, 1, 29)).getUTCMonth() === 1 ? 1 : 0), '23:00:00'),
          );
          assert.equal((await balance(h, co, acc)).amount, 300, 'no renewal in February');
          await advanceTo(h, co, iso(Y, 3, 1));
          assert.equal((await balance(h, co, acc)).amount, 800);
          await spend(h, co, acc, 1000);
          await advanceTo(h, co, iso(Y, 4, 1));
          assert.equal((await balance(h, co, acc)).amount, 500, 'debt charged as overage, then the included amount');
          const grants = (await transactions(h, co, acc)).filter((t) => t.kind === 'grant');
          assert.deepEqual(
            grants.map((t) => [t.created_at.slice(0, 10), t.amount]),
            [
              [iso(Y, 1, 31).slice(0, 10), 500],
              [iso(Y, 3, 1).slice(0, 10), 500],
              [iso(Y, 4, 1).slice(0, 10), 700],
            ],
          );
          assert.deepEqual(
            (await charges(h, co, acc)).map((c) => [c.reason, c.usd_amount, c.status]),
            [
              ['plan', 500, 'succeeded'],
              ['plan', 500, 'succeeded'],
              ['overage', 600, 'succeeded'],
              ['plan', 500, 'succeeded'],
            ],
          );
        });
      },
    );

    test('a declined renewal charge waits for a new card and is collected when it arrives', async () => {
      const Y = FUTURE_YEAR;
      await scenario(dialect, iso(Y, 6, 5), async (h, co) => {
        const planId = await createPlan(h, co);
        const acc = (await createAccount(h, co, { plan_id: planId })).account_id;
        await attachCard(h, co, acc, 'tok_chargeCustomerFail');
        await runDue(h, co);
        await advanceTo(h, co, iso(Y, 7, 5));
        assert.deepEqual(
          (await charges(h, co, acc)).map((c) => [c.reason, c.status, c.failure_code]),
          [
            ['plan', 'requires_payment_method', 'card_declined'],
            ['plan', 'requires_payment_method', 'card_declined'],
          ],
        );
        await attachCard(h, co, acc, 'tok_visa');
        await runDue(h, co);
        assert.deepEqual(
          (await charges(h, co, acc)).map((c) => c.status),
          ['succeeded', 'succeeded'],
        );
      });
    });
  });
}
