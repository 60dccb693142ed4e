/**
 * `Billing`: the API as a company's code uses it, on the wire's own field names (snake_case, as the API and its
 * reference). Every method resolves with the object the API answers (its `data` when the answer wraps one) or
 * throws a BillingError; every list resolves with its first page and iterates over every item of every page; every
 * write is safe to retry (transport.ts). Built on createApiClient, with the company's API key as HTTP Basic
 * `company_id:api_key`, the credentials every company route takes. This file assembles the resources, one file
 * each under resources/ named as the API's paths name them, around the Core they share (core.ts).
 */
import { type ApiClient, createApiClient } from './client.js';
import { type Answer, Core, type RequestOptions, checkClientOptions, required, unwrap } from './core.js';
import { Accounts } from './resources/accounts.js';
import { Alerts } from './resources/alerts.js';
import { Balances } from './resources/balances.js';
import { Charges } from './resources/charges.js';
import { Entitlements } from './resources/entitlements.js';
import { type EventInput, Events } from './resources/events.js';
import { Features } from './resources/features.js';
import { Grants } from './resources/grants.js';
import { Leases } from './resources/leases.js';
import { PortalSessions } from './resources/portal-sessions.js';
import { Prices } from './resources/prices.js';
import { TopupOffers } from './resources/topup-offers.js';
import { Transactions } from './resources/transactions.js';
import { Usage } from './resources/usage.js';
import { Webhooks } from './resources/webhooks.js';
import { DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS, type FetchLike } from './transport.js';

/** What an ingest of these events would do, written nowhere (POST /v1/accounts/{account_id}/check). */
export type CheckResult = Answer<'checkAccountEvents'>['data'];

export interface BillingOptions {
  /** The server's address, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** The company's id, `c_…`. */
  companyId: string;
  /** One of the company's API keys, `sk_…`. */
  apiKey: string;
  /** Retries after a failed attempt (default 2). See "Retries" in the README. */
  maxRetries?: number;
  /** How long one attempt may take, answer included (default 30,000 ms). */
  timeoutMs?: number;
  /** A `fetch` to use instead of the global one. */
  fetch?: FetchLike;
}

function basicCredentials(user: string, password: string): string {
  const bytes = new TextEncoder().encode(`${user}:${password}`);
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return `Basic ${btoa(binary)}`;
}

function checkOptions(options: BillingOptions | undefined): BillingOptions {
  const where = 'new Billing({ baseUrl, companyId, apiKey })';
  if (typeof options !== 'object' || options === null) throw new TypeError(`${where}: options are required`);
  const missing = (['baseUrl', 'companyId', 'apiKey'] as const).filter(
    (k) => typeof options[k] !== 'string' || options[k].trim() === '',
  );
  if (missing.length > 0)
    throw new TypeError(
      `${where}: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing. baseUrl is the server's ` +
        'address (http://127.0.0.1:8080); companyId (c_…) and apiKey (sk_…) come from registering the company or ' +
        'from its API keys page in the console.',
    );
  checkClientOptions(where, options);
  return options;
}

/**
 * The client of one company. Throws a TypeError at once when `baseUrl`, `companyId` or `apiKey` is missing.
 *
 * ```ts
 * const billing = new Billing({ baseUrl: 'http://127.0.0.1:8080', companyId: 'c_…', apiKey: 'sk_…' });
 * const account = await billing.accounts.create({ name: 'Bob' });
 * ```
 */
export class Billing {
  readonly accounts: Accounts;
  readonly balances: Balances;
  readonly prices: Prices;
  readonly grants: Grants;
  readonly events: Events;
  readonly transactions: Transactions;
  readonly usage: Usage;
  readonly webhooks: Webhooks;
  readonly alerts: Alerts;
  readonly features: Features;
  readonly entitlements: Entitlements;
  readonly charges: Charges;
  readonly portalSessions: PortalSessions;
  readonly topupOffers: TopupOffers;
  /** Leases: units held for deciding usage in this process (`open` answers a `Lease`; see `LeasePool`). */
  readonly leases: Leases;
  /** The typed client underneath (the same credentials and retries), for routes these methods do not wrap. */
  readonly api: ApiClient;
  readonly companyId: string;
  readonly #core: Core;

  constructor(options: BillingOptions) {
    const { baseUrl, companyId, apiKey, fetch } = checkOptions(options);
    const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.companyId = companyId;
    this.api = createApiClient({
      baseUrl,
      headers: { authorization: basicCredentials(companyId, apiKey) },
      fetch,
      maxRetries,
      timeoutMs,
    });
    const core = new Core(this.api, companyId, { fetch, maxRetries, timeoutMs });
    this.#core = core;
    this.accounts = new Accounts(core);
    this.balances = new Balances(core);
    this.prices = new Prices(core);
    this.grants = new Grants(core);
    this.events = new Events(core);
    this.transactions = new Transactions(core);
    this.usage = new Usage(core);
    this.webhooks = new Webhooks(core);
    this.alerts = new Alerts(core);
    this.features = new Features(core);
    this.entitlements = new Entitlements(core);
    this.charges = new Charges(core);
    this.portalSessions = new PortalSessions(core);
    this.topupOffers = new TopupOffers(core);
    this.leases = new Leases(core);
  }

  /**
   * What `events.ingest(accountId, events)` would do on the state as it is now, writing nothing: each event's cost
   * and each balance's `available` before and after; `allowed` is false when any would end below 0. A body the
   * ingest would refuse (400, 404) is refused the same way (POST /v1/accounts/{account_id}/check).
   */
  check(accountId: string, events: EventInput[], options?: RequestOptions): Promise<CheckResult> {
    const c = this.#core;
    const path = { account_id: required('accountId', accountId) };
    return unwrap(
      c.api.POST('/v1/accounts/{account_id}/check', { params: { path }, body: events, ...c.init(options) }),
    ).then((r) => r.data);
  }
}
