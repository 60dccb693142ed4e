/** Calling the processor for a pending charge: what it answered, before anything is written. */
import { usdCents } from '../domain/money.js';
import type { ChargeRow } from '../store/types.js';
import type { Deps } from './deps.js';
import { processorFor } from './secrets.js';

/**
 * What the processor said, before anything is written. `watch`: the processor keeps the state of a payment left
 * waiting for the customer (Stripe), so a job reads it until it ends (charge-watch.ts).
 */
export type ChargeAttempt =
  | { kind: 'succeeded'; processorRef: string | null }
  /**
   * The customer is asked to authenticate (3-D Secure, a top-up with the customer present) at `nextActionUrl`:
   * nothing is applied yet.
   */
  | { kind: 'requires_action'; processorRef: string; nextActionUrl: string; watch: boolean }
  /**
   * The card (or its absence) is why: counts as a decline. `nextActionUrl`: the customer may still complete it there
   * (a card that asked for 3-D Secure, charged without them), the processor's payment `processorRef`.
   */
  | {
      kind: 'declined';
      code: string;
      message: string;
      nextActionUrl?: string;
      processorRef?: string;
      watch?: boolean;
    }
  /** The processor refused the request for another reason (not the card's fault). */
  | { kind: 'rejected'; code: string; message: string }
  /** The processor could not be reached; the same idempotency key may be tried again. */
  | { kind: 'unavailable'; message: string };

/**
 * The engine's links for a charge waiting for the customer: the sandbox's stand-in for the bank's page
 * (`/sandbox/authorize/{id}`); with Stripe, the page that brings the customer back to a payment (confirms it on
 * session, then sends them to Stripe's hosted page: `/stripe/authenticate/{id}`), and where Stripe's page sends them
 * back (`/stripe/return?charge_id=`, the PaymentIntents' `return_url`). Routes: http/routes/sandbox.ts, stripe.ts.
 */
export function chargeLinks(deps: Pick<Deps, 'identity'>, chargeId: string) {
  const base = deps.identity.publicUrl;
  const id = encodeURIComponent(chargeId);
  return {
    sandboxAuthorize: `${base}/sandbox/authorize/${id}`,
    stripeAuthenticate: `${base}/stripe/authenticate/${id}`,
    stripeReturn: `${base}/stripe/return?charge_id=${id}`,
  };
}

/**
 * Calls the processor for a pending charge; writes nothing. A 0-cent charge needs no processor. The processor's
 * idempotency key is the charge's id, with `attemptKey` after it when the charge is collected again (a card attached
 * after a decline: the first attempt's key would replay its answer, or be refused for another card); every retry of
 * one collection sends the same key, so that a lost answer is never charged twice.
 */
export async function attemptCharge(deps: Deps, charge: ChargeRow, attemptKey?: string): Promise<ChargeAttempt> {
  if (charge.usdCents === 0) return { kind: 'succeeded', processorRef: null };
  const ctx = await deps.store.read(async (tx) => ({
    company: await tx.identity.findCompany(charge.companyId),
    account: await tx.accounts.findAccount(charge.companyId, charge.accountId),
    card: await tx.cards.findCard(charge.accountId),
  }));
  if (!ctx.company || !ctx.account) throw new Error(`charge ${charge.chargeId}: its account is gone`);
  if (!ctx.card || ctx.account.processorId === null)
    return { kind: 'declined', code: 'no_card_on_file', message: 'the account has no card attached' };
  const processor = processorFor(deps, ctx.company);
  const links = chargeLinks(deps, charge.chargeId);
  const customerPresent = charge.reason === 'topup';
  const result = await processor.charge({
    customerId: ctx.account.processorId,
    paymentMethodId: ctx.card.paymentMethodId,
    usdCents: usdCents(charge.usdCents),
    description: describeCharge(charge),
    idempotencyKey: attemptKey === undefined ? charge.chargeId : `${charge.chargeId}.${attemptKey}`,
    customerPresent,
    ...(customerPresent ? { returnUrl: links.stripeReturn } : {}),
    metadata: {
      account_id: charge.accountId,
      charge_id: charge.chargeId,
      reason: charge.reason,
      ...(charge.denomination !== null ? { denomination: charge.denomination } : {}),
    },
  });
  const watch = processor.customerActions !== undefined;
  // Where the customer authenticates: the processor's page if it gave one (Stripe's hosted page), else the engine's.
  const enginePage = watch ? links.stripeAuthenticate : links.sandboxAuthorize;
  if (result.ok) {
    const { chargeRef, requiresAction, nextActionUrl } = result.value;
    if (requiresAction !== true) return { kind: 'succeeded', processorRef: chargeRef };
    return { kind: 'requires_action', processorRef: chargeRef, nextActionUrl: nextActionUrl ?? enginePage, watch };
  }
  const e = result.error;
  // A card that asked for the customer, charged without them: they may still complete it, on the sandbox's page, or
  // (Stripe) by confirming on session the payment the failure left.
  if (e.code === 'authentication_required') {
    const completable = !watch || e.chargeRef !== undefined;
    return {
      kind: 'declined',
      code: e.code,
      message: e.message,
      ...(completable ? { nextActionUrl: enginePage, watch } : {}),
      ...(e.chargeRef !== undefined ? { processorRef: e.chargeRef } : {}),
    };
  }
  if (e.code === 'card_declined') return { kind: 'declined', code: e.code, message: e.message };
  if (e.retryable || e.code === 'processor_unavailable') return { kind: 'unavailable', message: e.message };
  return { kind: 'rejected', code: e.code, message: e.message };
}

function describeCharge(c: ChargeRow): string {
  switch (c.reason) {
    case 'refill':
      return `Auto-refill of ${String(c.details.units)} ${c.denomination ?? ''}`.trim();
    case 'plan':
      return 'Plan charge';
    case 'overage':
      return 'Plan overage';
    case 'proration':
      return `Mid-month increase of ${c.denomination ?? ''}`.trim();
    case 'topup':
      return `${String(c.details.name ?? 'Credit pack')}: ${String(c.details.amount)} ${c.denomination ?? ''}`.trim();
  }
}
