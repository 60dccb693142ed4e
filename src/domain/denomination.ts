/**
 * Denomination: the free-form unit of a balance (contract "Accounts and balances"): 1–64
 * characters of A–Z a–z 0–9 _ . : -, case-sensitive. The one definition of that rule, as a
 * JSON Schema (and ECMAScript) pattern: every HTTP schema that takes a denomination uses it.
 */
export const DENOMINATION_PATTERN = '^[A-Za-z0-9_.:-]{1,64}$';
