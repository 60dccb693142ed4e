/** Credit packs: a company's offers (company key). Their purchase is the portal's (routes/portal.ts). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { deleteTopupOffer, listTopupOffers, putTopupOffer } from '../../operations/topup-offers.js';
import { requireCompany } from '../auth.js';
import { runCommand } from '../idempotency.js';
import { companyRoute, type RouteContext } from '../route-context.js';
import {
  deleteTopupOfferSchema,
  listTopupOffersSchema,
  presentTopupOffer,
  putTopupOfferSchema,
} from '../schemas/topup-offers.js';

export function topupOfferRoutes(scope: FastifyInstance, { deps }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  app.put(
    '/v1/topup_offers/:offer_id',
    { config: companyRoute, schema: putTopupOfferSchema },
    async (request, reply) => {
      const put = putTopupOffer(deps, requireCompany(request), request.params.offer_id, request.body);
      return runCommand(request, reply, deps, put, (o) => ({ data: presentTopupOffer(o) }));
    },
  );

  app.get('/v1/topup_offers', { config: companyRoute, schema: listTopupOffersSchema }, async (request) => ({
    data: (await listTopupOffers(deps, requireCompany(request))).map(presentTopupOffer),
  }));

  app.delete(
    '/v1/topup_offers/:offer_id',
    { config: companyRoute, schema: deleteTopupOfferSchema },
    async (request, reply) => {
      const del = deleteTopupOffer(requireCompany(request), request.params.offer_id);
      return runCommand(request, reply, deps, del, (o) => ({ data: presentTopupOffer(o) }));
    },
  );
}
