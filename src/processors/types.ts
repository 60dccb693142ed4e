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
}

/** A charge the processor accepted: done, or waiting for the customer to authenticate (`requiresAction`). */
export interface ChargeAccepted {
  chargeRef: string;
  requiresAction?: boolean;
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
