/** Credit packs: a company's offers of units for a USD charge, bought by customers in the portal. */

export interface TopupOfferRow {
  companyId: string;
  offerId: string;
  denomination: string;
  amount: number;
  usdCents: number;
  name: string;
  /** The priority of the grant a purchase adds. */
  priority: number;
  /** The grant a purchase adds expires this many days after it; null: never. */
  expiresInDays: number | null;
  createdAtMs: number;
  updatedAtMs: number;
}

export interface TopupOffersReadTx {
  findTopupOffer(companyId: string, offerId: string): Promise<TopupOfferRow | undefined>;
  /** The company's offers by offer id (at most TOPUP_OFFERS_MAX). */
  listTopupOffers(companyId: string): Promise<TopupOfferRow[]>;
}

export interface TopupOffersTx extends TopupOffersReadTx {
  /** Creates the offer, or changes every field of it but its creation time. */
  putTopupOffer(row: TopupOfferRow): Promise<void>;
  deleteTopupOffer(companyId: string, offerId: string): Promise<boolean>;
}
