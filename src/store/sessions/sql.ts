/** Sessions and user tokens: row mappers and the SQL both databases share (mixed into SqlTx, sql-base.ts). */
import { SqlCore, num, numOrNull, type SqlRow } from '../sql-core.js';
import type { SessionRow, SessionsTx, UserTokenRow } from './types.js';

export const toSession = (r: SqlRow): SessionRow => ({
  idHash: String(r.id_hash),
  userId: num(r.user_id),
  csrfToken: String(r.csrf_token),
  createdAtMs: num(r.created_at),
  lastSeenAtMs: num(r.last_seen_at),
  expiresAtMs: num(r.expires_at),
  revokedAtMs: numOrNull(r.revoked_at),
});

export const toUserToken = (r: SqlRow): UserTokenRow => ({
  tokenHash: String(r.token_hash),
  userId: num(r.user_id),
  purpose: r.purpose === 'reset_password' ? 'reset_password' : 'verify_email',
  createdAtMs: num(r.created_at),
  expiresAtMs: num(r.expires_at),
  usedAtMs: numOrNull(r.used_at),
});

export class SessionsSql extends SqlCore implements SessionsTx {
  async findSession(idHash: string) {
    const r = await this.one('SELECT * FROM sessions WHERE id_hash = ?', [idHash]);
    return r && toSession(r);
  }
  async insertSession(row: SessionRow) {
    await this.db.run(
      'INSERT INTO sessions (id_hash, user_id, csrf_token, created_at, last_seen_at, expires_at, revoked_at) ' +
        'VALUES (?, ?, ?, ?, ?, ?, ?)',
      [row.idHash, row.userId, row.csrfToken, row.createdAtMs, row.lastSeenAtMs, row.expiresAtMs, row.revokedAtMs],
    );
  }
  async touchSession(idHash: string, atMs: number) {
    return (
      (await this.db.run(
        'UPDATE sessions SET last_seen_at = ? WHERE id_hash = ? AND revoked_at IS NULL AND last_seen_at < ?',
        [atMs, idHash, atMs],
      )) > 0
    );
  }
  async revokeSession(idHash: string, atMs: number) {
    return (
      (await this.db.run('UPDATE sessions SET revoked_at = ? WHERE id_hash = ? AND revoked_at IS NULL', [
        atMs,
        idHash,
      ])) > 0
    );
  }
  async revokeUserSessions(userId: number, atMs: number) {
    return this.db.run('UPDATE sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL', [atMs, userId]);
  }
  async insertUserToken(row: UserTokenRow) {
    await this.db.run(
      'INSERT INTO user_tokens (token_hash, user_id, purpose, created_at, expires_at, used_at) ' +
        'VALUES (?, ?, ?, ?, ?, ?)',
      [row.tokenHash, row.userId, row.purpose, row.createdAtMs, row.expiresAtMs, row.usedAtMs],
    );
  }
  async useUserToken(tokenHash: string, purpose: UserTokenRow['purpose'], atMs: number) {
    const r = await this.one(
      'UPDATE user_tokens SET used_at = ? ' +
        'WHERE token_hash = ? AND purpose = ? AND used_at IS NULL AND expires_at > ? RETURNING *',
      [atMs, tokenHash, purpose, atMs],
    );
    return r && toUserToken(r);
  }
}
