/**
 * Authentication. Four kinds of credentials:
 * - a company's `company_id:api_key` (HTTP Basic; every /v1 resource; a fast digest check, done
 *   before the body is even parsed);
 * - a user's `email:password` (HTTP Basic; user routes; scrypt, done in preHandler, refused before
 *   scrypt runs when the email or the client address has too many recent failures);
 * - a console session: the `billing_session` cookie, only when no Authorization header is sent. On
 *   user routes it acts as its user; on company routes as the company named by `Billing-Company`,
 *   which the user must own. A state-changing request must carry the session's `X-CSRF-Token`;
 * - a customer portal token: `Authorization: Bearer pt_…`, on the portal's routes only (`/v1/portal/…`), which
 *   take nothing else; it acts as its session's account, within its scopes.
 * Each route declares which it takes (`config.auth`); a credential of another kind is a 401.
 */
import { timingSafeEqual } from 'node:crypto';
import type {} from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OutcomeError, failure } from '../domain/outcome.js';
import type { PortalSessionRow, SessionRow, UserRow } from '../store/types.js';
import { resolvePortalToken } from '../operations/portal-sessions.js';
import { authenticateUser, normalizeEmail, type ApiKeyCache } from '../operations/identity.js';
import type { Deps } from '../operations/deps.js';
import { resolveSession } from '../operations/sessions.js';
import type { AttemptLimiter } from './attempts.js';

/**
 * none: public; company: company key (or a session with Billing-Company); user: user password (or a
 * session); either: both; session: the session cookie only (the session's own routes); portal: a portal token only.
 */
export type AuthMode = 'none' | 'company' | 'user' | 'either' | 'session' | 'portal';

export type Principal =
  | { kind: 'company'; companyId: string }
  | { kind: 'user'; user: UserRow }
  | { kind: 'portal'; session: PortalSessionRow };

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
    /** The body may be left out entirely; it then validates as `{}`. */
    optionalBody?: boolean;
  }
  interface FastifyRequest {
    principal: Principal | null;
    /** The console session the request was authenticated by (null: none). */
    session: SessionRow | null;
    /** The request relied on the session cookie (its 401s carry no Basic challenge: no browser prompt). */
    viaSession: boolean;
  }
}

export const SESSION_COOKIE = 'billing_session';
export const COMPANY_HEADER = 'billing-company';
export const CSRF_HEADER = 'x-csrf-token';
const COMPANY_ID_PREFIX = 'c_';
/** Longest credential we bother to decode; longer headers are refused outright. */
const CREDENTIALS_LENGTH_MAX = 1024;
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function parseBasic(header: string | undefined): { username: string; password: string } | null {
  if (!header || header.length > CREDENTIALS_LENGTH_MAX) return null;
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export function unauthorized(message = 'valid HTTP Basic credentials are required'): OutcomeError {
  return new OutcomeError(failure('authentication_required', message));
}

const noSession = () => unauthorized('no live session: log in with POST /v1/sessions');

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The session cookie: the user, or the company of `Billing-Company`; CSRF checked on state changes. */
async function sessionAuth(deps: Deps, request: FastifyRequest, mode: AuthMode, cookie: string): Promise<void> {
  request.viaSession = true;
  const companyId = mode === 'company' ? header(request, COMPANY_HEADER) : undefined;
  const asked = companyId?.startsWith(COMPANY_ID_PREFIX) ? companyId : undefined;
  const found = await resolveSession(deps, cookie, asked);
  if (!found) throw noSession();
  if (MUTATING.has(request.method) && !sameSecret(header(request, CSRF_HEADER) ?? '', found.session.csrfToken)) {
    throw new OutcomeError(
      failure(
        'csrf_token_invalid',
        "a request authenticated by the session cookie must send the session's csrf_token in X-CSRF-Token",
        'X-CSRF-Token',
      ),
    );
  }
  request.session = found.session;
  if (mode !== 'company') {
    request.principal = { kind: 'user', user: found.user };
    return;
  }
  if (companyId === undefined || companyId === '')
    throw unauthorized('with a session, a company route needs the Billing-Company header naming one of your companies');
  if (!found.member) throw new OutcomeError(failure('not_found', 'no such company', 'Billing-Company'));
  request.principal = { kind: 'company', companyId };
}

/** onRequest: company credentials or the session cookie, where the route takes them. */
export function companyAuthHook(keys: ApiKeyCache, deps: Deps) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    request.principal = null;
    request.session = null;
    request.viaSession = false;
    const mode = request.routeOptions.config.auth ?? 'none';
    if (mode === 'none') return;
    if (mode === 'portal') return portalAuth(deps, request);
    if (request.headers.authorization === undefined) {
      const cookie = request.cookies[SESSION_COOKIE];
      if (cookie !== undefined && cookie !== '') return sessionAuth(deps, request, mode, cookie);
    }
    if (mode === 'session') {
      request.viaSession = true;
      throw noSession();
    }
    if (mode === 'user') return;
    const creds = parseBasic(request.headers.authorization);
    if (creds === null) {
      if (mode === 'company') throw unauthorized();
      return; // `either`: the user check (preHandler) will decide
    }
    if (!creds.username.startsWith(COMPANY_ID_PREFIX)) {
      if (mode === 'company') throw unauthorized();
      return;
    }
    if (!(await keys.authenticate(creds.username, creds.password, request.log))) throw unauthorized();
    request.principal = { kind: 'company', companyId: creds.username };
    void reply;
  };
}

