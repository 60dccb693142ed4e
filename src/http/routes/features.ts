/** Features: create or change, list, read, delete; accounts' overrides; an account's entitlements and checks. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import {
  deleteFeature,
  getFeature,
  listEntitlements,
  listFeatures,
  putFeature,
  removeOverride,
  setOverride,
} from '../../operations/features.js';
import { PAGE_LIMIT_DEFAULT } from '../../domain/limits.js';
import { OutcomeError } from '../../domain/outcome.js';
import { requireCompany } from '../auth.js';
import { runCommand } from '../idempotency.js';
import { presentPage } from '../schemas/common.js';
import {
  checkEntitlementSchema,
  deleteFeatureSchema,
  getFeatureSchema,
  listEntitlementsSchema,
  listFeaturesSchema,
  presentEntitlement,
  presentEntitlementCheck,
  presentFeature,
  putFeatureSchema,
  removeOverrideSchema,
  setOverrideSchema,
} from '../schemas/features.js';
import { companyRoute, type RouteContext } from '../route-context.js';

export function featureRoutes(scope: FastifyInstance, ctx: RouteContext): void {
  const { deps } = ctx;
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  app.put('/v1/features/:key', { config: companyRoute, schema: putFeatureSchema }, async (request, reply) => {
    const put = putFeature(deps, requireCompany(request), request.params.key, request.body);
    return runCommand(request, reply, deps, put, (f) => ({ data: presentFeature(f) }));
  });

  app.get('/v1/features', { config: companyRoute, schema: listFeaturesSchema }, async (request) => {
    const { limit = PAGE_LIMIT_DEFAULT, starting_after } = request.query;
    const page = await listFeatures(deps, requireCompany(request), { limit, startingAfter: starting_after });
    return presentPage(page, presentFeature, (f) => f.key);
  });

  app.get('/v1/features/:key', { config: companyRoute, schema: getFeatureSchema }, async (request) => ({
    data: presentFeature(await getFeature(deps, requireCompany(request), request.params.key)),
  }));

  app.delete('/v1/features/:key', { config: companyRoute, schema: deleteFeatureSchema }, async (request, reply) => {
    const run = deleteFeature(requireCompany(request), request.params.key);
    return runCommand(request, reply, deps, run, (key) => ({ features_deleted: key }));
  });

  const overridePath = '/v1/accounts/:account_id/features/:key';
  app.put(overridePath, { config: companyRoute, schema: setOverrideSchema }, async (request, reply) => {
    const { account_id, key } = request.params;
    const run = setOverride(deps, requireCompany(request), account_id, key, request.body);
    return runCommand(request, reply, deps, run, (e) => ({ data: presentEntitlement(e) }));
  });

  app.delete(overridePath, { config: companyRoute, schema: removeOverrideSchema }, async (request, reply) => {
    const { account_id, key } = request.params;
    const run = removeOverride(deps, requireCompany(request), account_id, key);
    return runCommand(request, reply, deps, run, (e) => ({ data: presentEntitlement(e) }));
  });

  app.get(
    '/v1/accounts/:account_id/entitlements',
    { config: companyRoute, schema: listEntitlementsSchema },
    async (request) => ({
      data: (await listEntitlements(deps, requireCompany(request), request.params.account_id)).map(presentEntitlement),
    }),
  );

  app.get(
    '/v1/accounts/:account_id/entitlements/:key',
    { config: companyRoute, schema: checkEntitlementSchema },
    async (request) => {
      const { account_id, key } = request.params;
      const quantity = request.query.quantity ?? 1;
      const outcome = await ctx.entitlements.checkEntitlement({
        companyId: requireCompany(request),
        accountId: account_id,
        key,
        quantity,
      });
      if (!outcome.ok) throw new OutcomeError(outcome);
      return { data: presentEntitlementCheck(outcome.value) };
    },
  );
}
