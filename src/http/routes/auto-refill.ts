/** Auto-refill settings of a balance: by its path, or with the denomination in the body. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { putAutoRefill } from '../../operations/refills.js';
import { requireCompany } from '../auth.js';
import { presentBalance } from '../present.js';
import { type RouteContext, companyRoute } from '../route-context.js';
import { putAccountAutoRefillSchema, putBalanceAutoRefillSchema } from '../schemas/auto-refill.js';

export function autoRefillRoutes(scope: FastifyInstance, { deps }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  // The spec's `autorefill`; the guide's `auto_refill` spelling is an alias of it (aliases.ts).
  app.put(
    '/v1/accounts/:account_id/balance/:denomination/autorefill',
    { config: companyRoute, schema: putBalanceAutoRefillSchema },
    async (request) => {
      const { account_id, denomination } = request.params;
      const b = await putAutoRefill(deps, requireCompany(request), account_id, denomination, request.body);
      return { data: presentBalance(b) };
    },
  );

  app.put(
    '/v1/accounts/:account_id/auto_refill',
    { config: companyRoute, schema: putAccountAutoRefillSchema },
    async (request) => {
      const { account_id } = request.params;
      const b = await putAutoRefill(deps, requireCompany(request), account_id, request.body.denomination, request.body);
      return { data: presentBalance(b) };
    },
  );
}
