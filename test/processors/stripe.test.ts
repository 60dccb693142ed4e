// Guarantee: the Stripe processor, driving the real SDK over HTTP, charges each idempotency key at most once and
// returns every expected failure as a value, never a throw.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { usdCents } from '../../src/domain/money.js';
import { processorFactory } from '../../src/processors/index.js';
import { createStripeProcessor } from '../../src/processors/stripe.js';
import type { CardDetails, PaymentProcessor, ProcessorErrorCode, ProcessorResult } from '../../src/processors/types.js';
import { FAKE_CARD_EXP_MONTH, FAKE_CARD_EXP_YEAR, FAKE_STRIPE_API_KEY, FakeStripe } from '../support/fake-stripe.js';

let fake: FakeStripe;
let stripe: PaymentProcessor;

before(async () => {
  fake = await FakeStripe.start();
  stripe = createStripeProcessor(FAKE_STRIPE_API_KEY, fake.connection);
});
after(() => fake.close());
beforeEach(() => fake.reset());

function value<T>(result: ProcessorResult<T>): T {
  assert.ok(result.ok, `expected success, got ${JSON.stringify(result)}`);
  return result.value;
}

function failure<T>(result: ProcessorResult<T>): { code: ProcessorErrorCode; retryable: boolean } {
  assert.ok(!result.ok, `expected a failure, got ${JSON.stringify(result)}`);
  return { code: result.error.code, retryable: result.error.retryable };
}

async function newCustomer(processor = stripe): Promise<string> {
  const created = await processor.createCustomer({
    name: 'Ada',
    email: 'ada@example.com',
    idempotencyKey: randomUUID(),
  });
  return value(created).customerId;
}

async function cardFor(token: string): Promise<{ customerId: string; card: CardDetails }> {
  const customerId = await newCustomer();
  const card = value(await stripe.attachCard({ customerId, token, idempotencyKey: randomUUID() }));
  return { customerId, card };
}

function chargeOf(customerId: string, card: CardDetails, cents: number, idempotencyKey = randomUUID()) {
  return stripe.charge({
    customerId,
    paymentMethodId: card.paymentMethodId,
    usdCents: usdCents(cents),
    description: 'Auto-refill',
    idempotencyKey,
    metadata: { account_id: 'acct_1' },
  });
}

test('createCustomer creates a Stripe customer under the caller idempotency key', async () => {
  const key = randomUUID();
  const created = value(
    await stripe.createCustomer({
      name: 'Ada',
      email: 'ada@example.com',
      metadata: { account_id: 'a1' },
      idempotencyKey: key,
    }),
  );
  const stored = fake.customers.get(created.customerId);
  assert.deepEqual(
    { name: stored?.name, email: stored?.email, metadata: stored?.metadata },
    { name: 'Ada', email: 'ada@example.com', metadata: { account_id: 'a1' } },
  );
  assert.equal(fake.requestsTo('POST', '/v1/customers')[0]?.idempotencyKey, key);
});

test('createCustomer leaves out a null name and email', async () => {
  value(await stripe.createCustomer({ name: null, email: null, idempotencyKey: randomUUID() }));
  assert.deepEqual(fake.requestsTo('POST', '/v1/customers')[0]?.body, {});
});

test('tok_visa and tok_mastercard attach, become the default card, and report brand/last4/expiry', async () => {
  for (const [token, brand, last4] of [
    ['tok_visa', 'visa', '4242'],
    ['tok_mastercard', 'mastercard', '4444'],
  ] as const) {
    const { customerId, card } = await cardFor(token);
    assert.deepEqual(
      { brand: card.brand, last4: card.last4, expMonth: card.expMonth, expYear: card.expYear },
      { brand, last4, expMonth: FAKE_CARD_EXP_MONTH, expYear: FAKE_CARD_EXP_YEAR },
    );
    assert.equal(fake.paymentMethods.get(card.paymentMethodId)?.customer, customerId);
    assert.equal(fake.customers.get(customerId)?.invoice_settings.default_payment_method, card.paymentMethodId);
    assert.deepEqual(fake.requestsTo('POST', '/v1/payment_methods').at(-1)?.body, { type: 'card', card: { token } });
  }
});

test('tok_chargeCustomerFail attaches', async () => {
  const { card } = await cardFor('tok_chargeCustomerFail');
  assert.equal(card.last4, '0341');
});

test('tok_chargeDeclined is card_declined at attach', async () => {
  const customerId = await newCustomer();
  const result = await stripe.attachCard({ customerId, token: 'tok_chargeDeclined', idempotencyKey: randomUUID() });
  assert.deepEqual(failure(result), { code: 'card_declined', retryable: false });
});

test('an unknown token is invalid_token', async () => {
  const customerId = await newCustomer();
  const result = await stripe.attachCard({ customerId, token: 'tok_nope', idempotencyKey: randomUUID() });
  assert.deepEqual(failure(result), { code: 'invalid_token', retryable: false });
});

