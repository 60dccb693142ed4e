/**
 * `Billing`: the API as a company's code uses it, on the wire's own field names (snake_case, as the API and its
 * reference). Every method resolves with the object the API answers (its `data` when the answer wraps one) or
 * throws a BillingError; every list resolves with its first page and iterates over every item of every page; every
 * write is safe to retry (transport.ts). Built on createApiClient, with the company's API key as HTTP Basic
 * `company_id:api_key`, the credentials every company route takes.
 */
import { type ApiClient, createApiClient } from './client.js';
import { BillingError } from './errors.js';
import { type Page, type PagePromise, paginate } from './pagination.js';
import type { components, operations } from './schema.js';
import { DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS, type FetchLike, resilientFetch } from './transport.js';
import { type WebhookHeaders, type WebhookPayload, verifyWebhook } from './webhooks.js';

type Schemas = components['schemas'];
type JsonBody<Op extends keyof operations> = operations[Op] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;
type Query<Op extends keyof operations> = operations[Op] extends { parameters: { query?: infer Q } }
  ? NonNullable<Q>
  : never;
type Answer<Op extends keyof operations> = operations[Op] extends {
  responses: { 200: { content: { 'application/json': infer A } } };
}
  ? A
  : never;

export type Account = Schemas['Account'];
export type Balance = Schemas['Balance'];
export type BillingEvent = Schemas['Event'];
export type Transaction = Schemas['Transaction'];
export type Price = Schemas['Price'];
export type Grant = Schemas['Grant'];
export type UsageGroup = Schemas['UsageGroup'];
/** A webhook subscription as listed (without its secret). */
export type WebhookSubscription = Answer<'listWebhooks'>['data'][number];
/** A webhook subscription as created: its `secret` (`whsec_…`) is shown only here. */
export type CreatedWebhook = Answer<'createWebhook'>['data'];

export type AccountCreateParams = JsonBody<'createAccount'>;
export type AccountUpdateParams = JsonBody<'updateAccount'>;
export type AccountListParams = Query<'listAccounts'>;
export type BalanceCreateParams = JsonBody<'createBalance'>;
export type BalanceAdjustParams = JsonBody<'createBalanceAdjustment'>;
export type AutoRefillParams = JsonBody<'setBalanceAutoRefill'>;
export type PriceSetParams = JsonBody<'setPrice'>;
export type PriceListParams = Query<'listPrices'>;
export type PriceVersion = Schemas['PriceVersion'];
export type PriceVersionListParams = Query<'listPriceVersions'>;
export type GrantCreateParams = JsonBody<'createGrant'>;
export type GrantUpdateParams = JsonBody<'updateGrant'>;
export type GrantVoidParams = JsonBody<'voidGrant'>;
export type BalanceGrantListParams = Query<'listBalanceGrants'>;
export type GrantListParams = Query<'listGrants'>;
/** One usage event of an ingest request. */
export type EventInput = Extract<JsonBody<'createAccountEvents'>, readonly unknown[]>[number];
export type IngestResult = Answer<'createAccountEvents'>;
/** What an ingest of these events would do, written nowhere (POST /v1/accounts/{account_id}/check). */
export type CheckResult = Answer<'checkAccountEvents'>['data'];
export type EventSettleParams = JsonBody<'settleEvent'>;
export type EventListParams = Query<'listEvents'>;
export type TransactionListParams = Query<'listTransactions'>;
/** The company's usage, or with `account_id` one account's (GET /v1/accounts/{account_id}/usage). */
export type UsageQueryParams = Query<'getUsage'>;
export type WebhookCreateParams = JsonBody<'createWebhook'>;
export type WebhookListParams = Query<'listWebhooks'>;
export type WebhookDeleted = Answer<'deleteWebhook'>;

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

/** Options of one call. */
export interface RequestOptions {
  /** The Idempotency-Key of a write (default: a random one, the same on each retry of this call). */
  idempotencyKey?: string;
  /** Aborts the call (and its retries); the call then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** This call's retries, instead of the client's. */
  maxRetries?: number;
  /** This call's timeout per attempt, instead of the client's. */
  timeoutMs?: number;
}

export interface IngestOptions extends RequestOptions {
  /** Refuse the whole request (402 `insufficient_balance`) if a balance it draws from has `available < 0`. */
  gateOnBalance?: boolean;
}

