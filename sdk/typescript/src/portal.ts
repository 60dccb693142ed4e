/**
 * `BillingPortal`: the customer portal's API (/v1/portal/…) as one account's customer uses it, through a company's
 * backend-for-frontend or in their browser (on the billing server's own origin: the server sends no CORS headers):
 * the account, its balances, grants, transactions, usage, charges and receipts, and (with the `topup` scope)
 * credit packs bought with the account's card. Its credential is a portal session's token (`Authorization: Bearer
 * pt_…`), the fragment of the url `billing.portalSessions.create` answers; the session decides the account, so no
 * method names one. Built like `Billing` on createApiClient: the same
 * Idempotency-Keys, timeouts, retries, paging and BillingErrors (a revoked or expired session: 401; a scope the
 * session lacks: 403).
 */
import { type ApiClient, createApiClient } from './client.js';
import {
  type Answer,
  type CallInit,
  type Created,
  type Query,
  type RequestOptions,
  type TransportSettings,
  accepting,
  callInit,
  checkClientOptions,
  page,
  required,
  unwrap,
} from './core.js';
import { type PagePromise, paginate } from './pagination.js';
import type { Charge, Receipt } from './resources/charges.js';
import type { Grant } from './resources/grants.js';
import type { TopupOffer } from './resources/topup-offers.js';
import type { Transaction } from './resources/transactions.js';
import type { UsageGroup } from './resources/usage.js';
import { DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS, type FetchLike } from './transport.js';

/** The session's account (name, email), its company's name, every balance now, the session's scopes and expiry. */
export type PortalAccount = Answer<'getPortalAccount'>['data'];
export type PortalGrantListParams = Query<'listPortalGrants'>;
export type PortalTransactionListParams = Query<'listPortalTransactions'>;
/** `from` and `to` (whole UTC hours), `window`, `group_by`, `type`, `denomination`: as `billing.usage.query`. */
export type PortalUsageParams = Query<'getPortalUsage'>;
export type PortalChargeListParams = Query<'listPortalCharges'>;
/** A credit pack bought: its `charge_id`, `status` and the `grant_id` it added. */
export type PortalTopup = Created<'createPortalTopup'>['data'];

export interface BillingPortalOptions {
  /** The server's address, e.g. `https://billing.example.com` (BILLING_PUBLIC_URL). */
  baseUrl: string;
  /** The portal session's token, `pt_…`: the fragment of the session's `url`. */
  token: string;
  /** Retries after a failed attempt (default 2). See "Retries" in the README. */
  maxRetries?: number;
  /** How long one attempt may take, answer included (default 30,000 ms). */
  timeoutMs?: number;
  /** A `fetch` to use instead of the global one. */
  fetch?: FetchLike;
}

/** The options of `BillingPortal.fromUrl`: those of the constructor but the token, and `baseUrl` optional. */
export type BillingPortalUrlOptions = Omit<BillingPortalOptions, 'baseUrl' | 'token'> & {
  /** The server's address, when the client reaches it elsewhere than the session's url says (default: the url's). */
  baseUrl?: string;
};

const WHERE = 'new BillingPortal({ baseUrl, token })';

function checkOptions(options: BillingPortalOptions | undefined): BillingPortalOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError(`${WHERE}: options are required`);
  const missing = (['baseUrl', 'token'] as const).filter(
    (k) => typeof options[k] !== 'string' || options[k].trim() === '',
  );
  if (missing.length > 0)
    throw new TypeError(
      `${WHERE}: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing. The token (pt_…) is the ` +
        'fragment of the url of a portal session (billing.portalSessions.create); BillingPortal.fromUrl(url) reads it.',
    );
  checkClientOptions(WHERE, options);
  return options;
}

