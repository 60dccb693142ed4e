/** Transactions: an account's ledger rows, newest first, optionally of one denomination. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { listTransactions } from '../../operations/transactions.js';
import { PAGE_LIMIT_DEFAULT } from '../../domain/limits.js';
import { requireCompany } from '../auth.js';
import { presentPage } from '../schemas/common.js';
import { listTransactionsSchema, presentTransaction } from '../schemas/transactions.js';
import { companyRoute, type RouteContext } from '../route-context.js';

export function transactionRoutes(scope: FastifyInstance, { deps }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/accounts/:account_id/transactions',
    { config: companyRoute, schema: listTransactionsSchema },
    async (request) => {
      const { limit = PAGE_LIMIT_DEFAULT, starting_after, denomination } = request.query;
      const page = await listTransactions(deps, requireCompany(request), request.params.account_id, denomination, {
        limit,
        startingAfter: starting_after,
      });
      return presentPage(page, presentTransaction, (t) => t.transactionId);
    },
  );
}
