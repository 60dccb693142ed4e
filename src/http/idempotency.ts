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
 *
 * So that a crash after the operation and before its answer cannot let that retry apply it twice, the
 * answer is recorded in the operation's own transaction wherever the operation is one: ingest records
 * it with the events (operations/events.ts), and the routes that create or change something use
 * answeredInTransaction (below), which also fences the operation by the claim. A request of several
 * transactions gives what it writes first an id derived from its key (operationId), and its retry
 * finishes that instead of starting over (the mid-month charge). The answer of the rest (PUTs and
 * settles, which converge when repeated; sign-up, email and test-clock routes) is recorded here, in
 * onSend, in a transaction of its own.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OutcomeError, failure, idempotencyKeyInUse } from '../domain/outcome.js';
import { canonicalJson, sha256Hex } from '../lib/canonical.js';
import { derivedId, type IdPrefix } from '../lib/ids.js';
import { systemClock, type Clock } from '../lib/clock.js';
import type { Deps } from '../operations/deps.js';
import type { Store } from '../store/types.js';
import { idempotencyAnswerContext } from '../operations/secrets.js';
export { IDEMPOTENCY_RETENTION_MS } from '../domain/limits.js';

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
  /** The answer was recorded in the operation's own transaction (answeredInTransaction). */
  answered?: boolean;
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

const inUse = () => new OutcomeError(idempotencyKeyInUse());

/** The answer as stored: sealed when it shows a secret. */
function storedAnswer(deps: Deps, request: FastifyRequest, idem: IdempotencyClaim, body: string): string {
  return request.method === 'POST' && SECRET_ANSWERS.has(request.routeOptions.url ?? '')
    ? deps.secrets.seal(body, idempotencyAnswerContext(idem.scope, idem.key))
    : body;
}

/**
 * Runs a write route's operation so that the answer to its Idempotency-Key is recorded in the
 * operation's own transaction: a crash after that commit leaves the key answered, and a retry replays
 * the answer instead of applying the operation again (the claim's lease alone would let it run twice).
 * The same statement fences the operation: if this request no longer owns the claim (its lease was
 * taken over), nothing is recorded and the transaction rolls back with 409 idempotency_key_in_use.
 *
 * `run` gets the operation's dependencies with a store whose one write does this; `present` turns the
 * operation's result into the answer's body (serialized as the route serializes it, for a replay to be
 * byte for byte the answer). The operation must make at most one write and return that write's
 * result (ops in operations/ that are one transaction); anything else is a programming error, thrown.
 * Without a key (or on a route that ignores keys), it is `present(await run(deps))`.
 */
export async function answeredInTransaction<T, A>(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  run: (deps: Deps) => Promise<T>,
  present: (value: T) => A,
): Promise<A> {
  const idem = request.idempotency;
  if (!idem || idem.replayed) return present(await run(deps));
  let writes = 0;
  let recorded: { result: unknown; answer: A } | undefined;
  const store: Store = {
    dialect: deps.store.dialect,
    read: (fn) => deps.store.read(fn),
    close: () => deps.store.close(),
    write: (fn) => {
      if (++writes > 1) throw new Error(`${request.routeOptions.url}: answeredInTransaction allows one write`);
      return deps.store.write(async (tx) => {
        const result = await fn(tx);
        const answer = present(result as unknown as T);
        const body = storedAnswer(deps, request, idem, reply.serialize(answer) as string);
        if (!(await tx.completeIdempotency(idem.scope, idem.key, idem.owner, reply.statusCode, body))) throw inUse();
        recorded = { result, answer };
        return result;
      });
    },
  };
  const value = await run({ ...deps, store });
  if (!recorded) return present(value);
  if (recorded.result !== value)
    throw new Error(`${request.routeOptions.url}: the operation's result is not its transaction's`);
  idem.answered = true;
  stopRenewing(idem);
  return recorded.answer;
}

/**
 * The id of what this request writes, the same on every retry of it (derived from its key, scope and
 * the key's first claim): a request that is several transactions (a charge written, the processor
 * called, the charge settled) gives it to what it writes first, and a retry after a crash in between
 * finds that and finishes it instead of doing it again. undefined without an Idempotency-Key.
 */
export async function operationId(request: FastifyRequest, deps: Deps, prefix: IdPrefix): Promise<string | undefined> {
  const idem = request.idempotency;
  if (!idem || idem.replayed) return undefined;
  const row = await deps.store.read((tx) => tx.findIdempotency(idem.scope, idem.key));
  return row && derivedId(prefix, `${idem.scope}\n${idem.key}\n${row.createdAtMs}`);
}

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
    if (idem.answered) return payload;
    if (reply.statusCode >= 500) {
      await deps.store.write((tx) => tx.releaseIdempotency(idem.scope, idem.key, idem.owner));
    } else {
      const body =
        typeof payload === 'string'
          ? payload
          : Buffer.isBuffer(payload)
            ? payload.toString('utf8')
            : JSON.stringify(payload ?? null);
      const stored = storedAnswer(deps, request, idem, body);
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