/** The server's address and the token in a session's url, `{BILLING_PUBLIC_URL}/portal/{session_id}#pt_…`. */
function parseSessionUrl(sessionUrl: string): { baseUrl: string | undefined; token: string } {
  const where = 'BillingPortal.fromUrl(sessionUrl)';
  let url: URL;
  try {
    url = new URL(sessionUrl);
  } catch {
    throw new TypeError(`${where}: ${JSON.stringify(sessionUrl)} is not an absolute URL`);
  }
  const token = decodeURIComponent(url.hash.replace(/^#/, ''));
  if (token === '')
    throw new TypeError(`${where}: the url has no token in its fragment (#pt_…): pass the session's whole url`);
  const base = /^(.*)\/portal\/[^/]+\/?$/.exec(url.pathname);
  return { baseUrl: base ? `${url.origin}${base[1]}` : undefined, token };
}

/**
 * The portal's client, for one portal session. Throws a TypeError at once when `baseUrl` or `token` is missing.
 *
 * ```ts
 * const portal = BillingPortal.fromUrl(session.url); // or new BillingPortal({ baseUrl, token: 'pt_…' })
 * const { account, balances } = await portal.account();
 * ```
 */
export class BillingPortal {
  /** The typed client underneath (the same token and retries), for portal routes these methods do not wrap. */
  readonly api: ApiClient;
  /** The server's address the client calls. */
  readonly baseUrl: string;
  readonly #transport: TransportSettings;

  constructor(options: BillingPortalOptions) {
    const { baseUrl, token, fetch } = checkOptions(options);
    const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.#transport = { fetch, maxRetries, timeoutMs };
    this.api = createApiClient({
      baseUrl,
      headers: { authorization: `Bearer ${token.trim()}` },
      fetch,
      maxRetries,
      timeoutMs,
    });
  }

  /**
   * The client of the session whose url `billing.portalSessions.create` answered: the token is its fragment, the
   * server's address what comes before `/portal/{session_id}` (or `options.baseUrl`). In the customer's browser,
   * on the page of that url: `BillingPortal.fromUrl(location.href)`.
   */
  static fromUrl(sessionUrl: string, options: BillingPortalUrlOptions = {}): BillingPortal {
    const parsed = parseSessionUrl(required('sessionUrl', sessionUrl));
    const baseUrl = options.baseUrl ?? parsed.baseUrl;
    if (baseUrl === undefined)
      throw new TypeError(
        'BillingPortal.fromUrl(sessionUrl): the url is not …/portal/{session_id}#pt_…: pass options.baseUrl',
      );
    return new BillingPortal({ ...options, baseUrl, token: parsed.token });
  }

  #init(options: RequestOptions | undefined): CallInit {
    return callInit(options, this.#transport);
  }

  /** The session's account, its company's name, every balance now, the session's scopes and expiry. */
  account(options?: RequestOptions): Promise<PortalAccount> {
    return unwrap(this.api.GET('/v1/portal/account', { ...this.#init(options) })).then((a) => a.data);
  }

  /** The grants of the account's balance of `denomination`, in drawing order (default: scheduled and active). */
  grants(denomination: string, params: PortalGrantListParams = {}, options?: RequestOptions): PagePromise<Grant> {
    const path = { denomination: required('denomination', denomination) };
    return paginate((cursor) =>
      unwrap(
        this.api.GET('/v1/portal/balances/{denomination}/grants', {
          params: { path, query: page(params, cursor) },
          ...this.#init(options),
        }),
      ),
    );
  }

  /** The account's transactions, newest first (`denomination` filters). */
  transactions(params: PortalTransactionListParams = {}, options?: RequestOptions): PagePromise<Transaction> {
    return paginate((cursor) =>
      unwrap(
        this.api.GET('/v1/portal/transactions', { params: { query: page(params, cursor) }, ...this.#init(options) }),
      ),
    );
  }

  /** The account's usage between `from` and `to` (whole UTC hours) by `window`, as `billing.usage.query`. */
  usage(params: PortalUsageParams, options?: RequestOptions): PagePromise<UsageGroup> {
    return paginate((cursor) =>
      unwrap(this.api.GET('/v1/portal/usage', { params: { query: page(params, cursor) }, ...this.#init(options) })),
    );
  }

  /** The account's charges to its card, newest first; a succeeded one has a `receipt_number`. */
  charges(params: PortalChargeListParams = {}, options?: RequestOptions): PagePromise<Charge> {
    return paginate((cursor) =>
      unwrap(this.api.GET('/v1/portal/charges', { params: { query: page(params, cursor) }, ...this.#init(options) })),
    );
  }

  /** A succeeded charge's receipt, as JSON; any other charge (or another account's) is a 404 `charge_id`. */
  receipt(chargeId: string, options?: RequestOptions): Promise<Receipt> {
    const path = { charge_id: required('chargeId', chargeId) };
    return unwrap(
      this.api.GET('/v1/portal/charges/{charge_id}/receipt', {
        params: { path },
        ...accepting(this.#init(options), 'application/json'),
      }),
    ).then((r) => r.data);
  }

  /** The same receipt as a page to print (HTML). */
  receiptHtml(chargeId: string, options?: RequestOptions): Promise<string> {
    const path = { charge_id: required('chargeId', chargeId) };
    return unwrap(
      this.api.GET('/v1/portal/charges/{charge_id}/receipt', {
        params: { path },
        parseAs: 'text',
        ...accepting(this.#init(options), 'text/html'),
      }),
    );
  }

  /** The credit packs the customer can buy: the company's, of a denomination the account has. Needs `topup`. */
  topupOffers(options?: RequestOptions): Promise<TopupOffer[]> {
    return unwrap(this.api.GET('/v1/portal/topup_offers', { ...this.#init(options) })).then((o) => o.data);
  }

  /**
   * Buys a credit pack with the account's card, the customer present (POST /v1/portal/topups; needs the `topup`
   * scope, else a 403): the card is charged now and the pack's paid grant added once the charge succeeds. Sent
   * with an Idempotency-Key, a random one unless `idempotencyKey` is given, the same on each retry: give the key
   * of the customer's click (one per purchase they mean) to make a double click one purchase. A card that asks
   * for the customer answers `status: 'requires_action'` and the `next_action_url` where they complete the payment
   * (`grant_id` null until it succeeds). Declined, or no card: 402 `payment_failed` (`details.charge_id` when a
   * charge was made), nothing added; an unknown pack: 404.
   */
  topup(offerId: string, options?: RequestOptions): Promise<PortalTopup> {
    const body = { offer_id: required('offerId', offerId) };
    return unwrap(this.api.POST('/v1/portal/topups', { body, ...this.#init(options) })).then((t) => t.data);
  }
}
