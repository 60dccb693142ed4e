/**
 * 12. API keys remember when they were last used (`last_used_at`, epoch ms from the injected clock; NULL:
 * never, or not since this migration). The API key cache writes it at most once a minute per key, in a
 * transaction of its own, never in the request's; the ingest path only reads the clock.
 */
import { both, type Migration } from './migration.js';

const API_KEY_LAST_USED = `ALTER TABLE api_keys ADD COLUMN last_used_at BIGINT;`;

export const apiKeyLastUsed: Migration = {
  id: 12,
  name: 'api_key_last_used',
  sqlite: both(API_KEY_LAST_USED, 'sqlite'),
  postgres: both(API_KEY_LAST_USED, 'postgres'),
};
