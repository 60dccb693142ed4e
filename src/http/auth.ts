/**
 * HTTP Basic authentication. Two kinds of credentials: a company's `company_id:api_key`
 * (every /v1 resource; a fast digest check, done before the body is even parsed) and a
 * user's `email:password` (sign-up flows; scrypt, done after the route's rate limit).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OutcomeError, failure } from '../domain/outcome.js';
import type { UserRow } from '../store/types.js';
import { authenticateUser, type ApiKeyCache } from '../operations/identity.js';
import type { Deps } from '../operations/deps.js';

/** none: public; company: company key only; user: user password only; either: both accepted. */
export type AuthMode = 'none' | 'company' | 'user' | 'either';

export type Principal = { kind: 'company'; companyId: string } | { kind: 'user'; user: UserRow };

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
    /** The body may be left out entirely; it then validates as `{}`. */
    optionalBody?: boolean;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

const COMPANY_ID_PREFIX = 'c_';
/** Longest credential we bother to decode; longer headers are refused outright. */
const CREDENTIALS_LENGTH_MAX = 1024;

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

/** onRequest: company credentials, where the route takes them. */
export function companyAuthHook(keys: ApiKeyCache) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    request.principal = null;
    const mode = request.routeOptions.config.auth ?? 'none';
    if (mode === 'none' || mode === 'user') return;
    const creds = parseBasic(request.headers.authorization);
    if (creds === null) {
      if (mode === 'company') throw unauthorized();
      return; // `either`: the user check (preHandler) will decide
    }
    if (!creds.username.startsWith(COMPANY_ID_PREFIX)) {
      if (mode === 'company') throw unauthorized();
      return;
    }
    if (!(await keys.authenticate(creds.username, creds.password))) throw unauthorized();
    request.principal = { kind: 'company', companyId: creds.username };
    void reply;
  };
}

/** preHandler: user credentials, after the route's rate limit has had its say. */
export function userAuthHook(deps: Deps) {
  return async (request: FastifyRequest): Promise<void> => {
    const mode = request.routeOptions.config.auth ?? 'none';
    if ((mode !== 'user' && mode !== 'either') || request.principal !== null) return;
    const creds = parseBasic(request.headers.authorization);
    if (creds === null) throw unauthorized();
    const user = await authenticateUser(deps, creds.username, creds.password);
    if (!user) throw unauthorized();
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
