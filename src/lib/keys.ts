/**
 * Composite keys for in-memory maps: one spelling everywhere a balance or a company's named
 * thing is looked up (NUL never occurs in ids, denominations or types: they are refused at the edge).
 */

/** The key of one balance: account and denomination. */
export function balanceKey(accountId: string, denomination: string): string {
  return `${accountId}\u0000${denomination}`;
}

/** The key of something a company names (an event id, a price's type). */
export function companyScopedKey(companyId: string, name: string): string {
  return `${companyId}\u0000${name}`;
}

/** A period of a graduated or package price: an account's events of one type in one UTC month. */
export function pricePeriodKey(k: { accountId: string; type: string; periodMs: number }): string {
  return `${k.accountId}\u0000${k.type}\u0000${k.periodMs}`;
}
