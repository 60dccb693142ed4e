/**
 * `billing.grants` (/v1/grants, /v1/accounts/{account_id}/balance/{denomination}/grants): credit grants, created
 * on a balance, read, listed, edited and voided; one resource of `Billing` (billing.ts).
 */
import {
  type Core,
  type JsonBody,
  type Query,
  type RequestOptions,
  type Schemas,
  balancePath,
  page,
  required,
  unwrap,
} from '../core.js';
import { type PagePromise, paginate } from '../pagination.js';

export type Grant = Schemas['Grant'];
export type GrantCreateParams = JsonBody<'createGrant'>;
export type GrantUpdateParams = JsonBody<'updateGrant'>;
export type GrantVoidParams = JsonBody<'voidGrant'>;
export type BalanceGrantListParams = Query<'listBalanceGrants'>;
export type GrantListParams = Query<'listGrants'>;

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
