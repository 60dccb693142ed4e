/**
 * Plans (spec "Plan"; contract "Plans"): validating a plan body, renewing a plan balance at
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
 */
import { isDenomination } from './denomination.js';
import { AMOUNT_MAX, units, usdCents, type Units, type UsdCents } from './money.js';
import {
  parseExactDecimal,
  parseNonNegativeInteger,
  parseNonNegativeIntegerStrict,
  type ExactDecimal,
  type ParsedInteger,
} from './numeric-input.js';

export const PLAN_NAME_LENGTH_MAX = 200;
export const PLAN_BALANCES_MAX = 100;
export const PERCENTAGE_FRACTION_DIGITS_MAX = 6;

export type BillingPeriod = 'month';
export type OverageChargeMode = 'postpay';

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
  | 'plan_must_be_an_object'
  | 'unknown_field'
  | 'name_is_required'
  | 'name_must_be_a_non_empty_string'
  | 'name_is_too_long'
  | 'charge_amount_is_required'
  | 'charge_amount_must_be_a_non_negative_integer'
  | 'charge_amount_exceeds_maximum'
  | 'charge_denomination_must_be_usd'
  | 'unknown_billing_period'
  | 'unknown_overage_charge_mode'
  | 'threshold_alert_percentage_must_be_a_number_from_0_to_100'
  | 'rollover_must_be_a_boolean'
  | 'plan_needs_at_least_one_balance'
  | 'balances_must_be_an_array'
  | 'plan_has_too_many_balances'
  | 'plan_balance_must_be_an_object'
  | 'plan_balance_amount_is_required'
  | 'plan_balance_amount_must_be_a_non_negative_integer'
  | 'plan_balance_amount_exceeds_maximum'
  | 'denomination_is_required'
  | 'denomination_is_invalid'
  | 'denomination_appears_twice_in_plan'
  | 'overage_charge_amount_is_required'
  | 'overage_charge_amount_must_be_a_non_negative_integer'
  | 'overage_charge_amount_exceeds_maximum'
  | 'overage_charge_denomination_must_be_usd';

export type ParsedPlan = { ok: true; plan: PlanDefinition } | { ok: false; reason: PlanRejection; param?: string };

const PLAN_FIELDS = new Set([
  'name',
  'charge_amount',
  'charge_denomination',
  'billing_period',
  'overage_charge_mode',
  'threshold_alert_percentage',
  'rollover',
  'balances',
]);
const BALANCE_FIELDS = new Set(['amount', 'denomination', 'overage_charge_amount', 'overage_charge_denomination']);

class Rejected {
  constructor(
    readonly reason: PlanRejection,
    readonly param?: string,
  ) {}
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function absent(v: unknown): v is undefined | null {
  return v === undefined || v === null;
}

function rejectUnknownFields(obj: Record<string, unknown>, allowed: Set<string>, prefix: string): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.has(key)) throw new Rejected('unknown_field', prefix + key);
  }
}

function integerOrReject(
  parsed: ParsedInteger,
  mustBeInteger: PlanRejection,
  exceeds: PlanRejection,
  param: string,
): number {
  if (parsed.ok) return parsed.value;
  throw new Rejected(parsed.problem === 'exceeds_maximum' ? exceeds : mustBeInteger, param);
}

function usdOrReject(raw: unknown, reason: PlanRejection, param: string): 'usd' {
  if (absent(raw)) return 'usd';
  if (typeof raw === 'string' && raw.toLowerCase() === 'usd') return 'usd';
  throw new Rejected(reason, param);
}

/** Exact percentage 0–100, or undefined when `raw` is not one. */
export function parsePercentage(raw: unknown): ExactDecimal | undefined {
  const p = parseExactDecimal(raw, PERCENTAGE_FRACTION_DIGITS_MAX, 3);
  if (!p) return undefined;
  if (p.numerator > 100n * 10n ** BigInt(p.scaleDigits)) return undefined;
  return p;
}

