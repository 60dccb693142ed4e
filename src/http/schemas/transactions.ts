/** Transactions: the ledger of an account, one row per change of a balance amount. */
import { Type } from '@sinclair/typebox';
import { AccountParams, Denomination, PageOf, PageQuery, companyAuth, errorResponses } from './common.js';

export const listTransactionsSchema = {
  operationId: 'listTransactions',
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
};
