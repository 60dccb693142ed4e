/** Console sessions: log in with email and password (a cookie), read the current session, log out. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../../operations/deps.js';
import {
  SESSION_ABSOLUTE_MS,
  createSession,
  listOwnedCompanies,
  revokeSession,
  sessionEndsAt,
} from '../../operations/sessions.js';
import { toIso } from '../../lib/clock.js';
import type { CompanyRow, SessionRow } from '../../store/types.js';
import { SESSION_COOKIE, checkPassword, requireUser, unauthorized } from '../auth.js';
import { presentUser } from '../schemas/identity.js';
import type { RouteContext } from '../route-context.js';
import { createSessionSchema, deleteSessionSchema, getSessionSchema } from '../schemas/sessions.js';

/** Secure when the public URL is https, or the request came over https (directly or via a trusted proxy). */
function cookieOptions(deps: Deps, request: FastifyRequest) {
  return {
    httpOnly: true,
    sameSite: 'lax' as const,
    path: '/',
    secure: deps.identity.publicUrl.startsWith('https:') || request.protocol === 'https',
  };
}

export function presentCompanySummary(c: CompanyRow) {
  return { company_id: c.companyId, name: c.name, processor: c.processor, created_at: toIso(c.createdAtMs) };
}

function sessionData(deps: Deps, session: SessionRow) {
  return { csrf_token: session.csrfToken, expires_at: toIso(sessionEndsAt(deps, session)) };
}

function currentSession(request: FastifyRequest): SessionRow {
  if (request.session === null) throw unauthorized('no live session: log in with POST /v1/sessions');
  return request.session;
}

export function sessionRoutes(scope: FastifyInstance, { deps, attempts }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  // No Idempotency-Key: a replayed answer could not set the cookie, and would keep the CSRF token.
  app.post(
    '/v1/sessions',
    { config: { auth: 'none', idempotency: false }, schema: createSessionSchema },
    async (request, reply) => {
      request.viaSession = true; // a wrong password is 401 without a Basic challenge (no browser prompt)
      const user = await checkPassword(deps, attempts, request, reply, request.body.email, request.body.password);
      const { id, session } = await createSession(deps, user);
      reply.setCookie(SESSION_COOKIE, id, {
        ...cookieOptions(deps, request),
        maxAge: Math.floor(SESSION_ABSOLUTE_MS / 1000),
      });
      return reply.code(201).send({ data: { user: presentUser(user, 'signUpDate'), ...sessionData(deps, session) } });
    },
  );

  app.get('/v1/sessions/current', { config: { auth: 'session' }, schema: getSessionSchema }, async (request) => {
    const session = currentSession(request);
    const user = requireUser(request);
    const companies = await listOwnedCompanies(deps, user.id);
    return {
      data: {
        user: presentUser(user, 'signUpDate'),
        ...sessionData(deps, session),
        companies: companies.map(presentCompanySummary),
      },
    };
  });

  app.delete(
    '/v1/sessions/current',
    { config: { auth: 'session' }, schema: deleteSessionSchema },
    async (request, reply) => {
      await revokeSession(deps, currentSession(request));
      reply.clearCookie(SESSION_COOKIE, cookieOptions(deps, request));
      return { data: { revoked: true as const } };
    },
  );
}
