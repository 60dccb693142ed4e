/**
 * Denomination: the free-form unit of a balance (contract "Accounts and balances"): 1–64
 * characters of A–Z a–z 0–9 _ . : -, case-sensitive. The one definition of that rule; the
 * HTTP schemas validate with it and the domain tests strings against it.
 */

/** As a JSON Schema / ECMAScript pattern source. */
export const DENOMINATION_PATTERN = '^[A-Za-z0-9_.:-]{1,64}$';

const DENOMINATION = new RegExp(DENOMINATION_PATTERN);

export function isDenomination(s: string): boolean {
  return DENOMINATION.test(s);
}
