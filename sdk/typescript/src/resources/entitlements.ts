/**
 * `billing.entitlements` (/v1/accounts/{account_id}/entitlements, /v1/accounts/{account_id}/features/{key}): what
 * an account is entitled to, listed and checked, and its overrides of its plan set and removed; one resource of
 * `Billing` (billing.ts). The features themselves are `billing.features` (features.ts).
 */
import { type Answer, type Core, type JsonBody, type Query, type RequestOptions, required, unwrap } from '../core.js';

/** A feature as an account is entitled to it now: `source` says what decides (`null`: nothing, no access). */
export type Entitlement = Answer<'listEntitlements'>['data'][number];
/**
 * The answer of `entitlements.check`: the entitlement, `reason` why `has_access` is what it is, and for a metered
 * feature with a price the `balance` the usage draws from, now and after it.
 */
export type EntitlementCheck = Answer<'checkEntitlement'>['data'];
export type EntitlementCheckParams = Query<'checkEntitlement'>;
/** The body of `entitlements.setOverride`. */
export type FeatureOverrideParams = JsonBody<'setFeatureOverride'>;

/**
 * Entitlements: every feature of the company as one account has it, from its plan or from an override of it for
 * that account alone. Exact at once after any change, on every server process (no cache). Each override set,
 * removed or ended sends an `entitlements_change` webhook (`EntitlementsWebhookPayload`).
 */
export class Entitlements {
  readonly #core: Core;
  /** @internal */
  constructor(core: Core) {
    this.#core = core;
  }

  /**
   * Every feature of the company, by key, as the account is entitled to it now (GET
   * /v1/accounts/{id}/entitlements). A metered feature's `has_access` here is the entitlement alone; `check` also
   * asks its balance.
   */
  list(accountId: string, options?: RequestOptions): Promise<Entitlement[]> {
    const c = this.#core;
    const path = { account_id: required('accountId', accountId) };
    return unwrap(c.api.GET('/v1/accounts/{account_id}/entitlements', { params: { path }, ...c.init(options) })).then(
      (e) => e.data,
    );
  }

  /**
   * May the account use the feature now (GET /v1/accounts/{id}/entitlements/{key}?quantity=)? A metered feature
   * needs the entitlement and the pre-flight check of `quantity` (default 1) of its event type allowed: `reason`
   * `insufficient_balance` or `spend_limit_reached` otherwise. An unknown feature: 404 with `param: 'feature'`; an
   * unknown account: 404 with `param: 'account_id'`.
   */
  check(
    accountId: string,
    key: string,
    params: EntitlementCheckParams = {},
    options?: RequestOptions,
  ): Promise<EntitlementCheck> {
    const c = this.#core;
    const path = { account_id: required('accountId', accountId), key: required('key', key) };
    const query = params.quantity === undefined ? {} : { quantity: params.quantity };
    return unwrap(
      c.api.GET('/v1/accounts/{account_id}/entitlements/{key}', {
        params: { path, query },
        ...c.init(options),
      }),
    ).then((e) => e.data);
  }

  /**
   * Overrides the plan for this account (PUT /v1/accounts/{id}/features/{key}): `enabled: false` takes a plan's
   * feature away, `enabled: true` grants it (a config feature with `value`, else the plan's), until `expires_at`
   * (after now; absent: until removed). Resolves with the entitlement now.
   */
  setOverride(
    accountId: string,
    key: string,
    body: FeatureOverrideParams,
    options?: RequestOptions,
  ): Promise<Entitlement> {
    const c = this.#core;
    const path = { account_id: required('accountId', accountId), key: required('key', key) };
    return unwrap(
      c.api.PUT('/v1/accounts/{account_id}/features/{key}', { params: { path }, body, ...c.init(options) }),
    ).then((e) => e.data);
  }

  /**
   * Removes the account's override, so that its plan decides again (DELETE /v1/accounts/{id}/features/{key});
   * resolves with the entitlement now. No override: 404.
   */
  removeOverride(accountId: string, key: string, options?: RequestOptions): Promise<Entitlement> {
    const c = this.#core;
    const path = { account_id: required('accountId', accountId), key: required('key', key) };
    return unwrap(
      c.api.DELETE('/v1/accounts/{account_id}/features/{key}', { params: { path }, ...c.init(options) }),
    ).then((e) => e.data);
  }
}
