/**
 * The console's only way to the server: the public /v1 API through openapi-fetch, typed by the types
 * generated from this server's own /openapi.json (src/api/schema.d.ts). The session cookie goes along
 * (same origin); every state change carries the session's CSRF token, and company routes name the
 * company in `Billing-Company`.
 */
import createClient from 'openapi-fetch';
import type { components, paths } from './api/schema';

export type Schemas = components['schemas'];
export type Account = Schemas['Account'];
export type Balance = Schemas['Balance'];
export type Transaction = Schemas['Transaction'];
export type BillingEvent = Schemas['Event'];
export type UsageGroup = Schemas['UsageGroup'];
export type User = Schemas['User'];

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

export const api = createClient<paths>({ baseUrl: '', credentials: 'same-origin' });
api.use({
  onRequest({ request }) {
    withHeaders(request.headers, request.method);
    return request;
  },
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
  } catch {
    throw new ApiError(0, 'network', 'Cannot reach the server. Check your connection; the page retries by itself.');
  }
  if (r.response.ok) return r.data as T;
  if (r.response.status === 401 && !opts.quiet401) for (const fn of unauthorizedListeners) fn();
  throw toApiError(r.response.status, r.error as ErrorBody);
}

/** A /v1 call outside the generated types (routes added after the types were last generated). */
export async function raw<T>(method: string, path: string, body?: unknown, opts: { quiet401?: boolean } = {}) {
  const headers = new Headers({ accept: 'application/json' });
  if (body !== undefined) headers.set('content-type', 'application/json');
  withHeaders(headers, method);
  return ok<T>(
    fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }).then(async (response) => {
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      return response.ok ? { data: parsed as T, response } : { error: parsed, response };
    }),
    opts,
  );
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

// --- sessions and email (SESSION-API.md)

export interface CompanySummary {
  company_id: string;
  name: string;
  processor: string;
  created_at: string;
}
export interface Session {
  user: User;
  csrf_token: string;
  expires_at: string;
  companies: CompanySummary[];
}

export const sessions = {
  current: () => raw<{ data: Session }>('GET', '/v1/sessions/current', undefined, { quiet401: true }),
  create: (email: string, password: string) =>
    raw<{ data: Omit<Session, 'companies'> }>('POST', '/v1/sessions', { email, password }, { quiet401: true }),
  revoke: () => raw<{ data: { revoked: boolean } }>('DELETE', '/v1/sessions/current'),
  verifyEmail: (token: string) => raw<{ data: User }>('POST', '/v1/email_verifications', { token }),
  resendVerification: (userId: number) =>
    raw<{ data: { sent: boolean } }>('POST', `/v1/users/${userId}/email_verifications`, {}),
  requestReset: (email: string) => raw<{ data: { sent: boolean } }>('POST', '/v1/password_resets', { email }),
  completeReset: (token: string, password: string) =>
    raw<{ data: User }>('POST', '/v1/password_resets/complete', { token, password }),
};
