/** Identity and keys: sign-up and users, the emailed links, companies and their API keys. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fail, failure, OutcomeError } from '../../domain/outcome.js';
import type { Deps } from '../../operations/deps.js';
import {
  companyForUser,
  createApiKey,
  createCompany,
  listApiKeys,
  normalizeEmail,
  revokeApiKey,
  signUp,
  updateUser,
  memberOfCompany,
} from '../../operations/identity.js';
import {
  completePasswordReset,
  listOwnedCompanies,
  prepareVerificationEmail,
  requestPasswordReset,
  verifyEmail,
} from '../../operations/sessions.js';
import type { UserRow } from '../../store/types.js';
import { requireUser, unauthorized } from '../auth.js';
import {
  completePasswordResetSchema,
  createApiKeySchema,
  createCompanySchema,
  getUserSchema,
  listApiKeysSchema,
  listCompaniesSchema,
  presentApiKey,
  presentUser,
  requestPasswordResetSchema,
  resendVerificationSchema,
  revokeApiKeySchema,
  signUpSchema,
  updateUserSchema,
  verifyEmailSchema,
} from '../schemas/identity.js';
import { refuseSignUp, type RouteContext } from '../route-context.js';
import { runCommand } from '../idempotency.js';
import { presentCompanySummary } from './sessions.js';

/** The user a request may act on: the caller itself, or a member of the calling company. Anyone else: 404. */
async function reachableUser(deps: Deps, request: FastifyRequest, userId: number): Promise<UserRow> {
  const p = request.principal;
  if (p?.kind === 'user') {
    if (p.user.id !== userId) fail('not_found', 'no such user');
    return p.user;
  }
  if (p?.kind === 'company') {
    const user = await memberOfCompany(deps, p.companyId, userId);
    if (!user) fail('not_found', 'no such user');
    return user;
  }
  throw unauthorized();
}

/**
 * Emails go out after the answer is decided, without holding it up: a slow or failing mail server
 * neither delays nor fails the request (nor tells, by timing, whether an address exists); a failure
 * is logged.
 */
function sendInBackground(request: FastifyRequest, what: string, send: () => Promise<void>): void {
  send().catch((err: unknown) => request.log.error({ err }, `${what}: email not sent`));
}

export function userRoutes(scope: FastifyInstance, { deps, signupOpen, signupRateLimit }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  // Both credentials are accepted; a password is checked under the failed-attempt limit (auth.ts).
  const userOrCompany = { auth: 'either' as const };

  app.post(
    '/v1/users',
    { config: { auth: 'none', rateLimit: signupRateLimit }, schema: signUpSchema },
    async (request, reply) => {
      if (!signupOpen) refuseSignUp();
      let user: UserRow | undefined;
      const answer = await runCommand(request, reply, deps, signUp(deps, request.body), (u) => {
        user = u;
        return presentUser(u, 'createDate');
      });
      // The link is emailed once the user is committed (a replay of the answer sends none).
      if (user) sendInBackground(request, 'sign-up verification', await prepareVerificationEmail(deps, user));
      return answer;
    },
  );

  app.get('/v1/users/:user_id', { config: userOrCompany, schema: getUserSchema }, async (request) =>
    presentUser(await reachableUser(deps, request, Number(request.params.user_id)), 'signUpDate'),
  );

  app.patch('/v1/users/:user_id', { config: userOrCompany, schema: updateUserSchema }, async (request, reply) => {
    const user = await reachableUser(deps, request, Number(request.params.user_id));
    return runCommand(request, reply, deps, updateUser(deps, user.id, request.body), (u) => ({
      data: presentUser(u, 'signUpDate'),
    }));
  });
}

