/** Usage read back: event lists and usage by window, of the company or of one account. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { UsageGroup } from '../../domain/usage.js';
import { PAGE_LIMIT_DEFAULT } from '../../domain/limits.js';
import { encodeUsageCursor, getUsage } from '../../operations/usage.js';
import { requireCompany } from '../auth.js';
import { toIso } from '../../lib/clock.js';
import { presentPage } from '../schemas/common.js';
import { type RouteContext, companyRoute } from '../route-context.js';
import { accountUsageSchema, usageSchema } from '../schemas/usage.js';

function presentUsage(g: UsageGroup) {
  return {
    window_start: toIso(g.windowStartMs),
    window_end: toIso(g.windowEndMs),
    ...(g.type !== undefined ? { type: g.type } : {}),
    ...(g.denomination !== undefined ? { denomination: g.denomination } : {}),
    ...(g.accountId !== undefined ? { account_id: g.accountId } : {}),
    events: g.events,
    quantity: g.quantity,
    cost: g.cost,
  };
}

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