/** What every resource shares: the typed client, the company, and how one call's options become its init. */
class Core {
  readonly #transport: { fetch: FetchLike | undefined; maxRetries: number; timeoutMs: number };

  constructor(
    readonly api: ApiClient,
    readonly companyId: string,
    transport: { fetch: FetchLike | undefined; maxRetries: number; timeoutMs: number },
  ) {
    this.#transport = transport;
  }

  /** openapi-fetch's per-call init for these options: the key as a header, the signal, a transport of its own. */
  init(options: RequestOptions | undefined): {
    headers?: Record<string, string>;
    signal?: AbortSignal;
    fetch?: (input: Request) => Promise<Response>;
  } {
    if (options === undefined) return {};
    const { idempotencyKey, signal, maxRetries, timeoutMs } = options;
    const own = maxRetries !== undefined || timeoutMs !== undefined;
    return {
      ...(idempotencyKey !== undefined ? { headers: { 'idempotency-key': idempotencyKey } } : {}),
      ...(signal !== undefined ? { signal } : {}),
      ...(own
        ? {
            fetch: resilientFetch({
              fetch: this.#transport.fetch,
              maxRetries: maxRetries ?? this.#transport.maxRetries,
              timeoutMs: timeoutMs ?? this.#transport.timeoutMs,
            }),
          }
        : {}),
    };
  }
}

/** The data of a 2xx answer, or the BillingError of any other. */
async function unwrap<D>(call: Promise<{ data?: D; error?: unknown; response: Response }>): Promise<D> {
  const { data, error, response } = await call;
  if (!response.ok) throw BillingError.fromResponse(response, error);
  return data as D;
}

function required(name: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new TypeError(`${name} must be a non-empty string`);
  return value;
}

/** Drops `undefined` fields, so that a query says only what the caller gave. */
function defined<T extends object>(params: T): T {
  return Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined)) as T;
}

/** Accounts: the company's customers, each with its balances. */
export class Accounts {
  readonly #core: Core;
  /** @internal */
  constructor(core: Core) {
    this.#core = core;
  }

  /** Creates an account (POST /v1/companies/{company_id}/accounts). */
  create(body: AccountCreateParams = {}, options?: RequestOptions): Promise<Account> {
    const c = this.#core;
    return unwrap(
      c.api.POST('/v1/companies/{company_id}/accounts', {
        params: { path: { company_id: c.companyId } },
        body,
        ...c.init(options),
      }),
    ).then((a) => a.data);
  }

  /** An account with its balances (GET /v1/accounts/{account_id}). */
  retrieve(accountId: string, options?: RequestOptions): Promise<Account> {
    const c = this.#core;
    const path = { account_id: required('accountId', accountId) };
    return unwrap(c.api.GET('/v1/accounts/{account_id}', { params: { path }, ...c.init(options) })).then((a) => a.data);
  }

  /** Edits name, email, metadata or processor_id; fields left out keep their values (PUT /v1/accounts/{id}). */
  update(accountId: string, body: AccountUpdateParams, options?: RequestOptions): Promise<Account> {
    const c = this.#core;
    const path = { account_id: required('accountId', accountId) };
    return unwrap(c.api.PUT('/v1/accounts/{account_id}', { params: { path }, body, ...c.init(options) })).then(
      (a) => a.data,
    );
  }

  /** The company's accounts, newest first; `q` searches (GET /v1/accounts). */
  list(params: AccountListParams = {}, options?: RequestOptions): PagePromise<Account> {
    const c = this.#core;
    return paginate((cursor) =>
      unwrap(c.api.GET('/v1/accounts', { params: { query: page(params, cursor) }, ...c.init(options) })),
    );
  }
}

/** Balances: one per account and denomination (`tokens`, `credits`, `usd`, …). */
export class Balances {
  readonly #core: Core;
  /** @internal */
  constructor(core: Core) {
    this.#core = core;
  }

  /** Creates a balance, with an optional initial `amount` (POST /v1/accounts/{id}/balance/{denomination}). */
  create(
    accountId: string,
    denomination: string,
    body: BalanceCreateParams = {},
    options?: RequestOptions,
  ): Promise<Balance> {
    const c = this.#core;
    return unwrap(
      c.api.POST('/v1/accounts/{account_id}/balance/{denomination}', {
        params: { path: balancePath(accountId, denomination) },
        body,
        ...c.init(options),
      }),
    ).then((b) => b.data);
  }

