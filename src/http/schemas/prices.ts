/** Prices: a company's price of each event type (unit, graduated or package), its history, how a cost is computed. */
import { Type } from '@sinclair/typebox';
import { companyAuth, Denomination, errorResponses, PageOf, PageQuery, Text, Timestamp } from './common.js';
import { toIso } from '../../lib/clock.js';
import type { PriceRow, PriceVersionRow } from '../../store/types.js';

const DecimalAmount = (description: string) =>
  Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Number({ minimum: 0 })], { description });

const TierInput = Type.Object(
  {
    up_to: Type.Union([Type.Number(), Type.Null()], {
      description:
        "The period's quantity up to which (inclusive) this tier prices: integers, strictly increasing; " +
        'the last tier null (no bound)',
    }),
    unit_amount: DecimalAmount('Exact decimal ≥ 0: units per unit of quantity in this tier'),
    flat_amount: Type.Optional(
      Type.Union([DecimalAmount('Exact decimal ≥ 0, due once, when the period first enters this tier'), Type.Null()]),
    ),
  },
  { additionalProperties: false },
);

const priceDescription =
  'Three models. `unit` (the default): cost = quantity × unit_amount, exact, rounded up per event. ' +
  '`graduated` (tiers) and `package` (package_size, package_amount) price the period: the UTC calendar month of ' +
  "the event's timestamp, counted per account and type over completed events that such a price priced. With C(q) " +
  'the exact cumulative price of q units and Q the quantity completed before it, an event of quantity q costs ' +
  'ceil(C(Q + q)) − ceil(C(Q)) when it completes, so any split of a period into events costs ceil(C(total)). ' +
  'A pending event holds what it would cost now and is priced again, by the price then in force and against the ' +
  'count then, when it completes (a settle with cost_override gives the cost instead, and the event does not ' +
  'count; if the price in force is then in another denomination, the held cost stands). Events with a ' +
  'cost_override are neither priced nor counted; unit-priced events are not counted. `volume` is refused: a ' +
  'crossing would reprice earlier units. A change applies to events completed after it; the count goes on; the ' +
  'earlier price is kept (GET /v1/prices/{type}/versions). A PUT of the price in force changes nothing.';

export const putPriceSchema = {
  operationId: 'setPrice',
  tags: ['prices'],
  summary: 'Set the price of an event type',
  description: priceDescription,
  security: companyAuth,
  params: Type.Object({ type: Text('Event type') }),
  body: Type.Object(
    {
      denomination: Denomination,
      model: Type.Optional(Type.String({ maxLength: 32, description: 'unit (default), graduated or package' })),
      unit_amount: Type.Optional(DecimalAmount('model unit: exact decimal string or number ≥ 0')),
      tiers: Type.Optional(Type.Array(TierInput, { description: 'model graduated: the tiers, in order' })),
      package_size: Type.Optional(Type.Number({ description: 'model package: units per block, an integer ≥ 1' })),
      package_amount: Type.Optional(DecimalAmount('model package: the price of every started block, exact ≥ 0')),
    },
    {
      additionalProperties: false,
      examples: [
        { denomination: 'tokens', unit_amount: '0.25' },
        {
          denomination: 'credits',
          model: 'graduated',
          tiers: [
            { up_to: 1000000, unit_amount: '0.002' },
            { up_to: null, unit_amount: '0.001', flat_amount: '100' },
          ],
        },
        { denomination: 'credits', model: 'package', package_size: 1000, package_amount: '5' },
      ],
    },
  ),
  response: {
    200: Type.Object({ data: Type.Ref('Price') }, { description: 'The price now in force' }),
    ...errorResponses(),
  },
};

export const getPriceSchema = {
  operationId: 'getPrice',
  tags: ['prices'],
  summary: 'The price of an event type now in force',
  description:
    'Its model (unit, graduated or package) with its terms, its denomination, its version and effective_from: ' +
    'the price events completed from now on are priced with. An event type without a price is 404; earlier ' +
    'prices of the type are at GET /v1/prices/{type}/versions.',
  security: companyAuth,
  params: Type.Object({ type: Text('Event type') }),
  response: { 200: Type.Object({ data: Type.Ref('Price') }), ...errorResponses(404) },
};

export const listPricesSchema = {
  operationId: 'listPrices',
  tags: ['prices'],
  summary: 'List prices, by type',
  description:
    'The price now in force of each event type that has one, ordered by type (ascending, byte order), not ' +
    'newest first like the other lists. The cursor is an event type of this list; one that has no price is ' +
    '400 unknown_cursor.',
  security: companyAuth,
  querystring: PageQuery,
  response: { 200: PageOf(Type.Ref('Price')), ...errorResponses() },
};

export const listPriceVersionsSchema = {
  operationId: 'listPriceVersions',
  tags: ['prices'],
  summary: 'Earlier prices of an event type, newest first',
  description: 'Each with the span it applied in, [effective_from, effective_to). The cursor is a version number.',
  security: companyAuth,
  params: Type.Object({ type: Text('Event type') }),
  querystring: PageQuery,
  response: { 200: PageOf(Type.Ref('PriceVersion')), ...errorResponses(404) },
};

const Tier = Type.Object({
  up_to: Type.Union([Type.Integer(), Type.Null()]),
  unit_amount: Type.String(),
  flat_amount: Type.Union([Type.String(), Type.Null()]),
});

const priceFields = {
  type: Type.String(),
  denomination: Type.String(),
  model: Type.Union([Type.Literal('unit'), Type.Literal('graduated'), Type.Literal('package')]),
  unit_amount: Type.Union([Type.String(), Type.Null()], {
    description: 'model unit: exact decimal, units per unit of quantity; else null',
  }),
  tiers: Type.Union([Type.Array(Tier), Type.Null()], { description: 'model graduated: the tiers; else null' }),
  package_size: Type.Union([Type.Integer(), Type.Null()], { description: 'model package; else null' }),
  package_amount: Type.Union([Type.String(), Type.Null()], { description: 'model package: exact decimal; else null' }),
  version: Type.Integer({ description: "1 for the type's first price, one more for each change" }),
  effective_from: Timestamp,
};

export const Price = Type.Object(
  { ...priceFields, updated_at: { ...Timestamp, description: 'The same as effective_from' } },
  { $id: 'Price', title: 'Price' },
);

export const PriceVersion = Type.Object(
  { ...priceFields, effective_to: Timestamp },
  { $id: 'PriceVersion', title: 'PriceVersion' },
);

function presentTerms(p: PriceRow) {
  const t = p.terms;
  return {
    type: p.type,
    denomination: p.denomination,
    model: t.model,
    unit_amount: t.model === 'unit' ? t.unitAmount : null,
    tiers:
      t.model === 'graduated'
        ? t.tiers.map((x) => ({ up_to: x.upTo, unit_amount: x.unitAmount, flat_amount: x.flatAmount }))
        : null,
    package_size: t.model === 'package' ? t.packageSize : null,
    package_amount: t.model === 'package' ? t.packageAmount : null,
    version: p.version,
    effective_from: toIso(p.updatedAtMs),
  };
}

export function presentPrice(p: PriceRow) {
  return { ...presentTerms(p), updated_at: toIso(p.updatedAtMs) };
}

export function presentPriceVersion(p: PriceVersionRow) {
  return { ...presentTerms(p), effective_to: toIso(p.effectiveToMs) };
}
