// Guarantee: end to end over the real Stripe SDK (against a local fake Stripe), a card attaches to a customer created
// for the account and a threshold refill charges once, off-session, under the charge id as idempotency key — even when
// a response is lost — on both databases.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { processorFactory } from '../../src/processors/index.js';
import { FAKE_STRIPE_API_KEY, FakeStripe } from '../support/fake-stripe.js';
import { HTTP_DIALECTS, assertError, signUpStripeCompany, startHarness, type Harness } from '../support/harness.js';
import {
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

for (const dialect of HTTP_DIALECTS) {
  describe(`Stripe end to end (${dialect})`, () => {
    let fake: FakeStripe;
    let h: Harness;
    let co: Co;
    before(async () => {
      fake = await FakeStripe.start();
      h = await startHarness(
        dialect,
        {},
        10_000,
        processorFactory({ stripe: { ...fake.connection, maxNetworkRetries: 2 } }),
      );
      co = await signUpStripeCompany(h, FAKE_STRIPE_API_KEY);
    });
    after(async () => {
      await h.close();
      await fake.close();
    });
    afterEach(async () => h.audit());

    test(
      'card attach creates the customer; a threshold refill is ' +
        'one off-session PaymentIntent keyed by the charge id',
      async () => {
        const acc = (await createAccount(h, co, { name: 'Ada', email: 'ada@example.com' })).account_id;
        await createBalance(h, co, acc, 'tokens', 1000);
        const card = await attachCard(h, co, acc, 'tok_visa');
        assert.deepEqual([card.brand, card.last4], ['visa', '4242']);
        const customerId = (await h.request('GET', `/v1/accounts/${acc}`, { auth: co.auth })).body.data
          .processor_id as string;
        assert.ok(fake.customers.has(customerId), 'the customer exists at Stripe');
        assert.equal(fake.customers.get(customerId)!.email, 'ada@example.com');

        await putAutoRefill(h, co, acc, 'tokens', { threshold: 500, amount: 1000, usd_charge: 1500 });
        await spend(h, co, acc, 100, 'tokens', 6);
        await spend(h, co, acc, 100);
        // The first response from Stripe is lost after the work was done: the SDK retries under the same key.
        fake.failNext(1, 'drop_after', '/v1/payment_intents');
        await runDue(h, co);
        assert.equal((await balance(h, co, acc)).amount, 1300);
        const [charge] = await charges(h, co, acc);
        assert.equal(charge!.status, 'succeeded');
        const posts = fake.requestsTo('POST', '/v1/payment_intents');
        assert.ok(posts.length >= 2, 'the lost response was retried');
        assert.ok(
          posts.every((p) => p.idempotencyKey === charge!.charge_id),
          'every attempt carries the charge id as idempotency key',
        );
        const paid = fake.succeededPaymentIntents();
        assert.equal(paid.length, 1, 'charged exactly once');
        assert.equal(paid[0]!.amount, 1500);
        assert.equal(paid[0]!.customer, customerId);
        assert.equal(posts[0]!.body.off_session, 'true');
        assert.equal(posts[0]!.body.confirm, 'true');
      },
    );

    test('at Stripe too: a declined card at attach is 402 and a declining card records failed refills', async () => {
      const acc = (await createAccount(h, co)).account_id;
      await createBalance(h, co, acc, 'tokens', 100);
      assertError(
        await h.request('POST', `/v1/accounts/${acc}/card`, { auth: co.auth, body: { token: 'tok_chargeDeclined' } }),
        402,
        'payment_failed',
      );
      assertError(
        await h.request('POST', `/v1/accounts/${acc}/card`, { auth: co.auth, body: { token: 'tok_nonsense' } }),
        400,
        'invalid_request',
      );
      await attachCard(h, co, acc, 'tok_chargeCustomerFail');
      await putAutoRefill(h, co, acc, 'tokens', { threshold: 500, amount: 1000, usd_charge: 1500 });
      await spend(h, co, acc, 10);
      await runDue(h, co);
      assert.deepEqual(
        (await charges(h, co, acc)).map((c) => [c.status, c.failure_code]),
        [['failed', 'card_declined']],
      );
      assert.equal((await balance(h, co, acc)).amount, 90);
    });

    test('a plan charge declined on one card is collected on the next card attached, once', async () => {
      const plan = await h.request('POST', `/v1/companies/${co.companyId}/plan`, {
        auth: co.auth,
        body: {
          name: 'Pro',
          charge_amount: 2000,
          charge_denomination: 'USD',
          billing_period: 'month',
          balances: [{ amount: '1000', denomination: 'tokens', overage_charge_amount: 2 }],
        },
      });
      assert.equal(plan.status, 200, plan.text);
      const acc = (await createAccount(h, co, { plan_id: plan.body.data.plan_id })).account_id;
      await attachCard(h, co, acc, 'tok_chargeCustomerFail');
      await runDue(h, co);
      assert.deepEqual(
        (await charges(h, co, acc)).map((c) => [c.reason, c.status, c.failure_code]),
        [['plan', 'requires_payment_method', 'card_declined']],
      );
      // The new card's attempt is a request of its own at Stripe: the first attempt's key would replay its
      // decline, or be refused for other parameters.
      await attachCard(h, co, acc, 'tok_visa');
      await runDue(h, co);
      assert.deepEqual(
        (await charges(h, co, acc)).map((c) => [c.reason, c.status]),
        [['plan', 'succeeded']],
      );
      const paid = fake.paymentIntents.filter((pi) => pi.status === 'succeeded' && pi.amount === 2000);
      assert.equal(paid.length, 1, 'charged once');
    });
  });
}
