/**
 * A small client of the public API for setup and read-back (not for load: autocannon does that).
 * Written against docs: shared/spec/contract.md.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { grantBody, type BenchGrant } from './grants.js';
import { DENOMINATION, INITIAL_GRANT, SETUP_CONCURRENCY } from './options.js';

const SETUP_REQUEST_TIMEOUT_MS = 30_000;
const MAX_RATE_LIMIT_RETRIES = 20;
const DEFAULT_RETRY_AFTER_S = 1;
const BENCH_PASSWORD = 'bench-password-not-secret';

export function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

export class ApiError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly body: string,
  ) {
    super(`${method} ${path} answered ${status}: ${body.slice(0, 500)}`);
  }
}

export interface Balance {
  amount: number;
  pending: number;
  available: number;
}

export interface Transaction {
  transaction_id: string;
  amount: number;
  balance_after: number;
  kind: string;
  event_id?: string | null;
}

/** A credit grant as the API shows it (the fields the bench reads). */
export interface GrantRecord {
  grant_id: string;
  amount: number;
  remaining: number;
  held: number;
  priority: number;
  status: string;
  expires_at: string | null;
}

interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export class Api {
  constructor(
    readonly baseUrl: string,
    private authorization?: string,
  ) {}

  withAuth(authorization: string): Api {
    return new Api(this.baseUrl, authorization);
  }

  get auth(): string | undefined {
    return this.authorization;
  }

  /** JSON request; a 429 is waited out and retried; any other non-2xx throws ApiError. */
  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = {};
      if (this.authorization !== undefined) headers.authorization = this.authorization;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(SETUP_REQUEST_TIMEOUT_MS),
      });
      const text = await res.text();
      if (res.status === 429 && attempt < MAX_RATE_LIMIT_RETRIES) {
        const retryAfter = Number(res.headers.get('retry-after'));
        await sleep(1000 * (Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : DEFAULT_RETRY_AFTER_S));
        continue;
      }
      if (!res.ok) throw new ApiError(method, path, res.status, text);
      return (text === '' ? undefined : JSON.parse(text)) as T;
    }
  }

  async balance(accountId: string, denomination = DENOMINATION): Promise<Balance> {
    const res = await this.call<{ data: Balance }>(
      'GET',
      `/v1/accounts/${encodeURIComponent(accountId)}/balance/${encodeURIComponent(denomination)}`,
    );
    return res.data;
  }

  /**
   * A balance's grants (`scheduled,active`), in drawing order, every page; undefined from a server that has no
   * grants (a build from before them, the base of an A/B run).
   */
  async grants(accountId: string, denomination = DENOMINATION): Promise<GrantRecord[] | undefined> {
    const out: GrantRecord[] = [];
    let cursor: string | undefined;
    for (;;) {
      const query = new URLSearchParams({ limit: '100' });
      if (cursor !== undefined) query.set('starting_after', cursor);
      let page: Page<GrantRecord>;
      try {
        page = await this.call<Page<GrantRecord>>(
          'GET',
          `/v1/accounts/${encodeURIComponent(accountId)}/balance/${encodeURIComponent(denomination)}/grants?${query}`,
        );
      } catch (err) {
        if (out.length === 0 && String(err).includes('route_not_found')) return undefined;
        throw err;
      }
      out.push(...page.data);
      if (!page.has_more) return out;
      cursor = page.next_cursor ?? page.data[page.data.length - 1]?.grant_id;
      if (cursor === undefined) throw new Error(`grants of ${accountId}: has_more without a cursor`);
    }
  }

  async eventState(eventId: string): Promise<string> {
    const res = await this.call<{ data: { state: string } }>('GET', `/v1/events/${encodeURIComponent(eventId)}`);
    return res.data.state;
  }

  /** Every transaction of one balance, newest first, paged `limit` at a time. */
  async *transactions(accountId: string, denomination = DENOMINATION, limit = 100): AsyncGenerator<Transaction> {
    let cursor: string | null = null;
    for (;;) {
      const query = new URLSearchParams({ denomination, limit: String(limit) });
      if (cursor !== null) query.set('starting_after', cursor);
      const page: Page<Transaction> = await this.call<Page<Transaction>>(
        'GET',
        `/v1/accounts/${encodeURIComponent(accountId)}/transactions?${query.toString()}`,
      );
      yield* page.data;
      if (!page.has_more) return;
      const last = page.data[page.data.length - 1];
      cursor = page.next_cursor ?? last?.transaction_id ?? null;
      if (cursor === null) throw new Error(`transactions of ${accountId}: has_more without a cursor`);
    }
  }
}

