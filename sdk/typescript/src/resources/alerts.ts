/**
 * `billing.alerts` (/v1/accounts/{account_id}/alerts, /v1/alerts): alerts on an account's balances, created,
 * listed (per account, and the company's triggered ones), read and deleted; one resource of `Billing` (billing.ts).
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

export type Alert = Schemas['Alert'];
export type AlertCreateParams = JsonBody<'createAlert'>;
export type AlertListParams = Query<'listAlerts'>;
export type TriggeredAlertListParams = Query<'listTriggeredAlerts'>;
export type AlertDeleted = Answer<'deleteAlert'>;

/**
 * Alerts on one balance of an account, each decided in the transaction of every change of that balance:
 * `metric: 'available'` is triggered while `available` is below `threshold` and resolved when it is back at or
 * above it; `metric: 'spend'` with a `window` (`day` or `month`, UTC) is triggered once the window's spend (only
 * of `event_type`, when given) reaches `threshold`, and resolved when the next window starts. Each change of status
 * sends an `alert_triggered` or `alert_resolved` webhook (`AlertWebhookPayload`).
 */
export class Alerts {
  readonly #core: Core;
  /** @internal */
  constructor(core: Core) {
    this.#core = core;
  }

  /**
   * Creates an alert on the account's balance of `denomination` (POST /v1/accounts/{id}/alerts); one created
   * already triggered sends `alert_triggered` at once. A rule that does not hold (a spend alert without `window`,
   * …) is a 400 whose `param` names the field; the 51st alert of an account, a 400 `too_many_alerts`.
   */
  create(accountId: string, body: AlertCreateParams, options?: RequestOptions): Promise<Alert> {
    const c = this.#core;
    const path = { account_id: required('accountId', accountId) };
    return unwrap(c.api.POST('/v1/accounts/{account_id}/alerts', { params: { path }, body, ...c.init(options) })).then(
      (a) => a.data,
    );
  }

  /** An account's alerts, newest first, each with its status and value now (GET /v1/accounts/{id}/alerts). */
  list(accountId: string, params: AlertListParams = {}, options?: RequestOptions): PagePromise<Alert> {
    const c = this.#core;
    const path = { account_id: required('accountId', accountId) };
    return paginate((cursor) =>
      unwrap(
        c.api.GET('/v1/accounts/{account_id}/alerts', {
          params: { path, query: page(params, cursor) },
          ...c.init(options),
        }),
      ),
    );
  }

  /** Every alert of the company triggered now, of any account, newest first (GET /v1/alerts). */
  listTriggered(params: TriggeredAlertListParams = {}, options?: RequestOptions): PagePromise<Alert> {
    const c = this.#core;
    return paginate((cursor) =>
      unwrap(c.api.GET('/v1/alerts', { params: { query: page(params, cursor) }, ...c.init(options) })),
    );
  }

  /** An alert, with its status and value now (GET /v1/alerts/{alert_id}); another company's: 404. */
  retrieve(alertId: string, options?: RequestOptions): Promise<Alert> {
    const c = this.#core;
    const path = { alert_id: required('alertId', alertId) };
    return unwrap(c.api.GET('/v1/alerts/{alert_id}', { params: { path }, ...c.init(options) })).then((a) => a.data);
  }

  /** Deletes an alert, notifying nothing (DELETE /v1/alerts/{alert_id}); one already deleted: 404. */
  delete(alertId: string, options?: RequestOptions): Promise<AlertDeleted> {
    const c = this.#core;
    const path = { alert_id: required('alertId', alertId) };
    return unwrap(c.api.DELETE('/v1/alerts/{alert_id}', { params: { path }, ...c.init(options) }));
  }
}
