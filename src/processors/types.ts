/**
 * The narrow boundary between the billing engine and a card processor. Expected outcomes
 * (declines, bad tokens, outages) come back as values, never as thrown errors, and every
 * amount crosses the boundary as integer USD cents, so no processor can round a balance.
 */
import type { UsdCents } from '../domain/money.js';

export type ProcessorErrorCode =
  | 'card_declined'
  | 'invalid_token'
  | 'authentication_required'
  | 'processor_unavailable'
  | 'invalid_request';

export interface ProcessorError {
  code: ProcessorErrorCode;
  message: string;
  /** safe to retry later with the same idempotency key */
  retryable: boolean;
  /**
   * The processor's payment the failure left behind (a Stripe PaymentIntent), when the customer may still complete
   * it: an off-session charge refused for want of authentication.
   */
  chargeRef?: string;
}

export type ProcessorResult<T> = { ok: true; value: T } | { ok: false; error: ProcessorError };

export interface CardDetails {
  paymentMethodId: string;
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
}

export interface ChargeInput {
  customerId: string;
  paymentMethodId: string;
  usdCents: UsdCents;
  description: string;
  idempotencyKey: string;
  metadata?: Record<string, string>;
  /**
   * The customer is at the checkout (a portal top-up): a card that asks for authentication (3-D Secure) answers
   * `requiresAction` rather than failing. Without the customer (refills, plan charges) it fails with
   * `authentication_required`.
   */
  customerPresent?: boolean;
  /**
   * With `customerPresent`: where the customer's browser comes back after authenticating at the processor's own page
   * (Stripe's hosted 3-D Secure page); the sandbox's page is the engine's and needs none.
   */
  returnUrl?: string;
}

/** A charge the processor accepted: done, or waiting for the customer to authenticate (`requiresAction`). */
export interface ChargeAccepted {
  chargeRef: string;
  requiresAction?: boolean;
  /** Where the customer authenticates, when it is the processor's page (Stripe's hosted page); else the engine's. */
  nextActionUrl?: string;
}

/** Where a payment that waits for the customer stands at the processor (`CustomerActions`). */
export type PaymentState =
  | { status: 'succeeded' }
  /** It can no longer succeed: the customer failed (or refused) authentication, or it was cancelled. */
  | { status: 'failed'; code: string; message: string }
  /** The customer may still complete it: at `redirectUrl` when the processor gave a page, else it must be confirmed. */
  | { status: 'waiting'; redirectUrl: string | null }
  /** Authenticated, the processor is still settling it: neither the customer's nor the engine's turn. */
  | { status: 'processing' };

/**
 * Payments whose state is kept at the processor, which the customer completes at the processor's page (Stripe). The
 * sandbox has none: its payments have no state and its page is the engine's own.
 */
export interface CustomerActions {
  /** The payment as the processor has it now. */
  paymentState(input: { chargeRef: string }): Promise<ProcessorResult<PaymentState>>;
  /**
   * Brings the customer back to a payment: unless it already waits at a page (or ended), confirms it again with the
   * customer present, with their card and `returnUrl`; answers where it then stands.
   */
  resumeWithCustomer(input: {
    chargeRef: string;
    paymentMethodId: string;
    returnUrl: string;
    idempotencyKey: string;
  }): Promise<ProcessorResult<PaymentState>>;
  /** Gives up a payment the customer did not complete, so it can never succeed later; answers its final state. */
  abandon(input: { chargeRef: string; idempotencyKey: string }): Promise<ProcessorResult<PaymentState>>;
}

export interface PaymentProcessor {
  readonly name: 'sandbox' | 'stripe';
  createCustomer(input: {
    name: string | null;
    email: string | null;
    metadata?: Record<string, string>;
    idempotencyKey: string;
  }): Promise<ProcessorResult<{ customerId: string }>>;
  attachCard(input: {
    customerId: string;
    token: string;
    idempotencyKey: string;
  }): Promise<ProcessorResult<CardDetails>>;
  charge(input: ChargeInput): Promise<ProcessorResult<ChargeAccepted>>;
  /** Present when the processor keeps the state of payments waiting for the customer (Stripe). */
  readonly customerActions?: CustomerActions;
}

export type ProcessorFactory = (company: {
  processor: 'sandbox' | 'stripe';
  processorApiKey: string | null;
}) => PaymentProcessor;

export function ok<T>(value: T): ProcessorResult<T> {
  return { ok: true, value };
}

export function fail<T = never>(code: ProcessorErrorCode, message: string, retryable = false): ProcessorResult<T> {
  return { ok: false, error: { code, message, retryable } };
}
