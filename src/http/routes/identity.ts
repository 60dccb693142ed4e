/** Users, companies and API keys. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { fail } from '../../domain/outcome.js';
import {
  companyForUser,
  createApiKey,
  createCompany,
  listApiKeys,
  revokeApiKey,
  signUp,
  updateUser,
} from '../../operations/identity.js';
import type { UserRow } from '../../store/types.js';
import type { RouteContext } from '../route-context.js';
import { unauthorized } from '../auth.js';
import { presentApiKey, presentUser } from '../present.js';
import { Email, Text, errorResponses, userAuth, userOrCompanyAuth } from '../schemas/common.js';

const UserId = Type.Object({ user_id: Type.String({ pattern: '^[0-9]{1,15}$' }) });
const CompanyParams = Type.Object({ company_id: Type.String({ maxLength: 64 }) });

export function identityRoutes(scope: FastifyInstance, ctx: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const { deps } = ctx;
  const passwordRoute = { auth: 'user' as const, rateLimit: ctx.passwordRateLimit };

  /** The user a request may act on: the caller itself, or a member of the calling company. Else 404. */
  async function reachableUser(request: FastifyRequest, userId: number): Promise<UserRow> {
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

  app.post(
    '/v1/users',
    {
      config: { auth: 'none', rateLimit: ctx.passwordRateLimit },
      schema: {
        tags: ['users'],
        summary: 'Sign up (no credentials needed)',
        description:
          'The password is stored only as a salted scrypt hash. firstName is the first word of name, lastName the rest. A duplicate email is 409.',
        body: Type.Object(
          { name: Text('Full name'), email: Email, password: Type.String({ minLength: 8, maxLength: 1024 }) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Ref('User'), 400: Type.Ref('Error'), 409: Type.Ref('Error'), 429: Type.Ref('Error') },
      },
    },
    async (request) => presentUser(await signUp(deps, request.body), 'createDate'),
  );

  app.get(
    '/v1/users/:user_id',
    {
      config: { auth: 'either', rateLimit: ctx.passwordRateLimit },
      schema: {
        tags: ['users'],
        summary: 'Get a user',
        description: "With the user's own credentials or those of a company the user belongs to; anyone else gets 404.",
        security: userOrCompanyAuth,
        params: UserId,
        response: { 200: Type.Ref('User'), ...errorResponses(404, 429) },
      },
    },
    async (request) => presentUser(await reachableUser(request, Number(request.params.user_id)), 'signUpDate'),
  );

  app.patch(
    '/v1/users/:user_id',
    {
      config: { auth: 'either', rateLimit: ctx.passwordRateLimit },
      schema: {
        tags: ['users'],
        summary: 'Update a user',
        security: userOrCompanyAuth,
        params: UserId,
        body: Type.Object(
          { name: Type.Optional(Text()), email: Type.Optional(Email) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ data: Type.Ref('User') }), ...errorResponses(404, 409, 429) },
      },
    },
    async (request) => {
      const user = await reachableUser(request, Number(request.params.user_id));
      return { data: presentUser(await updateUser(deps, user.id, request.body), 'signUpDate') };
    },
  );

  app.post(
    '/v1/companies',
    {
      config: passwordRoute,
      schema: {
        tags: ['companies'],
        summary: 'Register a company (user credentials)',
        description:
          'The new company is owned by the calling user. The api_key is shown only here; it is stored only as a SHA-256 digest.',
        security: userAuth,
        body: Type.Object(
          {
            name: Text('Company name'),
            processor: Type.Optional(
              Type.Union([Type.Literal('sandbox'), Type.Literal('stripe')], { default: 'sandbox' }),
            ),
            processor_api_key: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 512,
                description:
                  'Required for stripe: a restricted key with write access to customers, payment intents and payment methods',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            data: Type.Object({
              company_id: Type.String(),
              name: Type.String(),
              processor: Type.String(),
              api_key: Type.String(),
            }),
          }),
          ...errorResponses(429),
        },
      },
    },
    async (request) => {
      if (request.principal?.kind !== 'user') throw unauthorized();
      const { company, apiKey } = await createCompany(deps, request.principal.user, request.body);
      return {
        data: { company_id: company.companyId, name: company.name, processor: company.processor, api_key: apiKey },
      };
    },
  );

  /** Company credentials for this company, or an owning user's. Anyone else: 404. */
  async function companyAccess(request: FastifyRequest, companyId: string): Promise<void> {
    const p = request.principal;
    if (p?.kind === 'company' && p.companyId === companyId) return;
    if (p?.kind === 'user' && (await companyForUser(deps, companyId, p.user.id))) return;
    if (p === null) throw unauthorized();
    fail('not_found', 'no such company', 'company_id');
  }

  app.post(
    '/v1/companies/:company_id/api_keys',
    {
      config: { auth: 'either', rateLimit: ctx.passwordRateLimit },
      schema: {
        tags: ['companies'],
        summary: 'Create an API key',
        description: 'The key is shown only in this response.',
        security: userOrCompanyAuth,
        params: CompanyParams,
        response: {
          200: Type.Object({ data: Type.Object({ key_id: Type.String(), api_key: Type.String() }) }),
          ...errorResponses(404, 429),
        },
      },
    },
    async (request) => {
      await companyAccess(request, request.params.company_id);
      const key = await createApiKey(deps, request.params.company_id);
      return { data: { key_id: key.row.keyId, api_key: key.secret } };
    },
  );

  app.get(
    '/v1/companies/:company_id/api_keys',
    {
      config: { auth: 'either', rateLimit: ctx.passwordRateLimit },
      schema: {
        tags: ['companies'],
        summary: 'List API keys (without secrets)',
        security: userOrCompanyAuth,
        params: CompanyParams,
        response: { 200: Type.Object({ data: Type.Array(Type.Ref('ApiKey')) }), ...errorResponses(404, 429) },
      },
    },
    async (request) => {
      await companyAccess(request, request.params.company_id);
      return { data: (await listApiKeys(deps, request.params.company_id)).map(presentApiKey) };
    },
  );

  app.delete(
    '/v1/companies/:company_id/api_keys/:key_id',
    {
      config: { auth: 'either', rateLimit: ctx.passwordRateLimit },
      schema: {
        tags: ['companies'],
        summary: 'Revoke an API key at once',
        description: 'Other server processes stop accepting it within BILLING_API_KEY_CACHE_MS.',
        security: userOrCompanyAuth,
        params: Type.Object({ company_id: Type.String({ maxLength: 64 }), key_id: Type.String({ maxLength: 64 }) }),
        response: {
          200: Type.Object({ data: Type.Object({ key_id: Type.String(), revoked: Type.Boolean() }) }),
          ...errorResponses(404, 429),
        },
      },
    },
    async (request) => {
      await companyAccess(request, request.params.company_id);
      await revokeApiKey(deps, ctx.keys, request.params.company_id, request.params.key_id);
      return { data: { key_id: request.params.key_id, revoked: true } };
    },
  );
}
