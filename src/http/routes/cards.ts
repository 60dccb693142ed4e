/** Cards: the card on file, and attaching the card that refills, plan charges and proration are charged to. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { attachCard, getCard } from '../../operations/cards.js';
import { requireCompany } from '../auth.js';
import { runCommand } from '../idempotency.js';
import { attachCardSchema, getCardSchema, presentCard } from '../schemas/cards.js';
import { companyRoute, type RouteContext } from '../route-context.js';

export function cardRoutes(scope: FastifyInstance, { deps }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/v1/accounts/:account_id/card', { config: companyRoute, schema: getCardSchema }, async (request) => {
    const card = await getCard(deps, requireCompany(request), request.params.account_id);
    return { data: presentCard(card) };
  });

  app.post(
    '/v1/accounts/:account_id/card',
    { config: companyRoute, schema: attachCardSchema },
    async (request, reply) => {
      const companyId = requireCompany(request);
      return runCommand(
        request,
        reply,
        deps,
        attachCard(deps, companyId, request.params.account_id, request.body.token),
        (card) => ({ data: presentCard(card) }),
      );
    },
  );
}
