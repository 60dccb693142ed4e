/**
 * A transaction on SQLite: the shared SQL of every aggregate over this connection, with what SQLite
 * writes its own way (events' locks, usage retention, the ledger's port). The IMMEDIATE transaction
 * already holds SQLite's single write lock, so locking is reading; the hot path's statements run
 * synchronously on prepared statements (SqliteExec).
 */
import { SqlTx } from '../sql-tx.js';
import { WebhooksSql } from '../webhooks/sql.js';
import { SQLITE } from './dialect.js';
import { SqliteEvents } from './events.js';
import type { SqliteExec } from './exec.js';
import { SqliteLedger } from './ledger.js';
import { SqliteUsage } from './usage.js';

export function sqliteTx(db: SqliteExec): SqlTx<SqliteExec> {
  return new SqlTx(db, SQLITE, {
    events: (e) => new SqliteEvents(e),
    usage: (e) => new SqliteUsage(e),
    webhooks: (e) => new WebhooksSql(e, SQLITE),
    ledger: (e) => new SqliteLedger(e),
  });
}
