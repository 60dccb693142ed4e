/**
 * The `stripe` processor: an adapter over the official Stripe SDK using the company's
 * restricted key. Charges are off-session PaymentIntents confirmed at once, so a bank that
 * wants the cardholder present makes the charge fail (authentication_required) instead of
 * leaving it waiting. Every call carries an idempotency key, which is what makes the SDK's
 * automatic network retries safe: a retried request can never charge twice.
 */
import { createHash } from 'node:crypto';
import Stripe from 'stripe';
import type {
  CardDetails,
  ChargeAccepted,
  ChargeInput,
  PaymentProcessor,
  ProcessorError,
  ProcessorResult,
} from './types.js';
import { fail, ok } from './types.js';

/** Retries of one request by the SDK (connection errors, 409, 5xx); safe with idempotency keys. */
export const STRIPE_MAX_NETWORK_RETRIES = 2;
/** Below the SDK's 80 s default: a worker holding a refill should learn of an outage sooner. */
export const STRIPE_REQUEST_TIMEOUT_MS = 30_000;
/** Stripe refuses idempotency keys longer than this. */
export const STRIPE_IDEMPOTENCY_KEY_MAX_CHARS = 255;

/** Where the SDK connects; tests point it at a local fake Stripe. */
export interface StripeConnectionOptions {
  host?: string;
  port?: number | string;
  protocol?: 'http' | 'https';
  maxNetworkRetries?: number;
  timeoutMs?: number;
}

type StepResult<T> = { ok: true; value: T } | { ok: false; error: ProcessorError };

/** Stripe caps key length; an over-long key is replaced by its digest, still one key per input. */
function stripeIdempotencyKey(key: string, step?: string): string {
  const full = step ? `${key}:${step}` : key;
  if (full.length <= STRIPE_IDEMPOTENCY_KEY_MAX_CHARS) return full;
  return `sha256:${createHash('sha256').update(full).digest('hex')}`;
}

function isCardAuthenticationError(err: { code?: string; decline_code?: string }): boolean {
  return err.code === 'authentication_required' || err.decline_code === 'authentication_required';
}

/** Maps the SDK's thrown errors to values; anything that is not a Stripe error is a bug and rethrown. */
export function processorErrorFromStripe(err: unknown): ProcessorError {
  if (!(err instanceof Stripe.errors.StripeError)) throw err;
  switch (err.type) {
    case 'StripeCardError':
      return isCardAuthenticationError(err)
        ? { code: 'authentication_required', message: err.message, retryable: false }
        : { code: 'card_declined', message: err.message, retryable: false };
    case 'StripeConnectionError':
    case 'StripeAPIError':
    case 'StripeRateLimitError':
      return { code: 'processor_unavailable', message: err.message, retryable: true };
    case 'StripeAuthenticationError':
    case 'StripePermissionError':
      // The message may echo part of the key; say what is wrong without it.
      return { code: 'invalid_request', message: 'the processor rejected the API key', retryable: false };
    default:
      return { code: 'invalid_request', message: err.message, retryable: false };
  }
}

async function step<T>(call: () => Promise<T>): Promise<StepResult<T>> {
  try {
    return { ok: true, value: await call() };
  } catch (err) {
    return { ok: false, error: processorErrorFromStripe(err) };
  }
}

/** A token Stripe does not know (or already spent) is the caller's bad token, not a bad request. */
function asTokenError(error: ProcessorError, rawCode: string | undefined): ProcessorError {
  const tokenCodes = ['resource_missing', 'token_already_used'];
  if (error.code !== 'invalid_request' || !rawCode || !tokenCodes.includes(rawCode)) return error;
  return { code: 'invalid_token', message: error.message, retryable: false };
}

function stripeCode(err: unknown): string | undefined {
  return err instanceof Stripe.errors.StripeError ? err.code : undefined;
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

/** Only `succeeded` moved money; every other status is reported as why it did not. */
function chargeOutcome(pi: Stripe.PaymentIntent): ProcessorResult<{ chargeRef: string }> {
  switch (pi.status) {
    case 'succeeded':
      return ok({ chargeRef: pi.id });
    case 'requires_action':
    case 'requires_confirmation':
      return fail('authentication_required', `payment ${pi.id} needs the cardholder to authenticate`);
    case 'requires_payment_method':
      return fail('card_declined', pi.last_payment_error?.message ?? `payment ${pi.id} was declined`);
    default:
      return fail('processor_unavailable', `payment ${pi.id} is ${pi.status}, not succeeded`);
  }
}

export class StripeProcessor implements PaymentProcessor {
  readonly name = 'stripe' as const;
  private readonly stripe: Stripe;

  constructor(apiKey: string, connection: StripeConnectionOptions = {}) {
    const { maxNetworkRetries, timeoutMs, ...where } = connection;
    this.stripe = new Stripe(apiKey, {
      ...where,
      maxNetworkRetries: maxNetworkRetries ?? STRIPE_MAX_NETWORK_RETRIES,
      timeout: timeoutMs ?? STRIPE_REQUEST_TIMEOUT_MS,
    });
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
    const params: Stripe.PaymentIntentCreateParams = {
      amount: input.usdCents,
      currency: 'usd',
      customer: input.customerId,
      payment_method: input.paymentMethodId,
      // Nobody is present to follow a redirect, and without this Stripe demands a return_url.
      automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
      description: input.description,
      ...(input.metadata && { metadata: input.metadata }),
      off_session: true,
      confirm: true,
    };
    const options = { idempotencyKey: stripeIdempotencyKey(input.idempotencyKey) };
    const created = await step(() => this.stripe.paymentIntents.create(params, options));
    return created.ok ? chargeOutcome(created.value) : created;
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
  return { name: 'stripe', createCustomer: refuse, attachCard: refuse, charge: refuse };
}
