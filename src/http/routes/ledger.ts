/** The ledger: an account's transactions, newest first, optionally of one denomination. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { applyDueOfAccount } from '../../operations/events.js';
import { listTransactions } from '../../operations/ledger.js';
import { PAGE_LIMIT_DEFAULT } from '../../domain/limits.js';
import { requireCompany } from '../auth.js';
import { presentPage } from '../schemas/common.js';
import { listTransactionsSchema, presentTransaction } from '../schemas/ledger.js';
import { companyRoute, type RouteContext } from '../route-context.js';

export function ledgerRoutes(scope: FastifyInstance, { deps }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/accounts/:account_id/transactions',
    { config: companyRoute, schema: listTransactionsSchema },
    async (request) => {
      const { limit = PAGE_LIMIT_DEFAULT, starting_after, denomination } = request.query;
      const companyId = requireCompany(request);
      await applyDueOfAccount(deps, companyId, request.params.account_id, denomination);
      const page = await listTransactions(deps, companyId, request.params.account_id, denomination, {
        limit,
        startingAfter: starting_after,
      });
      return presentPage(page, presentTransaction, (t) => t.transactionId);
    },
  );
}
