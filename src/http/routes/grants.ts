/** Credit grants: grant units to a balance, list them (per balance, per company), read, change and void one. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import {
  createGrant,
  getGrant,
  listBalanceGrants,
  listGrants,
  patchGrant,
  voidGrant,
} from '../../operations/grants.js';
import { PAGE_LIMIT_DEFAULT } from '../../domain/limits.js';
import { requireCompany } from '../auth.js';
import { runCommand } from '../idempotency.js';
import { presentPage } from '../schemas/common.js';
import {
  createGrantSchema,
  getGrantSchema,
  listBalanceGrantsSchema,
  listGrantsSchema,
  presentGrant,
  updateGrantSchema,
  voidGrantSchema,
} from '../schemas/grants.js';
import { companyRoute, type RouteContext } from '../route-context.js';

export function grantRoutes(scope: FastifyInstance, { deps }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const balancePath = '/v1/accounts/:account_id/balance/:denomination/grants';

  app.post(balancePath, { config: companyRoute, schema: createGrantSchema }, async (request, reply) => {
    const { account_id, denomination } = request.params;
    const create = createGrant(deps, requireCompany(request), account_id, denomination, request.body);
    reply.code(201);
    return runCommand(request, reply, deps, create, (g) => ({ data: presentGrant(g) }));
  });

  app.get(balancePath, { config: companyRoute, schema: listBalanceGrantsSchema }, async (request) => {
    const { account_id, denomination } = request.params;
    const { limit = PAGE_LIMIT_DEFAULT, starting_after, status } = request.query;
    const page = await listBalanceGrants(deps, requireCompany(request), account_id, denomination, status, {
      limit,
      startingAfter: starting_after,
    });
    return presentPage(page, presentGrant, (g) => g.grantId);
  });

  app.get('/v1/grants', { config: companyRoute, schema: listGrantsSchema }, async (request) => {
    const { limit = PAGE_LIMIT_DEFAULT, starting_after, ...filters } = request.query;
    const page = await listGrants(deps, requireCompany(request), filters, { limit, startingAfter: starting_after });
    return presentPage(page, presentGrant, (g) => g.grantId);
  });

  app.get('/v1/grants/:grant_id', { config: companyRoute, schema: getGrantSchema }, async (request) => ({
    data: presentGrant(await getGrant(deps, requireCompany(request), request.params.grant_id)),
  }));

  app.patch('/v1/grants/:grant_id', { config: companyRoute, schema: updateGrantSchema }, async (request, reply) => {
    const patch = patchGrant(deps, requireCompany(request), request.params.grant_id, request.body);
    return runCommand(request, reply, deps, patch, (g) => ({ data: presentGrant(g) }));
  });

  app.post(
    '/v1/grants/:grant_id/void',
    { config: { ...companyRoute, optionalBody: true }, schema: voidGrantSchema },
    async (request, reply) => {
      const run = voidGrant(deps, requireCompany(request), request.params.grant_id, request.body ?? {});
      return runCommand(request, reply, deps, run, (g) => ({ data: presentGrant(g) }));
    },
  );
}
