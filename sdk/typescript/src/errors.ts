/**
 * One error class for everything the server (or the way to it) refuses, so that a caller handles failures with
 * one `catch` and one `instanceof`: an API refusal carries the server's envelope (`{error: {type, code, message,
 * param, details}}`, the contract's "Errors") and the `request-id` the server answered with; an answer that is
 * not that envelope (a proxy's HTML page) keeps its status and the first characters of its body; no answer at
 * all (network failure, timeout) is status 0. Never a bare `SyntaxError` from parsing somebody else's page.
 */

/** The `type` of a BillingError: the server's error types, and this client's own for answers it could not read. */
export type BillingErrorType =
  | 'invalid_request'
  | 'authentication_required'
  | 'forbidden'
  | 'insufficient_balance'
  /** 402: a spend limit's window would be passed; `details`: `{denomination, window, limit, spend, resets_at}`. */
  | 'spend_limit_reached'
  /** 403: an events request with `gate_on_balance` names a metered feature the account is not entitled to. */
  | 'not_entitled'
  | 'payment_failed'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal'
  | 'service_unavailable'
  /** No answer: the connection failed or the request timed out (status 0). */
  | 'connection_error'
  /** An answer that is not the server's JSON (a proxy's error page, a cut body). */
  | 'invalid_response'
  /** A type a newer server added. */
  | (string & Record<never, never>);

/** How much of an unreadable body a BillingError keeps (its message shows it too). */
export const BODY_EXCERPT_LENGTH = 500;

export interface BillingErrorInit {
  status: number;
  type: BillingErrorType;
  code: string;
  message: string;
  param?: string | undefined;
  details?: unknown;
  requestId?: string | undefined;
  body?: string | undefined;
  cause?: unknown;
}

/**
 * A request that did not succeed. `code` is the reason, a sentence in snake_case (`insufficient_balance`,
 * `no_price_for_event_type`, `idempotency_key_reused_with_different_request`, …): compare it, not the message.
 */
export class BillingError extends Error {
  override readonly name = 'BillingError';
  /** The HTTP status; 0 when no answer arrived (type `connection_error`). */
  readonly status: number;
  /** The kind of error; the HTTP status follows from it. */
  readonly type: BillingErrorType;
  /**
   * The reason code, e.g. `insufficient_balance`; this client's own: `connection_failed`, `timeout`,
   * `response_not_json`, `unexpected_error_body`.
   */
  readonly code: string;
  /** The field at fault, spelt as in the request body (`events[0].quantity`), where there is one. */
  readonly param: string | undefined;
  /** Structured facts about the error, where the code has any. */
  readonly details: unknown;
  /** The `request-id` header of the answer: quote it when asking about a request. */
  readonly requestId: string | undefined;
  /** For an answer that is not the server's JSON: its first characters. */
  readonly body: string | undefined;

  constructor(init: BillingErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.type = init.type;
    this.code = init.code;
    this.param = init.param;
    this.details = init.details;
    this.requestId = init.requestId;
    this.body = init.body;
  }

  /**
   * The error of a non-2xx answer, from its body: the server's envelope when it is one (already parsed, or the
   * raw text), else an `invalid_response` with the status and the first characters of the body.
   */
  static fromResponse(response: Response, body: unknown): BillingError {
    const requestId = response.headers.get('request-id') ?? undefined;
    const parsed = typeof body === 'string' ? parseJson(body) : body;
    const envelope = errorEnvelope(parsed);
    if (envelope) return new BillingError({ status: response.status, requestId, ...envelope });
    const text = typeof body === 'string' ? body : JSON.stringify(body ?? '');
    return BillingError.unreadable(
      response,
      text,
      parsed === undefined ? 'response_not_json' : 'unexpected_error_body',
    );
  }

  /**
   * An answer whose body is not the server's JSON (any status): `response_not_json`, or `unexpected_error_body`
   * for JSON that is not the API's error envelope (another server's).
   */
  static unreadable(
    response: Response,
    text: string,
    code: 'response_not_json' | 'unexpected_error_body' = 'response_not_json',
  ): BillingError {
    const excerpt = text.slice(0, BODY_EXCERPT_LENGTH);
    const what = response.headers.get('content-type') ?? 'no content type';
    return new BillingError({
      status: response.status,
      type: 'invalid_response',
      code,
      message: `HTTP ${response.status}: the answer is not the API's JSON (${what}): ${JSON.stringify(excerpt)}`,
      requestId: response.headers.get('request-id') ?? undefined,
      body: excerpt,
    });
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The fields of `{error: {type, code, message, param?, details?}}`, or null when the body is not that. */
function errorEnvelope(
  body: unknown,
): Pick<BillingErrorInit, 'type' | 'code' | 'message' | 'param' | 'details'> | null {
  if (typeof body !== 'object' || body === null) return null;
  const e = (body as { error?: unknown }).error;
  if (typeof e !== 'object' || e === null) return null;
  const { type, code, message, param, details } = e as Record<string, unknown>;
  if (typeof type !== 'string' || typeof message !== 'string') return null;
  return {
    type,
    code: typeof code === 'string' ? code : type,
    message,
    param: typeof param === 'string' ? param : undefined,
    details,
  };
}
