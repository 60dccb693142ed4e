/** Idempotency keys: the row mapper and the SQL both databases share (mixed into SqlTx, sql-base.ts). */
import { SqlCore, numOrNull, strOrNull, num, type SqlRow } from '../sql-core.js';
import type { IdempotencyRow, IdempotencyTx } from './types.js';

const toIdempotency = (r: SqlRow): IdempotencyRow => ({
  scope: String(r.scope),
  key: String(r.key),
  requestHash: String(r.request_hash),
  statusCode: numOrNull(r.status_code),
  responseBody: strOrNull(r.response_body),
  createdAtMs: num(r.created_at),
  owner: strOrNull(r.owner),
  leaseExpiresAtMs: numOrNull(r.lease_expires_at),
});

/** A scope never holds a newline (company:…, user:…, anonymous:<hex>); a key may. */
function splitId(id: string): [scope: string, key: string] {
  const nl = id.indexOf('\n');
  return [id.slice(0, nl), id.slice(nl + 1)];
}

export class IdempotencySql extends SqlCore implements IdempotencyTx {
  async findIdempotency(scope: string, key: string) {
    const r = await this.one('SELECT * FROM idempotency_keys WHERE scope = ? AND key = ?', [scope, key]);
    return r && toIdempotency(r);
  }

  // One statement: a new claim, or the take-over of a lapsed claim of the same request. An
  // answered key, a live claim and another request's key are left alone (0 rows).
  async claimIdempotency(row: IdempotencyRow, nowWallMs: number) {
    return (
      (await this.db.run(
        'INSERT INTO idempotency_keys ' +
          '(scope, key, request_hash, status_code, response_body, created_at, owner, lease_expires_at) ' +
          'VALUES (?, ?, ?, NULL, NULL, ?, ?, ?) ON CONFLICT (scope, key) DO UPDATE ' +
          'SET owner = excluded.owner, lease_expires_at = excluded.lease_expires_at ' +
          'WHERE idempotency_keys.status_code IS NULL AND idempotency_keys.request_hash = excluded.request_hash ' +
          'AND (idempotency_keys.lease_expires_at IS NULL OR idempotency_keys.lease_expires_at <= ?)',
        [row.scope, row.key, row.requestHash, row.createdAtMs, row.owner, row.leaseExpiresAtMs, nowWallMs],
      )) > 0
    );
  }
  async renewIdempotency(scope: string, key: string, owner: string, leaseExpiresAtMs: number) {
    return (
      (await this.db.run(
        'UPDATE idempotency_keys SET lease_expires_at = ? ' +
          'WHERE scope = ? AND key = ? AND owner = ? AND status_code IS NULL',
        [leaseExpiresAtMs, scope, key, owner],
      )) > 0
    );
  }
  async completeIdempotency(scope: string, key: string, owner: string, statusCode: number, responseBody: string) {
    return (
      (await this.db.run(
        'UPDATE idempotency_keys SET status_code = ?, response_body = ?, lease_expires_at = NULL ' +
          'WHERE scope = ? AND key = ? AND owner = ? AND status_code IS NULL',
        [statusCode, responseBody, scope, key, owner],
      )) > 0
    );
  }
  async releaseIdempotency(scope: string, key: string, owner: string) {
    await this.db.run(
      'DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND owner = ? AND status_code IS NULL',
      [scope, key, owner],
    );
  }
  async listSealedIdempotencyAnswers(afterId: string | null, limit: number) {
    const [scope, key] = afterId === null ? ['', ''] : splitId(afterId);
    const rows = await this.db.all(
      'SELECT scope, key, response_body FROM idempotency_keys ' +
        "WHERE response_body LIKE 'sbx1.%' AND (scope > ? OR (scope = ? AND key > ?)) ORDER BY scope, key LIMIT ?",
      [scope, scope, key, limit],
    );
    return rows.map((r) => ({ id: `${String(r.scope)}\n${String(r.key)}`, value: String(r.response_body) }));
  }
  async replaceIdempotencyAnswer(id: string, from: string, to: string) {
    const [scope, key] = splitId(id);
    return (
      (await this.db.run(
        'UPDATE idempotency_keys SET response_body = ? WHERE scope = ? AND key = ? AND response_body = ?',
        [to, scope, key, from],
      )) > 0
    );
  }
  async deleteIdempotencyBefore(createdBeforeMs: number) {
    return this.db.run('DELETE FROM idempotency_keys WHERE created_at < ?', [createdBeforeMs]);
  }
}
