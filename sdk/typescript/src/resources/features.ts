/**
 * `billing.features` (/v1/features): the company's features (what a plan includes or an override grants), set,
 * listed, read and deleted; one resource of `Billing` (billing.ts). What an account is entitled to is
 * `billing.entitlements` (entitlements.ts).
 */
import {
  type Answer,
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

export type Feature = Schemas['Feature'];
/**
 * The body of `features.set`. `kind` is one of the record's three (the API takes any string and refuses another
 * with a 400 naming `kind`).
 */
export type FeatureSetParams = Omit<JsonBody<'putFeature'>, 'kind'> & { kind: Feature['kind'] };
export type FeatureListParams = Query<'listFeatures'>;
export type FeatureDeleted = Answer<'deleteFeature'>;

/**
 * Features, by key (1–64 of `A–Z a–z 0–9 _ . : -`, like a denomination): `boolean` (on or off), `config` (a JSON
 * value of at most 4 KB that the plan or an override gives, e.g. `{ max_seats: 5 }`) or `metered` (usage of
 * `event_type`, paid from balances as usual). Plans list them (`features` at creation,
 * `PUT /v1/plans/{plan_id}/features` through `billing.api`); accounts' overrides are `billing.entitlements`'.
 */
export class Features {
  readonly #core: Core;
  /** @internal */
  constructor(core: Core) {
    this.#core = core;
  }

  /**
   * Creates the feature, or changes its `name` (and a metered one's `event_type`) (PUT /v1/features/{key}). A
   * metered feature needs `event_type`, no other takes one (400 naming it); changing the `kind` of an existing
   * feature is a 409 `feature_kind_cannot_change`.
   */
  set(key: string, body: FeatureSetParams, options?: RequestOptions): Promise<Feature> {
    const c = this.#core;
    const path = { key: required('key', key) };
    return unwrap(c.api.PUT('/v1/features/{key}', { params: { path }, body, ...c.init(options) })).then((f) => f.data);
  }

  /** The company's features, by key (GET /v1/features). */
  list(params: FeatureListParams = {}, options?: RequestOptions): PagePromise<Feature> {
    const c = this.#core;
    return paginate((cursor) =>
      unwrap(c.api.GET('/v1/features', { params: { query: page(params, cursor) }, ...c.init(options) })),
    );
  }

  /** A feature (GET /v1/features/{key}); an unknown key (or another company's): 404 with `param: 'feature'`. */
  retrieve(key: string, options?: RequestOptions): Promise<Feature> {
    const c = this.#core;
    const path = { key: required('key', key) };
    return unwrap(c.api.GET('/v1/features/{key}', { params: { path }, ...c.init(options) })).then((f) => f.data);
  }

  /** Deletes a feature (DELETE /v1/features/{key}); while a plan or an override names it: 409 `feature_in_use`. */
  delete(key: string, options?: RequestOptions): Promise<FeatureDeleted> {
    const c = this.#core;
    const path = { key: required('key', key) };
    return unwrap(c.api.DELETE('/v1/features/{key}', { params: { path }, ...c.init(options) }));
  }
}
