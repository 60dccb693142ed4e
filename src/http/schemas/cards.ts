/** Cards: the schema and OpenAPI description of attaching a card to an account. */
import { Type } from '@sinclair/typebox';
import { AccountParams, companyAuth, errorResponses } from './common.js';
import type { CardRow } from '../../store/types.js';

const Card = Type.Object({
  brand: Type.String(),
  last4: Type.String(),
  exp_month: Type.Integer(),
  exp_year: Type.Integer(),
});

export const getCardSchema = {
  operationId: 'getCard',
  tags: ['cards'],
  summary: 'The card on file',
  security: companyAuth,
  params: AccountParams,
  description:
    'The card that refills, plan charges, overage and mid-month increases are charged to: its brand, last ' +
    'four digits and expiry (the number itself never reaches this server). 404 not_found when the account ' +
    'has none yet.',
  response: {
    200: Type.Object({ data: Card }, { description: 'The card on file' }),
    ...errorResponses(404),
  },
};

export const attachCardSchema = {
  operationId: 'attachCard',
  tags: ['cards'],
  summary: 'Attach a card (replaces the previous one)',
  security: companyAuth,
  params: AccountParams,
  description:
    "When the account has no `processor_id`, the customer is created at the company's processor here, " +
    'when the first card arrives (not at account creation: no processor call ever runs inside a database ' +
    "transaction), and its id becomes the account's `processor_id`. Sandbox tokens: tok_visa, tok_mastercard " +
    '(attach and charge), tok_chargeCustomerFail (attaches, every charge declined), tok_chargeDeclined ' +
    '(declined here: 402 payment_failed); any other token is 400. 409 processor_customer_changed if ' +
    'PUT /v1/accounts/{account_id} changed `processor_id` while the card was being attached (nothing is saved; ' +
    'attach again). Attaching a card resets the decline streak and un-pauses auto-refill of every balance of ' +
    'the account, and charges that waited for a card (status requires_payment_method) are collected. ' +
    'A rejected card changes nothing.',
  body: Type.Object(
    {
      token: Type.String({
        minLength: 1,
        maxLength: 255,
        pattern: '^[A-Za-z0-9_-]+$',
        description: "Card token from the processor's card element",
      }),
    },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Object({ data: Card }, { description: 'The card on file now' }),
    ...errorResponses(402, 404, 409, 503),
  },
};

export function presentCard(c: CardRow) {
  return { brand: c.brand, last4: c.last4, exp_month: c.expMonth, exp_year: c.expYear };
}