test('a charge is an off-session, confirmed USD PaymentIntent for the exact cents', async () => {
  const { customerId, card } = await cardFor('tok_visa');
  const key = randomUUID();
  const { chargeRef } = value(await chargeOf(customerId, card, 1234, key));
  const [request] = fake.requestsTo('POST', '/v1/payment_intents');
  assert.equal(request?.idempotencyKey, key);
  assert.deepEqual(
    request?.body && {
      amount: request.body.amount,
      currency: request.body.currency,
      customer: request.body.customer,
      payment_method: request.body.payment_method,
      off_session: request.body.off_session,
      confirm: request.body.confirm,
      metadata: request.body.metadata,
    },
    {
      amount: '1234',
      currency: 'usd',
      customer: customerId,
      payment_method: card.paymentMethodId,
      off_session: 'true',
      confirm: 'true',
      metadata: { account_id: 'acct_1' },
    },
  );
  assert.deepEqual(
    fake.succeededPaymentIntents().map((pi) => [pi.id, pi.amount_received]),
    [[chargeRef, 1234]],
  );
});

test('a declining card is card_declined, not retryable, and moves no money', async () => {
  const { customerId, card } = await cardFor('tok_chargeCustomerFail');
  assert.deepEqual(failure(await chargeOf(customerId, card, 1000)), { code: 'card_declined', retryable: false });
  assert.equal(fake.succeededPaymentIntents().length, 0);
});

test('a card that needs the cardholder is authentication_required, as an error or as requires_action', async () => {
  for (const mode of ['card_error', 'requires_action'] as const) {
    fake.authenticationMode = mode;
    const { customerId, card } = await cardFor('tok_authenticationRequired');
    assert.deepEqual(
      failure(await chargeOf(customerId, card, 1000)),
      {
        code: 'authentication_required',
        retryable: false,
      },
      mode,
    );
  }
  assert.deepEqual(
    fake.paymentIntents.map((pi) => pi.status),
    ['requires_payment_method', 'requires_action'],
  );
});

test('a charge retried with the same idempotency key charges once', async () => {
  const { customerId, card } = await cardFor('tok_visa');
  const key = randomUUID();
  const first = value(await chargeOf(customerId, card, 2500, key));
  const second = value(await chargeOf(customerId, card, 2500, key));
  assert.equal(second.chargeRef, first.chargeRef);
  assert.equal(fake.paymentIntents.length, 1);
  assert.deepEqual(
    fake.requestsTo('POST', '/v1/payment_intents').map((r) => r.replayed),
    [false, true],
  );
});

test('a transient 500 is retried by the SDK with the same key and charges once', async () => {
  const { customerId, card } = await cardFor('tok_visa');
  fake.failNext(1, 'http_500', '/v1/payment_intents');
  value(await chargeOf(customerId, card, 1500));
  const attempts = fake.requestsTo('POST', '/v1/payment_intents');
  assert.deepEqual(
    attempts.map((r) => r.fault),
    ['http_500', null],
  );
  assert.equal(attempts[0]?.idempotencyKey, attempts[1]?.idempotencyKey);
  assert.equal(fake.paymentIntents.length, 1);
});

test('a response lost after the charge is retried and replayed, not charged again', async () => {
  const { customerId, card } = await cardFor('tok_visa');
  fake.failNext(1, 'drop_after', '/v1/payment_intents');
  const { chargeRef } = value(await chargeOf(customerId, card, 1500));
  assert.deepEqual(
    fake.requestsTo('POST', '/v1/payment_intents').map((r) => r.replayed),
    [false, true],
  );
  assert.deepEqual(
    fake.paymentIntents.map((pi) => pi.id),
    [chargeRef],
  );
});

test('an outage outlasting the SDK retries is processor_unavailable and retryable with the same key', async () => {
  const { customerId, card } = await cardFor('tok_visa');
  const key = randomUUID();
  fake.failNext(3, 'http_500', '/v1/payment_intents');
  assert.deepEqual(failure(await chargeOf(customerId, card, 900, key)), {
    code: 'processor_unavailable',
    retryable: true,
  });
  assert.equal(fake.paymentIntents.length, 0);
  value(await chargeOf(customerId, card, 900, key));
  assert.equal(fake.paymentIntents.length, 1);
});

test('a dropped connection during attach is retried without a second payment method', async () => {
  const customerId = await newCustomer();
  fake.failNext(1, 'drop_before', '/v1/payment_methods');
  value(await stripe.attachCard({ customerId, token: 'tok_visa', idempotencyKey: randomUUID() }));
  assert.equal(fake.paymentMethods.size, 1);
});

test('a wrong API key is an error value, not a throw, and the message does not echo the key', async () => {
  const wrongKey = 'rk_test_wrong_key_9876';
  const wrong = createStripeProcessor(wrongKey, fake.connection);
  const result = await wrong.createCustomer({ name: null, email: null, idempotencyKey: randomUUID() });
  assert.deepEqual(failure(result), { code: 'invalid_request', retryable: false });
  assert.ok(!result.ok && !result.error.message.includes('9876'));
  assert.equal(fake.customers.size, 0);
});

