/** The mid-month increase of a monthly refill: charged now, prorated against what is left. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { modifyMidMonth } from '../../operations/refills.js';
import { requireCompany } from '../auth.js';
import { operationId } from '../idempotency.js';
import { type RouteContext, companyRoute } from '../route-context.js';
import { modifyMidMonthSchema } from '../schemas/mid-month.js';

export function midMonthRoutes(scope: FastifyInstance, { deps }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/v1/accounts/:account_id/modifymidmonth',
    { config: companyRoute, schema: modifyMidMonthSchema },
    async (request) => {
      const companyId = requireCompany(request);
      const chargeId = await operationId(request, deps, 'ch');
      return { data: await modifyMidMonth(deps, companyId, request.params.account_id, request.body, chargeId) };
    },
  );
}
