/** Charges: the USD charges made to an account's card (refills, plans, overage, proration). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { listCharges } from '../../operations/charges.js';
import { PAGE_LIMIT_DEFAULT } from '../../domain/limits.js';
import { requireCompany } from '../auth.js';
import { listChargesSchema, presentCharge } from '../schemas/charges.js';
import { presentPage } from '../schemas/common.js';
import { companyRoute, type RouteContext } from '../route-context.js';

export function chargeRoutes(scope: FastifyInstance, { deps }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/v1/accounts/:account_id/charges', { config: companyRoute, schema: listChargesSchema }, async (request) => {
    const { limit = PAGE_LIMIT_DEFAULT, starting_after } = request.query;
    const page = await listCharges(deps, requireCompany(request), request.params.account_id, {
      limit,
      startingAfter: starting_after,
    });
    return presentPage(page, presentCharge, (c) => c.chargeId);
  });
}
