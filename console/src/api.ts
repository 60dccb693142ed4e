/**
 * The console's only way to the server: the public /v1 API through the project's own TypeScript client
 * (@billing-engine/client, sdk/typescript: its typed openapi-fetch client, generated from this server's
 * /openapi.json, with its Idempotency-Keys and retries). The session cookie goes along (same origin); every
 * state change carries the session's CSRF token, and company routes name the company in `Billing-Company`.
 */
import { BillingError, type components, createApiClient, type operations } from '@billing-engine/client';

export type Schemas = components['schemas'];
export type Account = Schemas['Account'];
export type Balance = Schemas['Balance'];
export type Transaction = Schemas['Transaction'];
export type Grant = Schemas['Grant'];
export type BillingEvent = Schemas['Event'];
export type UsageGroup = Schemas['UsageGroup'];
export type User = Schemas['User'];
export type Feature = Schemas['Feature'];
/** A lease: units of a balance held for a short time, drawn from by the events that carry its lease_id. */
export type Lease = Schemas['Lease'];
export type Plan = operations['listPlans']['responses'][200]['content']['application/json']['data'][number];
export type Entitlement =
  operations['listEntitlements']['responses'][200]['content']['application/json']['data'][number];
/** A credit pack: what an account's customer can buy in the customer portal. */
export type TopupOffer = operations['listTopupOffers']['responses'][200]['content']['application/json']['data'][number];

const state: { csrf: string | null; company: string | null } = { csrf: null, company: null };

export function setCsrfToken(token: string | null): void {
  state.csrf = token;
}
export function setCompany(companyId: string | null): void {
  state.company = companyId;
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function withHeaders(headers: Headers, method: string): void {
  if (UNSAFE.has(method) && state.csrf) headers.set('x-csrf-token', state.csrf);
  if (state.company && !headers.has('billing-company')) headers.set('billing-company', state.company);
}

export const api = createApiClient({
  baseUrl: '',
  credentials: 'same-origin',
  onRequest: (request) => withHeaders(request.headers, request.method),
});

/** A refusal of the API (or no answer at all), with a sentence a person can act on. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly param?: string,
  ) {
    super(message);
  }
}

type ErrorBody = { error?: { type?: string; message?: string; param?: string } } | undefined;

/** Listeners told when the API says the session is gone (401 on a cookie request). */
const unauthorizedListeners = new Set<() => void>();
export function onUnauthorized(fn: () => void): () => void {
  unauthorizedListeners.add(fn);
  return () => unauthorizedListeners.delete(fn);
}

export function toApiError(status: number, body: ErrorBody): ApiError {
  const e = body?.error;
  const type = e?.type ?? 'unknown';
  const server = e?.message ?? '';
  let text: string;
  switch (status) {
    case 401:
      text = 'You are not logged in (or your session has ended). Log in again.';
      if (server.includes('password') || server.includes('credentials')) text = server;
      break;
    case 403:
      text = server.includes('csrf')
        ? 'This page is out of date with your session: reload the page and try again.'
        : `Not allowed: ${server}`;
      break;
    case 404:
      text = 'Not found: it does not exist, or it belongs to another company.';
      break;
    case 429:
      text = 'Too many attempts in a short time. Wait a minute and try again.';
      break;
    case 502:
    case 503:
    case 504:
      text = 'The server is busy or restarting. Try again in a moment.';
      break;
    default:
      text = status >= 500 ? 'Something went wrong on the server. Try again; if it keeps happening, tell us.' : server;
  }
  if (text === '') text = `The request failed (HTTP ${status}).`;
  return new ApiError(status, type, text, e?.param);
}

/** The data of an openapi-fetch answer, or an ApiError thrown with words for the person. */
export async function ok<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
  opts: { quiet401?: boolean } = {},
): Promise<T> {
  let r: { data?: T; error?: unknown; response: Response };
  try {
    r = await call;
  } catch (err) {
    // An answer that is not the API's JSON (a proxy's page) has a status; no answer at all has none.
    if (err instanceof BillingError && err.status > 0) throw toApiError(err.status, undefined);
    throw new ApiError(0, 'network', 'Cannot reach the server. Check your connection; the page retries by itself.');
  }
  if (r.response.ok) return r.data as T;
  if (r.response.status === 401 && !opts.quiet401) for (const fn of unauthorizedListeners) fn();
  throw toApiError(r.response.status, r.error as ErrorBody);
}

/** Every page of a list (bounded), for charts and CSV. */
export async function allPages<T>(
  page: (cursor: string | undefined) => Promise<{ data: T[]; has_more: boolean; next_cursor: string | null }>,
  maxPages = 50,
): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < maxPages; i++) {
    const p = await page(cursor);
    out.push(...p.data);
    if (!p.has_more || !p.next_cursor) break;
    cursor = p.next_cursor;
  }
  return out;
}

// --- sessions and email (log in, log out, verification and password reset links)

export type Session = operations['getCurrentSession']['responses'][200]['content']['application/json']['data'];
export type CompanySummary = Session['companies'][number];

export const sessions = {
  current: () => ok(api.GET('/v1/sessions/current'), { quiet401: true }),
  create: (email: string, password: string) =>
    ok(api.POST('/v1/sessions', { body: { email, password } }), { quiet401: true }),
  revoke: () => ok(api.DELETE('/v1/sessions/current')),
  verifyEmail: (token: string) => ok(api.POST('/v1/email_verifications', { body: { token } })),
  resendVerification: (userId: number) =>
    ok(api.POST('/v1/users/{user_id}/email_verifications', { params: { path: { user_id: String(userId) } } })),
  requestReset: (email: string) => ok(api.POST('/v1/password_resets', { body: { email } })),
  completeReset: (token: string, password: string) =>
    ok(api.POST('/v1/password_resets/complete', { body: { token, password } })),
};
