/** Accounts: the bodies that create and edit one, and what `processor_id` and `plan_id` do. */
import { Type } from '@sinclair/typebox';
import {
  AccountParams,
  companyAuth,
  CompanyParams,
  Email,
  errorResponses,
  Metadata,
  Nullable,
  PageOf,
  PageQuery,
  Text,
  Timestamp,
} from './common.js';
import { toIso } from '../../lib/clock.js';
import type { AccountRow, BalanceRow } from '../../store/types.js';
import { presentBalance } from './balances.js';

const AccountFields = {
  name: Type.Optional(Text('Name of the end user')),
  email: Type.Optional(Email),
  metadata: Type.Optional(Metadata),
  processor_id: Type.Optional(
    Type.String({ minLength: 1, maxLength: 255, description: 'Existing customer at the payment processor' }),
  ),
};

const DataAccount = Type.Object({ data: Type.Ref('Account') }, { description: 'The account, with its balances' });

/** At `/v1/companies/{company_id}/accounts`, with or without the trailing slash. */
export const createAccountSchema = {
  operationId: 'createAccount',
  tags: ['accounts'],
  summary: 'Create an account (the trailing slash is optional)',
  security: companyAuth,
  description:
    "Without `processor_id`, the customer at the company's processor is created when the first card is " +
    "attached (POST /v1/accounts/{account_id}/card), never inside this request's transaction. With `plan_id`: " +
    "one balance per plan entry holding its included amount, and the plan's charge_amount recorded as owed " +
    '(requires_payment_method) until a card is attached; unknown plan: 400.',
  params: CompanyParams,
  body: Type.Object(
    { ...AccountFields, plan_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) },
    {
      additionalProperties: false,
      examples: [{ name: 'Ada Lovelace', email: 'ada@example.com', metadata: { crm_id: 'crm-42' } }],
    },
  ),
  response: { 200: DataAccount, ...errorResponses(404) },
};

export const listAccountsSchema = {
  operationId: 'listAccounts',
  tags: ['accounts'],
  summary: 'List or search accounts, newest first',
  description:
    'With `q`: only the accounts whose name or email contains it (case-insensitive for ASCII letters), whose ' +
    'account_id starts with it (case-sensitive), or whose metadata has a top-level string value equal to it ' +
    '(exactly). Paged like the list (a cursor is any account of the company). Cost: the search walks the ' +
    "company's accounts newest first until a page of matches is found, so a page of a common match reads about " +
    'a page of rows and a query matching nothing reads every account of the company once: for an account id ' +
    'you know whole, GET /v1/accounts/{account_id} is one index lookup.',
  security: companyAuth,
  querystring: Type.Composite(
    [
      PageQuery,
      Type.Object({
        q: Type.Optional(
          Type.String({
            minLength: 1,
            maxLength: 256,
            description: 'Search: name or email contains, account_id prefix, or a metadata value',
            examples: ['ada'],
          }),
        ),
      }),
    ],
    { additionalProperties: false },
  ),
  response: { 200: PageOf(Type.Ref('Account')), ...errorResponses() },
};

export const getAccountSchema = {
  operationId: 'getAccount',
  tags: ['accounts'],
  summary: 'Get an account with its balances',
  description:
    'The account and every balance it has (`balances` is empty when it has none), as they are at the instant of ' +
    'the read: holds older than one hour count as released and grants whose start or expiry has come as ' +
    'applied, whether or not anything has written them yet. ' +
    "Another company's account is 404, like one that does not exist.",
  security: companyAuth,
  params: AccountParams,
  response: { 200: DataAccount, ...errorResponses(404) },
};

export const updateAccountSchema = {
  operationId: 'updateAccount',
  tags: ['accounts'],
  summary: 'Edit name, email, metadata or processor_id',
  description:
    'Fields left out keep their values; metadata is replaced whole. A different `processor_id` detaches the ' +
    'card on file (a payment method of the previous customer cannot pay for the new one): charges due meanwhile ' +
    'wait for a card, as for an account that never had one, until POST /v1/accounts/{account_id}/card attaches ' +
    'one of the new customer.',
  security: companyAuth,
  params: AccountParams,
  body: Type.Object(AccountFields, { additionalProperties: false, examples: [{ name: 'Ada King' }] }),
  response: { 200: DataAccount, ...errorResponses(404) },
};

export const Account = Type.Object(
  {
    account_id: Type.String({ description: 'a_…' }),
    name: Nullable(Type.String()),
    email: Nullable(Type.String()),
    metadata: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
    processor_id: Nullable(Type.String()),
    plan_id: Nullable(Type.String()),
    created_at: Timestamp,
    balances: Type.Array(Type.Ref('Balance')),
  },
  {
    $id: 'Account',
    title: 'Account',
    examples: [
      {
        account_id: 'a_3kTQ9x0bM2',
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        metadata: { crm_id: 'crm-42' },
        processor_id: null,
        plan_id: null,
        created_at: '2026-11-23T10:00:00.000Z',
        balances: [],
      },
    ],
  },
);

export function presentAccount(a: AccountRow, balances: BalanceRow[], nowMs: number) {
  return {
    account_id: a.accountId,
    name: a.name,
    email: a.email,
    metadata: a.metadata,
    processor_id: a.processorId,
    plan_id: a.planId,
    created_at: toIso(a.createdAtMs),
    balances: balances.map((b) => presentBalance(b, nowMs)),
  };
}
