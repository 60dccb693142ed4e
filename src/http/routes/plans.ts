/** Plans: create (at `/plan` and `/plans`), list and read the plans accounts can be created on. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fail } from '../../domain/outcome.js';
import { PAGE_LIMIT_DEFAULT } from '../../operations/deps.js';
import { createPlan, getPlan, listPlans } from '../../operations/plans.js';
import { requireCompany } from '../auth.js';
import { presentPage, presentPlan } from '../present.js';
import { type RouteContext, companyRoute } from '../route-context.js';
import { createPlanSchema, getPlanSchema, listPlansSchema } from '../schemas/plans.js';

/** The caller's company, which must be the one named in the path (another company's is 404). */
function companyInPath(request: FastifyRequest<{ Params: { company_id: string } }>): string {
  const companyId = requireCompany(request);
  if (request.params.company_id !== companyId) fail('not_found', 'no such company', 'company_id');
  return companyId;
}

export function planRoutes(scope: FastifyInstance, { deps }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  // The spec writes `/plan`; `/plans` matches the list route.
  for (const path of ['/v1/companies/:company_id/plan', '/v1/companies/:company_id/plans']) {
    app.post(path, { config: companyRoute, schema: createPlanSchema }, async (request) => ({
      data: presentPlan(await createPlan(deps, companyInPath(request), request.body)),
    }));
  }

  app.get('/v1/companies/:company_id/plans', { config: companyRoute, schema: listPlansSchema }, async (request) => {
    const { limit = PAGE_LIMIT_DEFAULT, starting_after } = request.query;
    const page = await listPlans(deps, companyInPath(request), { limit, startingAfter: starting_after });
    return presentPage(page, presentPlan, (p) => p.planId);
  });

  app.get('/v1/plans/:plan_id', { config: companyRoute, schema: getPlanSchema }, async (request) => ({
    data: presentPlan(await getPlan(deps, requireCompany(request), request.params.plan_id)),
  }));
}
