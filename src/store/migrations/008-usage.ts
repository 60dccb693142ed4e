/**
 * 8. Usage read back (contract "Usage"). Events carry `occurred_at`, the time the usage happened
 * (the request's `timestamp`, else when it was recorded); lists read them newest first through
 * one index per scope (company, account). Usage is answered from hourly rollups written in the
 * transaction that records or settles the events: `usage_hours` per account (its primary key
 * serves one account's queries; `usage_hours_company` the company's by account), and
 * `usage_company_hours` per company without the account (the company's totals; several rows per
 * hour on PostgreSQL, `shard`, so that concurrent group commits of one company do not queue on
 * one row). The `hour` indexes let the retention job find old hours without a scan (a new rollup
 * row is an index entry more; an update of one is not). On SQLite the event indexes end at the
 * rowid, which is `seq`. Quantities are exact decimals: NUMERIC on PostgreSQL; on SQLite TEXT summed by the
 * store's own `decimal_add` function.
 */
import { both, type Migration } from './migration.js';

const USAGE = `
ALTER TABLE events ADD COLUMN occurred_at BIGINT NOT NULL DEFAULT 0;
UPDATE events SET occurred_at = created_at;
CREATE INDEX events_company_occurred ON events (company_id, occurred_at{{SEQ_IN_INDEX}});
CREATE INDEX events_account_occurred ON events (account_id, occurred_at{{SEQ_IN_INDEX}});
CREATE TABLE usage_hours (
  account_id TEXT NOT NULL,
  hour BIGINT NOT NULL,
  denomination TEXT NOT NULL,
  type TEXT NOT NULL,
  company_id TEXT NOT NULL,
  events BIGINT NOT NULL,
  quantity {{DECIMAL}} NOT NULL,
  cost BIGINT NOT NULL,
  PRIMARY KEY (account_id, hour, denomination, type)
);
CREATE INDEX usage_hours_company ON usage_hours (company_id, hour);
CREATE TABLE usage_company_hours (
  company_id TEXT NOT NULL,
  hour BIGINT NOT NULL,
  denomination TEXT NOT NULL,
  type TEXT NOT NULL,
  shard INTEGER NOT NULL,
  events BIGINT NOT NULL,
  quantity {{DECIMAL}} NOT NULL,
  cost BIGINT NOT NULL,
  PRIMARY KEY (company_id, hour, denomination, type, shard)
);
CREATE INDEX usage_hours_hour ON usage_hours (hour);
CREATE INDEX usage_company_hours_hour ON usage_company_hours (hour);`;

export const usage: Migration = {
  id: 8,
  name: 'usage',
  sqlite: both(USAGE, 'sqlite'),
  postgres: `${both(USAGE, 'postgres')}
ALTER TABLE usage_hours ALTER COLUMN account_id TYPE text COLLATE "C", ALTER COLUMN denomination TYPE text COLLATE "C",
  ALTER COLUMN type TYPE text COLLATE "C", ALTER COLUMN company_id TYPE text COLLATE "C";
ALTER TABLE usage_company_hours ALTER COLUMN company_id TYPE text COLLATE "C",
  ALTER COLUMN denomination TYPE text COLLATE "C", ALTER COLUMN type TYPE text COLLATE "C";`,
};