  /** A balance: `amount`, `pending`, `available` and its refill settings. */
  retrieve(accountId: string, denomination: string, options?: RequestOptions): Promise<Balance> {
    const c = this.#core;
    return unwrap(
      c.api.GET('/v1/accounts/{account_id}/balance/{denomination}', {
        params: { path: balancePath(accountId, denomination) },
        ...c.init(options),
      }),
    ).then((b) => b.data);
  }

  /** A manual credit (positive `amount`) or debit (negative), recorded as a transaction with its `reason`. */
  adjust(
    accountId: string,
    denomination: string,
    body: BalanceAdjustParams,
    options?: RequestOptions,
  ): Promise<Balance> {
    const c = this.#core;
    return unwrap(
      c.api.POST('/v1/accounts/{account_id}/balance/{denomination}/adjustments', {
        params: { path: balancePath(accountId, denomination) },
        body,
        ...c.init(options),
      }),
    ).then((b) => b.data);
  }

  /** Threshold and monthly auto-refill settings; fields left out keep their values. */
  setAutoRefill(
    accountId: string,
    denomination: string,
    body: AutoRefillParams,
    options?: RequestOptions,
  ): Promise<Balance> {
    const c = this.#core;
    return unwrap(
      c.api.PUT('/v1/accounts/{account_id}/balance/{denomination}/autorefill', {
        params: { path: balancePath(accountId, denomination) },
        body,
        ...c.init(options),
      }),
    ).then((b) => b.data);
  }
}

/** Prices: what one unit of an event type costs, in which denomination. */
export class Prices {
  readonly #core: Core;
  /** @internal */
  constructor(core: Core) {
    this.#core = core;
  }

  /** Sets the price of an event type (PUT /v1/prices/{type}); `unit_amount` is an exact decimal. */
  set(type: string, body: PriceSetParams, options?: RequestOptions): Promise<Price> {
    const c = this.#core;
    const path = { type: required('type', type) };
    return unwrap(c.api.PUT('/v1/prices/{type}', { params: { path }, body, ...c.init(options) })).then((p) => p.data);
  }

  /** The price of an event type now in force (GET /v1/prices/{type}). */
  retrieve(type: string, options?: RequestOptions): Promise<Price> {
    const c = this.#core;
    const path = { type: required('type', type) };
    return unwrap(c.api.GET('/v1/prices/{type}', { params: { path }, ...c.init(options) })).then((p) => p.data);
  }

  /** The type's earlier prices, newest first, each with the span it applied in (GET /v1/prices/{type}/versions). */
  versions(type: string, params: PriceVersionListParams = {}, options?: RequestOptions): PagePromise<PriceVersion> {
    const c = this.#core;
    const path = { type: required('type', type) };
    return paginate((cursor) =>
      unwrap(
        c.api.GET('/v1/prices/{type}/versions', { params: { path, query: page(params, cursor) }, ...c.init(options) }),
      ),
    );
  }

  /** The company's prices, by type (GET /v1/prices). */
  list(params: PriceListParams = {}, options?: RequestOptions): PagePromise<Price> {
    const c = this.#core;
    return paginate((cursor) =>
      unwrap(c.api.GET('/v1/prices', { params: { query: page(params, cursor) }, ...c.init(options) })),
    );
  }
}

/**
 * Credit grants: the lots every unit of a balance belongs to, each with its remainder, priority, start and expiry;
 * units are drawn by priority, soonest expiry, promotional before paid, oldest first.
 */
export class Grants {
  readonly #core: Core;
  /** @internal */
  constructor(core: Core) {
    this.#core = core;
  }

  /** Grants units to a balance (POST /v1/accounts/{id}/balance/{denomination}/grants). */
  create(accountId: string, denomination: string, body: GrantCreateParams, options?: RequestOptions): Promise<Grant> {
    const c = this.#core;
    return unwrap(
      c.api.POST('/v1/accounts/{account_id}/balance/{denomination}/grants', {
        params: { path: balancePath(accountId, denomination) },
        body,
        ...c.init(options),
      }),
    ).then((g) => g.data);
  }

