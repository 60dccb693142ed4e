/** Prices: the price of each event type (used when an event carries no cost_override), and its history. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { getPrice, listPrices, listPriceVersions, putPrice } from '../../operations/prices.js';
import { PAGE_LIMIT_DEFAULT } from '../../domain/limits.js';
import { requireCompany } from '../auth.js';
import { runCommand } from '../idempotency.js';
import { presentPage } from '../schemas/common.js';
import {
  getPriceSchema,
  listPricesSchema,
  listPriceVersionsSchema,
  presentPrice,
  presentPriceVersion,
  putPriceSchema,
} from '../schemas/prices.js';
import { companyRoute, type RouteContext } from '../route-context.js';

export function priceRoutes(scope: FastifyInstance, { deps }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  app.put('/v1/prices/:type', { config: companyRoute, schema: putPriceSchema }, async (request, reply) => {
    const put = putPrice(deps, requireCompany(request), request.params.type, request.body);
    return runCommand(request, reply, deps, put, (p) => ({ data: presentPrice(p) }));
  });

  app.get('/v1/prices', { config: companyRoute, schema: listPricesSchema }, async (request) => {
    const { limit = PAGE_LIMIT_DEFAULT, starting_after } = request.query;
    const page = await listPrices(deps, requireCompany(request), { limit, startingAfter: starting_after });
    return presentPage(page, presentPrice, (p) => p.type);
  });

  app.get('/v1/prices/:type', { config: companyRoute, schema: getPriceSchema }, async (request) => ({
    data: presentPrice(await getPrice(deps, requireCompany(request), request.params.type)),
  }));

  app.get('/v1/prices/:type/versions', { config: companyRoute, schema: listPriceVersionsSchema }, async (request) => {
    const { limit = PAGE_LIMIT_DEFAULT, starting_after } = request.query;
    const page = await listPriceVersions(deps, requireCompany(request), request.params.type, {
      limit,
      startingAfter: starting_after,
    });
    return presentPage(page, presentPriceVersion, (p) => String(p.version));
  });
}
