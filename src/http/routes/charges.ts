/** Charges: the USD charges made to an account's card (refills, plans, overage, proration), and their receipts. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { listCharges } from '../../operations/charges.js';
import { getReceipt } from '../../operations/receipts.js';
import { PAGE_LIMIT_DEFAULT } from '../../domain/limits.js';
import { requireCompany } from '../auth.js';
import { getReceiptSchema, listChargesSchema, presentCharge, presentReceipt } from '../schemas/charges.js';
import { sendReceipt } from '../receipt-page.js';
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

  app.get(
    '/v1/charges/:charge_id/receipt',
    { config: companyRoute, schema: getReceiptSchema },
    async (request, reply) => {
      const receipt = await getReceipt(deps, requireCompany(request), request.params.charge_id);
      return sendReceipt(request, reply, presentReceipt(receipt));
    },
  );
}
