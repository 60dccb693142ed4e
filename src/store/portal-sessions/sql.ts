/** Portal sessions: the row mapper and the SQL both databases share (portal-sessions/types.ts). */
import { SqlCore, num, numOrNull, strOrNull, type SqlRow } from '../sql-core.js';
import type { PortalScope, PortalSessionRow, PortalSessionsTx } from './types.js';

const toPortalSession = (r: SqlRow): PortalSessionRow => ({
  sessionId: String(r.session_id),
  tokenHash: String(r.token_hash),
  companyId: String(r.company_id),
  accountId: String(r.account_id),
  scopes: String(r.scopes).split(',') as PortalScope[],
  returnUrl: strOrNull(r.return_url),
  frameAncestors: JSON.parse(String(r.frame_ancestors)) as string[],
  expiresAtMs: num(r.expires_at),
  revokedAtMs: numOrNull(r.revoked_at),
  createdAtMs: num(r.created_at),
});

export class PortalSessionsSql extends SqlCore implements PortalSessionsTx {
  async findPortalSessionByToken(tokenHash: string) {
    const r = await this.one('SELECT * FROM portal_sessions WHERE token_hash = ?', [tokenHash]);
    return r && toPortalSession(r);
  }
  async findPortalSessionById(sessionId: string) {
    const r = await this.one('SELECT * FROM portal_sessions WHERE session_id = ?', [sessionId]);
    return r && toPortalSession(r);
  }
  async findPortalSession(companyId: string, sessionId: string) {
    const r = await this.one('SELECT * FROM portal_sessions WHERE session_id = ? AND company_id = ?', [
      sessionId,
      companyId,
    ]);
    return r && toPortalSession(r);
  }
  async insertPortalSession(row: PortalSessionRow) {
    await this.db.run(
      'INSERT INTO portal_sessions (session_id, token_hash, company_id, account_id, scopes, return_url, ' +
        'frame_ancestors, expires_at, revoked_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [
        row.sessionId,
        row.tokenHash,
        row.companyId,
        row.accountId,
        row.scopes.join(','),
        row.returnUrl,
        JSON.stringify(row.frameAncestors),
        row.expiresAtMs,
        row.revokedAtMs,
        row.createdAtMs,
      ],
    );
  }
  deleteEndedPortalSessions(endedBeforeMs: number, limit: number) {
    // A revoked session ended when it was revoked; every session ends at its expiry at the latest.
    return this.db.run(
      'DELETE FROM portal_sessions WHERE session_id IN (SELECT session_id FROM portal_sessions ' +
        `WHERE expires_at < ? OR revoked_at < ? ORDER BY expires_at LIMIT ?${this.skipLocked()})`,
      [endedBeforeMs, endedBeforeMs, limit],
    );
  }
  async revokePortalSession(companyId: string, sessionId: string, atMs: number) {
    if ((await this.findPortalSession(companyId, sessionId)) === undefined) return false;
    await this.db.run(
      'UPDATE portal_sessions SET revoked_at = ? WHERE session_id = ? AND company_id = ? AND revoked_at IS NULL',
      [atMs, sessionId, companyId],
    );
    return true;
  }
}
