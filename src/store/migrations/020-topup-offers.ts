/**
 * 20. Credit packs (contract "Customer portal, top-ups and receipts"): a company's offers of units for a USD charge,
 * by an id it chooses; the grant a purchase adds takes the offer's priority and expiry (`expires_in_days`, or never).
 */
import { BYTE_ORDER_TEXT } from './005-byte-order-text.js';
import { both, type Migration } from './migration.js';

const TOPUP_OFFERS = `
CREATE TABLE topup_offers (
  seq {{SEQ}},
  company_id TEXT NOT NULL,
  offer_id TEXT NOT NULL,
  denomination TEXT NOT NULL,
  amount BIGINT NOT NULL,
  usd_cents BIGINT NOT NULL,
  name TEXT NOT NULL,
  priority INTEGER NOT NULL,
  expires_in_days INTEGER,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX topup_offers_company_offer ON topup_offers (company_id, offer_id);
`;

export const topupOffers: Migration = {
  id: 20,
  name: 'topup_offers',
  sqlite: both(TOPUP_OFFERS, 'sqlite'),
  postgres: both(TOPUP_OFFERS, 'postgres') + BYTE_ORDER_TEXT,
};
