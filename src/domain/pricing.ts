import {
  DECIMAL_SCALE_MAX,
  decimalFromNumber,
  formatDecimal,
  multiplyCeil,
  parseDecimal,
  type Decimal,
} from '../lib/decimal.js';
import { AMOUNT_MAX } from './money.js';
import type { Outcome } from './outcome.js';
import { failure } from './outcome.js';

/** A company's price for one event type: `unit_amount` units of `denomination` per unit of quantity. */
export interface Price {
  type: string;
  denomination: string;
  /** Exact decimal string, normalised ("0.0015", "12"). */
  unitAmount: string;
}

/** Accepts a decimal string or a JSON number and returns its exact normalised spelling. */
export function parseUnitAmount(raw: string | number): Outcome<string> {
  const d = typeof raw === 'number' ? decimalFromNumber(raw) : parseDecimal(raw.trim() === raw ? raw : '');
  if (!d)
    return failure(
      'unit_amount_must_be_a_non_negative_decimal',
      'unit_amount must be a non-negative decimal such as "0.25" or 3',
      'unit_amount',
    );
  if (d.scale > DECIMAL_SCALE_MAX) {
    return failure(
      'unit_amount_has_too_many_decimals',
      `unit_amount may have at most ${DECIMAL_SCALE_MAX} decimal places`,
      'unit_amount',
    );
  }
  if (d.coef > BigInt(AMOUNT_MAX) * 10n ** BigInt(d.scale)) {
    return failure('amount_out_of_range', 'unit_amount is too large', 'unit_amount');
  }
  return { ok: true, value: formatDecimal(d) };
}

/**
 * cost = quantity × unit_amount, computed exactly and rounded up to a whole unit.
 * Fails (rather than rounding) when the cost leaves the exact integer range.
 */
export function priceCost(quantity: number, unitAmount: string): Outcome<number> {
  const q = decimalFromNumber(quantity);
  const u: Decimal | null = parseDecimal(unitAmount);
  if (!q || !u)
    return failure('quantity_must_be_a_non_negative_number', 'quantity must be a finite number ≥ 0', 'quantity');
  const cost = multiplyCeil(q, u);
  if (cost > BigInt(AMOUNT_MAX))
    return failure('amount_out_of_range', 'the cost of this event is too large', 'quantity');
  return { ok: true, value: Number(cost) };
}
