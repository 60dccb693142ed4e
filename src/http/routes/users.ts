/** Users: sign-up, and reading or updating a user (as that user, or as a company the user belongs to). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fail } from '../../domain/outcome.js';
import type { Deps } from '../../operations/deps.js';
import { normalizeEmail, signUp, updateUser } from '../../operations/identity.js';
import {
  completePasswordReset,
  requestPasswordReset,
  prepareVerificationEmail,
  verifyEmail,
} from '../../operations/sessions.js';
import { OutcomeError, failure } from '../../domain/outcome.js';
import type { UserRow } from '../../store/types.js';
import { requireUser, unauthorized } from '../auth.js';
import { presentUser } from '../present.js';
import { type RouteContext, refuseSignUp } from '../route-context.js';
import {
  completePasswordResetSchema,
  getUserSchema,
  requestPasswordResetSchema,
  resendVerificationSchema,
  signUpSchema,
  updateUserSchema,
  verifyEmailSchema,
} from '../schemas/users.js';

/** The user a request may act on: the caller itself, or a member of the calling company. Anyone else: 404. */
async function reachableUser(deps: Deps, request: FastifyRequest, userId: number): Promise<UserRow> {
  const p = request.principal;
  if (p?.kind === 'user') {
    if (p.user.id !== userId) fail('not_found', 'no such user');
    return p.user;
  }
  if (p?.kind === 'company') {
    const user = await deps.store.read(async (tx) =>
      (await tx.isCompanyMember(p.companyId, userId)) ? tx.findUserById(userId) : undefined,
    );
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
    async (request) => {
      if (!signupOpen) refuseSignUp();
      const user = await signUp(deps, request.body);
      sendInBackground(request, 'sign-up verification', await prepareVerificationEmail(deps, user));
      return presentUser(user, 'createDate');
    },
  );

  app.get('/v1/users/:user_id', { config: userOrCompany, schema: getUserSchema }, async (request) =>
    presentUser(await reachableUser(deps, request, Number(request.params.user_id)), 'signUpDate'),
  );

  app.patch('/v1/users/:user_id', { config: userOrCompany, schema: updateUserSchema }, async (request) => {
    const user = await reachableUser(deps, request, Number(request.params.user_id));
    return { data: presentUser(await updateUser(deps, user.id, request.body), 'signUpDate') };
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

  app.post('/v1/email_verifications', { config: anonymous, schema: verifyEmailSchema }, async (request) => ({
    data: presentUser(await verifyEmail(deps, request.body.token), 'signUpDate'),
  }));

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
    async (request) => ({
      data: presentUser(await completePasswordReset(deps, request.body.token, request.body.password), 'signUpDate'),
    }),
  );
}
