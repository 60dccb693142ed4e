/**
 * Payments waiting for the customer at Stripe (3-D Secure), what the engine does with them:
 *
 * - A charge made with the customer present was confirmed on session with a `return_url`: Stripe answered
 *   `requires_action` with its hosted page (`next_action.redirect_to_url.url`), where the customer authenticates and
 *   from which their browser comes back to the engine's return page, which reads the PaymentIntent.
 * - An off-session charge the bank refused for want of the cardholder (`authentication_required`) leaves its
 *   PaymentIntent in `requires_payment_method` (or, for some cards, `requires_action` with `use_stripe_sdk`, which only
 *   Stripe's client SDKs can show). Stripe's way to finish it is to bring the customer back and confirm the same
 *   PaymentIntent on session with the payment method and a `return_url` (`resumeWithCustomer`); Stripe then answers
 *   `requires_action` with its hosted page, as above.
 * - A payment the customer never completes is cancelled (`abandon`), so that it cannot succeed after the engine has
 *   recorded it failed; if the customer got there first, Stripe refuses the cancellation and the payment succeeded.
 *
 * Every write carries an idempotency key derived from the charge's, so a repeated follow of the link or a job's retry
 * replays Stripe's first answer instead of starting another authentication.
 */
import type Stripe from 'stripe';
import { paymentStateOf, processorErrorFromStripe, step, stripeCode, stripeIdempotencyKey } from './stripe-calls.js';
import type { CustomerActions, PaymentState, ProcessorResult } from './types.js';
import { ok } from './types.js';

export class StripeCustomerActions implements CustomerActions {
  constructor(private readonly stripe: Stripe) {}

  async paymentState(input: { chargeRef: string }): Promise<ProcessorResult<PaymentState>> {
    const pi = await step(() => this.stripe.paymentIntents.retrieve(input.chargeRef));
    return pi.ok ? ok(paymentStateOf(pi.value)) : pi;
  }

  async resumeWithCustomer(input: {
    chargeRef: string;
    paymentMethodId: string;
    returnUrl: string;
    idempotencyKey: string;
  }): Promise<ProcessorResult<PaymentState>> {
    const now = await this.paymentState(input);
    if (!now.ok || now.value.status !== 'waiting' || now.value.redirectUrl !== null) return now;
    // The key names the card: a customer who attached another card since confirms with that one.
    const key = stripeIdempotencyKey(input.idempotencyKey, `on_session:${input.paymentMethodId}`);
    const params: Stripe.PaymentIntentConfirmParams = {
      payment_method: input.paymentMethodId,
      return_url: input.returnUrl,
      off_session: false,
    };
    try {
      return ok(
        paymentStateOf(await this.stripe.paymentIntents.confirm(input.chargeRef, params, { idempotencyKey: key })),
      );
    } catch (err) {
      // Declined with the customer present: the error carries the PaymentIntent as it was left.
      const pi = (err as { payment_intent?: Stripe.PaymentIntent }).payment_intent;
      const error = processorErrorFromStripe(err);
      if (error.code === 'card_declined' && pi) return ok(paymentStateOf(pi));
      if (error.code === 'card_declined')
        return ok({ status: 'failed', code: 'card_declined', message: error.message });
      return { ok: false, error };
    }
  }

  async abandon(input: { chargeRef: string; idempotencyKey: string }): Promise<ProcessorResult<PaymentState>> {
    const key = stripeIdempotencyKey(input.idempotencyKey, 'cancel');
    try {
      const pi = await this.stripe.paymentIntents.cancel(
        input.chargeRef,
        { cancellation_reason: 'abandoned' },
        { idempotencyKey: key },
      );
      return ok(paymentStateOf(pi));
    } catch (err) {
      const error = processorErrorFromStripe(err);
      // Succeeded (or ended) in the meantime: Stripe refuses to cancel it, and says where it stands.
      if (stripeCode(err) === 'payment_intent_unexpected_state') return this.paymentState(input);
      return { ok: false, error };
    }
  }
}
