/**
 * The `stripe` processor: an adapter over the official Stripe SDK using the company's
 * restricted key. Charges are PaymentIntents confirmed at once. Without the customer (refills,
 * plan charges) they are off-session, so a bank that wants the cardholder present makes the
 * charge fail (authentication_required, the PaymentIntent named so the customer can complete it
 * later: stripe-actions.ts); with the customer present (a portal top-up) they are confirmed on
 * session with a `return_url`, and a bank that asks for 3-D Secure leaves them `requires_action`
 * at Stripe's hosted page. Every call carries an idempotency key, which is what makes the SDK's
 * automatic network retries safe: a retried request can never charge twice.
 */
import Stripe from 'stripe';
import { StripeCustomerActions } from './stripe-actions.js';
import {
  processorErrorFromStripe,
  redirectUrlOf,
  type StepResult,
  step,
  stripeCode,
  stripeIdempotencyKey,
} from './stripe-calls.js';
import type {
  CardDetails,
  ChargeAccepted,
  ChargeInput,
  PaymentProcessor,
  ProcessorError,
  ProcessorResult,
} from './types.js';
import { fail, ok } from './types.js';

export { processorErrorFromStripe, STRIPE_IDEMPOTENCY_KEY_MAX_CHARS } from './stripe-calls.js';

/** Retries of one request by the SDK (connection errors, 409, 5xx); safe with idempotency keys. */
export const STRIPE_MAX_NETWORK_RETRIES = 2;
/** Below the SDK's 80 s default: a worker holding a refill should learn of an outage sooner. */
export const STRIPE_REQUEST_TIMEOUT_MS = 30_000;

/** Where the SDK connects; tests point it at a local fake Stripe. */
export interface StripeConnectionOptions {
  host?: string;
  port?: number | string;
  protocol?: 'http' | 'https';
  maxNetworkRetries?: number;
  timeoutMs?: number;
}

/** A token Stripe does not know (or already spent) is the caller's bad token, not a bad request. */
function asTokenError(error: ProcessorError, rawCode: string | undefined): ProcessorError {
  const tokenCodes = ['resource_missing', 'token_already_used'];
  if (error.code !== 'invalid_request' || !rawCode || !tokenCodes.includes(rawCode)) return error;
  return { code: 'invalid_token', message: error.message, retryable: false };
}

function cardDetails(pm: Stripe.PaymentMethod): ProcessorResult<CardDetails> {
  if (!pm.card) return fail('invalid_token', `payment method ${pm.id} is not a card`);
  return ok({
    paymentMethodId: pm.id,
    brand: pm.card.brand,
    last4: pm.card.last4,
    expMonth: pm.card.exp_month,
    expYear: pm.card.exp_year,
  });
}

/**
 * Only `succeeded` moved money. On session, `requires_action` waits for the customer: at Stripe's hosted page when
 * the next action is a redirect (`nextActionUrl`), else (`use_stripe_sdk`, which only Stripe's client SDKs show) at
 * the engine's page, which confirms it again on session to get one. Off session, it is the cardholder's missing
 * authentication, like the card error Stripe more often answers; every other status is reported as why it failed.
 */
function chargeOutcome(pi: Stripe.PaymentIntent, onSession: boolean): ProcessorResult<ChargeAccepted> {
  switch (pi.status) {
    case 'succeeded':
      return ok({ chargeRef: pi.id });
    case 'requires_action':
    case 'requires_confirmation': {
      const url = redirectUrlOf(pi);
      if (onSession) return ok({ chargeRef: pi.id, requiresAction: true, ...(url !== null && { nextActionUrl: url }) });
      const message = `payment ${pi.id} needs the cardholder to authenticate`;
      return { ok: false, error: { code: 'authentication_required', message, retryable: false, chargeRef: pi.id } };
    }
    case 'requires_payment_method':
      return fail('card_declined', pi.last_payment_error?.message ?? `payment ${pi.id} was declined`);
    default:
      return fail('processor_unavailable', `payment ${pi.id} is ${pi.status}, not succeeded`);
  }
}

export class StripeProcessor implements PaymentProcessor {
  readonly name = 'stripe' as const;
  readonly customerActions: StripeCustomerActions;
  private readonly stripe: Stripe;

  constructor(apiKey: string, connection: StripeConnectionOptions = {}) {
    const { maxNetworkRetries, timeoutMs, ...where } = connection;
    this.stripe = new Stripe(apiKey, {
      ...where,
      maxNetworkRetries: maxNetworkRetries ?? STRIPE_MAX_NETWORK_RETRIES,
      timeout: timeoutMs ?? STRIPE_REQUEST_TIMEOUT_MS,
    });
    this.customerActions = new StripeCustomerActions(this.stripe);
  }

