/**
 * The one place a request meets the network, so that every call of the client (and of the console, which uses
 * the same client) is safe to retry: each POST, PUT, PATCH and DELETE carries an `Idempotency-Key` (a random one
 * unless the caller gave one), the same key on every attempt, and the server replays the first answer instead of
 * applying the change twice. Attempts that failed for a reason a later attempt can outlive are retried with
 * exponential backoff and jitter: no answer (network failure, cut connection, timeout), 409
 * `idempotency_key_in_use` (the first attempt is still running), 429 and 503 (after `Retry-After`), 500, 502 and
 * 504; never another 4xx, which would only be refused again. The whole answer is read within the attempt's
 * timeout, so a connection cut in the middle of a body is retried like one cut before it. A 2xx must be JSON,
 * unless the request's `Accept` asked for another type only (a receipt as `text/html`).
 */
import { BillingError } from './errors.js';

/** The `fetch` this client calls: the platform's, or any function of the same shape (a test's, a proxy's). */
export type FetchLike = (input: Request, init?: RequestInit) => Promise<Response>;

export interface TransportOptions {
  /** Defaults to the global `fetch`. */
  fetch?: FetchLike | undefined;
  /** Retries after the first attempt (default 2: three attempts at most). 0: never retry. */
  maxRetries?: number | undefined;
  /** How long one attempt may take, answer read whole (default 30,000 ms). */
  timeoutMs?: number | undefined;
}

export const DEFAULT_MAX_RETRIES = 2;
export const DEFAULT_TIMEOUT_MS = 30_000;
/** The first retry waits 250–500 ms, each further one twice as long, up to 4–8 s. */
export const RETRY_BASE_DELAY_MS = 500;
export const RETRY_MAX_DELAY_MS = 8_000;
/** A `Retry-After` longer than this is not waited for: the answer is returned (thrown) instead. */
export const RETRY_AFTER_MAX_MS = 60_000;

const UNSAFE_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Statuses a later attempt may outlive (409 only with the code `idempotency_key_in_use`). */
const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/** A random Idempotency-Key: 128 random bits (getRandomValues works in every runtime, secure context or not). */
export function newIdempotencyKey(): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return `ik_${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** The delay before retry number `retry` (0-based): exponential, half of it fixed and half random. */
export function backoffDelayMs(retry: number, random01: number = Math.random()): number {
  const full = Math.min(RETRY_MAX_DELAY_MS, RETRY_BASE_DELAY_MS * 2 ** retry);
  return full / 2 + (full / 2) * random01;
}

/** `Retry-After` in ms (delta-seconds or an HTTP date), or null when absent or unreadable. */
export function retryAfterMs(header: string | null, nowMs: number = Date.now()): number | null {
  if (header === null || header.trim() === '') return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/** The outcome of one attempt: an answer read whole, or the reason there was none. */
type Attempt = { response: Response; text: string } | { failure: BillingError };

/** Whether a request takes JSON: no `Accept`, or one naming JSON or any type (`text/html` alone asks for a page). */
function takesJson(request: Request): boolean {
  const accept = request.headers.get('accept');
  return accept === null || accept.trim() === '' || /json|\*\/\*|application\/\*/i.test(accept);
}

/**
 * A `fetch` with this client's safety: Idempotency-Key on unsafe methods, a timeout per attempt, retries, and
 * answers read whole (a 2xx whose body is not JSON is thrown as a BillingError, never handed on to be parsed,
 * unless the request's `Accept` asked for another type).
 * Returns the last answer; throws a BillingError of type `connection_error` when the last attempt had none, and
 * the caller's own abort reason when the caller's signal aborted.
 */
export function resilientFetch(options: TransportOptions = {}): FetchLike {
  const maxRetries = Math.max(0, Math.floor(options.maxRetries ?? DEFAULT_MAX_RETRIES));
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return async (input, init) => {
    const send = options.fetch ?? globalThis.fetch;
    const request = input;
    if (UNSAFE_METHODS.has(request.method) && !request.headers.has('idempotency-key'))
      request.headers.set('idempotency-key', newIdempotencyKey());
    const callerSignal = init?.signal ?? request.signal;
    for (let retry = 0; ; retry++) {
      const attempt = await attemptOnce(send, request.clone(), init, callerSignal, timeoutMs);
      const waitMs = retry < maxRetries ? retryDelay(attempt, retry) : null;
      if (waitMs === null) {
        if ('failure' in attempt) throw attempt.failure;
        return settled(attempt, takesJson(request));
      }
      await sleep(waitMs, callerSignal);
    }
  };
}

/** One attempt, its answer read whole within `timeoutMs`; the caller's abort is rethrown as it is. */
async function attemptOnce(
  send: FetchLike,
  request: Request,
  init: RequestInit | undefined,
  callerSignal: AbortSignal | null | undefined,
  timeoutMs: number,
): Promise<Attempt> {
  callerSignal?.throwIfAborted();
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const onCallerAbort = () => controller.abort(callerSignal?.reason);
  callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
  try {
    // The signal goes on the Request itself too: a custom fetch that reads only its first argument still stops.
    const signal = controller.signal;
    const response = await send(new Request(request, { signal }), init === undefined ? undefined : { ...init, signal });
    const text = await response.text();
    return { response, text };
  } catch (err) {
    if (callerSignal?.aborted) throw callerSignal.reason;
    const what = timedOut ? `no answer within ${timeoutMs} ms` : `the connection failed (${describe(err)})`;
    const failure = new BillingError({
      status: 0,
      type: 'connection_error',
      code: timedOut ? 'timeout' : 'connection_failed',
      message: `${request.method} ${request.url}: ${what}`,
      cause: err,
    });
    return { failure };
  } finally {
    clearTimeout(timer);
    callerSignal?.removeEventListener('abort', onCallerAbort);
  }
}

/** An error with its cause (Node's fetch says `fetch failed`; the cause says `ECONNREFUSED`, `other side closed`). */
function describe(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const cause = err instanceof Error ? err.cause : undefined;
  return cause instanceof Error && cause.message !== '' ? `${text}: ${cause.message}` : text;
}

/** How long to wait before the next attempt, or null when this outcome is final. */
function retryDelay(attempt: Attempt, retry: number): number | null {
  const backoff = backoffDelayMs(retry);
  if ('failure' in attempt) return backoff;
  const { response, text } = attempt;
  const status = response.status;
  const retryable = RETRYABLE_STATUSES.has(status) || (status === 409 && codeOf(text) === 'idempotency_key_in_use');
  if (!retryable) return null;
  const after = retryAfterMs(response.headers.get('retry-after'));
  if (after === null) return backoff;
  return after > RETRY_AFTER_MAX_MS ? null : Math.max(after, backoff);
}

function codeOf(text: string): unknown {
  try {
    return (JSON.parse(text) as { error?: { code?: unknown } } | null)?.error?.code;
  } catch {
    return undefined;
  }
}

/** The final answer, as a fresh Response over the text already read; a 2xx that is not JSON is thrown (`json`). */
function settled({ response, text }: { response: Response; text: string }, json: boolean): Response {
  if (json && response.ok && text !== '') {
    try {
      JSON.parse(text);
    } catch {
      throw BillingError.unreadable(response, text);
    }
  }
  const body = text === '' || response.status === 204 || response.status === 304 ? null : text;
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

function sleep(ms: number, signal: AbortSignal | null | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