function parseBalanceEntry(raw: unknown, index: number): PlanBalanceEntry {
  const at = `balances[${index}]`;
  if (!isRecord(raw)) throw new Rejected('plan_balance_must_be_an_object', at);
  rejectUnknownFields(raw, BALANCE_FIELDS, `${at}.`);

  if (absent(raw.amount)) throw new Rejected('plan_balance_amount_is_required', `${at}.amount`);
  const amount = integerOrReject(
    parseNonNegativeInteger(raw.amount),
    'plan_balance_amount_must_be_a_non_negative_integer',
    'plan_balance_amount_exceeds_maximum',
    `${at}.amount`,
  );

  if (absent(raw.denomination)) throw new Rejected('denomination_is_required', `${at}.denomination`);
  if (typeof raw.denomination !== 'string' || !isDenomination(raw.denomination)) {
    throw new Rejected('denomination_is_invalid', `${at}.denomination`);
  }

  if (absent(raw.overage_charge_amount)) {
    throw new Rejected('overage_charge_amount_is_required', `${at}.overage_charge_amount`);
  }
  const overage = integerOrReject(
    parseNonNegativeIntegerStrict(raw.overage_charge_amount),
    'overage_charge_amount_must_be_a_non_negative_integer',
    'overage_charge_amount_exceeds_maximum',
    `${at}.overage_charge_amount`,
  );

  return {
    amount: units(amount),
    denomination: raw.denomination,
    overageUnitUsdCents: usdCents(overage),
    overageChargeDenomination: usdOrReject(
      raw.overage_charge_denomination,
      'overage_charge_denomination_must_be_usd',
      `${at}.overage_charge_denomination`,
    ),
  };
}

function parseBalances(raw: unknown): PlanBalanceEntry[] {
  if (absent(raw)) throw new Rejected('plan_needs_at_least_one_balance', 'balances');
  if (!Array.isArray(raw)) throw new Rejected('balances_must_be_an_array', 'balances');
  if (raw.length === 0) throw new Rejected('plan_needs_at_least_one_balance', 'balances');
  if (raw.length > PLAN_BALANCES_MAX) throw new Rejected('plan_has_too_many_balances', 'balances');
  const entries = raw.map(parseBalanceEntry);
  const seen = new Set<string>();
  entries.forEach((e, i) => {
    if (seen.has(e.denomination))
      throw new Rejected('denomination_appears_twice_in_plan', `balances[${i}].denomination`);
    seen.add(e.denomination);
  });
  return entries;
}

function parseName(raw: unknown): string {
  if (absent(raw)) throw new Rejected('name_is_required', 'name');
  if (typeof raw !== 'string' || raw.trim().length === 0) throw new Rejected('name_must_be_a_non_empty_string', 'name');
  if (raw.length > PLAN_NAME_LENGTH_MAX) throw new Rejected('name_is_too_long', 'name');
  return raw;
}

function parseBillingPeriod(raw: unknown): BillingPeriod {
  if (absent(raw) || raw === 'month' || raw === 'monthly') return 'month';
  throw new Rejected('unknown_billing_period', 'billing_period');
}

function parseOverageChargeMode(raw: unknown): OverageChargeMode {
  if (absent(raw) || raw === 'postpay') return 'postpay';
  throw new Rejected('unknown_overage_charge_mode', 'overage_charge_mode');
}

function parseThresholdAlertPercentage(raw: unknown): ExactDecimal | null {
  if (absent(raw)) return null;
  const p = parsePercentage(raw);
  if (!p) throw new Rejected('threshold_alert_percentage_must_be_a_number_from_0_to_100', 'threshold_alert_percentage');
  return p;
}

function parseRollover(raw: unknown): boolean {
  if (absent(raw)) return false;
  if (typeof raw !== 'boolean') throw new Rejected('rollover_must_be_a_boolean', 'rollover');
  return raw;
}

/** Validates a plan body; the first problem found is reported with the field it concerns. */
export function parsePlan(body: unknown): ParsedPlan {
  try {
    if (!isRecord(body)) throw new Rejected('plan_must_be_an_object');
    rejectUnknownFields(body, PLAN_FIELDS, '');
    const name = parseName(body.name);
    if (absent(body.charge_amount)) throw new Rejected('charge_amount_is_required', 'charge_amount');
    const charge = integerOrReject(
      parseNonNegativeIntegerStrict(body.charge_amount),
      'charge_amount_must_be_a_non_negative_integer',
      'charge_amount_exceeds_maximum',
      'charge_amount',
    );
    const plan: PlanDefinition = {
      name,
      chargeAmountUsdCents: usdCents(charge),
      chargeDenomination: usdOrReject(
        body.charge_denomination,
        'charge_denomination_must_be_usd',
        'charge_denomination',
      ),
      billingPeriod: parseBillingPeriod(body.billing_period),
      overageChargeMode: parseOverageChargeMode(body.overage_charge_mode),
      thresholdAlertPercentage: parseThresholdAlertPercentage(body.threshold_alert_percentage),
      rollover: parseRollover(body.rollover),
      balances: parseBalances(body.balances),
    };
    return { ok: true, plan };
  } catch (e) {
    if (e instanceof Rejected)
      return e.param === undefined ? { ok: false, reason: e.reason } : { ok: false, reason: e.reason, param: e.param };
    throw e;
  }
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
