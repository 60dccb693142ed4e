/** Charges: the USD charges made to an account's card, and how to read their status. */
import { Type } from '@sinclair/typebox';
import { AccountParams, PageOf, PageQuery, Timestamp, companyAuth, errorResponses } from './common.js';

const Charge = Type.Object({
  charge_id: Type.String({ description: 'ch_…; also the processor idempotency key' }),
  usd_amount: Type.Integer({ description: 'USD cents' }),
  status: Type.Union([
    Type.Literal('pending'),
    Type.Literal('succeeded'),
    Type.Literal('failed'),
    Type.Literal('requires_payment_method'),
  ]),
  reason: Type.Union([
    Type.Literal('refill'),
    Type.Literal('plan'),
    Type.Literal('overage'),
    Type.Literal('proration'),
  ]),
  denomination: Type.Union([Type.String(), Type.Null()], {
    description: 'The balance a refill or proration is for; null for plan and overage charges',
  }),
  failure_code: Type.Union([Type.String(), Type.Null()], {
    description: 'Why a charge failed or waits for a card, e.g. card_declined, no_card_on_file',
  }),
  created_at: Timestamp,
});

export const listChargesSchema = {
  operationId: 'listCharges',
  tags: ['charges'],
  summary: 'List the USD charges to the card, newest first',
  description:
    'Refills, plan charges, overage and proration. status: pending (requested, not yet answered by the ' +
    'processor), succeeded, failed, requires_payment_method (owed, waiting for a card).',
  security: companyAuth,
  params: AccountParams,
  querystring: PageQuery,
  response: { 200: PageOf(Charge), ...errorResponses(404) },
};
