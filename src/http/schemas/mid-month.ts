/** The mid-month increase of a monthly refill (`modifymidmonth`): body, answer and the proration rule. */
import { Type } from '@sinclair/typebox';
import { AccountParams, Denomination, SafeInteger, companyAuth, errorResponses } from './common.js';

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
