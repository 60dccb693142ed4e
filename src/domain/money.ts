/**
 * Integer quantities of the ledger. Every amount of units or USD cents is a safe integer;
 * no floating-point value ever reaches a balance. The brands keep units and cents apart at
 * compile time; `units()`/`usdCents()` are the only doors in, and they refuse non-integers.
 */
export type Units = number & { readonly __brand: 'Units' };
export type UsdCents = number & { readonly __brand: 'UsdCents' };

/** Largest magnitude an amount may have: JavaScript numbers are exact integers up to here. */
export const AMOUNT_MAX = Number.MAX_SAFE_INTEGER;

export function units(n: number): Units {
  if (!Number.isSafeInteger(n)) throw new RangeError(`units must be a safe integer, got ${n}`);
  return n as Units;
}

export function usdCents(n: number): UsdCents {
  if (!Number.isSafeInteger(n)) throw new RangeError(`usd cents must be a safe integer, got ${n}`);
  return n as UsdCents;
}

/** Exact addition that refuses to leave the safe-integer range (never silently rounds). */
export function addExact(a: number, b: number): number {
  const r = a + b;
  if (!Number.isSafeInteger(r)) throw new RangeError('amount out of range');
  return r;
}
