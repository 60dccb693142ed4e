/**
 * Idempotency-Key on every POST, PUT, PATCH and DELETE: key + hash of the request. The same
 * key and request replays the first response (`Idempotent-Replayed: true`); the same key with
 * another request is 409. Scoped to the company (or the user); kept at least 24 hours.
 * A request that ends in a 5xx releases its key so that a retry runs again.
 *
 * While the first request runs, its key is a leased claim: a random owner token and a lease of
 * IDEMPOTENCY_LEASE_MS on the wall clock (a lease guards real work in progress, so a test clock moved
 * forward never hands a running request's key to a duplicate), renewed every third of the lease while
 * the handler runs. A duplicate meanwhile is 409 `idempotency_key_in_use`. When the owner dies
 * (kill -9, power loss), its lease runs out and the next retry with the same request takes the key
 * over and runs the request; only the owner may record the answer or release the key.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OutcomeError, failure } from '../domain/outcome.js';
import { canonicalJson, sha256Hex } from '../lib/canonical.js';
import { systemClock, type Clock } from '../lib/clock.js';
import type { Deps } from '../operations/deps.js';
import { idempotencyAnswerContext } from '../operations/secrets.js';
export { IDEMPOTENCY_RETENTION_MS } from '../operations/deps.js';

export const IDEMPOTENCY_KEY_LENGTH_MAX = 255;
/** How long a claim survives its owner without being renewed. */
export const IDEMPOTENCY_LEASE_MS = 30_000;
/** A handler still running after this long stops renewing (its claim then lapses like a dead one's). */
const RENEW_FOR_AT_MOST_MS = 15 * 60_000;
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/**
 * Routes whose answer shows a secret (a webhook's signing secret, a company's API key): their stored
 * answer, replayed for the key's retention, is sealed at rest like the secrets themselves.
 */
const SECRET_ANSWERS = new Set(['/v1/webhooks', '/v1/companies', '/v1/companies/:company_id/api_keys']);

interface IdempotencyClaim {
  scope: string;
  key: string;
  replayed: boolean;
  owner: string;
  renewal?: NodeJS.Timeout;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: the route ignores Idempotency-Key (its answer carries a secret or a cookie a replay cannot give). */
    idempotency?: false;
  }
  interface FastifyRequest {
    idempotency?: IdempotencyClaim;
  }
}

export interface IdempotencyOptions {
  /** Default IDEMPOTENCY_LEASE_MS; tests shorten it. */
  leaseMs?: number;
  /** The clock of leases: the wall clock unless a test gives another. */
  leaseClock?: Clock;
}

function scopeOf(request: FastifyRequest, requestHash: string): string {
  const p = request.principal;
  if (p?.kind === 'company') return `company:${p.companyId}`;
  if (p?.kind === 'user') return `user:${p.user.id}`;
  // No credentials (sign-up): only an identical request can share a key, so no one can read
  // another caller's response by guessing their key.
  return `anonymous:${requestHash}`;
}

const inUse = () =>
  new OutcomeError(
    failure('idempotency_key_in_use', 'a request with this Idempotency-Key is in progress; retry shortly'),
  );

function stopRenewing(idem: IdempotencyClaim | undefined): void {
  if (idem?.renewal) clearInterval(idem.renewal);
  if (idem) delete idem.renewal;
}

export function registerIdempotency(app: FastifyInstance, deps: Deps, opts: IdempotencyOptions = {}): void {
  const leaseMs = opts.leaseMs ?? IDEMPOTENCY_LEASE_MS;
  const leaseClock = opts.leaseClock ?? systemClock;

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
    const owner = randomBytes(12).toString('base64url');
    const wallMs = leaseClock.now();
    const claimed = await deps.store.write((tx) =>
      tx.claimIdempotency(
        {
          scope,
          key,
          requestHash,
          statusCode: null,
          responseBody: null,
          createdAtMs: deps.clock.now(),
          owner,
          leaseExpiresAtMs: wallMs + leaseMs,
        },
        wallMs,
      ),
    );
    if (claimed) {
      const idem: IdempotencyClaim = { scope, key, replayed: false, owner };
      const startedMs = wallMs;
      idem.renewal = setInterval(
        () => {
          const now = leaseClock.now();
          if (now - startedMs > RENEW_FOR_AT_MOST_MS) return stopRenewing(idem);
          deps.store
            .write((tx) => tx.renewIdempotency(scope, key, owner, now + leaseMs))
            .then(
              (held) => {
                if (!held) stopRenewing(idem);
              },
              (err: unknown) => request.log.warn({ err }, 'renewing an Idempotency-Key lease failed'),
            );
        },
        Math.max(1, Math.floor(leaseMs / 3)),
      );
      idem.renewal.unref();
      request.idempotency = idem;
      return;
    }
    const existing = await deps.store.read((tx) => tx.findIdempotency(scope, key));
    if (!existing) throw inUse();
    if (existing.requestHash !== requestHash) {
      throw new OutcomeError(
        failure(
          'idempotency_key_reused_with_different_request',
          'this Idempotency-Key was used for a different request',
          'Idempotency-Key',
        ),
      );
    }
    if (existing.statusCode === null || existing.responseBody === null) throw inUse();
    request.idempotency = { scope, key, replayed: true, owner };
    return reply
      .code(existing.statusCode)
      .header('idempotent-replayed', 'true')
      .type('application/json; charset=utf-8')
      .send(deps.secrets.open(existing.responseBody, idempotencyAnswerContext(scope, key)));
  });

  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const idem = request.idempotency;
    if (!idem || idem.replayed) return payload;
    stopRenewing(idem);
    if (reply.statusCode >= 500) {
      await deps.store.write((tx) => tx.releaseIdempotency(idem.scope, idem.key, idem.owner));
    } else {
      const body =
        typeof payload === 'string'
          ? payload
          : Buffer.isBuffer(payload)
            ? payload.toString('utf8')
            : JSON.stringify(payload ?? null);
      const stored =
        request.method === 'POST' && SECRET_ANSWERS.has(request.routeOptions.url ?? '')
          ? deps.secrets.seal(body, idempotencyAnswerContext(idem.scope, idem.key))
          : body;
      await deps.store.write((tx) =>
        tx.completeIdempotency(idem.scope, idem.key, idem.owner, reply.statusCode, stored),
      );
    }
    return payload;
  });
  // The answer written (or the socket closed) stops it too; a client that went away does not:
  // its request still runs, and its key stays held until the handler is done.
  app.addHook('onResponse', async (request: FastifyRequest) => stopRenewing(request.idempotency));
}