export interface Tenant {
  companyId: string;
  /** `Basic company_id:api_key`, for every company-scoped request. */
  authorization: string;
  api: Api;
}

/** Signs a user up and registers a company: the credentials every later request uses. */
export async function createTenant(baseUrl: string): Promise<Tenant> {
  const anonymous = new Api(baseUrl);
  const email = `bench-${randomBytes(6).toString('hex')}@example.com`;
  await anonymous.call('POST', '/v1/users', { name: 'Bench Runner', email, password: BENCH_PASSWORD });
  const company = await anonymous
    .withAuth(basicAuth(email, BENCH_PASSWORD))
    .call<{ data: { company_id: string; api_key: string } }>('POST', '/v1/companies', { name: 'Bench Inc' });
  const authorization = basicAuth(company.data.company_id, company.data.api_key);
  return { companyId: company.data.company_id, authorization, api: anonymous.withAuth(authorization) };
}

/** Runs `work` over `items` with at most `concurrency` in flight; results in input order. */
export async function mapConcurrent<T, R>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T, index);
    }
  });
  await Promise.all(lanes);
  return results;
}

/**
 * Creates `count` accounts, each with a `DENOMINATION` balance holding `INITIAL_GRANT` (its
 * initial grant), then `grants` more (`POST …/grants`, in order), each of which must answer
 * `active`.
 */
/** The spend limits `--limits` sets on every funded balance: far above anything a run takes. */
export const BENCH_SPEND_LIMIT = 1e15;

/**
 * The alerts `--alerts` sets on every funded balance, none ever triggered by a run: available below a threshold,
 * the day's and the month's spend reaching one. (A spend alert of one event type counts its type's spend itself,
 * which reads and writes it on every posting of its balance: docs/PERFORMANCE.md.)
 */
export const BENCH_ALERTS = [
  { metric: 'available', threshold: -BENCH_SPEND_LIMIT },
  { metric: 'spend', window: 'day', threshold: BENCH_SPEND_LIMIT },
  { metric: 'spend', window: 'month', threshold: BENCH_SPEND_LIMIT },
] as const;

export async function createFundedAccounts(
  tenant: Tenant,
  count: number,
  grants: readonly BenchGrant[] = [],
  limits = false,
  alerts = false,
  /** Account i is created on plan planIds[i mod length] (`plan_id`); none when empty. */
  planIds: readonly string[] = [],
): Promise<string[]> {
  const slots = Array.from({ length: count }, (_, i) => i);
  return await mapConcurrent(slots, SETUP_CONCURRENCY, async (slot) => {
    const account = await tenant.api.call<{ data: { account_id: string } }>(
      'POST',
      `/v1/companies/${encodeURIComponent(tenant.companyId)}/accounts`,
      planIds.length === 0 ? {} : { plan_id: planIds[slot % planIds.length] },
    );
    const accountId = account.data.account_id;
    await tenant.api.call(
      'POST',
      `/v1/accounts/${encodeURIComponent(accountId)}/balance/${encodeURIComponent(DENOMINATION)}`,
      { amount: INITIAL_GRANT },
    );
    if (limits)
      await tenant.api.call(
        'PUT',
        `/v1/accounts/${encodeURIComponent(accountId)}/balance/${encodeURIComponent(DENOMINATION)}/limits`,
        { daily: BENCH_SPEND_LIMIT, monthly: BENCH_SPEND_LIMIT },
      );
    if (alerts)
      for (const a of BENCH_ALERTS)
        await tenant.api.call('POST', `/v1/accounts/${encodeURIComponent(accountId)}/alerts`, {
          denomination: DENOMINATION,
          ...a,
        });
    for (const g of grants) {
      const made = await tenant.api.call<{ data: GrantRecord }>(
        'POST',
        `/v1/accounts/${encodeURIComponent(accountId)}/balance/${encodeURIComponent(DENOMINATION)}/grants`,
        grantBody(g),
      );
      if (made.data.status !== 'active' || made.data.remaining !== g.amount)
        throw new Error(
          `grant "${g.name}" on ${accountId}: ${made.data.status} with ${made.data.remaining} remaining, ` +
            `expected active with ${g.amount}`,
        );
    }
    return accountId;
  });
}
