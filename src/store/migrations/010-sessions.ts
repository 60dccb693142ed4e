/**
 * 10. Console sessions and one-time email tokens (docs/ARCHITECTURE.md, "Sessions and the console's
 * API"). A session is known only by the SHA-256 of its random id (`id_hash`); it ends at
 * `expires_at` (the absolute limit), after the idle time past `last_seen_at` (the server's setting,
 * applied when it is read), or when revoked. A user token (email verification, password reset) is
 * likewise stored only hashed, has a purpose, an expiry, and is used at most once (`used_at`).
 */
import { both, type Migration } from './migration.js';

const SESSIONS = `
CREATE TABLE sessions (
  id_hash TEXT PRIMARY KEY,
  user_id BIGINT NOT NULL REFERENCES users(id),
  csrf_token TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  last_seen_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  revoked_at BIGINT
);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE TABLE user_tokens (
  token_hash TEXT PRIMARY KEY,
  user_id BIGINT NOT NULL REFERENCES users(id),
  purpose TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  used_at BIGINT
);
CREATE INDEX user_tokens_user ON user_tokens (user_id);`;

export const sessions: Migration = {
  id: 10,
  name: 'sessions',
  sqlite: both(SESSIONS, 'sqlite'),
  // Every text column compares as bytes on PostgreSQL too (collation "C", as since migration 5).
  postgres: `${both(SESSIONS, 'postgres')}
ALTER TABLE sessions ALTER COLUMN id_hash TYPE text COLLATE "C", ALTER COLUMN csrf_token TYPE text COLLATE "C";
ALTER TABLE user_tokens ALTER COLUMN token_hash TYPE text COLLATE "C", ALTER COLUMN purpose TYPE text COLLATE "C";`,
};
