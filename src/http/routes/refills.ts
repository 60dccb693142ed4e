/**
 * Refills of a balance: the auto-refill settings (by path, or with the denomination in the body)
 * and the mid-month increase of the monthly refill.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { modifyMidMonth, putAutoRefill } from '../../operations/refills.js';
import { requireCompany } from '../auth.js';
import { runCommand } from '../idempotency.js';
import { presentBalance } from '../schemas/balances.js';
import { companyRoute, type RouteContext } from '../route-context.js';
import { modifyMidMonthSchema, putAccountAutoRefillSchema, putBalanceAutoRefillSchema } from '../schemas/refills.js';
import { operationId } from '../idempotency.js';

function autoRefillRoutes(scope: FastifyInstance, { deps }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  // The spec's `autorefill`; the guide's `auto_refill` spelling is an alias of it (aliases.ts).
  app.put(
    '/v1/accounts/:account_id/balance/:denomination/autorefill',
    { config: companyRoute, schema: putBalanceAutoRefillSchema },
    async (request, reply) => {
      const { account_id, denomination } = request.params;
      const put = putAutoRefill(deps, requireCompany(request), account_id, denomination, request.body);
      return runCommand(request, reply, deps, put, (b) => ({ data: presentBalance(b, deps.clock.now()) }));
    },
  );

  app.put(
    '/v1/accounts/:account_id/auto_refill',
    { config: companyRoute, schema: putAccountAutoRefillSchema },
    async (request, reply) => {
      const { account_id } = request.params;
      const put = putAutoRefill(deps, requireCompany(request), account_id, request.body.denomination, request.body);
      return runCommand(request, reply, deps, put, (b) => ({ data: presentBalance(b, deps.clock.now()) }));
    },
  );
}

function midMonthRoutes(scope: FastifyInstance, { deps }: RouteContext): void {
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

export function refillRoutes(scope: FastifyInstance, ctx: RouteContext): void {
  autoRefillRoutes(scope, ctx);
  midMonthRoutes(scope, ctx);
}
