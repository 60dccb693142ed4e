/** The order requests visit accounts in: shared by the scenarios and the store-only baseline. */

/** A stride through the accounts, so that consecutive requests hit unrelated rows. */
const ACCOUNT_STRIDE = 7_919;

/** Greatest common divisor. */
export function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/** Visits every index of `0 … count-1` once per cycle, in a scattered order. */
export function scatter(count: number): (i: number) => number {
  const stride = gcd(ACCOUNT_STRIDE, count) === 1 ? ACCOUNT_STRIDE % count : 1;
  return (i) => (i * stride) % count;
}
