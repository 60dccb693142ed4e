/**
 * The `sandbox` processor: no network, deterministic outcomes, no state. Everything a later
 * charge needs to know about a card is encoded in the payment method id it hands out, so a
 * card attached in one process charges the same way in any other.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { CardDetails, ChargeAccepted, ChargeInput, PaymentProcessor, ProcessorResult } from './types.js';
import { fail, ok } from './types.js';

/** Sandbox cards never expire within the life of a test; fixed so outcomes never read a clock. */
export const SANDBOX_CARD_EXP_MONTH = 12;
export const SANDBOX_CARD_EXP_YEAR = 2034;
const RANDOM_ID_BYTES = 12;
const DERIVED_ID_HEX_CHARS = 24;

/** Which behaviour a sandbox payment method has; written into its id. */
type CardScenario = 'visa' | 'mastercard' | 'chargeCustomerFail' | 'authRequired';

interface SandboxToken {
  scenario: CardScenario | 'declinedAtAttach';
  brand: string;
  last4: string;
}

const SANDBOX_TOKENS: Readonly<Record<string, SandboxToken>> = {
  tok_visa: { scenario: 'visa', brand: 'visa', last4: '4242' },
  tok_mastercard: { scenario: 'mastercard', brand: 'mastercard', last4: '4444' },
  tok_chargeCustomerFail: { scenario: 'chargeCustomerFail', brand: 'visa', last4: '0341' },
  tok_chargeDeclined: { scenario: 'declinedAtAttach', brand: 'visa', last4: '0002' },
  // Asks for 3-D Secure on every charge: with the customer present, requires_action; without, a failure.
  tok_authRequired: { scenario: 'authRequired', brand: 'visa', last4: '3155' },
};

const CARD_SCENARIOS: readonly CardScenario[] = ['visa', 'mastercard', 'chargeCustomerFail', 'authRequired'];
const PAYMENT_METHOD_ID = /^pm_sandbox_([A-Za-z]+)_[0-9a-f]+$/;

/** Same inputs give the same id, so a retried call with the same idempotency key is a no-op. */
function derivedId(prefix: string, ...parts: string[]): string {
  const digest = createHash('sha256').update(parts.join('\u0000')).digest('hex');
  return `${prefix}${digest.slice(0, DERIVED_ID_HEX_CHARS)}`;
}

function scenarioOf(paymentMethodId: string): CardScenario | null {
  const match = PAYMENT_METHOD_ID.exec(paymentMethodId);
  const scenario = match?.[1];
  return CARD_SCENARIOS.find((s) => s === scenario) ?? null;
}

async function createCustomer(): Promise<ProcessorResult<{ customerId: string }>> {
  return ok({ customerId: `cus_sandbox_${randomBytes(RANDOM_ID_BYTES).toString('hex')}` });
}

async function attachCard(input: {
  customerId: string;
  token: string;
  idempotencyKey: string;
}): Promise<ProcessorResult<CardDetails>> {
  const card = Object.hasOwn(SANDBOX_TOKENS, input.token) ? SANDBOX_TOKENS[input.token] : undefined;
  if (!card) return fail('invalid_token', `unknown card token: ${input.token}`);
  if (card.scenario === 'declinedAtAttach') return fail('card_declined', 'your card was declined');
  const prefix = `pm_sandbox_${card.scenario}_`;
  return ok({
    paymentMethodId: derivedId(prefix, input.customerId, input.token, input.idempotencyKey),
    brand: card.brand,
    last4: card.last4,
    expMonth: SANDBOX_CARD_EXP_MONTH,
    expYear: SANDBOX_CARD_EXP_YEAR,
  });
}

async function charge(input: ChargeInput): Promise<ProcessorResult<ChargeAccepted>> {
  if (!Number.isSafeInteger(input.usdCents) || input.usdCents <= 0) {
    return fail('invalid_request', `charge amount must be a positive integer of cents, got ${input.usdCents}`);
  }
  const scenario = scenarioOf(input.paymentMethodId);
  if (!scenario) return fail('invalid_request', `unknown payment method: ${input.paymentMethodId}`);
  if (scenario === 'chargeCustomerFail') return fail('card_declined', 'your card was declined');
  if (scenario === 'authRequired' && !input.customerPresent)
    return fail('authentication_required', 'the card asks the customer to authenticate (3-D Secure)');
  const chargeRef = derivedId(
    'ch_sandbox_',
    input.customerId,
    input.paymentMethodId,
    String(input.usdCents),
    input.idempotencyKey,
  );
  return ok(scenario === 'authRequired' ? { chargeRef, requiresAction: true } : { chargeRef });
}

export function createSandboxProcessor(): PaymentProcessor {
  return { name: 'sandbox', createCustomer, attachCard, charge };
}
