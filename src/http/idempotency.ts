/**
 * Idempotency-Key on every POST, PUT, PATCH and DELETE: key + hash of the request. The same
 * key and request replays the first response (`Idempotent-Replayed: true`); the same key with
 * another request is 409. Scoped to the company (or the user); kept at least 24 hours.
 * A request that ends in a 5xx releases its key so that a retry runs again.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OutcomeError, failure } from '../domain/outcome.js';
import { canonicalJson, sha256Hex } from '../lib/canonical.js';
import type { Deps } from '../operations/deps.js';
export { IDEMPOTENCY_RETENTION_MS } from '../operations/deps.js';

export const IDEMPOTENCY_KEY_LENGTH_MAX = 255;
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: the route ignores Idempotency-Key (its answer carries a secret or a cookie a replay cannot give). */
    idempotency?: false;
  }
  interface FastifyRequest {
    idempotency?: { scope: string; key: string; replayed: boolean };
  }
}

function scopeOf(request: FastifyRequest, requestHash: string): string {
  const p = request.principal;
  if (p?.kind === 'company') return `company:${p.companyId}`;
  if (p?.kind === 'user') return `user:${p.user.id}`;
  // No credentials (sign-up): only an identical request can share a key, so no one can read
  // another caller's response by guessing their key.
  return `anonymous:${requestHash}`;
}

export function registerIdempotency(app: FastifyInstance, deps: Deps): void {
  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    const raw = request.headers['idempotency-key'];
    if (raw === undefined || !MUTATING.has(request.method) || request.routeOptions.config.idempotency === false) return;
    const key = Array.isArray(raw) ? raw[0]! : raw;
    if (key.length === 0 || key.length > IDEMPOTENCY_KEY_LENGTH_MAX) {
      throw new OutcomeError(
        failure(
          'invalid_idempotency_key',
          `Idempotency-Key must be 1–${IDEMPOTENCY_KEY_LENGTH_MAX} characters`,
          'Idempotency-Key',
        ),
      );
    }
    const requestHash = sha256Hex(canonicalJson({ m: request.method, u: request.url, b: request.body ?? null }));
    const scope = scopeOf(request, requestHash);
    const now = deps.clock.now();
    const claimed = await deps.store.write((tx) =>
      tx.claimIdempotency({ scope, key, requestHash, statusCode: null, responseBody: null, createdAtMs: now }),
    );
    if (claimed) {
      request.idempotency = { scope, key, replayed: false };
      return;
    }
    const existing = await deps.store.read((tx) => tx.findIdempotency(scope, key));
    if (!existing)
      throw new OutcomeError(
        failure('idempotency_key_in_use', 'a request with this Idempotency-Key is in progress; retry shortly'),
      );
    if (existing.requestHash !== requestHash) {
      throw new OutcomeError(
        failure(
          'idempotency_key_reused_with_different_request',
          'this Idempotency-Key was used for a different request',
          'Idempotency-Key',
        ),
      );
    }
    if (existing.statusCode === null || existing.responseBody === null) {
      throw new OutcomeError(
        failure('idempotency_key_in_use', 'a request with this Idempotency-Key is in progress; retry shortly'),
      );
    }
    request.idempotency = { scope, key, replayed: true };
    return reply
      .code(existing.statusCode)
      .header('idempotent-replayed', 'true')
      .type('application/json; charset=utf-8')
      .send(existing.responseBody);
  });

  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const idem = request.idempotency;
    if (!idem || idem.replayed) return payload;
    if (reply.statusCode >= 500) {
      await deps.store.write((tx) => tx.releaseIdempotency(idem.scope, idem.key));
    } else {
      const body =
        typeof payload === 'string'
          ? payload
          : Buffer.isBuffer(payload)
            ? payload.toString('utf8')
            : JSON.stringify(payload ?? null);
      await deps.store.write((tx) => tx.completeIdempotency(idem.scope, idem.key, reply.statusCode, body));
    }
    return payload;
  });
}
