/**
 * 9. Idempotency-Key claims are leased: `owner` is the claiming request's random token and
 * `lease_expires_at` (wall-clock epoch ms) when its claim lapses unless renewed. A claim whose owner
 * died (kill -9 mid-request) is taken over by a retry once the lease is over; rows claimed before
 * this migration have no lease, and are taken over at once (no answer was ever recorded for them).
 */
import { both, type Migration } from './migration.js';

const IDEMPOTENCY_LEASE = `
ALTER TABLE idempotency_keys ADD COLUMN owner TEXT;
ALTER TABLE idempotency_keys ADD COLUMN lease_expires_at BIGINT;`;

export const idempotencyLease: Migration = {
  id: 9,
  name: 'idempotency_lease',
  sqlite: both(IDEMPOTENCY_LEASE, 'sqlite'),
  postgres: `${both(IDEMPOTENCY_LEASE, 'postgres')}
ALTER TABLE idempotency_keys ALTER COLUMN owner TYPE text COLLATE "C";`,
};
