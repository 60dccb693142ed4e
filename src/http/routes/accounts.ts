/** Accounts, balances, adjustments, transactions and prices. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { fail } from '../../domain/outcome.js';
import {
  adjustBalance,
  createAccount,
  createBalance,
  getAccount,
  getBalance,
  listAccounts,
  listPrices,
  listTransactions,
  putPrice,
  updateAccount,
} from '../../operations/accounts.js';
import { PAGE_LIMIT_DEFAULT } from '../../operations/deps.js';
import type { RouteContext } from '../route-context.js';
import type { BalanceRow } from '../../store/types.js';
import { requireCompany } from '../auth.js';
import { presentAccount, presentBalance, presentPage, presentPrice, presentTransaction } from '../present.js';
import {
  Denomination,
  Email,
  Metadata,
  PageOf,
  PageQuery,
  SafeInteger,
  Text,
  companyAuth,
  errorResponses,
} from '../schemas/common.js';

const AccountParams = Type.Object({ account_id: Type.String({ maxLength: 64 }) });
const BalanceParams = Type.Object({ account_id: Type.String({ maxLength: 64 }), denomination: Denomination });
const AccountFields = {
  name: Type.Optional(Text('Name of the end user')),
  email: Type.Optional(Email),
  metadata: Type.Optional(Metadata),
  processor_id: Type.Optional(
    Type.String({ minLength: 1, maxLength: 255, description: 'Existing customer at the payment processor' }),
  ),
};
const DataBalance = Type.Object({ data: Type.Ref('Balance') });
const DataAccount = Type.Object({ data: Type.Ref('Account') });

export function accountRoutes(scope: FastifyInstance, ctx: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const { deps } = ctx;
  const config = { auth: 'company' as const };

  app.post(
    '/v1/companies/:company_id/accounts',
    {
      config: { ...config, optionalBody: true },
      schema: {
        tags: ['accounts'],
        summary: 'Create an account (the trailing slash is optional)',
        security: companyAuth,
        description:
          "Without `processor_id`, the customer at the company's processor is created when the first card is attached " +
          "(POST /v1/accounts/{account_id}/card), never inside this request's transaction. With `plan_id`: one balance per plan entry holding its " +
          "included amount, and the plan's charge_amount recorded as owed (requires_payment_method) until a card is attached; unknown plan: 400.",
        params: Type.Object({ company_id: Type.String({ maxLength: 64 }) }),
        body: Type.Object(
          { ...AccountFields, plan_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) },
          { additionalProperties: false },
        ),
        response: { 200: DataAccount, ...errorResponses(404) },
      },
    },
    async (request) => {
      const companyId = requireCompany(request);
      if (request.params.company_id !== companyId) fail('not_found', 'no such company', 'company_id');
      const v = await createAccount(deps, companyId, request.body);
      return { data: presentAccount(v.account, v.balances) };
    },
  );

  app.get(
    '/v1/accounts',
    {
      config,
      schema: {
        tags: ['accounts'],
        summary: 'List accounts, newest first',
        security: companyAuth,
        querystring: PageQuery,
        response: { 200: PageOf(Type.Ref('Account')), ...errorResponses() },
      },
    },
    async (request) => {
      const companyId = requireCompany(request);
      const page = await listAccounts(deps, companyId, {
        limit: request.query.limit ?? PAGE_LIMIT_DEFAULT,
        startingAfter: request.query.starting_after,
      });
      // One query for the page's balances, not one per account.
      const byAccount = new Map<string, BalanceRow[]>();
      for (const b of await deps.store.read((tx) => tx.listBalancesOfAccounts(page.rows.map((a) => a.accountId)))) {
        const list = byAccount.get(b.accountId) ?? [];
        list.push(b);
        byAccount.set(b.accountId, list);
      }
      return presentPage(
        page,
        (a) => presentAccount(a, byAccount.get(a.accountId) ?? []),
        (a) => a.accountId,
      );
    },
  );

  app.get(
    '/v1/accounts/:account_id',
    {
      config,
      schema: {
        tags: ['accounts'],
        summary: 'Get an account with its balances',
        security: companyAuth,
        params: AccountParams,
        response: { 200: DataAccount, ...errorResponses(404) },
      },
    },
    async (request) => {
      const v = await getAccount(deps, requireCompany(request), request.params.account_id);
      return { data: presentAccount(v.account, v.balances) };
    },
  );

  app.put(
    '/v1/accounts/:account_id',
    {
      config,
      schema: {
        tags: ['accounts'],
        summary: 'Edit name, email, metadata or processor_id',
        description:
          'Fields left out keep their values; metadata is replaced whole. A different `processor_id` detaches the card on file ' +
          '(a payment method of the previous customer cannot pay for the new one): charges due meanwhile wait for a card, as for an account that never had one, ' +
          'until POST /v1/accounts/{account_id}/card attaches one of the new customer.',
        security: companyAuth,
        params: AccountParams,
        body: Type.Object(AccountFields, { additionalProperties: false }),
        response: { 200: DataAccount, ...errorResponses(404) },
      },
    },
    async (request) => {
      const v = await updateAccount(deps, requireCompany(request), request.params.account_id, request.body);
      return { data: presentAccount(v.account, v.balances) };
    },
  );

  app.post(
    '/v1/accounts/:account_id/balance/:denomination',
    {
      config: { ...config, optionalBody: true },
      schema: {
        tags: ['balances'],
        summary: 'Create a balance',
        description: 'Optional initial grant `amount` (recorded as a `grant` transaction). Already exists: 409.',
        security: companyAuth,
        params: BalanceParams,
        body: Type.Object(
          { amount: Type.Optional(SafeInteger({ minimum: 0, description: 'Initial grant, ≥ 0' })) },
          { additionalProperties: false },
        ),
        response: { 200: DataBalance, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const b = await createBalance(
        deps,
        requireCompany(request),
        request.params.account_id,
        request.params.denomination,
        request.body.amount ?? 0,
      );
      return { data: presentBalance(b) };
    },
  );

  app.get(
    '/v1/accounts/:account_id/balance/:denomination',
    {
      config,
      schema: {
        tags: ['balances'],
        summary: 'Get a balance',
        description: 'Holds older than one hour never show, even before the sweeper has cancelled them.',
        security: companyAuth,
        params: BalanceParams,
        response: { 200: DataBalance, ...errorResponses(404) },
      },
    },
    async (request) => ({
      data: presentBalance(
        await getBalance(deps, requireCompany(request), request.params.account_id, request.params.denomination),
      ),
    }),
  );

  app.post(
    '/v1/accounts/:account_id/balance/:denomination/adjustments',
    {
      config,
      schema: {
        tags: ['balances'],
        summary: 'Manual credit (positive) or debit (negative)',
        security: companyAuth,
        params: BalanceParams,
        body: Type.Object(
          {
            amount: SafeInteger({ description: 'Signed, non-zero' }),
            reason: Type.Optional(Text('Why; kept on the transaction')),
          },
          { additionalProperties: false },
        ),
        response: { 200: DataBalance, ...errorResponses(404) },
      },
    },
    async (request) => ({
      data: presentBalance(
        await adjustBalance(
          deps,
          requireCompany(request),
          request.params.account_id,
          request.params.denomination,
          request.body,
        ),
      ),
    }),
  );

  app.get(
    '/v1/accounts/:account_id/transactions',
    {
      config,
      schema: {
        tags: ['transactions'],
        summary: 'List transactions, newest first',
        description: 'Every change of a balance amount is one transaction; amount = the sum of its transactions.',
        security: companyAuth,
        params: AccountParams,
        querystring: Type.Object(
          { ...PageQuery.properties, denomination: Type.Optional(Denomination) },
          { additionalProperties: false },
        ),
        response: { 200: PageOf(Type.Ref('Transaction')), ...errorResponses(404) },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await listTransactions(deps, requireCompany(request), request.params.account_id, q.denomination, {
        limit: q.limit ?? PAGE_LIMIT_DEFAULT,
        startingAfter: q.starting_after,
      });
      return presentPage(page, presentTransaction, (t) => t.transactionId);
    },
  );

  app.put(
    '/v1/prices/:type',
    {
      config,
      schema: {
        tags: ['prices'],
        summary: 'Set the price of an event type',
        description: 'cost = quantity × unit_amount, computed exactly and rounded up to a whole unit.',
        security: companyAuth,
        params: Type.Object({ type: Text('Event type') }),
        body: Type.Object(
          {
            denomination: Denomination,
            unit_amount: Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Number({ minimum: 0 })], {
              description: 'Decimal string (exact) or number ≥ 0',
            }),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ data: Type.Ref('Price') }), ...errorResponses() },
      },
    },
    async (request) => ({
      data: presentPrice(await putPrice(deps, requireCompany(request), request.params.type, request.body)),
    }),
  );

  app.get(
    '/v1/prices',
    {
      config,
      schema: {
        tags: ['prices'],
        summary: 'List prices, by type',
        security: companyAuth,
        querystring: PageQuery,
        response: { 200: PageOf(Type.Ref('Price')), ...errorResponses() },
      },
    },
    async (request) => {
      const page = await listPrices(deps, requireCompany(request), {
        limit: request.query.limit ?? PAGE_LIMIT_DEFAULT,
        startingAfter: request.query.starting_after,
      });
      return presentPage(page, presentPrice, (p) => p.type);
    },
  );
}
