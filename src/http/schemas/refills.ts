/**
 * Refills of a balance: the auto-refill settings, and the mid-month increase of the monthly refill
 * (`modifymidmonth`): bodies, answers and the proration rule.
 */
import { Type } from '@sinclair/typebox';
import { DECLINES_BEFORE_PAUSE } from '../../domain/refills.js';
import {
  AccountParams,
  BalanceParams,
  companyAuth,
  DataBalance,
  Denomination,
  errorResponses,
  SafeInteger,
} from './common.js';

const AutoRefillFields = {
  amount: Type.Optional(SafeInteger({ minimum: 1, description: 'Units added per refill' })),
  usd_charge: Type.Optional(SafeInteger({ minimum: 0, description: 'USD cents charged per refill' })),
  threshold: Type.Optional(
    Type.Union([SafeInteger(), Type.Null()], {
      description: 'Refill when a change leaves available below this; null switches it off',
    }),
  ),
  refill_monthly: Type.Optional(Type.Boolean({ description: 'Monthly refill on or off' })),
  refill_period: Type.Optional(Type.Literal('monthly', { description: '"monthly" means refill_monthly: true' })),
  max_refills_per_month: Type.Optional(
    Type.Union([SafeInteger({ minimum: 1 }), Type.Null()], {
      description:
        'Most threshold refills started in a UTC month; past it none is attempted and one `refill_capped` ' +
        'notification is sent for the balance that month; null: no cap',
    }),
  ),
};

const autoRefillDescription =
  'Fields left out keep their values. Threshold: after a change lowers `available` below `threshold`, ' +
  'the card is charged `usd_charge` and, only if that succeeds, `amount` is added (kind `refill`) and an ' +
  '`auto_refill` webhook is sent; one refill in flight per balance; a declined charge adds nothing and is ' +
  `retried on the next change; after ${DECLINES_BEFORE_PAUSE} declines in a row auto-refill pauses ` +
  '(`auto_refill_paused`) until a new card is attached. Saving settings does not itself start a threshold ' +
  'refill. Monthly: switching it on refills at once and anchors the day (UTC; days after the 28th move to ' +
  'the 1st of the second following month, then every 1st); changing amounts of an existing monthly refill ' +
  'takes effect at the next renewal. `max_refills_per_month` caps the threshold refills of a UTC month. The ' +
  'response shows the balance when the settings were saved: refills ' +
  'happen in the background once their charge succeeds.';

/** At `…/balance/{denomination}/autorefill` and `…/auto_refill`: the denomination is in the path. */
export const putBalanceAutoRefillSchema = {
  operationId: 'setBalanceAutoRefill',
  tags: ['auto-refill'],
  summary: 'Set auto-refill of a balance',
  description: autoRefillDescription,
  security: companyAuth,
  params: BalanceParams,
  body: Type.Object(
    { denomination: Type.Optional(Denomination), ...AutoRefillFields },
    { additionalProperties: false, examples: [{ threshold: 100, amount: 1000, usd_charge: 1000 }] },
  ),
  response: { 200: DataBalance, ...errorResponses(404) },
};

/** At `/v1/accounts/{account_id}/auto_refill`: the denomination is in the body. */
export const putAccountAutoRefillSchema = {
  operationId: 'setAccountAutoRefill',
  tags: ['auto-refill'],
  summary: 'Set auto-refill of a balance (denomination in the body)',
  description: autoRefillDescription,
  security: companyAuth,
  params: AccountParams,
  body: Type.Object(
    { denomination: Denomination, ...AutoRefillFields },
    {
      additionalProperties: false,
      examples: [{ denomination: 'tokens', amount: 1000, usd_charge: 900, refill_period: 'monthly' }],
    },
  ),
  response: { 200: DataBalance, ...errorResponses(404) },
};

export const modifyMidMonthSchema = {
  operationId: 'modifyMidMonth',
  tags: ['auto-refill'],
  summary: 'Increase the monthly refill now, prorated',
  description:
    'For increases only (`amount` must exceed the current refill_amount; decreases are scheduled with ' +
    'PUT …/autorefill), of a balance whose monthly refill is on: without one, 400 monthly_refill_not_enabled ' +
    '(enable it with PUT …/autorefill {"refill_monthly": true, amount, usd_charge}). remaining = the balance ' +
    'amount clamped to [0, refill_amount]; its value = remaining × ' +
    'refill_usd_amount / refill_amount, rounded half up to a cent; charged = max(0, usd_charge − value). ' +
    '`dryrun`: only the quote. Otherwise the card is charged FIRST, synchronously, with the charge id as the ' +
    'processor idempotency key; only when it succeeds is the change applied in one transaction: remaining ' +
    'removed and amount added (one `proration` transaction), the refill settings replaced, ' +
    'the refill day today under the monthly day rule. A declined charge (or no card) is 402 payment_failed and ' +
    'changes nothing but the record of the failed charge. `amount` in the response is the balance amount after ' +
    'the change.',
  security: companyAuth,
  params: AccountParams,
  body: Type.Object(
    {
      account_id: Type.Optional(Type.String({ maxLength: 64, description: 'Must match the path when given' })),
      denomination: Denomination,
      amount: Type.Union([SafeInteger({ minimum: 0 }), Type.String({ maxLength: 32 })], {
        description: 'New refill amount: integer or numeric string',
      }),
      usd_charge: Type.Union([SafeInteger({ minimum: 0 }), Type.String({ maxLength: 32 })], {
        description: 'New refill price, USD cents: integer or numeric string',
      }),
      dryrun: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Object(
      {
        data: Type.Object({
          account_id: Type.String(),
          isdryrun: Type.Boolean(),
          amount: Type.Integer(),
          denomination: Type.String(),
          refill_amount: Type.Integer(),
          refill_day: Type.Integer(),
          refill_usd_amount: Type.Integer(),
          usd_amount_charged: Type.String({ description: 'USD cents, as a string' }),
        }),
      },
      { description: 'The increase as made (or, with dryrun, as it would be made)' },
    ),
    ...errorResponses(402, 404, 503),
  },
};
