/**
 * The fake Stripe's 3-D Secure (fake-stripe.ts): what a PaymentIntent confirmed on session with a card that asks for
 * authentication looks like, and the stand-in for Stripe's hosted page its `next_action.redirect_to_url.url` points at:
 * a page of the fake's own server with Approve and Decline as plain HTML forms, whose answer sets the PaymentIntent's
 * final state (as the bank's answer does at Stripe) and redirects (303) the browser to the `return_url` with
 * `payment_intent`, `payment_intent_client_secret` and `redirect_status` added, as Stripe does.
 */
import type { FakePaymentIntent } from './fake-stripe.js';

/** Where the fake's hosted pages live (Stripe's are under hooks.stripe.com/3d_secure_2/…). */
export const HOSTED_PAGE_PREFIX = '/3d_secure_2/hosted/';

/** What the bank (the customer) answered on the page, or Stripe's own expiry of an authentication left undone. */
export type ChallengeAnswer = 'approve' | 'decline' | 'expire';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/** The intent waits for the customer at the hosted page, or (no return_url, or off session) for Stripe's client SDK. */
export function requireAction(pi: FakePaymentIntent, pageUrl: string, returnUrl: string | null): void {
  pi.status = 'requires_action';
  pi.next_action =
    returnUrl === null
      ? { type: 'use_stripe_sdk', use_stripe_sdk: { type: 'three_d_secure_redirect' } }
      : { type: 'redirect_to_url', redirect_to_url: { url: pageUrl, return_url: returnUrl } };
}

/** The return_url of an intent waiting at the hosted page; null when it does not wait there. */
export function pendingReturnUrl(pi: FakePaymentIntent): string | null {
  if (pi.status !== 'requires_action') return null;
  const next = pi.next_action as { type?: string; redirect_to_url?: { return_url?: string } } | null;
  return next?.type === 'redirect_to_url' ? (next.redirect_to_url?.return_url ?? null) : null;
}

/** Sets what the answer makes of the intent; answers whether the payment went through. */
export function answerChallenge(pi: FakePaymentIntent, answer: ChallengeAnswer, chargeId: () => string): boolean {
  pi.next_action = null;
  if (answer === 'approve') {
    pi.status = 'succeeded';
    pi.amount_received = pi.amount;
    pi.latest_charge = chargeId();
    return true;
  }
  const message =
    'The provided PaymentMethod has failed authentication. You can provide payment_method_data or a new ' +
    'PaymentMethod to attempt to fulfill this PaymentIntent again.';
  pi.last_payment_error = {
    type: 'invalid_request_error',
    code: 'payment_intent_authentication_failure',
    message,
    payment_method: { id: pi.payment_method },
  };
  pi.payment_method = null;
  pi.status = 'requires_payment_method';
  return false;
}

/** Where the page sends the browser after the answer: the return_url with what Stripe adds. */
export function returnLocation(returnUrl: string, pi: FakePaymentIntent, succeeded: boolean): string {
  const url = new URL(returnUrl);
  url.searchParams.set('payment_intent', pi.id);
  url.searchParams.set('payment_intent_client_secret', String(pi.client_secret));
  url.searchParams.set('redirect_status', succeeded ? 'succeeded' : 'failed');
  return url.toString();
}

/** The hosted page: Approve and Decline, each a form posting `decision` back to the page. */
export function hostedPage(pi: FakePaymentIntent, pending: boolean): string {
  const form = (decision: string, label: string) =>
    `<form method="post" action="${HOSTED_PAGE_PREFIX}${esc(pi.id)}">` +
    `<input type="hidden" name="decision" value="${decision}"><button type="submit">${label}</button></form>`;
  const body = pending
    ? `<h1>Authenticate a payment of ${pi.amount} ${esc(pi.currency)} cents</h1>` +
      form('approve', 'Approve') +
      form('decline', 'Decline')
    : `<h1>This authentication is no longer pending (${esc(pi.status)})</h1>`;
  const head = '<head><meta charset="utf-8"><title>3D Secure</title></head>';
  return `<!doctype html><html lang="en">${head}<body>${body}</body></html>`;
}
