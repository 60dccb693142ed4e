/**
 * 4. The ingest path keeps one per-account index on transactions. Each per-account index
 * dirties a page per account in every group commit; listing an account's transactions of all
 * denominations merges its per-denomination ranges of transactions_balance instead.
 */
import { both, type Migration } from './migration.js';

const LEAN_LEDGER = `DROP INDEX IF EXISTS transactions_account;`;

export const leanLedgerIndexes: Migration = {
  id: 4,
  name: 'lean_ledger_indexes',
  sqlite: both(LEAN_LEDGER, 'sqlite'),
  postgres: both(LEAN_LEDGER, 'postgres'),
};
