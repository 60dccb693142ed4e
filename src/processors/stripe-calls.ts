/**
 * What every call of the Stripe adapter shares: idempotency keys within Stripe's limit, the SDK's thrown errors
 * mapped to values, and a PaymentIntent read as the engine's `PaymentState`.
 */
import { createHash } from 'node:crypto';
import Stripe from 'stripe';
import type { PaymentState, ProcessorError } from './types.js';

/** Stripe refuses idempotency keys longer than this. */
export const STRIPE_IDEMPOTENCY_KEY_MAX_CHARS = 255;

export type StepResult<T> = { ok: true; value: T } | { ok: false; error: ProcessorError };

/** Stripe caps key length; an over-long key is replaced by its digest, still one key per input. */
export function stripeIdempotencyKey(key: string, step?: string): string {
  const full = step ? `${key}:${step}` : key;
  if (full.length <= STRIPE_IDEMPOTENCY_KEY_MAX_CHARS) return full;
  return `sha256:${createHash('sha256').update(full).digest('hex')}`;
}

function isCardAuthenticationError(err: { code?: string; decline_code?: string }): boolean {
  return err.code === 'authentication_required' || err.decline_code === 'authentication_required';
}

/**
 * Maps the SDK's thrown errors to values; anything that is not a Stripe error is a bug and rethrown. A card that
 * asked for the cardholder names the PaymentIntent it left (`chargeRef`): the customer may still complete it.
 */
export function processorErrorFromStripe(err: unknown): ProcessorError {
  if (!(err instanceof Stripe.errors.StripeError)) throw err;
  switch (err.type) {
    case 'StripeCardError':
      if (!isCardAuthenticationError(err)) return { code: 'card_declined', message: err.message, retryable: false };
      return {
        code: 'authentication_required',
        message: err.message,
        retryable: false,
        ...(err.payment_intent?.id ? { chargeRef: err.payment_intent.id } : {}),
      };
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

export async function step<T>(call: () => Promise<T>): Promise<StepResult<T>> {
  try {
    return { ok: true, value: await call() };
  } catch (err) {
    return { ok: false, error: processorErrorFromStripe(err) };
  }
}

export function stripeCode(err: unknown): string | undefined {
  return err instanceof Stripe.errors.StripeError ? err.code : undefined;
}

/** Stripe's hosted page for the customer's authentication, when the next action is a redirect. */
export function redirectUrlOf(pi: Stripe.PaymentIntent): string | null {
  return pi.next_action?.type === 'redirect_to_url' ? (pi.next_action.redirect_to_url?.url ?? null) : null;
}

/**
 * A PaymentIntent that waited for the customer, as the engine reads it. `requires_payment_method` is both the state
 * an off-session charge is left in when the card asked for the cardholder (last error `authentication_required`: the
 * customer may still complete it) and the state a failed authentication (`payment_intent_authentication_failure`,
 * also what Stripe records when the customer lets it expire) or a decline leaves: those are final for the engine.
 */
export function paymentStateOf(pi: Stripe.PaymentIntent): PaymentState {
  switch (pi.status) {
    case 'succeeded':
      return { status: 'succeeded' };
    case 'processing':
    case 'requires_capture':
      return { status: 'processing' };
    case 'canceled':
      return { status: 'failed', code: 'payment_canceled', message: `payment ${pi.id} was cancelled` };
    case 'requires_action':
      return { status: 'waiting', redirectUrl: redirectUrlOf(pi) };
    case 'requires_confirmation':
      return { status: 'waiting', redirectUrl: null };
    default: {
      const last = pi.last_payment_error;
      if (last === null || isCardAuthenticationError(last)) return { status: 'waiting', redirectUrl: null };
      const code = last.code === 'payment_intent_authentication_failure' ? 'authentication_failed' : 'card_declined';
      return { status: 'failed', code, message: last.message ?? `payment ${pi.id} was declined` };
    }
  }
}