  /** A balance's grants in drawing order (default statuses: scheduled and active). */
  listOfBalance(
    accountId: string,
    denomination: string,
    params: BalanceGrantListParams = {},
    options?: RequestOptions,
  ): PagePromise<Grant> {
    const c = this.#core;
    const path = balancePath(accountId, denomination);
    return paginate((cursor) =>
      unwrap(
        c.api.GET('/v1/accounts/{account_id}/balance/{denomination}/grants', {
          params: { path, query: page(params, cursor) },
          ...c.init(options),
        }),
      ),
    );
  }

  /** The company's grants by expiry, never-expiring last (GET /v1/grants; filters `expires_before`, `status`, …). */
  list(params: GrantListParams = {}, options?: RequestOptions): PagePromise<Grant> {
    const c = this.#core;
    return paginate((cursor) =>
      unwrap(c.api.GET('/v1/grants', { params: { query: page(params, cursor) }, ...c.init(options) })),
    );
  }

  /** A grant, with its remaining and held units and its status now. */
  retrieve(grantId: string, options?: RequestOptions): Promise<Grant> {
    const c = this.#core;
    const path = { grant_id: required('grantId', grantId) };
    return unwrap(c.api.GET('/v1/grants/{grant_id}', { params: { path }, ...c.init(options) })).then((g) => g.data);
  }

  /** Changes a scheduled or active grant's priority, expiry, name or metadata (PATCH /v1/grants/{id}). */
  update(grantId: string, body: GrantUpdateParams, options?: RequestOptions): Promise<Grant> {
    const c = this.#core;
    const path = { grant_id: required('grantId', grantId) };
    return unwrap(c.api.PATCH('/v1/grants/{grant_id}', { params: { path }, body, ...c.init(options) })).then(
      (g) => g.data,
    );
  }

  /** Voids a grant: its unheld units leave at once; held ones when their events settle. */
  void(grantId: string, body: GrantVoidParams = {}, options?: RequestOptions): Promise<Grant> {
    const c = this.#core;
    const path = { grant_id: required('grantId', grantId) };
    return unwrap(c.api.POST('/v1/grants/{grant_id}/void', { params: { path }, body, ...c.init(options) })).then(
      (g) => g.data,
    );
  }
}

/** Usage events: priced and deducted before the API answers; pending ones hold their cost until settled. */
export class Events {
  readonly #core: Core;
  /** @internal */
  constructor(core: Core) {
    this.#core = core;
  }

  /**
   * Records up to 1,000 events of one account, all or nothing (POST /v1/accounts/{account_id}/events). Give events
   * an `id` to make them safe to send again in any later request too.
   */
  ingest(accountId: string, events: EventInput[], options: IngestOptions = {}): Promise<IngestResult> {
    const c = this.#core;
    const path = { account_id: required('accountId', accountId) };
    const query = options.gateOnBalance === undefined ? {} : { gate_on_balance: options.gateOnBalance };
    return unwrap(
      c.api.POST('/v1/accounts/{account_id}/events', {
        params: { path, query },
        body: events,
        ...c.init(options),
      }),
    );
  }

  /** An event (GET /v1/events/{event_id}). */
  retrieve(eventId: string, options?: RequestOptions): Promise<BillingEvent> {
    const c = this.#core;
    const path = { event_id: required('eventId', eventId) };
    return unwrap(c.api.GET('/v1/events/{event_id}', { params: { path }, ...c.init(options) })).then((e) => e.data);
  }

  /** Completes (optionally at a final cost) or cancels a pending event (PUT /v1/events/{event_id}). */
  settle(eventId: string, body: EventSettleParams, options?: RequestOptions): Promise<BillingEvent> {
    const c = this.#core;
    const path = { event_id: required('eventId', eventId) };
    return unwrap(c.api.PUT('/v1/events/{event_id}', { params: { path }, body, ...c.init(options) })).then(
      (e) => e.data,
    );
  }

  /** The company's events, newest `timestamp` first; filters `account_id`, `type`, `state`, … (GET /v1/events). */
  list(params: EventListParams = {}, options?: RequestOptions): PagePromise<BillingEvent> {
    const c = this.#core;
    return paginate((cursor) =>
      unwrap(c.api.GET('/v1/events', { params: { query: page(params, cursor) }, ...c.init(options) })),
    );
  }
}

