/** Idempotency keys: the row mapper and the SQL both databases share (mixed into SqlTx, sql-base.ts). */
import { numOrNull, strOrNull, num, type SqlBase, type SqlRow } from '../sql-core.js';
import type { IdempotencyRow, IdempotencyTx } from './types.js';

const toIdempotency = (r: SqlRow): IdempotencyRow => ({
  scope: String(r.scope),
  key: String(r.key),
  requestHash: String(r.request_hash),
  statusCode: numOrNull(r.status_code),
  responseBody: strOrNull(r.response_body),
  createdAtMs: num(r.created_at),
});

export function idempotencySql<Base extends SqlBase>(base: Base) {
  abstract class IdempotencySql extends base implements IdempotencyTx {
    async findIdempotency(scope: string, key: string) {
      const r = await this.one('SELECT * FROM idempotency_keys WHERE scope = ? AND key = ?', [scope, key]);
      return r && toIdempotency(r);
    }

    async claimIdempotency(row: IdempotencyRow) {
      return (
        (await this.db.run(
          'INSERT INTO idempotency_keys (scope, key, request_hash, status_code, response_body, created_at) ' +
            'VALUES (?, ?, ?, NULL, NULL, ?) ON CONFLICT (scope, key) DO NOTHING',
          [row.scope, row.key, row.requestHash, row.createdAtMs],
        )) > 0
      );
    }
    async completeIdempotency(scope: string, key: string, statusCode: number, responseBody: string) {
      await this.db.run('UPDATE idempotency_keys SET status_code = ?, response_body = ? WHERE scope = ? AND key = ?', [
        statusCode,
        responseBody,
        scope,
        key,
      ]);
    }
    async releaseIdempotency(scope: string, key: string) {
      await this.db.run('DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND status_code IS NULL', [
        scope,
        key,
      ]);
    }
    async deleteIdempotencyBefore(createdBeforeMs: number) {
      return this.db.run('DELETE FROM idempotency_keys WHERE created_at < ?', [createdBeforeMs]);
    }
  }
  return IdempotencySql;
}
