/**
 * `billing.transactions` (/v1/accounts/{account_id}/transactions): an account's ledger, listed; one resource of
 * `Billing` (billing.ts). Named as the API names it, not after the server's ledger module.
 */
import { type Core, type Query, type RequestOptions, type Schemas, page, required, unwrap } from '../core.js';
import { type PagePromise, paginate } from '../pagination.js';

export type Transaction = Schemas['Transaction'];
export type TransactionListParams = Query<'listTransactions'>;

/** The ledger: every change of a balance's amount is one transaction. */
export class Transactions {
  readonly #core: Core;
  /** @internal */
  constructor(core: Core) {
    this.#core = core;
  }

  /** An account's transactions, newest first (GET /v1/accounts/{account_id}/transactions). */
  list(accountId: string, params: TransactionListParams = {}, options?: RequestOptions): PagePromise<Transaction> {
    const c = this.#core;
    const path = { account_id: required('accountId', accountId) };
    return paginate((cursor) =>
      unwrap(
        c.api.GET('/v1/accounts/{account_id}/transactions', {
          params: { path, query: page(params, cursor) },
          ...c.init(options),
        }),
      ),
    );
  }
}