/** The ledger: every change of a balance's amount is one transaction. */
export class Transactions {
  readonly #core: Core;
  /** @internal */
  constructor(core: Core) {
    this.#core = core;
  }

  /** An account's transactions, newest first (GET /v1/accounts/{account_id}/transactions). */
  list(accountId: string, params: TransactionListParams = {}, options?: RequestOptions): PagePromise<Transaction> {
    const c = this.#core;
    const path = { account_id: required('accountId', accountId) };
    return paginate((cursor) =>
      unwrap(
        c.api.GET('/v1/accounts/{account_id}/transactions', {
          params: { path, query: page(params, cursor) },
          ...c.init(options),
        }),
      ),
    );
  }
}

/** Usage read back: counts, quantities and costs per window, from the hourly rollups. */
export class Usage {
  readonly #core: Core;
  /** @internal */
  constructor(core: Core) {
    this.#core = core;
  }

  /**
   * Usage between `from` and `to` (whole UTC hours) by `window`, grouped by `group_by`: the company's (GET
   * /v1/usage), or with `account_id` one account's (GET /v1/accounts/{account_id}/usage).
   */
  query(params: UsageQueryParams, options?: RequestOptions): PagePromise<UsageGroup> {
    const c = this.#core;
    const { account_id, ...rest } = params;
    if (account_id === undefined)
      return paginate((cursor) =>
        unwrap(c.api.GET('/v1/usage', { params: { query: page(rest, cursor) }, ...c.init(options) })),
      );
    const path = { account_id: required('account_id', account_id) };
    return paginate((cursor) =>
      unwrap(
        c.api.GET('/v1/accounts/{account_id}/usage', {
          params: { path, query: page(rest, cursor) },
          ...c.init(options),
        }),
      ),
    );
  }
}

/** Webhook subscriptions, and the check of a delivery's signature. */
export class Webhooks {
  readonly #core: Core;
  /** @internal */
  constructor(core: Core) {
    this.#core = core;
  }

  /** Subscribes a URL to one notification type; the answer's `secret` is shown only here (POST /v1/webhooks). */
  create(body: WebhookCreateParams, options?: RequestOptions): Promise<CreatedWebhook> {
    const c = this.#core;
    return unwrap(c.api.POST('/v1/webhooks', { body, ...c.init(options) })).then((w) => w.data);
  }

  /** The company's subscriptions, newest first, without secrets (GET /v1/webhooks). */
  list(params: WebhookListParams = {}, options?: RequestOptions): PagePromise<WebhookSubscription> {
    const c = this.#core;
    return paginate((cursor) =>
      unwrap(c.api.GET('/v1/webhooks', { params: { query: page(params, cursor) }, ...c.init(options) })),
    );
  }

  /** Deletes a subscription: nothing more is sent to it (DELETE /v1/webhooks/{webhook_id}). */
  delete(webhookId: string, options?: RequestOptions): Promise<WebhookDeleted> {
    const c = this.#core;
    const path = { webhook_id: required('webhookId', webhookId) };
    return unwrap(c.api.DELETE('/v1/webhooks/{webhook_id}', { params: { path }, ...c.init(options) }));
  }

  /**
   * The payload of a delivery, after checking its signature against `secret` and its timestamp (five minutes);
   * throws WebhookVerificationError otherwise. `rawBody` is the body exactly as received.
   */
  verify(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string): WebhookPayload {
    return verifyWebhook(rawBody, headers, secret);
  }
}

function balancePath(accountId: string, denomination: string): { account_id: string; denomination: string } {
  return { account_id: required('accountId', accountId), denomination: required('denomination', denomination) };
}

/** A list's query for the page after `cursor` (the caller's own `starting_after` for the first page). */
function page<Q extends { starting_after?: string }>(params: Q, cursor: string | undefined): Q {
  return defined(cursor === undefined ? params : { ...params, starting_after: cursor });
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
  let url: URL;
  try {
    url = new URL(options.baseUrl);
  } catch {
    throw new TypeError(`${where}: baseUrl ${JSON.stringify(options.baseUrl)} is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TypeError(`${where}: baseUrl must be http(s), not ${url.protocol}`);
  for (const k of ['maxRetries', 'timeoutMs'] as const) {
    const v = options[k];
    if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v >= 0))
      throw new TypeError(`${where}: ${k} must be a number ≥ 0`);
  }
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

export type { Page };
