/**
 * 23. Ended portal sessions are deleted a while after they end (jobs/retention.ts): found by their expiry.
 */
import { both, type Migration } from './migration.js';

const PORTAL_SESSION_EXPIRY = `
CREATE INDEX portal_sessions_expiry ON portal_sessions (expires_at);
`;

export const portalSessionExpiry: Migration = {
  id: 23,
  name: 'portal_session_expiry',
  sqlite: both(PORTAL_SESSION_EXPIRY, 'sqlite'),
  postgres: both(PORTAL_SESSION_EXPIRY, 'postgres'),
};
