/**
 * `billing.usage` (/v1/usage, /v1/accounts/{account_id}/usage): usage read back from the hourly rollups, the
 * company's or one account's; one resource of `Billing` (billing.ts).
 */
import { type Core, type Query, type RequestOptions, type Schemas, page, required, unwrap } from '../core.js';
import { type PagePromise, paginate } from '../pagination.js';

export type UsageGroup = Schemas['UsageGroup'];
/** The company's usage, or with `account_id` one account's (GET /v1/accounts/{account_id}/usage). */
export type UsageQueryParams = Query<'getUsage'>;

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
