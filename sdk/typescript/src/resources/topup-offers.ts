/**
 * `billing.topupOffers` (/v1/topup_offers): the company's credit packs, put, listed and deleted; one resource of
 * `Billing` (billing.ts). A portal session with the `topup` scope buys them (`BillingPortal.topup`, portal.ts).
 */
import { type Answer, type Core, type JsonBody, type RequestOptions, required, unwrap } from '../core.js';

/** A credit pack: `amount` units of `denomination` for `usd_charge` cents, added as one paid grant. */
export type TopupOffer = Answer<'listTopupOffers'>['data'][number];
/** The body of `topupOffers.put`: `denomination`, `amount`, `usd_charge`, `name`, `priority?`, `expires_in_days?`. */
export type TopupOfferPutParams = JsonBody<'putTopupOffer'>;

/**
 * Credit packs, by an id the company chooses (1–64 of `A–Z a–z 0–9 _ . : -`, like a denomination), at most 100:
 * what the customer of an account can buy in the portal, a pack of a denomination the account has a balance of.
 * A purchase adds one paid grant (`source: 'topup'`, `cost_basis` usd_charge / amount, the pack's `priority`,
 * expiring `expires_in_days` days after the purchase or never).
 */
export class TopupOffers {
  readonly #core: Core;
  /** @internal */
  constructor(core: Core) {
    this.#core = core;
  }

  /**
   * Creates the pack, or replaces it whole (PUT /v1/topup_offers/{offer_id}); purchases already made are unchanged.
   * A field out of range is a 400 naming it.
   */
  put(offerId: string, body: TopupOfferPutParams, options?: RequestOptions): Promise<TopupOffer> {
    const c = this.#core;
    const path = { offer_id: required('offerId', offerId) };
    return unwrap(c.api.PUT('/v1/topup_offers/{offer_id}', { params: { path }, body, ...c.init(options) })).then(
      (o) => o.data,
    );
  }

  /** Every pack of the company, by offer id (GET /v1/topup_offers; at most 100, not paged). */
  list(options?: RequestOptions): Promise<TopupOffer[]> {
    const c = this.#core;
    return unwrap(c.api.GET('/v1/topup_offers', { ...c.init(options) })).then((o) => o.data);
  }

  /**
   * Deletes a pack, which can no longer be bought (DELETE /v1/topup_offers/{offer_id}); resolves with the deleted
   * pack. Purchases already made keep their grants; an unknown pack is a 404.
   */
  delete(offerId: string, options?: RequestOptions): Promise<TopupOffer> {
    const c = this.#core;
    const path = { offer_id: required('offerId', offerId) };
    return unwrap(c.api.DELETE('/v1/topup_offers/{offer_id}', { params: { path }, ...c.init(options) })).then(
      (o) => o.data,
    );
  }
}
