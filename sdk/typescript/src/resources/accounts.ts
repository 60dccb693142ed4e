/**
 * `billing.accounts` (/v1/accounts, /v1/companies/{company_id}/accounts): the company's customers, created, read,
 * edited and listed; one resource of `Billing` (billing.ts), which holds the shared Core (core.ts).
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

export type Account = Schemas['Account'];
export type AccountCreateParams = JsonBody<'createAccount'>;
export type AccountUpdateParams = JsonBody<'updateAccount'>;
export type AccountListParams = Query<'listAccounts'>;

/** Accounts: the company's customers, each with its balances. */
export class Accounts {
  readonly #core: Core;
  /** @internal */
  constructor(core: Core) {
    this.#core = core;
  }

  /** Creates an account (POST /v1/companies/{company_id}/accounts). */
  create(body: AccountCreateParams = {}, options?: RequestOptions): Promise<Account> {
    const c = this.#core;
    return unwrap(
      c.api.POST('/v1/companies/{company_id}/accounts', {
        params: { path: { company_id: c.companyId } },
        body,
        ...c.init(options),
      }),
    ).then((a) => a.data);
  }

  /** An account with its balances (GET /v1/accounts/{account_id}). */
  retrieve(accountId: string, options?: RequestOptions): Promise<Account> {
    const c = this.#core;
    const path = { account_id: required('accountId', accountId) };
    return unwrap(c.api.GET('/v1/accounts/{account_id}', { params: { path }, ...c.init(options) })).then((a) => a.data);
  }

  /** Edits name, email, metadata or processor_id; fields left out keep their values (PUT /v1/accounts/{id}). */
  update(accountId: string, body: AccountUpdateParams, options?: RequestOptions): Promise<Account> {
    const c = this.#core;
    const path = { account_id: required('accountId', accountId) };
    return unwrap(c.api.PUT('/v1/accounts/{account_id}', { params: { path }, body, ...c.init(options) })).then(
      (a) => a.data,
    );
  }

  /** The company's accounts, newest first; `q` searches (GET /v1/accounts). */
  list(params: AccountListParams = {}, options?: RequestOptions): PagePromise<Account> {
    const c = this.#core;
    return paginate((cursor) =>
      unwrap(c.api.GET('/v1/accounts', { params: { query: page(params, cursor) }, ...c.init(options) })),
    );
  }
}
