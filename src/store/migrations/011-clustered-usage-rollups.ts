/**
 * 11. SQLite: both usage rollups become WITHOUT ROWID tables, clustered on their primary key. A
 * group's upsert of a rollup row was a seek in the primary key's index and then one in the rowid
 * table (a new row: an entry in both); now it is one seek in one B-tree. The `hour` indexes go
 * too: the retention job finds old hours company by company through `usage_hours_company` and
 * the company rollup's primary key (sqlite/tx.ts), so a new rollup row is one index entry
 * (`usage_hours_company`) besides its own. PostgreSQL keeps its heaps and indexes.
 */
import type { Migration } from './migration.js';

const CLUSTERED_USAGE = `
CREATE TABLE usage_hours_clustered (
  account_id TEXT NOT NULL,
  hour BIGINT NOT NULL,
  denomination TEXT NOT NULL,
  type TEXT NOT NULL,
  company_id TEXT NOT NULL,
  events BIGINT NOT NULL,
  quantity TEXT NOT NULL,
  cost BIGINT NOT NULL,
  PRIMARY KEY (account_id, hour, denomination, type)
) WITHOUT ROWID;
INSERT INTO usage_hours_clustered (account_id, hour, denomination, type, company_id, events, quantity, cost)
  SELECT account_id, hour, denomination, type, company_id, events, quantity, cost FROM usage_hours;
DROP TABLE usage_hours;
ALTER TABLE usage_hours_clustered RENAME TO usage_hours;
CREATE INDEX usage_hours_company ON usage_hours (company_id, hour);
CREATE TABLE usage_company_hours_clustered (
  company_id TEXT NOT NULL,
  hour BIGINT NOT NULL,
  denomination TEXT NOT NULL,
  type TEXT NOT NULL,
  shard INTEGER NOT NULL,
  events BIGINT NOT NULL,
  quantity TEXT NOT NULL,
  cost BIGINT NOT NULL,
  PRIMARY KEY (company_id, hour, denomination, type, shard)
) WITHOUT ROWID;
INSERT INTO usage_company_hours_clustered (company_id, hour, denomination, type, shard, events, quantity, cost)
  SELECT company_id, hour, denomination, type, shard, events, quantity, cost FROM usage_company_hours;
DROP TABLE usage_company_hours;
ALTER TABLE usage_company_hours_clustered RENAME TO usage_company_hours;`;

export const clusteredUsageRollups: Migration = {
  id: 11,
  name: 'clustered_usage_rollups',
  sqlite: CLUSTERED_USAGE,
  postgres: 'SELECT 1;',
};
