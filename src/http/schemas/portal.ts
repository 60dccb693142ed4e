/**
 * The customer portal's API (`/v1/portal/…`, a portal token only): the company API's reads of one account, the
 * token's, with its account and denomination taken from the session rather than the path.
 */
import { Type } from '@sinclair/typebox';
import { Denomination, errorResponses, Timestamp } from './common.js';
import { listChargesSchema, getReceiptSchema } from './charges.js';
import { listBalanceGrantsSchema } from './grants.js';
import { listTransactionsSchema } from './transactions.js';
import { accountUsageSchema } from './usage.js';

const portalAuth = [{ portalToken: [] }];
const SAME = ' As the company API answers it, for the portal session’s own account.';

export const getPortalAccountSchema = {
  operationId: 'getPortalAccount',
  tags: ['portal'],
  summary: "The portal session's account, its company, balances and scopes",
  description:
    'What the portal page shows first: the account (name, email), the company (name), every balance as it is ' +
    'now, the session’s scopes and when it ends.',
  security: portalAuth,
  response: {
    200: Type.Object({
      data: Type.Object({
        account: Type.Object({
          account_id: Type.String(),
          name: Type.Union([Type.String(), Type.Null()]),
          email: Type.Union([Type.String(), Type.Null()]),
        }),
        company: Type.Object({ name: Type.String() }),
        balances: Type.Array(Type.Ref('Balance')),
        scopes: Type.Array(Type.Union([Type.Literal('read'), Type.Literal('topup')])),
        expires_at: Timestamp,
      }),
    }),
    ...errorResponses(),
  },
};

export const listPortalGrantsSchema = {
  ...listBalanceGrantsSchema,
  operationId: 'listPortalGrants',
  tags: ['portal'],
  description: listBalanceGrantsSchema.description + SAME,
  security: portalAuth,
  params: Type.Object({ denomination: Denomination }),
};

export const listPortalTransactionsSchema = {
  ...listTransactionsSchema,
  operationId: 'listPortalTransactions',
  tags: ['portal'],
  description: listTransactionsSchema.description + SAME,
  security: portalAuth,
  params: Type.Object({}),
  response: { ...listTransactionsSchema.response, ...errorResponses() },
};

export const getPortalUsageSchema = {
  ...accountUsageSchema,
  operationId: 'getPortalUsage',
  tags: ['portal'],
  description: accountUsageSchema.description + SAME,
  security: portalAuth,
  params: Type.Object({}),
  response: { ...accountUsageSchema.response, ...errorResponses() },
};

export const listPortalChargesSchema = {
  ...listChargesSchema,
  operationId: 'listPortalCharges',
  tags: ['portal'],
  description: listChargesSchema.description + SAME,
  security: portalAuth,
  params: Type.Object({}),
  response: { ...listChargesSchema.response, ...errorResponses() },
};

export const getPortalReceiptSchema = {
  ...getReceiptSchema,
  operationId: 'getPortalReceipt',
  tags: ['portal'],
  description: `${getReceiptSchema.description} A charge of another account is 404 like an unknown one.`,
  security: portalAuth,
};
