/** Usage read back: event lists and usage by window, of the company or of one account. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { PAGE_LIMIT_DEFAULT } from '../../domain/limits.js';
import { encodeUsageCursor, getUsage } from '../../operations/usage.js';
import { requireCompany } from '../auth.js';
import { presentPage } from '../schemas/common.js';
import { type RouteContext, companyRoute } from '../route-context.js';
import { accountUsageSchema, presentUsage, usageSchema } from '../schemas/usage.js';

export function usageRoutes(scope: FastifyInstance, { deps }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/v1/usage', { config: companyRoute, schema: usageSchema }, async (request) => {
    const { limit = PAGE_LIMIT_DEFAULT, starting_after, ...input } = request.query;
    const page = await getUsage(deps, requireCompany(request), input, { limit, startingAfter: starting_after });
    return presentPage(page, presentUsage, encodeUsageCursor);
  });

  app.get('/v1/accounts/:account_id/usage', { config: companyRoute, schema: accountUsageSchema }, async (request) => {
    const { limit = PAGE_LIMIT_DEFAULT, starting_after, ...input } = request.query;
    const page = await getUsage(
      deps,
      requireCompany(request),
      { ...input, account_id: request.params.account_id },
      { limit, startingAfter: starting_after },
    );
    return presentPage(page, presentUsage, encodeUsageCursor);
  });
}
