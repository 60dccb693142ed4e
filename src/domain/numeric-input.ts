/**
 * Exact parsing of amounts that clients may send as JSON integers or as numeric strings
 * (the guide sends `"2000"` where the spec says integer). Only plain decimal digits are
 * numbers here: no sign, no spaces, no exponent, no fraction, so `"2e3"`, `"1.5"`, `" 12"` and
 * `"-5"` are refused rather than guessed at. Nothing here touches floating point: a string is
 * checked digit by digit before it becomes a number, and only safe integers come out.
 */
import { AMOUNT_MAX } from './money.js';

export type IntegerInputProblem = 'must_be_a_non_negative_integer' | 'exceeds_maximum';

export type ParsedInteger = { ok: true; value: number } | { ok: false; problem: IntegerInputProblem };

const DIGITS = /^[0-9]+$/;
const AMOUNT_MAX_DIGITS = String(AMOUNT_MAX).length;

/** A non-negative safe integer given as a JSON number or as a string of decimal digits. */
export function parseNonNegativeInteger(raw: unknown): ParsedInteger {
  if (typeof raw === 'number') {
    if (!Number.isInteger(raw) || raw < 0) return { ok: false, problem: 'must_be_a_non_negative_integer' };
    if (raw > AMOUNT_MAX) return { ok: false, problem: 'exceeds_maximum' };
    return { ok: true, value: raw };
  }
  if (typeof raw === 'string') {
    if (!DIGITS.test(raw)) return { ok: false, problem: 'must_be_a_non_negative_integer' };
    const significant = raw.replace(/^0+(?=.)/, '');
    if (significant.length > AMOUNT_MAX_DIGITS) return { ok: false, problem: 'exceeds_maximum' };
    const value = Number(significant); // ≤ 16 digits: exact or beyond the maximum, checked next
    if (value > AMOUNT_MAX) return { ok: false, problem: 'exceeds_maximum' };
    return { ok: true, value };
  }
  return { ok: false, problem: 'must_be_a_non_negative_integer' };
}

/**
 * An exact non-negative decimal: `numerator / 10^scaleDigits`, e.g. "12.5" → 125 / 10^1.
 * `text` is the canonical spelling (no superfluous zeros) for storing and echoing back.
 */
export interface ExactDecimal {
  text: string;
  numerator: bigint;
  scaleDigits: number;
}

const DECIMAL = /^([0-9]+)(?:\.([0-9]+))?$/;

/**
 * Parses a decimal string such as "80", "12.5" or "0.25" exactly, with at most
 * `fractionDigitsMax` digits after the point and at most `integerDigitsMax` before it. A JSON
 * number is read through its shortest round-trip spelling (12.5 → "12.5"), which is the
 * decimal the client wrote; exponent spellings such as 1e-7 are refused.
 */
export function parseExactDecimal(
  raw: unknown,
  fractionDigitsMax: number,
  integerDigitsMax: number,
): ExactDecimal | undefined {
  let text: string;
  if (typeof raw === 'number') {
    if (!Number.isFinite(raw)) return undefined;
    text = String(raw);
  } else if (typeof raw === 'string') {
    text = raw;
  } else {
    return undefined;
  }
  const match = DECIMAL.exec(text);
  if (!match) return undefined;
  const whole = (match[1] ?? '').replace(/^0+(?=.)/, '');
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (whole.length > integerDigitsMax || fraction.length > fractionDigitsMax) return undefined;
  return {
    text: fraction.length > 0 ? `${whole}.${fraction}` : whole,
    numerator: BigInt(whole + fraction),
    scaleDigits: fraction.length,
  };
}
