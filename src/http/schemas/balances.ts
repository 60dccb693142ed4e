/** Balances: creating one (with an optional initial grant), reading it, and manual adjustments. */
import { Type } from '@sinclair/typebox';
import { BalanceParams, DataBalance, SafeInteger, Text, companyAuth, errorResponses } from './common.js';

export const createBalanceSchema = {
  operationId: 'createBalance',
  tags: ['balances'],
  summary: 'Create a balance',
  description: 'Optional initial grant `amount` (recorded as a `grant` transaction). Already exists: 409.',
  security: companyAuth,
  params: BalanceParams,
  body: Type.Object(
    { amount: Type.Optional(SafeInteger({ minimum: 0, description: 'Initial grant, ≥ 0' })) },
    { additionalProperties: false, examples: [{ amount: 1000 }] },
  ),
  response: { 200: DataBalance, ...errorResponses(404, 409) },
};

export const getBalanceSchema = {
  operationId: 'getBalance',
  tags: ['balances'],
  summary: 'Get a balance',
  description: 'Holds older than one hour never show, even before the sweeper has cancelled them.',
  security: companyAuth,
  params: BalanceParams,
  response: { 200: DataBalance, ...errorResponses(404) },
};

export const adjustBalanceSchema = {
  operationId: 'createBalanceAdjustment',
  tags: ['balances'],
  summary: 'Manual credit (positive) or debit (negative)',
  security: companyAuth,
  params: BalanceParams,
  body: Type.Object(
    {
      amount: SafeInteger({ description: 'Signed, non-zero' }),
      reason: Type.Optional(Text('Why; kept on the transaction')),
    },
    { additionalProperties: false, examples: [{ amount: -50, reason: 'support credit reversed' }] },
  ),
  response: { 200: DataBalance, ...errorResponses(404) },
};
