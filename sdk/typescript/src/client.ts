/**
 * The typed client of the whole API, one level below `Billing`: openapi-fetch over the types generated from the
 * server's own document (schema.ts), every path and body checked by the compiler, with this package's transport
 * underneath (Idempotency-Keys, timeouts, retries). `Billing` is built on it with an API key; the web console uses
 * it as it is, with its session cookie and its own headers (`onRequest`). Use it directly for routes `Billing`
 * does not wrap; its answers are openapi-fetch's `{ data, error, response }`, never thrown for a status.
 */
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './schema.js';
import { type FetchLike, type TransportOptions, resilientFetch } from './transport.js';

/** The typed client: `api.GET('/v1/accounts/{account_id}', { params: { path: { account_id } } })`. */
export type ApiClient = Client<paths, 'application/json'>;

export interface ApiClientOptions extends TransportOptions {
  /**
   * The server's address, e.g. `http://127.0.0.1:8080`; `''` for the page's own origin in a browser (relative
   * URLs: browsers only).
   */
  baseUrl: string;
  /** Headers sent with every request (`authorization`, …). */
  headers?: Record<string, string> | undefined;
  /** The Fetch API's credentials mode: `same-origin` sends a browser's cookies to its own origin. */
  credentials?: RequestCredentials | undefined;
  /**
   * Called with each request before it is sent (once, before the first attempt: retries send the same
   * headers). Set headers that change between requests here: a CSRF token, the company of the page.
   */
  onRequest?: ((request: Request) => void | Promise<void>) | undefined;
}

/** A typed client of the API. Throws nothing for a status: read `error` and `response` of each answer. */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const transport = resilientFetch(options);
  const client = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.credentials ? { credentials: options.credentials } : {}),
    fetch: transport as (input: Request) => Promise<Response>,
  });
  const onRequest = options.onRequest;
  if (onRequest)
    client.use({
      async onRequest({ request }) {
        await onRequest(request);
        return request;
      },
    });
  return client;
}

export type { FetchLike, TransportOptions };
