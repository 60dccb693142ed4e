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
 * One path records answers: the answer is written in the transaction of the change it answers, so a
 * crash between the two cannot exist, and a retry after a crash replays the answer instead of applying
 * the change twice. A route whose operation is one transaction runs it through runCommand (below); an
 * ingest request's answer is written by its group commit (operations/events.ts, ingestGroup). What is
 * left is answered in onSend, in a transaction of its own:
 * - refusals (4xx), which changed nothing;
 * - the routes of ANSWERED_AFTER, each with the reason its change and its answer cannot share a
 *   transaction. test/http/idempotency-in-transaction.test.ts keeps every write route in one of the
 *   two groups.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OutcomeError, failure, idempotencyKeyInUse } from '../domain/outcome.js';
import { canonicalJson, sha256Hex } from '../lib/canonical.js';
import { derivedId, type IdPrefix } from '../lib/ids.js';
import { systemClock, type Clock } from '../lib/clock.js';
import type { Command, Deps } from '../operations/deps.js';
import { idempotencyAnswerContext } from '../operations/secrets.js';
export { IDEMPOTENCY_RETENTION_MS } from '../domain/limits.js';

export const IDEMPOTENCY_KEY_LENGTH_MAX = 255;
/** How long a claim survives its owner without being renewed. */
export const IDEMPOTENCY_LEASE_MS = 30_000;
/** A handler still running after this long stops renewing (its claim then lapses like a dead one's). */
const RENEW_FOR_AT_MOST_MS = 15 * 60_000;
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/**
 * Routes whose answer shows a secret (a webhook's signing secret, a company's API key, a portal token): their stored
 * answer, replayed for the key's retention, is sealed at rest like the secrets themselves.
 */
const SECRET_ANSWERS = new Set([
  '/v1/webhooks',
  '/v1/companies',
  '/v1/companies/:company_id/api_keys',
  '/v1/accounts/:account_id/portal_sessions',
]);

export interface IdempotencyClaim {
  scope: string;
  key: string;
  replayed: boolean;
  owner: string;
  /** The answer was recorded in the transaction of the change (runCommand, or the group commit). */
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
  if (p?.kind === 'portal') return `portal:${p.session.sessionId}`;
  // No credentials (sign-up): only an identical request can share a key, so no one can read
  // another caller's response by guessing their key.
  return `anonymous:${requestHash}`;
}

const inUse = () => new OutcomeError(idempotencyKeyInUse());

/**
 * The write routes whose answer is recorded after their change, in a transaction of its own, and why
 * each cannot record it with the change. Every other write route records it with the change.
 */
export const ANSWERED_AFTER: Readonly<Record<string, string>> = {
  'PUT /v1/events/:event_id':
    "settles are group-committed on SQLite's writer thread, which cannot present the HTTP answer; a settle " +
    'repeated after a crash converges (the state the event already has is a no-op answered with the same event)',
  'POST /v1/portal/topups':
    'several transactions around a card charge (the customer present); its charge id is derived from the key ' +
    '(operationId), so a retry finishes that purchase instead of charging again',
  'POST /v1/accounts/:account_id/modifymidmonth':
    'several transactions around a card charge; its charge id is derived from the key (operationId), so a retry ' +
    'finishes that charge instead of charging again',
  'POST /v1/users/:user_id/email_verifications':
    'writes a one-time token and emails it after the answer; a repeat sends another valid link, no other change',
  'POST /v1/password_resets':
    'the token is written and emailed in the background, after the answer (which must not tell whether the ' +
    'address exists); a repeat sends another link',
  'POST /v1/webhooks/deliveries/:callback_id/retry':
    'an HTTP delivery is attempted before its outcome is written; a repeat attempts once more, and receivers ' +
    'drop a repeated webhook-id',
  'DELETE /v1/sessions/current':
    'its answer clears the session cookie, which a stored answer cannot replay; revoking a session twice is a no-op',
  'POST /v1/test_clock/advance':
    'the due jobs it runs are transactions of their own (a test clock: development and tests only)',
};

/** The answer as stored: sealed when it shows a secret. */
function storedAnswer(deps: Deps, request: FastifyRequest, idem: IdempotencyClaim, body: string): string {
  return request.method === 'POST' && SECRET_ANSWERS.has(request.routeOptions.url ?? '')
    ? deps.secrets.seal(body, idempotencyAnswerContext(idem.scope, idem.key))
    : body;
}

/**
 * The command runner: runs a write route's command (operations/deps.ts, Command) in a transaction it
 * opens, and with an Idempotency-Key records the request's answer in that same transaction. A crash
 * after that commit leaves the key answered, and a retry replays the answer instead of applying the
 * command again. The same statement fences the command: if this request no longer owns the claim (its
 * lease was taken over), nothing is recorded and the transaction rolls back with 409
 * idempotency_key_in_use. `present` turns the command's result into the answer's body, serialized as
 * the route serializes it, so that a replay is the answer byte for byte.
 */
