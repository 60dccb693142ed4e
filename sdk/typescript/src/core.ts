/**
 * What every resource of `Billing` (resources/*.ts) shares: the typed client with its company and transport
 * settings (`Core`), the per-call options, the types read off an operation of the generated schema, and the steps
 * every method repeats (check a path id, unwrap an answer or throw its BillingError, build a page's query). Apart
 * from billing.ts so that the resources never import the class that assembles them.
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

/** What every resource shares: the typed client, the company, and how one call's options become its init. */
export class Core {
  readonly #transport: { fetch: FetchLike | undefined; maxRetries: number; timeoutMs: number };

  constructor(
    readonly api: ApiClient,
    readonly companyId: string,
    transport: { fetch: FetchLike | undefined; maxRetries: number; timeoutMs: number },
  ) {
    this.#transport = transport;
  }

  /** openapi-fetch's per-call init for these options: the key as a header, the signal, a transport of its own. */
  init(options: RequestOptions | undefined): {
    headers?: Record<string, string>;
    signal?: AbortSignal;
    fetch?: (input: Request) => Promise<Response>;
  } {
    if (options === undefined) return {};
    const { idempotencyKey, signal, maxRetries, timeoutMs } = options;
    const own = maxRetries !== undefined || timeoutMs !== undefined;
    return {
      ...(idempotencyKey !== undefined ? { headers: { 'idempotency-key': idempotencyKey } } : {}),
      ...(signal !== undefined ? { signal } : {}),
      ...(own
        ? {
            fetch: resilientFetch({
              fetch: this.#transport.fetch,
              maxRetries: maxRetries ?? this.#transport.maxRetries,
              timeoutMs: timeoutMs ?? this.#transport.timeoutMs,
            }),
          }
        : {}),
    };
  }
}

/** The data of a 2xx answer, or the BillingError of any other. */
export async function unwrap<D>(call: Promise<{ data?: D; error?: unknown; response: Response }>): Promise<D> {
  const { data, error, response } = await call;
  if (!response.ok) throw BillingError.fromResponse(response, error);
  return data as D;
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
