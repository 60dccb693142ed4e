/** Charges: the USD charges made to an account's card, and how to read their status. */
import { Type } from '@sinclair/typebox';
import { AccountParams, companyAuth, errorResponses, PageOf, PageQuery, Timestamp } from './common.js';
import { toIso } from '../../lib/clock.js';
import type { ChargeRow } from '../../store/types.js';

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

export function presentCharge(c: ChargeRow) {
  return {
    charge_id: c.chargeId,
    usd_amount: c.usdCents,
    status: c.status,
    reason: c.reason,
    denomination: c.denomination,
    failure_code: c.failureCode,
    created_at: toIso(c.createdAtMs),
  };
}
