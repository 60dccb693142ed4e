/**
 * The portal page's credential: the portal session's token (`pt_…`), read once from the url's fragment and kept
 * in this module's memory only (in the client's Authorization header): never written to localStorage,
 * sessionStorage or a cookie, and never part of a url sent to a server (a fragment is not sent; the page then
 * removes it from the address bar, so that it is not bookmarked, shared or left in the tab's history).
 */
import { BillingError, BillingPortal } from '@billing-engine/client';

/**
 * The page's fetch: no cookies. The token is the only credential (a console session's cookie on the same origin
 * must never ride along), and an ended session's 401 comes straight to the page.
 */
const withoutCredentials = (input: Request, init?: RequestInit): Promise<Response> =>
  fetch(input, { ...init, credentials: 'omit' });

/** The client of this page's session, or null when the url carried no token (the link is incomplete). */
export function takeSession(): BillingPortal | null {
  let portal: BillingPortal | null = null;
  try {
    if (location.hash.length > 1) portal = BillingPortal.fromUrl(location.href, { fetch: withoutCredentials });
  } catch {
    portal = null;
  }
  if (location.hash !== '') history.replaceState(history.state, '', location.pathname + location.search);
  return portal;
}

/** True for the answer of a session that has ended (expired or revoked): the page then says only that. */
export const isExpired = (err: unknown): boolean => err instanceof BillingError && err.status === 401;

/** An error in words the customer can act on. */
export function say(err: unknown): string {
  if (!(err instanceof BillingError)) return err instanceof Error ? err.message : String(err);
  if (err.status === 0) return 'Cannot reach the server. Check your connection and try again.';
  if (err.status === 402) return `The payment failed: ${err.message}`;
  if (err.status === 429) return 'Too many attempts in a short time. Wait a minute and try again.';
  if (err.status >= 500) return 'Something went wrong on our side. Try again in a moment.';
  return err.message;
}
