/**
 * 7. Retention: finished outbox rows and old webhook delivery logs are deleted by a background
 * job (src/jobs/retention.ts), oldest first, in bounded batches; these indexes find them without
 * scanning tables that grow by a row per notification. IF NOT EXISTS: on a large PostgreSQL
 * database an operator may build them first with CREATE INDEX CONCURRENTLY (docs/SCALING.md),
 * since a plain CREATE INDEX blocks writes to the table while it runs.
 */
import { both, type Migration } from './migration.js';

const RETENTION_INDEXES = `
CREATE INDEX IF NOT EXISTS outbox_done ON outbox (done_at) WHERE done_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS webhook_deliveries_created ON webhook_deliveries (created_at);`;

export const retentionIndexes: Migration = {
  id: 7,
  name: 'retention_indexes',
  sqlite: both(RETENTION_INDEXES, 'sqlite'),
  postgres: both(RETENTION_INDEXES, 'postgres'),
};
