/**
 * A transaction on PostgreSQL: the shared SQL of every aggregate over this connection (or, for a
 * read, the pool), with what PostgreSQL writes its own way: events' row locks, webhooks' batch
 * statements, and the ledger's port (row locks, one statement per batch, a posting in one statement); what the
 * balances' lock statement reads ahead for the webhooks (read-ahead.ts) is the transaction's own.
 */
import { SqlTx } from '../sql-tx.js';
import { UsageSql } from '../usage/sql.js';
import { POSTGRES } from './dialect.js';
import { PgEvents } from './events.js';
import type { PgExec } from './exec.js';
import { PgLedger } from './ledger.js';
import { TxReadAhead } from './read-ahead.js';
import { PgWebhooks } from './webhooks.js';

export function pgTx(db: PgExec): SqlTx<PgExec> {
  const ahead = new TxReadAhead();
  return new SqlTx(db, POSTGRES, {
    events: (e) => new PgEvents(e),
    usage: (e) => new UsageSql(e, POSTGRES),
    webhooks: (e) => new PgWebhooks(e, ahead),
    ledger: (e) => new PgLedger(e, ahead),
  });
}
