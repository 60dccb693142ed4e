/**
 * Plans (spec "Plan"; contract "Plans"): the rules of a plan body, renewing a plan balance at
 * the end of a period, and the `threshold_alert_percentage` alert.
 *
 * Decisions where the spec is silent:
 * - USD is the only currency of charges; `usd`, `USD` (any letter case) are accepted and stored
 *   as `usd`. Missing `charge_denomination` / `overage_charge_denomination` mean `usd`.
 * - `billing_period` accepts `month` and, as a synonym, `monthly` (the auto-refill body already
 *   uses `"monthly"` for the same period); both are stored as `month`. Missing means `month`.
 * - `overage_charge_mode` accepts only `postpay`; missing means `postpay`.
 * - `name`, `charge_amount`, `balances` and each entry's `amount`, `denomination` and
 *   `overage_charge_amount` are required: a forgotten overage price must not silently make
 *   overage free. `null` for an optional field means the same as leaving it out.
 * - `charge_amount` and `overage_charge_amount` are JSON integers (the spec says integer);
 *   an entry's `amount` may be an integer or a digit string (the spec says numeric string).
 * - `threshold_alert_percentage` is a decimal from 0 to 100 with at most
 *   PERCENTAGE_FRACTION_DIGITS_MAX decimals, as a string (or a JSON number), or null.
 * - Unknown fields are refused (contract "Errors": an unknown field is a 400).
 *
 * The plan body's schema (http/schemas/plans.ts) enforces every rule a JSON Schema can state:
 * presence, types, the vocabularies above, lengths, counts and integer ranges. What it cannot
 * state stays here: an exact percentage, a digit string beyond the safe range, and a
 * denomination named by two entries.
 */
import { AMOUNT_MAX, units, usdCents, type Units, type UsdCents } from './money.js';
import { parseExactDecimal, parseNonNegativeInteger, type ExactDecimal } from './numeric-input.js';

export const PLAN_NAME_LENGTH_MAX = 200;
export const PLAN_BALANCES_MAX = 100;
export const PERCENTAGE_FRACTION_DIGITS_MAX = 6;

export type BillingPeriod = 'month';
export type OverageChargeMode = 'postpay';

/** One entry of `balances`, as the plan body's schema has accepted it. */
export interface PlanBalanceInput {
  amount: string | number;
  denomination: string;
  overage_charge_amount: number;
  overage_charge_denomination?: string | null;
}

/** A plan body as its schema has accepted it (every rule a JSON Schema can state holds). */
export interface PlanInput {
  name: string;
  charge_amount: number;
  charge_denomination?: string | null;
  billing_period?: 'month' | 'monthly' | null;
  overage_charge_mode?: 'postpay' | null;
  threshold_alert_percentage?: string | number | null;
  rollover?: boolean | null;
  balances: PlanBalanceInput[];
  /** The plan's features (checked against the company's features by the operation). */
  features?: { feature: string; value?: unknown }[];
}

export interface PlanBalanceEntry {
  /** Included amount per period. */
  amount: Units;
  denomination: string;
  /** Price of each unit of overage (`overage_charge_amount`). */
  overageUnitUsdCents: UsdCents;
  overageChargeDenomination: 'usd';
}

export interface PlanDefinition {
  name: string;
  chargeAmountUsdCents: UsdCents;
  chargeDenomination: 'usd';
  billingPeriod: BillingPeriod;
  overageChargeMode: OverageChargeMode;
  /** Canonical spelling and exact value, or null when no alert is wanted. */
  thresholdAlertPercentage: ExactDecimal | null;
  rollover: boolean;
  balances: PlanBalanceEntry[];
}

export type PlanRejection =
  | 'threshold_alert_percentage_must_be_a_number_from_0_to_100'
  | 'plan_balance_amount_must_be_a_non_negative_integer'
  | 'plan_balance_amount_exceeds_maximum'
  | 'denomination_appears_twice_in_plan';

export type ParsedPlan = { ok: true; plan: PlanDefinition } | { ok: false; reason: PlanRejection; param: string };

/** Exact percentage 0–100, or undefined when `raw` is not one. */
export function parsePercentage(raw: unknown): ExactDecimal | undefined {
  const p = parseExactDecimal(raw, PERCENTAGE_FRACTION_DIGITS_MAX, 3);
  if (!p) return undefined;
  if (p.numerator > 100n * 10n ** BigInt(p.scaleDigits)) return undefined;
  return p;
}

/**
 * The plan a body defines, or the first rule it breaks, with the field it concerns. `body` is
 * typed `unknown` because operations/plans.ts hands the request body on as such; it must be a
 * PlanInput (the route's schema has checked it).
 */
export function parsePlan(body: unknown): ParsedPlan {
  const input = body as PlanInput;
  let percentage: ExactDecimal | null = null;
  if (input.threshold_alert_percentage != null) {
    const p = parsePercentage(input.threshold_alert_percentage);
    if (!p) return reject('threshold_alert_percentage_must_be_a_number_from_0_to_100', 'threshold_alert_percentage');
    percentage = p;
  }
  const balances: PlanBalanceEntry[] = [];
  const seen = new Set<string>();
  for (const [i, e] of input.balances.entries()) {
    // A digit string passes the schema whatever its length; only its value can exceed the safe range.
    const amount = parseNonNegativeInteger(e.amount);
    if (!amount.ok) {
      const reason =
        amount.problem === 'exceeds_maximum'
          ? 'plan_balance_amount_exceeds_maximum'
          : 'plan_balance_amount_must_be_a_non_negative_integer';
      return reject(reason, `balances[${i}].amount`);
    }
    if (seen.has(e.denomination)) return reject('denomination_appears_twice_in_plan', `balances[${i}].denomination`);
    seen.add(e.denomination);
    balances.push({
      amount: units(amount.value),
      denomination: e.denomination,
      overageUnitUsdCents: usdCents(e.overage_charge_amount),
      overageChargeDenomination: 'usd',
    });
  }
  return {
    ok: true,
    plan: {
      name: input.name,
      chargeAmountUsdCents: usdCents(input.charge_amount),
      chargeDenomination: 'usd',
      billingPeriod: 'month',
      overageChargeMode: 'postpay',
      thresholdAlertPercentage: percentage,
      rollover: input.rollover ?? false,
      balances,
    },
  };
}

