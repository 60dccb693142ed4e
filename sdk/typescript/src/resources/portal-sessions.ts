/**
 * `billing.portalSessions` (/v1/accounts/{account_id}/portal_sessions, /v1/portal_sessions): the customer portal
 * opened for an account's end customer, and ended; one resource of `Billing` (billing.ts). What the customer then
 * does with the session's token is `BillingPortal`'s (portal.ts).
 */
import { type Answer, type Core, type Created, type JsonBody, type RequestOptions, required, unwrap } from '../core.js';

/** A portal session: its account, scopes, return url, frame origins, expiry and (once ended) `revoked_at`. */
export type PortalSession = Answer<'revokePortalSession'>['data'];
/**
 * A portal session as created: with its `url`, `{BILLING_PUBLIC_URL}/portal/{session_id}#pt_…`, the token in the
 * fragment. The url (the token) is shown only here: hand it to the customer, or to `BillingPortal.fromUrl`.
 */
export type CreatedPortalSession = Created<'createPortalSession'>['data'];
/**
 * The body of `portalSessions.create`: `scopes` (`read`, the default, and `topup`), `ttl_seconds` (60–86,400;
 * default 3,600), `return_url` and `frame_ancestors` (origins that may frame the portal page), each https:// or
 * http://localhost.
 */
export type PortalSessionCreateParams = JsonBody<'createPortalSession'>;

/** Portal sessions: one account's customer let into the portal, for a time, with the scopes the company gives. */
export class PortalSessions {
  readonly #core: Core;
  /** @internal */
  constructor(core: Core) {
    this.#core = core;
  }

  /**
   * Opens the portal for the account's customer (POST /v1/accounts/{id}/portal_sessions): give the answer's `url`
   * to the customer (a link, a redirect, an iframe of one of `frame_ancestors`), or read the portal's API with
   * `BillingPortal.fromUrl(session.url)`. A url that is not allowed is a 400 naming the field; an unknown
   * account, a 404.
   */
  create(
    accountId: string,
    body: PortalSessionCreateParams = {},
    options?: RequestOptions,
  ): Promise<CreatedPortalSession> {
    const c = this.#core;
    const path = { account_id: required('accountId', accountId) };
    return unwrap(
      c.api.POST('/v1/accounts/{account_id}/portal_sessions', { params: { path }, body, ...c.init(options) }),
    ).then((s) => s.data);
  }

  /**
   * Ends a session at once (DELETE /v1/portal_sessions/{session_id}): its token answers 401 from now on. Ending an
   * ended one answers it again; an unknown one (or another company's) is a 404 with `param: 'session_id'`.
   */
  revoke(sessionId: string, options?: RequestOptions): Promise<PortalSession> {
    const c = this.#core;
    const path = { session_id: required('sessionId', sessionId) };
    return unwrap(c.api.DELETE('/v1/portal_sessions/{session_id}', { params: { path }, ...c.init(options) })).then(
      (s) => s.data,
    );
  }
}
