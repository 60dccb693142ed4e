/**
 * 17. Features and entitlements (contract "Features and entitlements"):
 * - `features`: a company's features by key, with their kind and, for a metered one, the event type it meters
 *   (`features_metered`: the ingest gate finds a company's metered features of the types it records);
 * - `plan_features`: a plan's features and their values (config only): an account on the plan has them, so a
 *   plan's list replaced is one write whatever the number of accounts on it;
 * - `feature_overrides`: one account's override of one feature, until `expires_at` (NULL: none); the job that
 *   writes the `entitlements_change` of an override ending deletes it then (a read ignores it from that instant).
 * An account's plan entries and overrides are read together by account (`plan_features` through
 * `account_plans`, `feature_overrides` by its key): one lookup per check, whatever the number of features.
 */
import { BYTE_ORDER_TEXT } from './005-byte-order-text.js';
import { both, type Migration } from './migration.js';

const FEATURES = `
CREATE TABLE features (
  seq {{SEQ}},
  company_id TEXT NOT NULL,
  feature_key TEXT NOT NULL,
  kind TEXT NOT NULL,
  name TEXT,
  event_type TEXT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX features_company_key ON features (company_id, feature_key);
CREATE INDEX features_metered ON features (company_id, event_type) WHERE event_type IS NOT NULL;
CREATE TABLE plan_features (
  plan_id TEXT NOT NULL,
  feature_key TEXT NOT NULL,
  company_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  value TEXT,
  PRIMARY KEY (plan_id, feature_key)
);
CREATE INDEX plan_features_feature ON plan_features (company_id, feature_key);
CREATE TABLE feature_overrides (
  account_id TEXT NOT NULL,
  feature_key TEXT NOT NULL,
  company_id TEXT NOT NULL,
  enabled {{BOOL}} NOT NULL,
  value TEXT,
  expires_at BIGINT,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (account_id, feature_key)
);
CREATE INDEX feature_overrides_feature ON feature_overrides (company_id, feature_key);
CREATE INDEX feature_overrides_ending ON feature_overrides (expires_at) WHERE expires_at IS NOT NULL;
`;

export const features: Migration = {
  id: 17,
  name: 'features',
  sqlite: both(FEATURES, 'sqlite'),
  postgres: both(FEATURES, 'postgres') + BYTE_ORDER_TEXT,
};
