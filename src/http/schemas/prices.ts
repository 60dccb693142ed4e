/** Prices: a company's unit price of each event type, and how a cost is computed from it. */
import { Type } from '@sinclair/typebox';
import { companyAuth, Denomination, errorResponses, PageOf, PageQuery, Text, Timestamp } from './common.js';
import { toIso } from '../../lib/clock.js';
import type { PriceRow } from '../../store/types.js';

export const putPriceSchema = {
  operationId: 'setPrice',
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
    { additionalProperties: false, examples: [{ denomination: 'tokens', unit_amount: '0.25' }] },
  ),
  response: {
    200: Type.Object({ data: Type.Ref('Price') }, { description: 'The price now in force' }),
    ...errorResponses(),
  },
};

export const listPricesSchema = {
  operationId: 'listPrices',
  tags: ['prices'],
  summary: 'List prices, by type',
  security: companyAuth,
  querystring: PageQuery,
  response: { 200: PageOf(Type.Ref('Price')), ...errorResponses() },
};

export const Price = Type.Object(
  {
    type: Type.String(),
    denomination: Type.String(),
    unit_amount: Type.String({ description: 'Exact decimal: units per unit of quantity' }),
    updated_at: Timestamp,
  },
  { $id: 'Price', title: 'Price' },
);

export function presentPrice(p: PriceRow) {
  return { type: p.type, denomination: p.denomination, unit_amount: p.unitAmount, updated_at: toIso(p.updatedAtMs) };
}