  async createCustomer(input: {
    name: string | null;
    email: string | null;
    metadata?: Record<string, string>;
    idempotencyKey: string;
  }): Promise<ProcessorResult<{ customerId: string }>> {
    const params: Stripe.CustomerCreateParams = {
      ...(input.name !== null && { name: input.name }),
      ...(input.email !== null && { email: input.email }),
      ...(input.metadata && { metadata: input.metadata }),
    };
    const options = { idempotencyKey: stripeIdempotencyKey(input.idempotencyKey) };
    const created = await step(() => this.stripe.customers.create(params, options));
    return created.ok ? ok({ customerId: created.value.id }) : created;
  }

  /** Three calls, each with its own key derived from the caller's, so a retry resumes safely. */
  async attachCard(input: {
    customerId: string;
    token: string;
    idempotencyKey: string;
  }): Promise<ProcessorResult<CardDetails>> {
    const created = await this.createPaymentMethod(input.token, input.idempotencyKey);
    if (!created.ok) return created;
    const attachKey = stripeIdempotencyKey(input.idempotencyKey, 'attach');
    const attached = await step(() =>
      this.stripe.paymentMethods.attach(
        created.value.id,
        { customer: input.customerId },
        { idempotencyKey: attachKey },
      ),
    );
    if (!attached.ok) return attached;
    const defaulted = await this.makeDefault(input.customerId, attached.value.id, input.idempotencyKey);
    return defaulted.ok ? cardDetails(attached.value) : defaulted;
  }

  async charge(input: ChargeInput): Promise<ProcessorResult<ChargeAccepted>> {
    if (!Number.isSafeInteger(input.usdCents) || input.usdCents <= 0) {
      return fail('invalid_request', `charge amount must be a positive integer of cents, got ${input.usdCents}`);
    }
    // With the customer present (and somewhere to bring them back), on session: the bank may ask them to authenticate.
    const onSession = input.customerPresent === true && input.returnUrl !== undefined;
    const params: Stripe.PaymentIntentCreateParams = {
      amount: input.usdCents,
      currency: 'usd',
      customer: input.customerId,
      payment_method: input.paymentMethodId,
      description: input.description,
      ...(input.metadata && { metadata: input.metadata }),
      confirm: true,
      ...(onSession
        ? // Redirects allowed: 3-D Secure is Stripe's hosted page, which sends the browser back to return_url.
          { automatic_payment_methods: { enabled: true }, return_url: input.returnUrl }
        : // Nobody is present to follow a redirect, and without this Stripe demands a return_url.
          { automatic_payment_methods: { enabled: true, allow_redirects: 'never' as const }, off_session: true }),
    };
    const options = { idempotencyKey: stripeIdempotencyKey(input.idempotencyKey) };
    const created = await step(() => this.stripe.paymentIntents.create(params, options));
    return created.ok ? chargeOutcome(created.value, onSession) : created;
  }

  private async createPaymentMethod(token: string, idempotencyKey: string): Promise<StepResult<Stripe.PaymentMethod>> {
    const options = { idempotencyKey: stripeIdempotencyKey(idempotencyKey, 'payment_method') };
    try {
      return ok(await this.stripe.paymentMethods.create({ type: 'card', card: { token } }, options));
    } catch (err) {
      return { ok: false, error: asTokenError(processorErrorFromStripe(err), stripeCode(err)) };
    }
  }

  /** Off-session charges and Stripe invoices both pick up the customer's default card. */
  private async makeDefault(
    customerId: string,
    paymentMethodId: string,
    idempotencyKey: string,
  ): Promise<StepResult<Stripe.Customer>> {
    const options = { idempotencyKey: stripeIdempotencyKey(idempotencyKey, 'default_payment_method') };
    const params = { invoice_settings: { default_payment_method: paymentMethodId } };
    return step(() => this.stripe.customers.update(customerId, params, options));
  }
}

export function createStripeProcessor(apiKey: string, connection?: StripeConnectionOptions): PaymentProcessor {
  return new StripeProcessor(apiKey, connection);
}

/** A company set to `stripe` without a key: every call is refused as a value, none reaches Stripe. */
export function createUnconfiguredStripeProcessor(): PaymentProcessor {
  const refuse = async <T>(): Promise<ProcessorResult<T>> =>
    fail('invalid_request', 'the company has no Stripe API key configured');
  const customerActions = { paymentState: refuse, resumeWithCustomer: refuse, abandon: refuse };
  return { name: 'stripe', createCustomer: refuse, attachCard: refuse, charge: refuse, customerActions };
}
