// Guarantee: the sandbox processor gives the contract's card outcomes deterministically, as values, with no network and
// no state shared between processes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { usdCents } from '../../src/domain/money.js';
import { processorFactory } from '../../src/processors/index.js';
import { SANDBOX_CARD_EXP_MONTH, SANDBOX_CARD_EXP_YEAR, createSandboxProcessor } from '../../src/processors/sandbox.js';
import type { CardDetails, ProcessorResult } from '../../src/processors/types.js';

const sandbox = createSandboxProcessor();

function value<T>(result: ProcessorResult<T>): T {
  assert.ok(result.ok, `expected success, got ${JSON.stringify(result)}`);
  return result.value;
}

async function customerId(): Promise<string> {
  return value(await sandbox.createCustomer({ name: 'Ada', email: 'ada@example.com', idempotencyKey: 'k' })).customerId;
}

async function attach(token: string, key = `attach-${token}`): Promise<ProcessorResult<CardDetails>> {
  return sandbox.attachCard({ customerId: await customerId(), token, idempotencyKey: key });
}

function charge(paymentMethodId: string, cents: number, idempotencyKey = 'charge-1') {
  return sandbox.charge({
    customerId: 'cus_sandbox_x',
    paymentMethodId,
    usdCents: usdCents(cents),
    description: 'refill',
    idempotencyKey,
  });
}

test('createCustomer returns a new cus_sandbox_ id each time', async () => {
  const a = await customerId();
  const b = await customerId();
  assert.match(a, /^cus_sandbox_[0-9a-f]+$/);
  assert.notEqual(a, b);
});

test('tok_visa and tok_mastercard attach with their brand and last4, then charge', async () => {
  for (const [token, brand, last4] of [
    ['tok_visa', 'visa', '4242'],
    ['tok_mastercard', 'mastercard', '4444'],
  ] as const) {
    const card = value(await attach(token));
    assert.deepEqual(
      { brand: card.brand, last4: card.last4, expMonth: card.expMonth, expYear: card.expYear },
      { brand, last4, expMonth: SANDBOX_CARD_EXP_MONTH, expYear: SANDBOX_CARD_EXP_YEAR },
    );
    assert.match(value(await charge(card.paymentMethodId, 1000)).chargeRef, /^ch_sandbox_/);
  }
});

test('tok_chargeCustomerFail attaches, then every charge is declined, even from another instance', async () => {
  const card = value(await attach('tok_chargeCustomerFail'));
  assert.equal(card.brand, 'visa');
  assert.equal(card.last4, '0341');
  const elsewhere = createSandboxProcessor();
  for (const key of ['a', 'b']) {
    const result = await elsewhere.charge({
      customerId: 'cus_sandbox_x',
      paymentMethodId: card.paymentMethodId,
      usdCents: usdCents(500),
      description: 'refill',
      idempotencyKey: key,
    });
    assert.deepEqual(result.ok ? null : { code: result.error.code, retryable: result.error.retryable }, {
      code: 'card_declined',
      retryable: false,
    });
  }
});

test('tok_chargeDeclined is declined at attach', async () => {
  const result = await attach('tok_chargeDeclined');
  assert.equal(result.ok, false);
  assert.equal(!result.ok && result.error.code, 'card_declined');
});

test('any other token is invalid_token', async () => {
  for (const token of ['tok_unknown', '', 'tok_authenticationRequired', 'toString']) {
    const result = await attach(token);
    assert.equal(!result.ok && result.error.code, 'invalid_token', token);
  }
});

test('a charge of zero or negative cents is invalid_request', async () => {
  const card = value(await attach('tok_visa'));
  for (const cents of [0, -1]) {
    const result = await charge(card.paymentMethodId, cents);
    assert.equal(!result.ok && result.error.code, 'invalid_request', String(cents));
  }
});

test('a payment method the sandbox never issued is invalid_request', async () => {
  const result = await charge('pm_card_visa', 1000);
  assert.equal(!result.ok && result.error.code, 'invalid_request');
});

test('the same idempotency key gives the same payment method and charge ref', async () => {
  const customer = await customerId();
  const first = value(await sandbox.attachCard({ customerId: customer, token: 'tok_visa', idempotencyKey: 'same' }));
  const again = value(await sandbox.attachCard({ customerId: customer, token: 'tok_visa', idempotencyKey: 'same' }));
  assert.equal(again.paymentMethodId, first.paymentMethodId);
  const ref = value(await charge(first.paymentMethodId, 700, 'same-charge')).chargeRef;
  assert.equal(value(await charge(first.paymentMethodId, 700, 'same-charge')).chargeRef, ref);
  assert.notEqual(value(await charge(first.paymentMethodId, 700, 'other-charge')).chargeRef, ref);
});

test('processorFactory gives sandbox companies the sandbox processor', () => {
  const processor = processorFactory()({ processor: 'sandbox', processorApiKey: null });
  assert.equal(processor.name, 'sandbox');
});
