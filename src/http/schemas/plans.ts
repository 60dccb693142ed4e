/** Plans: the plan record, the body that creates one, and what a plan does to an account. */
import { Type } from '@sinclair/typebox';
import { PLAN_BALANCES_MAX, PLAN_NAME_LENGTH_MAX } from '../../domain/plans.js';
import type { BodyViolationReasons } from '../validation.js';
import {
  companyAuth,
  CompanyParams,
  Denomination,
  errorResponses,
  PageOf,
  PageQuery,
  SafeInteger,
  Timestamp,
} from './common.js';
import { toIso } from '../../lib/clock.js';
import type { PlanRow } from '../../store/types.js';

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
  features: Type.Array(
    Type.Object({
      feature: Type.String({ description: 'A feature key (`PUT /v1/features/{key}`)' }),
      value: Type.Unknown({ description: 'config features: the JSON value an account on the plan gets; else null' }),
    }),
    { description: 'The features every account on the plan has, in the order given' },
  ),
  created_at: Timestamp,
});

/** Most features a plan lists. */
export const PLAN_FEATURES_MAX = 100;

/** A plan's list of features, at its creation and in `PUT /v1/plans/{plan_id}/features`. */
export const PlanFeaturesInput = Type.Array(
  Type.Object(
    {
      feature: Denomination,
      value: Type.Optional(Type.Unknown({ description: 'config features only: a JSON value of at most 4 KB' })),
    },
    { additionalProperties: false },
  ),
  {
    maxItems: PLAN_FEATURES_MAX,
    description:
      'The features an account on the plan has; an unknown feature, one listed twice or a value on a feature that ' +
      'is not `config`: 400 naming it',
  },
);

/** USD, the only currency of charges, in any letter case (stored as `usd`). */
const USD_PATTERN = '^[Uu][Ss][Dd]$';

const NOT_BLANK_PATTERN = '\\S';

const DIGITS_PATTERN = '^[0-9]+$';

/**
 * The body that creates a plan. Presence, types, vocabularies, lengths and ranges are checked
 * here; domain/plans.ts keeps what a schema cannot say (exact percentages, digit strings beyond
 * the safe range, a denomination twice). `null` for an optional field means leaving it out.
 */
const PlanBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: PLAN_NAME_LENGTH_MAX, pattern: NOT_BLANK_PATTERN }),
    charge_amount: SafeInteger({ minimum: 0, description: 'USD cents per period' }),
    charge_denomination: Type.Optional(
      Type.Union([Type.String({ pattern: USD_PATTERN, description: '"usd" or "USD" (default usd)' }), Type.Null()]),
    ),
    billing_period: Type.Optional(
      Type.Union([Type.Literal('month'), Type.Literal('monthly'), Type.Null()], {
        description: '"month" (default; "monthly" is accepted)',
      }),
    ),
    overage_charge_mode: Type.Optional(
      Type.Union([Type.Literal('postpay'), Type.Null()], { description: '"postpay" (default)' }),
    ),
    threshold_alert_percentage: Type.Optional(
      Type.Union([Type.String({ maxLength: 32 }), Type.Number(), Type.Null()], {
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
    features: Type.Optional(PlanFeaturesInput),
    balances: Type.Array(
      Type.Object(
        {
          amount: Type.Union([Type.String({ pattern: DIGITS_PATTERN, maxLength: 64 }), SafeInteger({ minimum: 0 })], {
            description: 'Included units per period: an integer or a string of digits',
          }),
          denomination: Denomination,
          overage_charge_amount: SafeInteger({ minimum: 0, description: 'USD cents per unit of overage' }),
          overage_charge_denomination: Type.Optional(Type.Union([Type.String({ pattern: USD_PATTERN }), Type.Null()])),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: PLAN_BALANCES_MAX, description: 'One entry per denomination' },
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'Pro',
        charge_amount: 4900,
        threshold_alert_percentage: 20,
        balances: [{ amount: 100000, denomination: 'tokens', overage_charge_amount: 1 }],
      },
    ],
  },
);

/**
 * The reason codes of plan body violations: the codes these checks had when domain/plans.ts
 * made them by hand. A wrong JSON type stays `invalid_request`, as it always was.
 */
export const planBodyViolations: BodyViolationReasons = {
  name: {
    required: 'name_is_required',
    minLength: 'name_must_be_a_non_empty_string',
    pattern: 'name_must_be_a_non_empty_string',
    maxLength: 'name_is_too_long',
  },
  charge_amount: {
    required: 'charge_amount_is_required',
    minimum: 'charge_amount_must_be_a_non_negative_integer',
    maximum: 'charge_amount_exceeds_maximum',
  },
  charge_denomination: { pattern: 'charge_denomination_must_be_usd' },
  billing_period: { const: 'unknown_billing_period' },
  overage_charge_mode: { const: 'unknown_overage_charge_mode' },
  balances: {
    required: 'plan_needs_at_least_one_balance',
    minItems: 'plan_needs_at_least_one_balance',
    maxItems: 'plan_has_too_many_balances',
  },
  'balances[].amount': {
    required: 'plan_balance_amount_is_required',
    pattern: 'plan_balance_amount_must_be_a_non_negative_integer',
    minimum: 'plan_balance_amount_must_be_a_non_negative_integer',
    maximum: 'plan_balance_amount_exceeds_maximum',
    maxLength: 'plan_balance_amount_exceeds_maximum',
  },
  threshold_alert_percentage: { maxLength: 'threshold_alert_percentage_must_be_a_number_from_0_to_100' },
  'balances[].denomination': { required: 'denomination_is_required', pattern: 'denomination_is_invalid' },
  'balances[].overage_charge_amount': {
    required: 'overage_charge_amount_is_required',
    minimum: 'overage_charge_amount_must_be_a_non_negative_integer',
    maximum: 'overage_charge_amount_exceeds_maximum',
  },
  'balances[].overage_charge_denomination': { pattern: 'overage_charge_denomination_must_be_usd' },
};

/** At `/v1/companies/{company_id}/plan` (the spec's path) and `…/plans`. */
export const createPlanSchema = {
  operationId: 'createPlan',
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
  response: { 200: Type.Object({ data: Plan }, { description: 'The plan' }), ...errorResponses(404) },
};

export const listPlansSchema = {
  operationId: 'listPlans',
  tags: ['plans'],
  summary: 'List plans, newest first',
  description:
    'Each plan with its balance entries, paged like every list; the cursor is a plan_id of this list (another ' +
    "is 400 unknown_cursor). A company_id other than the caller's is 404.",
  security: companyAuth,
  params: CompanyParams,
  querystring: PageQuery,
  response: { 200: PageOf(Plan), ...errorResponses(404) },
};

export const getPlanSchema = {
  operationId: 'getPlan',
  tags: ['plans'],
  summary: 'Get a plan',
  description:
    'By its plan_id (p_…), with its balance entries as created (they never change) and its features (replaced ' +
    "by `PUT /v1/plans/{plan_id}/features`). Another company's plan is 404, like one that does not exist.",
  security: companyAuth,
  params: Type.Object({ plan_id: Type.String({ maxLength: 64 }) }),
  response: { 200: Type.Object({ data: Plan }, { description: 'The plan' }), ...errorResponses(404) },
};

export const replacePlanFeaturesSchema = {
  operationId: 'replacePlanFeatures',
  tags: ['plans'],
  summary: "Replace a plan's features",
  description:
    'The new list applies to every account on the plan at once (one write, whatever their number). One ' +
    '`entitlements_change` `{plan_id, feature}` per feature whose presence or value the new list changes (none ' +
    'for an unchanged one). An unknown feature, one listed twice or a value on a feature that is not `config`: 400 ' +
    'naming the entry.',
  security: companyAuth,
  params: Type.Object({ plan_id: Type.String({ maxLength: 64 }) }),
  body: Type.Object(
    { features: PlanFeaturesInput },
    { additionalProperties: false, examples: [{ features: [{ feature: 'sso' }, { feature: 'seats', value: 5 }] }] },
  ),
  response: { 200: Type.Object({ data: Plan }, { description: 'The plan' }), ...errorResponses(404) },
};

export function presentPlan(p: PlanRow) {
  return {
    plan_id: p.planId,
    name: p.name,
    charge_amount: p.chargeAmountUsdCents,
    charge_denomination: 'usd' as const,
    billing_period: p.billingPeriod,
    overage_charge_mode: p.overageChargeMode,
    threshold_alert_percentage: p.thresholdAlertPercentage,
    rollover: p.rollover,
    balances: p.balances.map((b) => ({
      amount: String(b.amount),
      denomination: b.denomination,
      overage_charge_amount: b.overageUnitUsdCents,
      overage_charge_denomination: 'usd' as const,
    })),
    features: p.features.map((f) => ({ feature: f.feature, value: f.value === null ? null : JSON.parse(f.value) })),
    created_at: toIso(p.createdAtMs),
  };
}
