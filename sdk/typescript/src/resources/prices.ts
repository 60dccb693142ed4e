/**
 * `billing.prices` (/v1/prices): what one unit of an event type costs, set, read, listed, and its earlier
 * versions; one resource of `Billing` (billing.ts).
 */
import {
  type Core,
  type JsonBody,
  type Query,
  type RequestOptions,
  type Schemas,
  page,
  required,
  unwrap,
} from '../core.js';
import { type PagePromise, paginate } from '../pagination.js';

export type Price = Schemas['Price'];
export type PriceSetParams = JsonBody<'setPrice'>;
export type PriceListParams = Query<'listPrices'>;
export type PriceVersion = Schemas['PriceVersion'];
export type PriceVersionListParams = Query<'listPriceVersions'>;

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
