/**
 * `billing.charges` (/v1/accounts/{account_id}/charges, /v1/charges/{charge_id}/receipt): the USD charges made to
 * an account's card, listed, and a succeeded charge's receipt, as JSON or as a page to print; one resource of
 * `Billing` (billing.ts).
 */
import { type Answer, type Core, type Query, type RequestOptions, accepting, page, required, unwrap } from '../core.js';
import { type PagePromise, paginate } from '../pagination.js';

/**
 * A charge to the card: `usd_amount` (cents), `status`, `reason` (`refill`, `plan`, `overage`, `proration`,
 * `topup`), why it failed (`failure_code`, `failure_reason`) and, once succeeded, its `receipt_number` (`R-…`).
 */
export type Charge = Answer<'listCharges'>['data'][number];
export type ChargeListParams = Query<'listCharges'>;
/** A succeeded charge's receipt: its number, the company, the account, the amount, the grant it added (if any). */
export type Receipt = Answer<'getReceipt'>['data'];

/** Charges: refills, plan charges, overage, proration and credit packs bought in the portal. */
export class Charges {
  readonly #core: Core;
  /** @internal */
  constructor(core: Core) {
    this.#core = core;
  }

  /** An account's charges, newest first (GET /v1/accounts/{account_id}/charges); an unknown account: 404. */
  list(accountId: string, params: ChargeListParams = {}, options?: RequestOptions): PagePromise<Charge> {
    const c = this.#core;
    const path = { account_id: required('accountId', accountId) };
    return paginate((cursor) =>
      unwrap(
        c.api.GET('/v1/accounts/{account_id}/charges', {
          params: { path, query: page(params, cursor) },
          ...c.init(options),
        }),
      ),
    );
  }

  /**
   * A succeeded charge's receipt, as JSON (GET /v1/charges/{charge_id}/receipt, `Accept: application/json`). Only
   * a succeeded charge has one: any other (or another company's) is a 404 with `param: 'charge_id'`.
   */
  receipt(chargeId: string, options?: RequestOptions): Promise<Receipt> {
    const c = this.#core;
    const path = { charge_id: required('chargeId', chargeId) };
    return unwrap(
      c.api.GET('/v1/charges/{charge_id}/receipt', {
        params: { path },
        ...accepting(c.init(options), 'application/json'),
      }),
    ).then((r) => r.data);
  }

  /** The same receipt as a page to print: plain HTML, its own stylesheet, no script (`Accept: text/html`). */
  receiptHtml(chargeId: string, options?: RequestOptions): Promise<string> {
    const c = this.#core;
    const path = { charge_id: required('chargeId', chargeId) };
    return unwrap(
      c.api.GET('/v1/charges/{charge_id}/receipt', {
        params: { path },
        parseAs: 'text',
        ...accepting(c.init(options), 'text/html'),
      }),
    );
  }
}
