/** Helpers for the money-movement tests: the clock, cards, auto-refill, reads of balances, charges and transactions. */
import assert from 'node:assert/strict';
import type { Harness } from './harness.js';

export type Auth = [string, string];
export interface Co {
  companyId: string;
  auth: Auth;
}

export interface BalanceJson {
  amount: number;
  pending: number;
  available: number;
  refill_threshold: number | null;
  refill_amount: number | null;
  refill_usd_amount: number | null;
  refill_on_day: string | null;
  refill_monthly: boolean;
  next_refill_at: string | null;
  auto_refill_paused: boolean;
  consecutive_declines: number;
  max_refills_per_month: number | null;
}
export interface ChargeJson {
  charge_id: string;
  usd_amount: number;
  status: string;
  reason: string;
  denomination: string | null;
  failure_code: string | null;
  failure_reason: 'declined' | 'authentication_required' | null;
  receipt_number: string | null;
  created_at: string;
}
export interface TransactionJson {
  transaction_id: string;
  amount: number;
  balance_after: number;
  kind: string;
  denomination: string;
  created_at: string;
  reason?: string;
}

/** A year in the future of the real clock (the test clock starts at the real time and only moves forward). */
export const FUTURE_YEAR = new Date().getUTCFullYear() + 1;
export const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
/** The first leap year from FUTURE_YEAR on. */
export const LEAP_YEAR = (() => {
  let y = FUTURE_YEAR;
  while (!isLeap(y)) y++;
  return y;
})();

export const iso = (y: number, month: number, day: number, time = '00:00:00') =>
  `${String(y).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}T${time}.000Z`;

export async function advanceTo(h: Harness, co: Co, to: string): Promise<void> {
  const r = await h.request('POST', '/v1/test_clock/advance', { auth: co.auth, body: { to } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.data.now, new Date(to).toISOString());
}

/** Runs everything due now (refills requested by the last request, charges). */
export async function runDue(h: Harness, co: Co): Promise<void> {
  const r = await h.request('POST', '/v1/test_clock/advance', { auth: co.auth, body: { seconds: 0 } });
  assert.equal(r.status, 200, r.text);
}

export async function createAccount(
  h: Harness,
  co: Co,
  body: Record<string, unknown> = { name: 'Bob' },
): Promise<{ account_id: string; balances: BalanceJson[]; processor_id: string | null; plan_id: string | null }> {
  const a = await h.request('POST', `/v1/companies/${co.companyId}/accounts`, { auth: co.auth, body });
  assert.equal(a.status, 200, a.text);
  return a.body.data;
}

export async function createBalance(
  h: Harness,
  co: Co,
  accountId: string,
  denomination = 'tokens',
  amount = 0,
): Promise<void> {
  const b = await h.request('POST', `/v1/accounts/${accountId}/balance/${denomination}`, {
    auth: co.auth,
    body: { amount },
  });
  assert.equal(b.status, 200, b.text);
}

export async function attachCard(
  h: Harness,
  co: Co,
  accountId: string,
  token = 'tok_visa',
): Promise<Record<string, unknown>> {
  const r = await h.request('POST', `/v1/accounts/${accountId}/card`, { auth: co.auth, body: { token } });
  assert.equal(r.status, 200, r.text);
  return r.body.data;
}

export async function putAutoRefill(
  h: Harness,
  co: Co,
  accountId: string,
  denomination: string,
  body: Record<string, unknown>,
): Promise<BalanceJson> {
  const r = await h.request('PUT', `/v1/accounts/${accountId}/balance/${denomination}/autorefill`, {
    auth: co.auth,
    body,
  });
  assert.equal(r.status, 200, r.text);
  return r.body.data;
}

export async function balance(h: Harness, co: Co, accountId: string, denomination = 'tokens'): Promise<BalanceJson> {
  const r = await h.request('GET', `/v1/accounts/${accountId}/balance/${denomination}`, { auth: co.auth });
  assert.equal(r.status, 200, r.text);
  return r.body.data;
}

/** Every item of a paged list, oldest first. */
async function all<T>(h: Harness, co: Co, path: string): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | null = null;
  for (;;) {
    const sep = path.includes('?') ? '&' : '?';
    const r = await h.request('GET', `${path}${sep}limit=100${cursor ? `&starting_after=${cursor}` : ''}`, {
      auth: co.auth,
    });
    assert.equal(r.status, 200, r.text);
    out.push(...r.body.data);
    if (!r.body.has_more) break;
    cursor = r.body.next_cursor;
  }
  return out.reverse();
}

export const charges = (h: Harness, co: Co, accountId: string) =>
  all<ChargeJson>(h, co, `/v1/accounts/${accountId}/charges`);
export const transactions = (h: Harness, co: Co, accountId: string, denomination = 'tokens') =>
  all<TransactionJson>(h, co, `/v1/accounts/${accountId}/transactions?denomination=${denomination}`);

export async function spend(
  h: Harness,
  co: Co,
  accountId: string,
  amount: number,
  denomination = 'tokens',
  count = 1,
): Promise<void> {
  const r = await h.request('POST', `/v1/accounts/${accountId}/events`, {
    auth: co.auth,
    body: Array.from({ length: count }, () => ({ type: 'use', cost_override: { amount, denomination } })),
  });
  assert.equal(r.status, 200, r.text);
}

/** UTC days (YYYY-MM-DD) of the refill transactions of a balance, oldest first. */
export async function refillDays(h: Harness, co: Co, accountId: string, denomination = 'tokens'): Promise<string[]> {
  return (await transactions(h, co, accountId, denomination))
    .filter((t) => t.kind === 'refill')
    .map((t) => t.created_at.slice(0, 10));
}
