/**
 * Exact decimal arithmetic for prices and quantities. A decimal is a BigInt coefficient and a
 * base-10 scale (value = coef / 10^scale), so `0.1 × 3` is exactly `0.3`, never 0.30000000000000004.
 */
export interface Decimal {
  coef: bigint;
  scale: number;
}

/** Most fractional digits a price may carry; more would only hide mistakes. */
export const DECIMAL_SCALE_MAX = 18;

const PLAIN = /^(\d+)(?:\.(\d+))?$/;
const EXPONENT = /^(\d+)(?:\.(\d+))?e([+-]?\d+)$/i;

/** Parses a non-negative decimal string ("12", "0.0015", "1e-7" only when `allowExponent`). */
export function parseDecimal(text: string, allowExponent = false): Decimal | null {
  let m = PLAIN.exec(text);
  let exponent = 0;
  if (!m && allowExponent) {
    m = EXPONENT.exec(text);
    if (m) exponent = Number(m[3]);
  }
  if (!m) return null;
  const intPart = m[1]!;
  const fracPart = m[2] ?? '';
  let coef = BigInt(intPart + fracPart);
  let scale = fracPart.length - exponent;
  if (scale < 0) {
    coef *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return normalize({ coef, scale });
}

/** The exact decimal value of a finite, non-negative JavaScript number (its shortest round-trip spelling). */
export function decimalFromNumber(n: number): Decimal | null {
  if (!Number.isFinite(n) || n < 0) return null;
  return parseDecimal(String(n), true);
}

function normalize(d: Decimal): Decimal {
  let { coef, scale } = d;
  while (scale > 0 && coef % 10n === 0n) {
    coef /= 10n;
    scale -= 1;
  }
  return { coef, scale };
}

export function formatDecimal(d: Decimal): string {
  const digits = d.coef.toString();
  if (d.scale === 0) return digits;
  const padded = digits.padStart(d.scale + 1, '0');
  return `${padded.slice(0, padded.length - d.scale)}.${padded.slice(padded.length - d.scale)}`;
}

/** ceil(a × b) as a BigInt: the one rounding rule of usage pricing (never undercharge a fraction). */
export function multiplyCeil(a: Decimal, b: Decimal): bigint {
  const coef = a.coef * b.coef;
  const divisor = 10n ** BigInt(a.scale + b.scale);
  const q = coef / divisor;
  return coef % divisor === 0n ? q : q + 1n;
}

/** a + b, exactly. */
export function addDecimal(a: Decimal, b: Decimal): Decimal {
  const scale = Math.max(a.scale, b.scale);
  const coef = a.coef * 10n ** BigInt(scale - a.scale) + b.coef * 10n ** BigInt(scale - b.scale);
  return normalize({ coef, scale });
}

export const DECIMAL_ZERO: Decimal = { coef: 0n, scale: 0 };

/** Both at one scale (the larger): their coefficients then compare and add directly. */
function aligned(a: Decimal, b: Decimal): [bigint, bigint, number] {
  const scale = Math.max(a.scale, b.scale);
  return [a.coef * 10n ** BigInt(scale - a.scale), b.coef * 10n ** BigInt(scale - b.scale), scale];
}

/** −1, 0 or 1 as a is below, equal to or above b. */
export function compareDecimal(a: Decimal, b: Decimal): number {
  const [x, y] = aligned(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** a − b, exactly; a must not be below b (decimals here are never negative). */
export function subtractDecimal(a: Decimal, b: Decimal): Decimal {
  const [x, y, scale] = aligned(a, b);
  if (x < y) throw new RangeError('subtractDecimal: the result would be negative');
  return normalize({ coef: x - y, scale });
}

/** a × b, exactly. */
export function multiplyDecimal(a: Decimal, b: Decimal): Decimal {
  return normalize({ coef: a.coef * b.coef, scale: a.scale + b.scale });
}

/** The smallest integer ≥ a. */
export function ceilDecimal(a: Decimal): bigint {
  const divisor = 10n ** BigInt(a.scale);
  const q = a.coef / divisor;
  return a.coef % divisor === 0n ? q : q + 1n;
}

/** The decimal of a non-negative integer. */
export function decimalOfInteger(n: bigint | number): Decimal {
  return { coef: BigInt(n), scale: 0 };
}

/** a / b (b > 0) rounded half up to `scale` digits, as a decimal without trailing zeros. */
export function quotientDecimal(a: bigint, b: bigint, scale: number): Decimal {
  if (b <= 0n || a < 0n) throw new RangeError('quotientDecimal takes a ≥ 0 and b > 0');
  const p = 10n ** BigInt(scale);
  let coef = (2n * a * p + b) / (2n * b);
  let s = scale;
  while (s > 0 && coef % 10n === 0n) {
    coef /= 10n;
    s -= 1;
  }
  return { coef, scale: s };
}
