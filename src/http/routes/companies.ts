/** Companies and API keys: a user registers a company; the company (or an owner) manages its keys. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fail } from '../../domain/outcome.js';
import type { Deps } from '../../operations/deps.js';
import { companyForUser, createApiKey, createCompany, listApiKeys, revokeApiKey } from '../../operations/identity.js';
import { listOwnedCompanies } from '../../operations/sessions.js';
import { requireUser, unauthorized } from '../auth.js';
import { answeredInTransaction } from '../idempotency.js';
import { presentCompanySummary } from './sessions.js';
import { presentApiKey } from '../present.js';
import { type RouteContext, refuseSignUp } from '../route-context.js';
import {
  createApiKeySchema,
  createCompanySchema,
  listCompaniesSchema,
  listApiKeysSchema,
  revokeApiKeySchema,
} from '../schemas/companies.js';

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
    return answeredInTransaction(
      request,
      reply,
      deps,
      (d) => createCompany(d, owner, request.body),
      ({ company, apiKey }) => ({
        data: { company_id: company.companyId, name: company.name, processor: company.processor, api_key: apiKey },
      }),
    );
  });

  app.get('/v1/companies', { config: passwordRoute, schema: listCompaniesSchema }, async (request) => ({
    data: (await listOwnedCompanies(deps, requireUser(request).id)).map(presentCompanySummary),
  }));

  app.post(keysPath, { config: userOrCompany, schema: createApiKeySchema }, async (request, reply) => {
    const companyId = request.params.company_id;
    await companyAccess(deps, request, companyId);
    return answeredInTransaction(
      request,
      reply,
      deps,
      (d) => createApiKey(d, companyId),
      (key) => ({ data: { key_id: key.row.keyId, api_key: key.secret } }),
    );
  });

  app.get(keysPath, { config: userOrCompany, schema: listApiKeysSchema }, async (request) => {
    await companyAccess(deps, request, request.params.company_id);
    await keys.lastUsesWritten(); // the uses this process has begun to write, this request's own among them
    return { data: (await listApiKeys(deps, request.params.company_id)).map(presentApiKey) };
  });

  app.delete(`${keysPath}/:key_id`, { config: userOrCompany, schema: revokeApiKeySchema }, async (request, reply) => {
    const { company_id, key_id } = request.params;
    await companyAccess(deps, request, company_id);
    return answeredInTransaction(
      request,
      reply,
      deps,
      (d) => revokeApiKey(d, keys, company_id, key_id),
      () => ({ data: { key_id, revoked: true } }),
    );
  });
}