export async function runCommand<T, A>(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  command: Command<T> | Promise<Command<T>>,
  present: (value: T) => A,
): Promise<A> {
  const run = await command;
  const idem = request.idempotency && !request.idempotency.replayed ? request.idempotency : undefined;
  const answer = await deps.store.write(async (tx) => {
    const answer = present(await run(tx));
    if (idem) {
      const body = storedAnswer(deps, request, idem, reply.serialize(answer) as string);
      if (!(await tx.idempotency.completeIdempotency(idem.scope, idem.key, idem.owner, reply.statusCode, body)))
        throw inUse();
    }
    return answer;
  });
  if (idem) answeredWithTheChange(idem);
  return answer;
}

/**
 * The claim of a request whose answer was recorded with its change (by runCommand, or by the group
 * commit of an ingest request or a settle): onSend records nothing more.
 */
export function answeredWithTheChange(idem: IdempotencyClaim): void {
  idem.answered = true;
  stopRenewing(idem);
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
  const row = await deps.store.read((tx) => tx.idempotency.findIdempotency(idem.scope, idem.key));
  return row && derivedId(prefix, `${idem.scope}\n${idem.key}\n${row.createdAtMs}`);
}

function stopRenewing(idem: IdempotencyClaim | undefined): void {
  if (idem?.renewal) clearInterval(idem.renewal);
  if (idem) delete idem.renewal;
}

export function registerIdempotency(app: FastifyInstance, deps: Deps, opts: IdempotencyOptions = {}): void {
  const lease = { ms: opts.leaseMs ?? IDEMPOTENCY_LEASE_MS, clock: opts.leaseClock ?? systemClock };

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
    if (await claim(deps, lease, { scope, key, requestHash, owner }, request)) return;
    const existing = await deps.store.read((tx) => tx.idempotency.findIdempotency(scope, key));
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
    const route = `${request.method} ${request.routeOptions.url ?? ''}`;
    if (reply.statusCode < 300 && !(route in ANSWERED_AFTER))
      request.log.error({ route }, 'a change was answered outside its transaction: run it through runCommand');
    if (reply.statusCode >= 500) {
      await deps.store.write((tx) => tx.idempotency.releaseIdempotency(idem.scope, idem.key, idem.owner));
    } else {
      const body =
        typeof payload === 'string'
          ? payload
          : Buffer.isBuffer(payload)
            ? payload.toString('utf8')
            : JSON.stringify(payload ?? null);
      const stored = storedAnswer(deps, request, idem, body);
      await deps.store.write((tx) =>
        tx.idempotency.completeIdempotency(idem.scope, idem.key, idem.owner, reply.statusCode, stored),
      );
    }
    return payload;
  });
  // The answer written (or the socket closed) stops it too; a client that went away does not:
  // its request still runs, and its key stays held until the handler is done.
  app.addHook('onResponse', async (request: FastifyRequest) => stopRenewing(request.idempotency));
}

/**
 * Claims the key for this request (a lease of `lease.ms`, renewed every third of it while the handler
 * runs, for at most RENEW_FOR_AT_MOST_MS): true when claimed, false when another request holds or
 * answered it.
 */
async function claim(
  deps: Deps,
  lease: { ms: number; clock: Clock },
  k: { scope: string; key: string; requestHash: string; owner: string },
  request: FastifyRequest,
): Promise<boolean> {
  const { scope, key, owner } = k;
  const wallMs = lease.clock.now();
  const claimed = await deps.store.write((tx) =>
    tx.idempotency.claimIdempotency(
      {
        scope,
        key,
        requestHash: k.requestHash,
        statusCode: null,
        responseBody: null,
        createdAtMs: deps.clock.now(),
        owner,
        leaseExpiresAtMs: wallMs + lease.ms,
      },
      wallMs,
    ),
  );
  if (!claimed) return false;
  const idem: IdempotencyClaim = { scope, key, replayed: false, owner };
  idem.renewal = setInterval(
    () => {
      const now = lease.clock.now();
      if (now - wallMs > RENEW_FOR_AT_MOST_MS) return stopRenewing(idem);
      deps.store
        .write((tx) => tx.idempotency.renewIdempotency(scope, key, owner, now + lease.ms))
        .then(
          (held) => {
            if (!held) stopRenewing(idem);
          },
          (err: unknown) => request.log.warn({ err }, 'renewing an Idempotency-Key lease failed'),
        );
    },
    Math.max(1, Math.floor(lease.ms / 3)),
  );
  idem.renewal.unref();
  request.idempotency = idem;
  return true;
}
