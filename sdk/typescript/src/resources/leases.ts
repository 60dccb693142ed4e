/**
 * `billing.leases` (/v1/accounts/{account_id}/leases, /v1/leases): leases opened, read, closed and listed; one
 * resource of `Billing` (billing.ts). `open` answers a `Lease` (lease.ts), which decides usage in this process
 * against the units the lease holds; `LeasePool` (lease-pool.ts) keeps one per balance, opened ahead of need.
 */
import { type Core, type JsonBody, type Query, type RequestOptions, page, required, unwrap } from '../core.js';
import { Lease, type LeaseOptions, type LeaseRecord, type LeaseServer } from '../lease.js';
import { type PagePromise, paginate } from '../pagination.js';
import type { EventInput } from './events.js';

/** The body of `leases.create`: `denomination`, `amount` (≥ 1), `ttl_seconds?` (1–3,600; default 300), `id?`. */
export type LeaseCreateParams = JsonBody<'createAccountLease'>;
/** `status` (`open`, `closed` or `expired`, as it is now), `limit`, `starting_after`. */
export type LeaseListParams = Query<'listAccountLeases'>;

/** The third argument of `leases.open`. */
export interface LeaseOpenParams {
  /** Units to hold, an integer ≥ 1. */
  amount: number;
  /** The lease's lifetime, 1–3,600 s (default 300). */
  ttlSeconds?: number;
  /** A client id: the same id again answers the same lease (its `remaining` is then what the Lease may take). */
  id?: string;
  /**
   * With an `id` sent before (a retry of an open whose answer was lost): when it was first sent, on the lease's
   * clock, so that the lease the first request opened is never thought to live longer than it does.
   */
  since?: number;
}

/**
 * Leases: units of a balance held for a short time (`pending` up, `available` down, counted as spend), so that
 * usage can be decided in the caller's process and still never overspend; events naming the lease take their
 * cost from it first. Closing one (or its expiry) releases what it still holds.
 */
export class Leases {
  readonly #core: Core;
  /** @internal */
  constructor(core: Core) {
    this.#core = core;
  }

  /**
   * Opens a lease, answering its record (POST /v1/accounts/{account_id}/leases). With `available` below `amount`:
   * 402 `insufficient_balance` (`details.available` says how much there is); past a spend limit: 402
   * `spend_limit_reached`; nothing held either way. The same `id` again answers the same lease.
   */
  create(accountId: string, body: LeaseCreateParams, options?: RequestOptions): Promise<LeaseRecord> {
    const c = this.#core;
    const path = { account_id: required('accountId', accountId) };
    return unwrap(c.api.POST('/v1/accounts/{account_id}/leases', { params: { path }, body, ...c.init(options) })).then(
      (l) => l.data,
    );
  }

  /** A lease as it is now: `expired` from its `expires_at` on (GET /v1/leases/{lease_id}); another company's: 404. */
  retrieve(leaseId: string, options?: RequestOptions): Promise<LeaseRecord> {
    const c = this.#core;
    const path = { lease_id: required('leaseId', leaseId) };
    return unwrap(c.api.GET('/v1/leases/{lease_id}', { params: { path }, ...c.init(options) })).then((l) => l.data);
  }

  /**
   * Closes a lease, releasing what it still holds (POST /v1/leases/{lease_id}/close). A closed lease is answered
   * again; an expired one is a 409 `lease_expired`. Events naming it afterwards are charged to the balance alone.
   */
  close(leaseId: string, options?: RequestOptions): Promise<LeaseRecord> {
    const c = this.#core;
    const path = { lease_id: required('leaseId', leaseId) };
    return unwrap(c.api.POST('/v1/leases/{lease_id}/close', { params: { path }, ...c.init(options) })).then(
      (l) => l.data,
    );
  }

  /** An account's leases, newest first, each as it is now (GET /v1/accounts/{account_id}/leases). */
  list(accountId: string, params: LeaseListParams = {}, options?: RequestOptions): PagePromise<LeaseRecord> {
    const c = this.#core;
    const path = { account_id: required('accountId', accountId) };
    return paginate((cursor) =>
      unwrap(
        c.api.GET('/v1/accounts/{account_id}/leases', {
          params: { path, query: page(params, cursor) },
          ...c.init(options),
        }),
      ),
    );
  }

  /**
   * Opens a lease of `amount` units of the account's balance of `denomination` and answers the `Lease` that
   * decides against them in this process: `tryTake(units)` (synchronous), `record(events)`, `close()`. Refused as
   * `create` is (a BillingError). `options` set the lease's clock, timers, expiry margin, batching and `onError`.
   */
  async open(
    accountId: string,
    denomination: string,
    params: LeaseOpenParams,
    options: LeaseOptions = {},
  ): Promise<Lease> {
    const { amount, ttlSeconds, id, since } = params ?? ({} as LeaseOpenParams);
    if (!Number.isInteger(amount) || amount < 1)
      throw new TypeError(`leases.open: amount must be an integer ≥ 1, not ${String(amount)}`);
    const sentAt = since ?? (options.now ?? Date.now)();
    const body: LeaseCreateParams = {
      denomination: required('denomination', denomination),
      amount,
      ...(ttlSeconds !== undefined ? { ttl_seconds: ttlSeconds } : {}),
      ...(id !== undefined ? { id } : {}),
    };
    const record = await this.create(accountId, body);
    return new Lease(this.#server(), record, sentAt, options);
  }

  /** What a Lease asks of the server, through this client's calls. */
  #server(): LeaseServer {
    const c = this.#core;
    return {
      send: (accountId: string, leaseId: string, events: EventInput[], idempotencyKey: string) =>
        unwrap(
          c.api.POST('/v1/accounts/{account_id}/events', {
            params: { path: { account_id: accountId } },
            body: { events, lease_id: leaseId },
            ...c.init({ idempotencyKey }),
          }),
        ),
      close: (leaseId: string) => this.close(leaseId),
      retrieve: (leaseId: string) => this.retrieve(leaseId),
    };
  }
}
