/**
 * The customer portal's API (`/v1/portal/…`): what the portal page reads, for the portal session's own account,
 * with the company API's operations and answers. The token's account and company are the only ones it can name;
 * a charge or a balance of another account is answered as missing.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { PAGE_LIMIT_DEFAULT } from '../../domain/limits.js';
import { listCharges } from '../../operations/charges.js';
import { getReceipt } from '../../operations/receipts.js';
import { listBalanceGrants } from '../../operations/grants.js';
import { getPortalAccount } from '../../operations/portal-sessions.js';
import { buyTopup, portalTopupOffers } from '../../operations/topup-offers.js';
import { listTransactions } from '../../operations/transactions.js';
import { encodeUsageCursor, getUsage } from '../../operations/usage.js';
import { requirePortal } from '../auth.js';
import { operationId } from '../idempotency.js';
import { sendReceipt } from '../receipt-page.js';
import type { RouteContext } from '../route-context.js';
import { presentBalance } from '../schemas/balances.js';
import { presentCharge, presentReceipt } from '../schemas/charges.js';
import { presentPage } from '../schemas/common.js';
import { presentGrant } from '../schemas/grants.js';
import {
  getPortalAccountSchema,
  getPortalReceiptSchema,
  getPortalUsageSchema,
  listPortalChargesSchema,
  listPortalGrantsSchema,
  listPortalTransactionsSchema,
} from '../schemas/portal.js';
import { presentTransaction } from '../schemas/transactions.js';
import { createPortalTopupSchema, listPortalTopupOffersSchema, presentTopupOffer } from '../schemas/topup-offers.js';
import { presentUsage } from '../schemas/usage.js';

const portalRoute = { auth: 'portal' as const };

export function portalRoutes(scope: FastifyInstance, { deps }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/v1/portal/account', { config: portalRoute, schema: getPortalAccountSchema }, async (request) => {
    const s = requirePortal(request);
    const { account, company, balances, nowMs } = await getPortalAccount(deps, s);
    return {
      data: {
        account: { account_id: account.accountId, name: account.name, email: account.email },
        company: { name: company.name },
        balances: balances.map((b) => presentBalance(b, nowMs)),
        scopes: s.scopes,
        expires_at: new Date(s.expiresAtMs).toISOString(),
      },
    };
  });

  app.get(
    '/v1/portal/balances/:denomination/grants',
    { config: portalRoute, schema: listPortalGrantsSchema },
    async (request) => {
      const s = requirePortal(request);
      const { limit = PAGE_LIMIT_DEFAULT, starting_after, status } = request.query;
      const page = await listBalanceGrants(deps, s.companyId, s.accountId, request.params.denomination, status, {
        limit,
        startingAfter: starting_after,
      });
      return presentPage(page, presentGrant, (g) => g.grantId);
    },
  );

  app.get('/v1/portal/transactions', { config: portalRoute, schema: listPortalTransactionsSchema }, async (request) => {
    const s = requirePortal(request);
    const { limit = PAGE_LIMIT_DEFAULT, starting_after, denomination } = request.query;
    const page = await listTransactions(deps, s.companyId, s.accountId, denomination, {
      limit,
      startingAfter: starting_after,
    });
    return presentPage(page, presentTransaction, (t) => t.transactionId);
  });

  app.get('/v1/portal/usage', { config: portalRoute, schema: getPortalUsageSchema }, async (request) => {
    const s = requirePortal(request);
    const { limit = PAGE_LIMIT_DEFAULT, starting_after, ...input } = request.query;
    const page = await getUsage(
      deps,
      s.companyId,
      { ...input, account_id: s.accountId },
      { limit, startingAfter: starting_after },
    );
    return presentPage(page, presentUsage, encodeUsageCursor);
  });

  app.get('/v1/portal/charges', { config: portalRoute, schema: listPortalChargesSchema }, async (request) => {
    const s = requirePortal(request);
    const { limit = PAGE_LIMIT_DEFAULT, starting_after } = request.query;
    const page = await listCharges(deps, s.companyId, s.accountId, { limit, startingAfter: starting_after });
    return presentPage(page, presentCharge, (c) => c.chargeId);
  });

  app.get(
    '/v1/portal/charges/:charge_id/receipt',
    { config: portalRoute, schema: getPortalReceiptSchema },
    async (request, reply) => {
      const s = requirePortal(request);
      const receipt = await getReceipt(deps, s.companyId, request.params.charge_id, s.accountId);
      return sendReceipt(request, reply, presentReceipt(receipt));
    },
  );

  app.get('/v1/portal/topup_offers', { config: portalRoute, schema: listPortalTopupOffersSchema }, async (request) => ({
    data: (await portalTopupOffers(deps, requirePortal(request, 'topup'))).map(presentTopupOffer),
  }));

  app.post('/v1/portal/topups', { config: portalRoute, schema: createPortalTopupSchema }, async (request, reply) => {
    const s = requirePortal(request, 'topup');
    const chargeId = await operationId(request, deps, 'ch');
    const { charge, grantId } = await buyTopup(deps, s, request.body.offer_id, chargeId);
    reply.code(201);
    const status = charge.status === 'requires_action' ? ('requires_action' as const) : ('succeeded' as const);
    return {
      data: { charge_id: charge.chargeId, status, grant_id: grantId, next_action_url: charge.nextActionUrl },
    };
  });
}
