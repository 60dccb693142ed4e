/**
 * What every resource of `Billing` (resources/*.ts) shares: the typed client with its company and transport
 * settings (`Core`), the per-call options, the types read off an operation of the generated schema, and the steps
 * every method repeats (check a path id, unwrap an answer or throw its BillingError, build a page's query). Apart
 * from billing.ts so that the resources never import the class that assembles them; `BillingPortal` (portal.ts)
 * uses the same steps with a portal token instead of a company's key.
 */
import type { ApiClient } from './client.js';
import { BillingError } from './errors.js';
import type { components, operations } from './schema.js';
import { type FetchLike, resilientFetch } from './transport.js';

export type Schemas = components['schemas'];
/** The JSON body an operation takes. */
export type JsonBody<Op extends keyof operations> = operations[Op] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;
/** The query parameters an operation takes. */
export type Query<Op extends keyof operations> = operations[Op] extends { parameters: { query?: infer Q } }
  ? NonNullable<Q>
  : never;
/** The JSON an operation answers with 200. */
export type Answer<Op extends keyof operations> = operations[Op] extends {
  responses: { 200: { content: { 'application/json': infer A } } };
}
  ? A
  : never;

/** The JSON an operation answers with 201 (a creation: a portal session, a top-up). */
export type Created<Op extends keyof operations> = operations[Op] extends {
  responses: { 201: { content: { 'application/json': infer A } } };
}
  ? A
  : never;

/** Options of one call. */
export interface RequestOptions {
  /** The Idempotency-Key of a write (default: a random one, the same on each retry of this call). */
  idempotencyKey?: string;
  /** Aborts the call (and its retries); the call then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** This call's retries, instead of the client's. */
  maxRetries?: number;
  /** This call's timeout per attempt, instead of the client's. */
  timeoutMs?: number;
}

/** The transport settings of a client: its `fetch`, retries and timeout (a call's options may change the last two). */
export interface TransportSettings {
  fetch: FetchLike | undefined;
  maxRetries: number;
  timeoutMs: number;
}

/** openapi-fetch's per-call init of one call's options. */
export interface CallInit {
  headers?: Record<string, string>;
  signal?: AbortSignal;
  fetch?: (input: Request) => Promise<Response>;
}

/**
 * openapi-fetch's per-call init for these options: the key as a header, the signal, a transport of its own when
 * the call changes the client's retries or timeout. Shared by `Billing`'s resources (Core) and `BillingPortal`.
 */
export function callInit(options: RequestOptions | undefined, transport: TransportSettings): CallInit {
  if (options === undefined) return {};
  const { idempotencyKey, signal, maxRetries, timeoutMs } = options;
  const own = maxRetries !== undefined || timeoutMs !== undefined;
  return {
    ...(idempotencyKey !== undefined ? { headers: { 'idempotency-key': idempotencyKey } } : {}),
    ...(signal !== undefined ? { signal } : {}),
    ...(own
      ? {
          fetch: resilientFetch({
            fetch: transport.fetch,
            maxRetries: maxRetries ?? transport.maxRetries,
            timeoutMs: timeoutMs ?? transport.timeoutMs,
          }),
        }
      : {}),
  };
}

/** An init that also asks for `accept` (a receipt: `application/json` or `text/html`). */
export function accepting(init: CallInit, accept: string): CallInit {
  return { ...init, headers: { ...init.headers, accept } };
}

/** What every resource shares: the typed client, the company, and how one call's options become its init. */
export class Core {
  readonly #transport: TransportSettings;

  constructor(
    readonly api: ApiClient,
    readonly companyId: string,
    transport: TransportSettings,
  ) {
    this.#transport = transport;
  }

  /** openapi-fetch's per-call init for these options (callInit with the client's transport settings). */
  init(options: RequestOptions | undefined): CallInit {
    return callInit(options, this.#transport);
  }
}

/** The data of a 2xx answer, or the BillingError of any other. */
export async function unwrap<D>(call: Promise<{ data?: D; error?: unknown; response: Response }>): Promise<D> {
  const { data, error, response } = await call;
  if (!response.ok) throw BillingError.fromResponse(response, error);
  return data as D;
}

/**
 * Throws a TypeError, naming the constructor (`where`), when `baseUrl` is not an absolute http(s) URL or
 * `maxRetries` or `timeoutMs` is not a number ≥ 0: a client misconfigured fails when built, not at its first call.
 */
export function checkClientOptions(
  where: string,
  options: { baseUrl: string; maxRetries?: number | undefined; timeoutMs?: number | undefined },
): void {
  let url: URL;
  try {
    url = new URL(options.baseUrl);
  } catch {
    throw new TypeError(`${where}: baseUrl ${JSON.stringify(options.baseUrl)} is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TypeError(`${where}: baseUrl must be http(s), not ${url.protocol}`);
  for (const k of ['maxRetries', 'timeoutMs'] as const) {
    const v = options[k];
    if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v >= 0))
      throw new TypeError(`${where}: ${k} must be a number ≥ 0`);
  }
}

export function required(name: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new TypeError(`${name} must be a non-empty string`);
  return value;
}

/** The path of one balance (balances and their grants). */
export function balancePath(accountId: string, denomination: string): { account_id: string; denomination: string } {
  return { account_id: required('accountId', accountId), denomination: required('denomination', denomination) };
}

/** Drops `undefined` fields, so that a query says only what the caller gave. */
function defined<T extends object>(params: T): T {
  return Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined)) as T;
}

/** A list's query for the page after `cursor` (the caller's own `starting_after` for the first page). */
export function page<Q extends { starting_after?: string }>(params: Q, cursor: string | undefined): Q {
  return defined(cursor === undefined ? params : { ...params, starting_after: cursor });
}
