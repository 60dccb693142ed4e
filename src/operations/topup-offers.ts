/**
 * Credit packs (contract "Customer portal, top-ups and receipts"): a company's offers, and their purchase by the
 * account's customer in the portal, the customer present. A purchase is a charge like a mid-month increase: the
 * pending charge (its id derived from the request's Idempotency-Key) and its recovery outbox row in one
 * transaction, the processor called, the outcome recorded in a second (`recordChargeOutcome`), where a success adds
 * the `paid` grant of the offer (`source: "topup"`), once. A declined card changes nothing but the charge record.
 */
import { fail } from '../domain/outcome.js';
import { TOPUP_OFFERS_MAX } from '../domain/topups.js';
import type { ChargeRow, PortalSessionRow, TopupOfferRow } from '../store/types.js';
import { attemptCharge } from './charge-attempts.js';
import { recordChargeOutcome, requestCharge } from './charges.js';
import type { Command, Deps } from './deps.js';

/** A purchase the request itself did not finish (it died) is carried out by the charge worker after this. */
export const TOPUP_RECOVERY_DELAY_MS = 10 * 60_000;

/** What `PUT /v1/topup_offers/{offer_id}` takes (ranges are the schema's). */
export interface TopupOfferInput {
  denomination: string;
  amount: number;
  usd_charge: number;
  name: string;
  priority?: number;
  expires_in_days?: number | null;
}

/** Creates or replaces the company's offer (an existing one keeps its creation time). */
export function putTopupOffer(
  deps: Deps,
  companyId: string,
  offerId: string,
  input: TopupOfferInput,
): Command<TopupOfferRow> {
  return async (tx) => {
    const now = deps.clock.now();
    const existing = await tx.topupOffers.findTopupOffer(companyId, offerId);
    if (existing === undefined && (await tx.topupOffers.listTopupOffers(companyId)).length >= TOPUP_OFFERS_MAX)
      fail('too_many_topup_offers', `a company may keep at most ${TOPUP_OFFERS_MAX} credit packs`, 'offer_id');
    const row: TopupOfferRow = {
      companyId,
      offerId,
      denomination: input.denomination,
      amount: input.amount,
      usdCents: input.usd_charge,
      name: input.name,
      priority: input.priority ?? 50,
      expiresInDays: input.expires_in_days ?? null,
      createdAtMs: existing?.createdAtMs ?? now,
      updatedAtMs: now,
    };
    await tx.topupOffers.putTopupOffer(row);
    return row;
  };
}

export function listTopupOffers(deps: Deps, companyId: string): Promise<TopupOfferRow[]> {
  return deps.store.read((tx) => tx.topupOffers.listTopupOffers(companyId));
}

/** Deletes the offer (404 `offer_id` when the company has none of that id); purchases made stay as they are. */
export function deleteTopupOffer(companyId: string, offerId: string): Command<TopupOfferRow> {
  return async (tx) => {
    const offer = await tx.topupOffers.findTopupOffer(companyId, offerId);
    if (offer === undefined) fail('not_found', `no such credit pack: ${offerId}`, 'offer_id');
    await tx.topupOffers.deleteTopupOffer(companyId, offerId);
    return offer;
  };
}

/** The offers the portal session's customer can buy: those of a denomination the account has a balance of. */
export async function portalTopupOffers(deps: Deps, s: PortalSessionRow): Promise<TopupOfferRow[]> {
  return deps.store.read(async (tx) => {
    const [offers, balances] = await Promise.all([
      tx.topupOffers.listTopupOffers(s.companyId),
      tx.balances.listBalances(s.accountId),
    ]);
    const held = new Set(balances.map((b) => b.denomination));
    return offers.filter((o) => held.has(o.denomination));
  });
}

/** What a purchase answers: the charge, and the grant it added once it succeeded. */
export interface TopupResult {
  charge: ChargeRow;
  grantId: string | null;
}

/**
 * Buys the offer for the session's account with its card, the customer present. `chargeId`: derived from the
 * request's Idempotency-Key, so that a retry after a crash finishes that purchase instead of buying again.
 * Declined, or no card: 402 `payment_failed` (with `details.charge_id` when a charge was made); nothing added.
 */
export async function buyTopup(
  deps: Deps,
  s: PortalSessionRow,
  offerId: string,
  chargeId: string | undefined,
): Promise<TopupResult> {
  const earlier = chargeId === undefined ? undefined : await deps.store.read((tx) => tx.charges.findCharge(chargeId));
  if (earlier !== undefined) {
    if (earlier.reason !== 'topup' || earlier.accountId !== s.accountId) throw new Error(`charge ${chargeId} reused`);
    return finishTopup(deps, earlier);
  }
  const now = deps.clock.now();
  const charge = await deps.store.write(async (tx) => {
    const offer = await tx.topupOffers.findTopupOffer(s.companyId, offerId);
    if (offer === undefined) fail('not_found', `no such credit pack: ${offerId}`, 'offer_id');
    const [balance] = (await tx.balances.listBalances(s.accountId)).filter(
      (b) => b.denomination === offer.denomination,
    );
    if (balance === undefined)
      fail('not_found', `the account has no balance of denomination "${offer.denomination}"`, 'offer_id');
    const account = await tx.accounts.findAccount(s.companyId, s.accountId);
    if ((await tx.cards.findCard(s.accountId)) === undefined || account?.processorId == null)
      fail('no_card_on_file', 'the account has no card: nothing was charged');
    return requestCharge(
      tx,
      now,
      {
        companyId: s.companyId,
        accountId: s.accountId,
        denomination: offer.denomination,
        reason: 'topup',
        usdCents: offer.usdCents,
        details: {
          offer_id: offer.offerId,
          name: offer.name,
          amount: offer.amount,
          priority: offer.priority,
          expires_in_days: offer.expiresInDays,
          // Where the customer goes back after authenticating (the portal session's return_url), if it has one.
          return_url: s.returnUrl,
        },
        ...(chargeId !== undefined ? { chargeId } : {}),
      },
      now + TOPUP_RECOVERY_DELAY_MS,
    );
  });
  return finishTopup(deps, charge);
}

async function finishTopup(deps: Deps, pending: ChargeRow): Promise<TopupResult> {
  let charge = pending;
  if (charge.status === 'pending') {
    const attempt = await attemptCharge(deps, charge);
    await recordChargeOutcome(deps, charge.chargeId, attempt, { mayRetry: false, attempts: 1 });
    charge = (await deps.store.read((tx) => tx.charges.findCharge(pending.chargeId)))!;
  }
  // The card asks the customer to authenticate: the purchase completes at the charge's next_action_url.
  if (charge.status === 'requires_action') return { charge, grantId: null };
  if (charge.status !== 'succeeded')
    fail(
      'charge_declined',
      `the charge of ${charge.usdCents} cents failed (${charge.failureMessage ?? charge.status}); nothing was added`,
      undefined,
      { charge_id: charge.chargeId },
    );
  return { charge, grantId: charge.grantId };
}
