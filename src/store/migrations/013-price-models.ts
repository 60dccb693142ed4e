/**
 * 13. Pricing models (graduated and package prices beside unit ones), their history, and the
 * period counts they price against.
 * - `prices` is rebuilt with the terms of each model (`unit_amount` only for unit prices; `tiers`
 *   as JSON; `package_size` and `package_amount`) and a `version` per type; the old rows become
 *   version 1 of a unit price.
 * - `price_versions` keeps each earlier price with the span it applied in.
 * - `price_periods`: per account, type and UTC month, the exact quantity (a decimal string) of the
 *   completed events that a graduated or package price priced. Written once per group commit per
 *   period touched, with the balance the events draw from locked.
 * - `events.price_model`: the model of the price that gave the event's cost; NULL for a cost_override
 *   (and for events recorded before this migration).
 */
import { BYTE_ORDER_TEXT } from './005-byte-order-text.js';
import { both, type Migration } from './migration.js';

const PRICE_MODELS = `
CREATE TABLE prices_v13 (
  company_id TEXT NOT NULL REFERENCES companies(company_id),
  type TEXT NOT NULL,
  denomination TEXT NOT NULL,
  model TEXT NOT NULL,
  unit_amount TEXT,
  tiers TEXT,
  package_size BIGINT,
  package_amount TEXT,
  version INTEGER NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (company_id, type)
);
INSERT INTO prices_v13 (company_id, type, denomination, model, unit_amount, version, updated_at)
  SELECT company_id, type, denomination, 'unit', unit_amount, 1, updated_at FROM prices;
DROP TABLE prices;
ALTER TABLE prices_v13 RENAME TO prices;
CREATE TABLE price_versions (
  company_id TEXT NOT NULL,
  type TEXT NOT NULL,
  version INTEGER NOT NULL,
  denomination TEXT NOT NULL,
  model TEXT NOT NULL,
  unit_amount TEXT,
  tiers TEXT,
  package_size BIGINT,
  package_amount TEXT,
  effective_from BIGINT NOT NULL,
  effective_to BIGINT NOT NULL,
  PRIMARY KEY (company_id, type, version)
);
CREATE TABLE price_periods (
  account_id TEXT NOT NULL,
  type TEXT NOT NULL,
  period_start BIGINT NOT NULL,
  company_id TEXT NOT NULL,
  quantity TEXT NOT NULL,
  PRIMARY KEY (account_id, type, period_start)
);
ALTER TABLE events ADD COLUMN price_model TEXT;
`;

export const priceModels: Migration = {
  id: 13,
  name: 'price_models',
  sqlite: both(PRICE_MODELS, 'sqlite'),
  postgres: both(PRICE_MODELS, 'postgres') + BYTE_ORDER_TEXT,
};
