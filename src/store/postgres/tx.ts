/**
 * A transaction on PostgreSQL: the shared SQL of every aggregate over this connection (or, for a
 * read, the pool), with what PostgreSQL writes its own way: events' row locks, webhooks' batch
 * statements, and the ledger's port (row locks, one statement per batch, a posting in one statement).
 */
import { SqlTx } from '../sql-tx.js';
import { UsageSql } from '../usage/sql.js';
import { POSTGRES } from './dialect.js';
import { PgEvents } from './events.js';
import type { PgExec } from './exec.js';
import { PgLedger } from './ledger.js';
import { PgWebhooks } from './webhooks.js';

export function pgTx(db: PgExec): SqlTx<PgExec> {
  return new SqlTx(db, POSTGRES, {
    events: (e) => new PgEvents(e),
    usage: (e) => new UsageSql(e, POSTGRES),
    webhooks: (e) => new PgWebhooks(e),
    ledger: (e) => new PgLedger(e),
  });
}
