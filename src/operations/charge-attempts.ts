/** Calling the processor for a pending charge: what it answered, before anything is written. */
import { usdCents } from '../domain/money.js';
import type { ChargeRow } from '../store/types.js';
import type { Deps } from './deps.js';
import { processorFor } from './secrets.js';

/** What the processor said, before anything is written. */
export type ChargeAttempt =
  | { kind: 'succeeded'; processorRef: string | null }
  /** The customer is asked to authenticate (3-D Secure, a top-up with the customer present): nothing is applied yet. */
  | { kind: 'requires_action'; processorRef: string }
  /** The card (or its absence) is why: counts as a decline. */
  /** `customerCanComplete`: the customer may still complete it at its next_action_url (3-D Secure, sandbox). */
  | { kind: 'declined'; code: string; message: string; customerCanComplete?: boolean }
  /** The processor refused the request for another reason (not the card's fault). */
  | { kind: 'rejected'; code: string; message: string }
  /** The processor could not be reached; the same idempotency key may be tried again. */
  | { kind: 'unavailable'; message: string };

/** Calls the processor for a pending charge; writes nothing. A 0-cent charge needs no processor. */
export async function attemptCharge(deps: Deps, charge: ChargeRow): Promise<ChargeAttempt> {
  if (charge.usdCents === 0) return { kind: 'succeeded', processorRef: null };
  const ctx = await deps.store.read(async (tx) => ({
    company: await tx.identity.findCompany(charge.companyId),
    account: await tx.accounts.findAccount(charge.companyId, charge.accountId),
    card: await tx.cards.findCard(charge.accountId),
  }));
  if (!ctx.company || !ctx.account) throw new Error(`charge ${charge.chargeId}: its account is gone`);
  if (!ctx.card || ctx.account.processorId === null)
    return { kind: 'declined', code: 'no_card_on_file', message: 'the account has no card attached' };
  const result = await processorFor(deps, ctx.company).charge({
    customerId: ctx.account.processorId,
    paymentMethodId: ctx.card.paymentMethodId,
    usdCents: usdCents(charge.usdCents),
    description: describeCharge(charge),
    idempotencyKey: charge.chargeId,
    customerPresent: charge.reason === 'topup',
    metadata: {
      account_id: charge.accountId,
      charge_id: charge.chargeId,
      reason: charge.reason,
      ...(charge.denomination !== null ? { denomination: charge.denomination } : {}),
    },
  });
  if (result.ok)
    return result.value.requiresAction === true
      ? { kind: 'requires_action', processorRef: result.value.chargeRef }
      : { kind: 'succeeded', processorRef: result.value.chargeRef };
  const e = result.error;
  // A card that asked for the customer, charged without them: the sandbox's authorize page can still complete it.
  if (e.code === 'authentication_required')
    return {
      kind: 'declined',
      code: e.code,
      message: e.message,
      customerCanComplete: ctx.company.processor === 'sandbox',
    };
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