const noPortalToken = () =>
  unauthorized("the portal takes Authorization: Bearer pt_… with a live portal session's token, and nothing else");

/** A portal route: the live session of the Bearer token (a malformed, unknown, ended or other credential: 401). */
async function portalAuth(deps: Deps, request: FastifyRequest): Promise<void> {
  const header = request.headers.authorization;
  if (header === undefined || header.length > CREDENTIALS_LENGTH_MAX) throw noPortalToken();
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  const session = m === null ? undefined : await resolvePortalToken(deps, m[1]!);
  if (session === undefined) throw noPortalToken();
  request.principal = { kind: 'portal', session };
}

/**
 * A user's password, under the failed-attempt limit: refused (429 with Retry-After, before scrypt)
 * while the email or the client address is at its limit; a failure counts against both.
 */
export async function checkPassword(
  deps: Deps,
  attempts: AttemptLimiter,
  request: FastifyRequest,
  reply: FastifyReply,
  email: string,
  password: string,
): Promise<UserRow> {
  const keys = [`ip:${request.ip}`, `email:${normalizeEmail(email)}`];
  const waitMs = attempts.retryAfterMs(keys);
  if (waitMs > 0) {
    reply.header('retry-after', String(Math.ceil(waitMs / 1000)));
    throw new OutcomeError(
      failure('too_many_attempts', 'too many failed password attempts; retry after the Retry-After seconds'),
    );
  }
  const user = await authenticateUser(deps, email, password);
  if (!user) {
    attempts.record(keys);
    throw unauthorized();
  }
  return user;
}

/** preHandler: user credentials, where the route takes them and no other credential was accepted. */
export function userAuthHook(deps: Deps, attempts: AttemptLimiter) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const mode = request.routeOptions.config.auth ?? 'none';
    if ((mode !== 'user' && mode !== 'either') || request.principal !== null) return;
    const creds = parseBasic(request.headers.authorization);
    if (creds === null) throw unauthorized();
    // A company's key on a route that takes only a user's password: wrong, but no password guess.
    if (!creds.username.includes('@')) throw unauthorized("this route takes a user's email:password");
    const user = await checkPassword(deps, attempts, request, reply, creds.username, creds.password);
    request.principal = { kind: 'user', user };
  };
}

export function requireCompany(request: FastifyRequest): string {
  if (request.principal?.kind !== 'company') throw unauthorized();
  return request.principal.companyId;
}

/** The caller's company, which must be the one the path names; another company's is answered as missing. */
export function requireCompanyOfPath(request: FastifyRequest, pathCompanyId: string): string {
  const companyId = requireCompany(request);
  if (pathCompanyId !== companyId) throw new OutcomeError(failure('not_found', 'no such company', 'company_id'));
  return companyId;
}

/** The portal session the request acts for; a write needs its scope (403 forbidden without it). */
export function requirePortal(request: FastifyRequest, scope: 'read' | 'topup' = 'read'): PortalSessionRow {
  if (request.principal?.kind !== 'portal') throw noPortalToken();
  const { session } = request.principal;
  if (!session.scopes.includes(scope))
    throw new OutcomeError(failure('portal_scope_missing', `this portal session's scopes do not include ${scope}`));
  return session;
}

/** The user the request acts as (user credentials or a session). */
export function requireUser(request: FastifyRequest): UserRow {
  if (request.principal?.kind !== 'user') throw unauthorized();
  return request.principal.user;
}
