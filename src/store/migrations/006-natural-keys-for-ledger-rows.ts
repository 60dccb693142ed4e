/**
 * 6. PostgreSQL: the two rows written per event carry one index fewer each. `seq` orders rows
 * inside the per-account index (and keyset cursors are found by id), but nothing looks a row up
 * by `seq` alone, so its primary-key index was pure cost on the ingest path: the natural keys
 * become the primary keys, and `seq` stays an identity column without an index of its own.
 * (SQLite's `seq` is the rowid: no index to drop.) The transaction_id index is rebuilt once.
 */
import type { Migration } from './migration.js';

const NATURAL_KEYS = `
ALTER TABLE events DROP CONSTRAINT events_pkey;
ALTER TABLE events ADD CONSTRAINT events_pkey PRIMARY KEY USING INDEX events_company_event;
ALTER TABLE transactions DROP CONSTRAINT transactions_pkey, DROP CONSTRAINT transactions_transaction_id_key;
ALTER TABLE transactions ADD CONSTRAINT transactions_pkey PRIMARY KEY (transaction_id);`;

export const naturalKeysForLedgerRows: Migration = {
  id: 6,
  name: 'natural_keys_for_ledger_rows',
  sqlite: 'SELECT 1;',
  postgres: NATURAL_KEYS,
};