test('amounts Stripe refuses are invalid_request: non-positive locally, below its minimum remotely', async () => {
  const { customerId, card } = await cardFor('tok_visa');
  assert.deepEqual(failure(await chargeOf(customerId, card, 0)), { code: 'invalid_request', retryable: false });
  assert.equal(fake.requestsTo('POST', '/v1/payment_intents').length, 0);
  assert.deepEqual(failure(await chargeOf(customerId, card, 10)), { code: 'invalid_request', retryable: false });
});

test('reusing an idempotency key for a different amount is refused, not charged', async () => {
  const { customerId, card } = await cardFor('tok_visa');
  const key = randomUUID();
  value(await chargeOf(customerId, card, 1000, key));
  assert.deepEqual(failure(await chargeOf(customerId, card, 2000, key)), { code: 'invalid_request', retryable: false });
  assert.equal(fake.paymentIntents.length, 1);
});

test(
  'processorFactory gives stripe companies a Stripe ' + 'processor, refusing as a value when the key is missing',
  async () => {
    const factory = processorFactory({ stripe: fake.connection });
    const configured = factory({ processor: 'stripe', processorApiKey: FAKE_STRIPE_API_KEY });
    assert.equal(configured.name, 'stripe');
    assert.equal(factory({ processor: 'stripe', processorApiKey: FAKE_STRIPE_API_KEY }), configured);
    await newCustomer(configured);
    assert.equal(fake.customers.size, 1);
    const unconfigured = factory({ processor: 'stripe', processorApiKey: null });
    const refused = await unconfigured.createCustomer({ name: null, email: null, idempotencyKey: randomUUID() });
    assert.deepEqual(failure(refused), { code: 'invalid_request', retryable: false });
    assert.equal(fake.requests.length, 1);
  },
);

test("with the customer present, a 3-D Secure card waits at Stripe's hosted page; given up: cancelled", async () => {
  const { customerId, card } = await cardFor('tok_authenticationRequired');
  const returnUrl = 'https://billing.example.com/stripe/return?charge_id=ch_1';
  const accepted = value(
    await stripe.charge({
      customerId,
      paymentMethodId: card.paymentMethodId,
      usdCents: usdCents(1000),
      description: 'Credit pack',
      idempotencyKey: randomUUID(),
      customerPresent: true,
      returnUrl,
    }),
  );
  const pi = fake.paymentIntent(accepted.chargeRef)!;
  assert.deepEqual(accepted, { chargeRef: pi.id, requiresAction: true, nextActionUrl: fake.hostedPageUrl(pi) });
  const [request] = fake.requestsTo('POST', '/v1/payment_intents');
  assert.deepEqual(
    [request?.body.off_session, request?.body.return_url, request?.body.automatic_payment_methods],
    [undefined, returnUrl, { enabled: 'true' }],
    'on session, redirects allowed',
  );
  const actions = stripe.customerActions!;
  assert.deepEqual(value(await actions.paymentState({ chargeRef: pi.id })), {
    status: 'waiting',
    redirectUrl: fake.hostedPageUrl(pi),
  });
  const given = value(await actions.abandon({ chargeRef: pi.id, idempotencyKey: 'ch_1' }));
  assert.equal(given.status, 'failed');
  assert.equal(pi.status, 'canceled');
});

test('an off-session charge the card refused for want of the cardholder is brought back on session', async () => {
  for (const mode of ['card_error', 'requires_action'] as const) {
    fake.authenticationMode = mode;
    const { customerId, card } = await cardFor('tok_authenticationRequired');
    const refused = await chargeOf(customerId, card, 1000);
    assert.ok(!refused.ok && refused.error.chargeRef !== undefined, `${mode}: names its PaymentIntent`);
    const chargeRef = refused.error.chargeRef;
    const key = randomUUID();
    const actions = stripe.customerActions!;
    assert.deepEqual(value(await actions.paymentState({ chargeRef })), { status: 'waiting', redirectUrl: null });
    const resume = {
      chargeRef,
      paymentMethodId: card.paymentMethodId,
      returnUrl: 'https://b.example/r',
      idempotencyKey: key,
    };
    const page = fake.hostedPageUrl({ id: chargeRef });
    assert.deepEqual(value(await actions.resumeWithCustomer(resume)), { status: 'waiting', redirectUrl: page }, mode);
    assert.deepEqual(value(await actions.resumeWithCustomer(resume)), { status: 'waiting', redirectUrl: page });
    assert.equal(fake.requestsTo('POST', `/v1/payment_intents/${chargeRef}/confirm`).length, 1, 'confirmed once');
    const answered = await fetch(page, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'decision=approve',
    });
    assert.equal(answered.status, 303);
    assert.match(answered.headers.get('location') ?? '', /^https:\/\/b\.example\/r\?payment_intent=pi_/);
    assert.deepEqual(value(await actions.paymentState({ chargeRef })), { status: 'succeeded' });
    // Too late to give it up: Stripe refuses to cancel a payment that succeeded, and says so.
    assert.deepEqual(value(await actions.abandon({ chargeRef, idempotencyKey: key })), { status: 'succeeded' });
  }
});
