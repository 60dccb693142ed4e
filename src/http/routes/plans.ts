/**
 * Plans: create (at `/plan`; `/plans` is an alias), list and read the plans accounts can be created on, and
 * replace a plan's features.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { PlanInput } from '../../domain/plans.js';
import { PAGE_LIMIT_DEFAULT } from '../../domain/limits.js';
import { replacePlanFeatures } from '../../operations/features.js';
import { createPlan, getPlan, listPlans } from '../../operations/plans.js';
import { requireCompany, requireCompanyOfPath } from '../auth.js';
import { runCommand } from '../idempotency.js';
import { presentPage } from '../schemas/common.js';
import {
  createPlanSchema,
  getPlanSchema,
  listPlansSchema,
  planBodyViolations,
  presentPlan,
  replacePlanFeaturesSchema,
} from '../schemas/plans.js';
import { companyRoute, type RouteContext } from '../route-context.js';

export function planRoutes(scope: FastifyInstance, { deps }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  const createPlanConfig = { ...companyRoute, bodyViolationReasons: planBodyViolations };
  // The spec writes `/plan`; `POST /plans` is an alias of it (aliases.ts).
  app.post(
    '/v1/companies/:company_id/plan',
    { config: createPlanConfig, schema: createPlanSchema },
    async (request, reply) => {
      const companyId = requireCompanyOfPath(request, request.params.company_id);
      return runCommand(
        request,
        reply,
        deps,
        createPlan(deps, companyId, request.body satisfies PlanInput),
        (plan) => ({ data: presentPlan(plan) }),
      );
    },
  );

  app.get('/v1/companies/:company_id/plans', { config: companyRoute, schema: listPlansSchema }, async (request) => {
    const companyId = requireCompanyOfPath(request, request.params.company_id);
    const { limit = PAGE_LIMIT_DEFAULT, starting_after } = request.query;
    const page = await listPlans(deps, companyId, { limit, startingAfter: starting_after });
    return presentPage(page, presentPlan, (p) => p.planId);
  });

  app.get('/v1/plans/:plan_id', { config: companyRoute, schema: getPlanSchema }, async (request) => ({
    data: presentPlan(await getPlan(deps, requireCompany(request), request.params.plan_id)),
  }));

  app.put(
    '/v1/plans/:plan_id/features',
    { config: companyRoute, schema: replacePlanFeaturesSchema },
    async (request, reply) => {
      const run = replacePlanFeatures(deps, requireCompany(request), request.params.plan_id, request.body.features);
      return runCommand(request, reply, deps, run, (plan) => ({ data: presentPlan(plan) }));
    },
  );
}
