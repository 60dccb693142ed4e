/**
 * The one registry from reason codes to HTTP status and the contract's error `type`.
 * Operations and domain rules speak in reason codes; only this file knows statuses.
 * Reasons not listed are client mistakes: 400 `invalid_request`.
 */
export type ErrorType =
  | 'invalid_request'
  | 'authentication_required'
  | 'insufficient_balance'
  | 'payment_failed'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal'
  | 'service_unavailable';

const REGISTRY: Record<string, { status: number; type: ErrorType }> = {
  authentication_required: { status: 401, type: 'authentication_required' },
  insufficient_balance: { status: 402, type: 'insufficient_balance' },
  payment_failed: { status: 402, type: 'payment_failed' },
  not_found: { status: 404, type: 'not_found' },
  route_not_found: { status: 404, type: 'not_found' },
  email_already_registered: { status: 409, type: 'conflict' },
  balance_already_exists: { status: 409, type: 'conflict' },
  event_not_pending: { status: 409, type: 'conflict' },
  event_id_reused_with_different_content: { status: 409, type: 'conflict' },
  idempotency_key_reused_with_different_request: { status: 409, type: 'conflict' },
  idempotency_key_in_use: { status: 409, type: 'conflict' },
  delivery_in_progress: { status: 409, type: 'conflict' },
  processor_customer_changed: { status: 409, type: 'conflict' },
  payload_too_large: { status: 413, type: 'payload_too_large' },
  unsupported_media_type: { status: 415, type: 'unsupported_media_type' },
  rate_limited: { status: 429, type: 'rate_limited' },
  internal: { status: 500, type: 'internal' },
  // --- money movement
  card_declined: { status: 402, type: 'payment_failed' },
  card_authentication_required: { status: 402, type: 'payment_failed' },
  charge_declined: { status: 402, type: 'payment_failed' },
  no_card_on_file: { status: 402, type: 'payment_failed' },
  processor_unavailable: { status: 503, type: 'service_unavailable' },
};

export function statusOf(reason: string): { status: number; type: ErrorType } {
  return REGISTRY[reason] ?? { status: 400, type: 'invalid_request' };
}

export interface ErrorBody {
  error: { type: ErrorType; code: string; message: string; param?: string; details?: unknown };
}

export function errorBody(
  reason: string,
  message: string,
  param?: string,
  details?: unknown,
): { status: number; body: ErrorBody } {
  const { status, type } = statusOf(reason);
  const error: ErrorBody['error'] = { type, code: reason, message };
  if (param !== undefined) error.param = param;
  if (details !== undefined) error.details = details;
  return { status, body: { error } };
}
