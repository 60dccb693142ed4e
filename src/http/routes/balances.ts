/** Balances: create one of a denomination, read it, and credit or debit it by hand. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { OutcomeError } from '../../domain/outcome.js';
import { adjustBalance, createBalance, setSpendLimits } from '../../operations/balances.js';
import { requireCompany } from '../auth.js';
import { runCommand } from '../idempotency.js';
import {
  adjustBalanceSchema,
  createBalanceSchema,
  getBalanceSchema,
  presentBalance,
  setBalanceLimitsSchema,
} from '../schemas/balances.js';
import { companyRoute, type RouteContext } from '../route-context.js';

export function balanceRoutes(scope: FastifyInstance, { deps, balances }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const path = '/v1/accounts/:account_id/balance/:denomination';

  app.post(
    path,
    { config: { ...companyRoute, optionalBody: true }, schema: createBalanceSchema },
    async (request, reply) => {
      const { account_id, denomination } = request.params;
      const initialAmount = request.body.amount ?? 0;
      const companyId = requireCompany(request);
      return runCommand(
        request,
        reply,
        deps,
        createBalance(deps, companyId, account_id, denomination, initialAmount),
        (b) => ({ data: presentBalance(b, deps.clock.now()) }),
      );
    },
  );

  app.get(path, { config: companyRoute, schema: getBalanceSchema }, async (request) => {
    const { account_id: accountId, denomination } = request.params;
    const read = await balances.read({ companyId: requireCompany(request), accountId, denomination });
    if (!read.ok) throw new OutcomeError(read);
    return { data: presentBalance(read.value, deps.clock.now()) };
  });

  app.post(`${path}/adjustments`, { config: companyRoute, schema: adjustBalanceSchema }, async (request, reply) => {
    const { account_id, denomination } = request.params;
    const companyId = requireCompany(request);
    return runCommand(
      request,
      reply,
      deps,
      adjustBalance(deps, companyId, account_id, denomination, request.body),
      (b) => ({ data: presentBalance(b, deps.clock.now()) }),
    );
  });

  app.put(`${path}/limits`, { config: companyRoute, schema: setBalanceLimitsSchema }, async (request, reply) => {
    const { account_id, denomination } = request.params;
    const companyId = requireCompany(request);
    return runCommand(
      request,
      reply,
      deps,
      setSpendLimits(deps, companyId, account_id, denomination, request.body),
      (b) => ({ data: presentBalance(b, deps.clock.now()) }),
    );
  });
}