export function emailRoutes(scope: FastifyInstance, ctx: RouteContext): void {
  const { deps, perAddressRateLimit, passwordResetsPerEmail } = ctx;
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const anonymous = { auth: 'none' as const, rateLimit: perAddressRateLimit };

  app.post(
    '/v1/users/:user_id/email_verifications',
    { config: { auth: 'user' }, schema: resendVerificationSchema },
    async (request, reply) => {
      const user = requireUser(request);
      if (user.id !== Number(request.params.user_id)) fail('not_found', 'no such user');
      if (!user.emailVerified)
        sendInBackground(request, 'verification resend', await prepareVerificationEmail(deps, user));
      return reply.code(202).send({ data: { sent: !user.emailVerified } });
    },
  );

  app.post('/v1/email_verifications', { config: anonymous, schema: verifyEmailSchema }, async (request, reply) =>
    runCommand(request, reply, deps, verifyEmail(deps, request.body.token), (u) => ({
      data: presentUser(u, 'signUpDate'),
    })),
  );

  app.post('/v1/password_resets', { config: anonymous, schema: requestPasswordResetSchema }, async (request, reply) => {
    const key = [`email:${normalizeEmail(request.body.email)}`];
    const waitMs = passwordResetsPerEmail.retryAfterMs(key);
    if (waitMs > 0) {
      reply.header('retry-after', String(Math.ceil(waitMs / 1000)));
      throw new OutcomeError(failure('too_many_attempts', 'too many reset requests for this email; retry later'));
    }
    passwordResetsPerEmail.record(key);
    sendInBackground(request, 'password reset', () => requestPasswordReset(deps, request.body.email));
    return reply.code(202).send({ data: { sent: true } });
  });

  app.post(
    '/v1/password_resets/complete',
    { config: anonymous, schema: completePasswordResetSchema },
    async (request, reply) =>
      runCommand(request, reply, deps, completePasswordReset(deps, request.body.token, request.body.password), (u) => ({
        data: presentUser(u, 'signUpDate'),
      })),
  );
}

/** Company credentials for this company, or an owning user's. Anyone else: 404. */
async function companyAccess(deps: Deps, request: FastifyRequest, companyId: string): Promise<void> {
  const p = request.principal;
  if (p?.kind === 'company' && p.companyId === companyId) return;
  if (p?.kind === 'user' && (await companyForUser(deps, companyId, p.user.id))) return;
  if (p === null) throw unauthorized();
  fail('not_found', 'no such company', 'company_id');
}

export function companyRoutes(scope: FastifyInstance, { deps, keys, signupOpen }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  // A password is checked under the failed-attempt limit (auth.ts); company keys are never throttled by it.
  const passwordRoute = { auth: 'user' as const };
  const userOrCompany = { auth: 'either' as const };
  const keysPath = '/v1/companies/:company_id/api_keys';

  app.post('/v1/companies', { config: passwordRoute, schema: createCompanySchema }, async (request, reply) => {
    if (request.principal?.kind !== 'user') throw unauthorized();
    if (!signupOpen) refuseSignUp();
    const owner = request.principal.user;
    return runCommand(request, reply, deps, createCompany(deps, owner, request.body), ({ company, apiKey }) => ({
      data: { company_id: company.companyId, name: company.name, processor: company.processor, api_key: apiKey },
    }));
  });

  app.get('/v1/companies', { config: passwordRoute, schema: listCompaniesSchema }, async (request) => ({
    data: (await listOwnedCompanies(deps, requireUser(request).id)).map(presentCompanySummary),
  }));

  app.post(keysPath, { config: userOrCompany, schema: createApiKeySchema }, async (request, reply) => {
    const companyId = request.params.company_id;
    await companyAccess(deps, request, companyId);
    return runCommand(request, reply, deps, createApiKey(deps, companyId), (key) => ({
      data: { key_id: key.row.keyId, api_key: key.secret },
    }));
  });

  app.get(keysPath, { config: userOrCompany, schema: listApiKeysSchema }, async (request) => {
    await companyAccess(deps, request, request.params.company_id);
    await keys.lastUsesWritten(); // the uses this process has begun to write, this request's own among them
    return { data: (await listApiKeys(deps, request.params.company_id)).map(presentApiKey) };
  });

  app.delete(`${keysPath}/:key_id`, { config: userOrCompany, schema: revokeApiKeySchema }, async (request, reply) => {
    const { company_id, key_id } = request.params;
    await companyAccess(deps, request, company_id);
    const answer = await runCommand(request, reply, deps, revokeApiKey(deps, company_id, key_id), () => ({
      data: { key_id, revoked: true },
    }));
    keys.forgetCompany(company_id);
    return answer;
  });
}
