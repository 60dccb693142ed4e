/**
 * 19. Customer portal sessions (contract "Customer portal, top-ups and receipts"): a company opens one for an
 * account; the portal's token (`pt_…`) is stored only as its SHA-256 (`token_hash`, the one lookup a portal request
 * makes); `scopes` is a comma list (`read`, `topup`); `frame_ancestors` a JSON list of origins that may frame the
 * portal's page. A session answers until `expires_at` or `revoked_at`.
 */
import { BYTE_ORDER_TEXT } from './005-byte-order-text.js';
import { both, type Migration } from './migration.js';

const PORTAL_SESSIONS = `
CREATE TABLE portal_sessions (
  session_id TEXT PRIMARY KEY,
  token_hash TEXT NOT NULL UNIQUE,
  company_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  scopes TEXT NOT NULL,
  return_url TEXT,
  frame_ancestors TEXT NOT NULL,
  expires_at BIGINT NOT NULL,
  revoked_at BIGINT,
  created_at BIGINT NOT NULL
);
CREATE INDEX portal_sessions_account ON portal_sessions (account_id);
`;

export const portalSessions: Migration = {
  id: 19,
  name: 'portal_sessions',
  sqlite: both(PORTAL_SESSIONS, 'sqlite'),
  postgres: both(PORTAL_SESSIONS, 'postgres') + BYTE_ORDER_TEXT,
};
