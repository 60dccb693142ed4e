/** Plans: the plan record, the body that creates one, and what a plan does to an account. */
import { Type } from '@sinclair/typebox';
import { CompanyParams, PageOf, PageQuery, Timestamp, companyAuth, errorResponses } from './common.js';

const PlanBalance = Type.Object({
  amount: Type.String({ description: 'Included amount per period (numeric string)' }),
  denomination: Type.String(),
  overage_charge_amount: Type.Integer({
    description: 'USD cents per unit beyond the included amount, charged postpay',
  }),
  overage_charge_denomination: Type.Literal('usd'),
});

const Plan = Type.Object({
  plan_id: Type.String({ description: 'p_…' }),
  name: Type.String(),
  charge_amount: Type.Integer({ description: 'USD cents per period' }),
  charge_denomination: Type.Literal('usd'),
  billing_period: Type.Literal('month'),
  overage_charge_mode: Type.Literal('postpay'),
  threshold_alert_percentage: Type.Union([Type.String(), Type.Null()]),
  rollover: Type.Boolean(),
  balances: Type.Array(PlanBalance),
  created_at: Timestamp,
});

const PlanBody = Type.Object(
  {
    name: Type.Optional(Type.String({ description: 'Required' })),
    charge_amount: Type.Optional(Type.Integer({ description: 'Required: USD cents per period, ≥ 0' })),
    charge_denomination: Type.Optional(
      Type.Union([Type.String({ description: '"usd" or "USD" (default usd)' }), Type.Null()]),
    ),
    billing_period: Type.Optional(
      Type.Union([Type.String({ description: '"month" (default; "monthly" is accepted)' }), Type.Null()]),
    ),
    overage_charge_mode: Type.Optional(Type.Union([Type.String({ description: '"postpay" (default)' }), Type.Null()])),
    threshold_alert_percentage: Type.Optional(
      Type.Union([Type.String(), Type.Number(), Type.Null()], {
        description:
          'Decimal 0–100: a threshold webhook when a plan balance first drops below this % of its included ' +
          'amount in a period',
      }),
    ),
    rollover: Type.Optional(
      Type.Union([
        Type.Boolean({ description: 'Unused units carry into the next period (default false: reset)' }),
        Type.Null(),
      ]),
    ),
    balances: Type.Optional(
      Type.Array(
        Type.Object(
          {
            amount: Type.Optional(
              Type.Union([Type.String(), Type.Integer()], { description: 'Required: included units per period' }),
            ),
            denomination: Type.Optional(Type.String({ description: 'Required' })),
            overage_charge_amount: Type.Optional(
              Type.Integer({ description: 'Required: USD cents per unit of overage' }),
            ),
            overage_charge_denomination: Type.Optional(Type.Union([Type.String(), Type.Null()])),
          },
          { additionalProperties: false },
        ),
        { description: 'Required, at least one entry' },
      ),
    ),
  },
  { additionalProperties: false },
);

/** At `/v1/companies/{company_id}/plan` (the spec's path) and `…/plans`. */
export const createPlanSchema = {
  tags: ['plans'],
  summary: 'Create a plan',
  description:
    'An account created with `plan_id` gets one balance per entry holding the included amount and is charged ' +
    '`charge_amount` at once (with no card yet the charge is recorded `requires_payment_method` and collected ' +
    'when a card is attached). Every month under the day rule: overage (a negative balance) is charged at ' +
    'overage_charge_amount per unit, then the balance is reset to the included amount (`period_reset`) or, with ' +
    '`rollover`, the included amount is added to what is left (kind `grant`; a negative balance counts as 0 ' +
    'since its overage was charged), and charge_amount is charged again; an `auto_refill` webhook per balance. ' +
    'A declined plan or overage charge waits for a new card.',
  security: companyAuth,
  params: CompanyParams,
  body: PlanBody,
  response: { 200: Type.Object({ data: Plan }), ...errorResponses(404) },
};

export const listPlansSchema = {
  tags: ['plans'],
  summary: 'List plans, newest first',
  security: companyAuth,
  params: CompanyParams,
  querystring: PageQuery,
  response: { 200: PageOf(Plan), ...errorResponses(404) },
};

export const getPlanSchema = {
  tags: ['plans'],
  summary: 'Get a plan',
  security: companyAuth,
  params: Type.Object({ plan_id: Type.String({ maxLength: 64 }) }),
  response: { 200: Type.Object({ data: Plan }), ...errorResponses(404) },
};