function reject(reason: PlanRejection, param: string): ParsedPlan {
  return { ok: false, reason, param };
}

// ---------------------------------------------------------------------------------------------
// Renewal

export interface PlanRenewalInput {
  /** The balance's `amount` at the end of the period (negative = overage). */
  balanceAmount: number;
  /** The plan entry's included amount. */
  includedAmount: number;
  /** The plan entry's `overage_charge_amount`. */
  overageUnitUsdCents: number;
  rollover: boolean;
}

export interface PlanRenewal {
  ok: true;
  /** Units below zero at the end of the period, charged postpay. */
  overageUnits: Units;
  /** overageUnits × overage_charge_amount. */
  overageUsdCents: UsdCents;
  /** Signed change of the balance amount, recorded as one transaction of `kind`. */
  resetDelta: Units;
  /** Balance amount after the renewal: balanceAmount + resetDelta. */
  balanceAfter: Units;
  kind: 'period_reset' | 'grant';
}

export type PlanRenewalResult =
  | PlanRenewal
  | {
      ok: false;
      reason: 'overage_charge_exceeds_maximum' | 'resulting_balance_exceeds_maximum' | 'reset_delta_exceeds_maximum';
    };

/**
 * One plan balance at the end of its period. Overage (a negative balance) is charged postpay.
 * Without rollover the balance is then set to the included amount (`period_reset`). With
 * rollover the included amount is granted on top of what is left (`grant`); a negative balance
 * counts as nothing left, because its overage has just been charged: carrying the debt into the
 * next period as well would bill the same units twice. So with rollover the balance becomes
 * max(balance, 0) + included.
 */
export function renewPlanBalance(input: PlanRenewalInput): PlanRenewalResult {
  const { balanceAmount, includedAmount, overageUnitUsdCents, rollover } = input;
  if (!Number.isSafeInteger(balanceAmount)) throw new RangeError('balanceAmount must be a safe integer');
  for (const [name, v] of [
    ['includedAmount', includedAmount],
    ['overageUnitUsdCents', overageUnitUsdCents],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < 0)
      throw new RangeError(`${name} must be a non-negative safe integer, got ${v}`);
  }

  const overageUnits = balanceAmount < 0 ? -balanceAmount : 0;
  const overageCents = BigInt(overageUnits) * BigInt(overageUnitUsdCents);
  if (overageCents > BigInt(AMOUNT_MAX)) return { ok: false, reason: 'overage_charge_exceeds_maximum' };

  const after = rollover ? BigInt(Math.max(balanceAmount, 0)) + BigInt(includedAmount) : BigInt(includedAmount);
  if (after > BigInt(AMOUNT_MAX)) return { ok: false, reason: 'resulting_balance_exceeds_maximum' };
  const delta = after - BigInt(balanceAmount);
  if (delta > BigInt(AMOUNT_MAX) || delta < -BigInt(AMOUNT_MAX))
    return { ok: false, reason: 'reset_delta_exceeds_maximum' };

  return {
    ok: true,
    overageUnits: units(overageUnits),
    overageUsdCents: usdCents(Number(overageCents)),
    resetDelta: units(Number(delta)),
    balanceAfter: units(Number(after)),
    kind: rollover ? 'grant' : 'period_reset',
  };
}

// ---------------------------------------------------------------------------------------------
// Threshold alert

export interface ThresholdAlertInput {
  /** Balance amount before the change. */
  before: number;
  /** Balance amount after the change. */
  after: number;
  /** The plan entry's included amount. */
  includedAmount: number;
  /** `threshold_alert_percentage` as stored (string or parsed), or null for no alert. */
  percentage: string | ExactDecimal | null;
  /** A `threshold` alert for this balance was already sent in the current period. */
  alreadyAlertedThisPeriod: boolean;
}

/** amount < percentage% of included, exactly: amount × 100 × 10^s < included × numerator. */
export function isBelowPercentage(amount: number, includedAmount: number, percentage: ExactDecimal): boolean {
  const scale = 10n ** BigInt(percentage.scaleDigits);
  return BigInt(amount) * 100n * scale < BigInt(includedAmount) * percentage.numerator;
}

/**
 * True for the first drop below `percentage`% of the included amount in a period: not yet
 * alerted this period, the change lowered the balance, and it now lies below the mark. (A
 * balance can only start a period at or above the mark, because a renewal leaves at least the
 * included amount and the percentage is at most 100; requiring a decrease rather than a
 * crossing keeps that true even if a period started below it.)
 */
export function thresholdAlertCrossed(input: ThresholdAlertInput): boolean {
  if (input.alreadyAlertedThisPeriod || input.percentage === null) return false;
  const percentage = typeof input.percentage === 'string' ? parsePercentage(input.percentage) : input.percentage;
  if (!percentage) throw new RangeError(`stored threshold_alert_percentage is invalid: ${String(input.percentage)}`);
  return input.after < input.before && isBelowPercentage(input.after, input.includedAmount, percentage);
}
