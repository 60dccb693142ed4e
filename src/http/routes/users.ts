/** Users: sign-up, and reading or updating a user (as that user, or as a company the user belongs to). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fail } from '../../domain/outcome.js';
import type { Deps } from '../../operations/deps.js';
import { signUp, updateUser } from '../../operations/identity.js';
import type { UserRow } from '../../store/types.js';
import { unauthorized } from '../auth.js';
import { presentUser } from '../present.js';
import { type RouteContext, refuseSignUp } from '../route-context.js';
import { getUserSchema, signUpSchema, updateUserSchema } from '../schemas/users.js';

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

export function userRoutes(scope: FastifyInstance, { deps, passwordRateLimit, signupOpen }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  // Both credentials are accepted; a password check (scrypt) is rate-limited first.
  const userOrCompany = { auth: 'either' as const, rateLimit: passwordRateLimit };

  app.post(
    '/v1/users',
    { config: { auth: 'none', rateLimit: passwordRateLimit }, schema: signUpSchema },
    async (request) => {
      if (!signupOpen) refuseSignUp();
      return presentUser(await signUp(deps, request.body), 'createDate');
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
