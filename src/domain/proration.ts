/**
 * Mid-month increase of the monthly refill (`POST /v1/accounts/{id}/modifymidmonth`),
 * contract "Mid-month increase":
 *
 *   remaining = balance amount clamped to [0, current refill_amount]
 *   value     = remaining × refill_usd_amount / refill_amount, rounded half up to a cent
 *   charged   = max(0, usd_charge − value)
 *   new balance amount = amount − remaining + new amount
 *
 * The ratio is computed in BigInt so no floating point ever touches a cent.
 */
import { AMOUNT_MAX, units, usdCents, type Units, type UsdCents } from './money.js';
import { parseNonNegativeInteger } from './numeric-input.js';

export type MidMonthRejection = 'amount_must_exceed_current_refill_amount' | 'resulting_balance_exceeds_maximum';

export interface MidMonthInput {
  /** Current `refill_amount`; `null` (no refill set yet) counts as 0: nothing to credit back. */
  refillAmount: number | null;
  /** Current `refill_usd_amount`; `null` counts as 0. */
  refillUsdCents: number | null;
  /** The balance's current `amount` (may be negative). */
  balanceAmount: number;
  /** The requested new refill amount (units). */
  newAmount: number;
  /** The requested new `usd_charge` (cents). */
  newUsdCents: number;
}

export interface MidMonthProration {
  ok: true;
  /** Units of the previous refill still unused, removed by the change. */
  remaining: Units;
  /** What `remaining` was paid for, credited against the new charge. */
  valueUsdCents: UsdCents;
  /** What the card is charged (`usd_amount_charged`). */
  chargedUsdCents: UsdCents;
  /** The balance `amount` after the change: amount − remaining + newAmount. */
  newBalanceAmount: Units;
  /** The signed change of the balance amount (one `proration` transaction). */
  balanceDelta: Units;
}

export type MidMonthResult = MidMonthProration | { ok: false; reason: MidMonthRejection };

function assertNonNegativeSafe(n: number, name: string): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${name} must be a non-negative safe integer, got ${n}`);
}

/** `numerator / denominator` rounded half up, for non-negative operands and denominator > 0. */
export function divideRoundHalfUp(numerator: bigint, denominator: bigint): bigint {
  return (2n * numerator + denominator) / (2n * denominator);
}

/** Value in cents of `remaining` units of a refill of `refillAmount` units for `refillUsdCents`. */
export function remainingValueUsdCents(remaining: number, refillAmount: number, refillUsdCents: number): UsdCents {
  if (refillAmount === 0) return usdCents(0);
  const value = divideRoundHalfUp(BigInt(remaining) * BigInt(refillUsdCents), BigInt(refillAmount));
  return usdCents(Number(value)); // ≤ refillUsdCents because remaining ≤ refillAmount
}

/**
 * Prices a mid-month increase. Stored values must be sane (a bug otherwise, so they throw);
 * client values arrive already parsed (see `parseModifyMidMonthAmounts`), and the outcomes a
 * client can cause come back as reason codes.
 */
export function prorateMidMonth(input: MidMonthInput): MidMonthResult {
  const refillAmount = input.refillAmount ?? 0;
  const refillUsdCents = input.refillUsdCents ?? 0;
  assertNonNegativeSafe(refillAmount, 'refillAmount');
  assertNonNegativeSafe(refillUsdCents, 'refillUsdCents');
  assertNonNegativeSafe(input.newAmount, 'newAmount');
  assertNonNegativeSafe(input.newUsdCents, 'newUsdCents');
  if (!Number.isSafeInteger(input.balanceAmount)) throw new RangeError('balanceAmount must be a safe integer');

  if (input.newAmount <= refillAmount) return { ok: false, reason: 'amount_must_exceed_current_refill_amount' };

  const remaining = Math.min(Math.max(input.balanceAmount, 0), refillAmount);
  const value = remainingValueUsdCents(remaining, refillAmount, refillUsdCents);
  const charged = Math.max(0, input.newUsdCents - value);
  const balanceDelta = input.newAmount - remaining; // > 0: newAmount > refillAmount ≥ remaining
  const newBalance = BigInt(input.balanceAmount) + BigInt(balanceDelta);
  if (newBalance > BigInt(AMOUNT_MAX)) return { ok: false, reason: 'resulting_balance_exceeds_maximum' };

  return {
    ok: true,
    remaining: units(remaining),
    valueUsdCents: value,
    chargedUsdCents: usdCents(charged),
    newBalanceAmount: units(Number(newBalance)),
    balanceDelta: units(balanceDelta),
  };
}

export type MidMonthAmountsRejection =
  | 'amount_is_required'
  | 'amount_must_be_a_non_negative_integer'
  | 'amount_exceeds_maximum'
  | 'usd_charge_is_required'
  | 'usd_charge_must_be_a_non_negative_integer'
  | 'usd_charge_exceeds_maximum';

export type ParsedMidMonthAmounts =
  | { ok: true; amount: Units; usdCents: UsdCents }
  | { ok: false; reason: MidMonthAmountsRejection; param: 'amount' | 'usd_charge' };

/** Reads `amount` and `usd_charge` of a modifymidmonth body: integers or digit strings. */
export function parseModifyMidMonthAmounts(body: { amount?: unknown; usd_charge?: unknown }): ParsedMidMonthAmounts {
  if (body.amount === undefined || body.amount === null) {
    return { ok: false, reason: 'amount_is_required', param: 'amount' };
  }
  const amount = parseNonNegativeInteger(body.amount);
  if (!amount.ok) return { ok: false, reason: `amount_${amount.problem}`, param: 'amount' };
  if (body.usd_charge === undefined || body.usd_charge === null) {
    return { ok: false, reason: 'usd_charge_is_required', param: 'usd_charge' };
  }
  const charge = parseNonNegativeInteger(body.usd_charge);
  if (!charge.ok) return { ok: false, reason: `usd_charge_${charge.problem}`, param: 'usd_charge' };
  return { ok: true, amount: units(amount.value), usdCents: usdCents(charge.value) };
}
