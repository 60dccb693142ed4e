/**
 * `billing.balances` (/v1/accounts/{account_id}/balance/{denomination}): an account's balance of one
 * denomination, created, read, adjusted by hand, its auto-refill and spend limits set; one resource of `Billing`
 * (billing.ts).
 */
import { type Core, type JsonBody, type RequestOptions, type Schemas, balancePath, unwrap } from '../core.js';

export type Balance = Schemas['Balance'];
export type BalanceCreateParams = JsonBody<'createBalance'>;
export type BalanceAdjustParams = JsonBody<'createBalanceAdjustment'>;
export type AutoRefillParams = JsonBody<'setBalanceAutoRefill'>;
export type BalanceLimitsParams = JsonBody<'setBalanceLimits'>;

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

  /**
   * Spend limits: the most units usage may take in a UTC day (`daily`) and month (`monthly`); `null` removes one,
   * a field left out keeps its value. An events call past a limit fails with a `BillingError` of type
   * `spend_limit_reached` whose `details` say `{denomination, window, limit, spend, resets_at}`.
   */
  setLimits(
    accountId: string,
    denomination: string,
    body: BalanceLimitsParams,
    options?: RequestOptions,
  ): Promise<Balance> {
    const c = this.#core;
    return unwrap(
      c.api.PUT('/v1/accounts/{account_id}/balance/{denomination}/limits', {
        params: { path: balancePath(accountId, denomination) },
        body,
        ...c.init(options),
      }),
    ).then((b) => b.data);
  }
}
