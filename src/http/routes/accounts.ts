/** Accounts: create (optionally on a plan), list, read and edit a company's end users. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { createAccount, getAccount, listAccounts, updateAccount } from '../../operations/accounts.js';
import { PAGE_LIMIT_DEFAULT } from '../../domain/limits.js';
import { requireCompany, requireCompanyOfPath } from '../auth.js';
import { runCommand } from '../idempotency.js';
import {
  createAccountSchema,
  getAccountSchema,
  listAccountsSchema,
  presentAccount,
  updateAccountSchema,
} from '../schemas/accounts.js';
import { presentPage } from '../schemas/common.js';
import { companyRoute, type RouteContext } from '../route-context.js';

export function accountRoutes(scope: FastifyInstance, { deps }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/v1/companies/:company_id/accounts',
    { config: { ...companyRoute, optionalBody: true }, schema: createAccountSchema },
    async (request, reply) => {
      const companyId = requireCompanyOfPath(request, request.params.company_id);
      return runCommand(request, reply, deps, createAccount(deps, companyId, request.body), (v) => ({
        data: presentAccount(v.account, v.balances, deps.clock.now()),
      }));
    },
  );

  app.get('/v1/accounts', { config: companyRoute, schema: listAccountsSchema }, async (request) => {
    const { limit = PAGE_LIMIT_DEFAULT, starting_after, q } = request.query;
    const page = await listAccounts(deps, requireCompany(request), { limit, startingAfter: starting_after }, q);
    const now = deps.clock.now();
    return presentPage(
      page,
      (v) => presentAccount(v.account, v.balances, now),
      (v) => v.account.accountId,
    );
  });

  app.get('/v1/accounts/:account_id', { config: companyRoute, schema: getAccountSchema }, async (request) => {
    const v = await getAccount(deps, requireCompany(request), request.params.account_id);
    return { data: presentAccount(v.account, v.balances, deps.clock.now()) };
  });

  app.put('/v1/accounts/:account_id', { config: companyRoute, schema: updateAccountSchema }, async (request, reply) => {
    const update = updateAccount(deps, requireCompany(request), request.params.account_id, request.body);
    return runCommand(request, reply, deps, update, (v) => ({
      data: presentAccount(v.account, v.balances, deps.clock.now()),
    }));
  });
}
