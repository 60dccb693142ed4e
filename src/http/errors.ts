/**
 * The one registry from reason codes to HTTP status and the contract's error `type`.
 * Operations and domain rules speak in reason codes (the closed vocabulary of
 * domain/reasons.ts); only this file knows statuses. The registry must name every code:
 * a code without a mapping, or a mapping for a code that does not exist, fails to compile.
 */
import type { Reason } from '../domain/reasons.js';

/** The error `type` of the contract, a closed list (an enum in the OpenAPI document). */
export const ERROR_TYPES = [
  'invalid_request',
  'authentication_required',
  'forbidden',
  'insufficient_balance',
  'spend_limit_reached',
  'not_entitled',
  'payment_failed',
  'not_found',
  'conflict',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'internal',
  'service_unavailable',
] as const;
export type ErrorType = (typeof ERROR_TYPES)[number];

/**
 * Codes only the error handler itself answers with: requests refused before any route code
 * runs (framing, routing, body size and type, schema validation, rate limits) and bugs.
 */
export type EdgeCode =
  | 'invalid_request'
  | 'malformed_request'
  | 'route_not_found'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'headers_too_large'
  | 'request_timeout'
  | 'not_ready'
  | 'internal';

/** Every code an error body can carry (its `code`). */
export type ErrorCode = Reason | EdgeCode;

type Mapping = { status: number; type: ErrorType };

/** A client mistake in the request: 400 `invalid_request`. */
const INVALID: Mapping = { status: 400, type: 'invalid_request' };
const FORBIDDEN: Mapping = { status: 403, type: 'forbidden' };
const CONFLICT: Mapping = { status: 409, type: 'conflict' };
const PAYMENT_FAILED: Mapping = { status: 402, type: 'payment_failed' };

const REGISTRY = {
  // --- the request as a whole
  invalid_request: INVALID,
  malformed_request: INVALID,
  nul_character_not_allowed: INVALID,
  json_key_appears_twice: INVALID,
  json_nested_too_deeply: INVALID,
  metadata_nested_too_deeply: INVALID,
  metadata_has_too_many_entries: INVALID,
  metadata_key_too_long: INVALID,
  metadata_string_too_long: INVALID,
  metadata_too_large: INVALID,
  invalid_idempotency_key: INVALID,
  unknown_cursor: INVALID,
  authentication_required: { status: 401, type: 'authentication_required' },
  csrf_token_invalid: FORBIDDEN,
  too_many_attempts: { status: 429, type: 'rate_limited' },
  not_found: { status: 404, type: 'not_found' },
  route_not_found: { status: 404, type: 'not_found' },
  idempotency_key_reused_with_different_request: CONFLICT,
  idempotency_key_in_use: CONFLICT,
  payload_too_large: { status: 413, type: 'payload_too_large' },
  headers_too_large: { status: 431, type: 'invalid_request' },
  request_timeout: { status: 408, type: 'invalid_request' },
  not_ready: { status: 503, type: 'service_unavailable' },
  unsupported_media_type: { status: 415, type: 'unsupported_media_type' },
  rate_limited: { status: 429, type: 'rate_limited' },
  internal: { status: 500, type: 'internal' },
  // --- users and companies
  signup_closed: FORBIDDEN,
  portal_scope_missing: FORBIDDEN,
  portal_url_not_allowed: INVALID,
  frame_ancestor_not_an_origin: INVALID,
  authorization_decision_unknown: INVALID,
  email_already_registered: CONFLICT,
  password_too_short: INVALID,
  token_invalid_or_expired: INVALID,
  processor_api_key_required: INVALID,
  processor_api_key_not_used: INVALID,
  // --- accounts, balances, prices
  unknown_plan: INVALID,
  balance_already_exists: CONFLICT,
  expires_at_must_be_after_effective_at: INVALID,
  expires_at_must_be_in_the_future: INVALID,
  effective_at_too_far_ahead: INVALID,
  cost_basis_must_be_a_non_negative_decimal: INVALID,
  cost_basis_only_on_paid_grants: INVALID,
  unknown_grant_status: INVALID,
  grant_expired: CONFLICT,
  grant_depleted: CONFLICT,
  grant_voided: CONFLICT,
  adjustment_amount_must_not_be_zero: INVALID,
  amount_out_of_range: INVALID,
  unit_amount_must_be_a_non_negative_decimal: INVALID,
  unit_amount_has_too_many_decimals: INVALID,
  amount_must_be_a_non_negative_decimal: INVALID,
  amount_has_too_many_decimals: INVALID,
  price_model_not_offered: INVALID,
  unknown_price_model: INVALID,
  price_field_not_of_model: INVALID,
  price_field_required: INVALID,
  tiers_invalid: INVALID,
  package_size_must_be_a_positive_integer: INVALID,
  // --- events and holds
  cost_override_given_twice: INVALID,
  cost_override_needs_amount_and_denomination: INVALID,
  cost_override_denomination_mismatch: INVALID,
  quantity_must_be_a_non_negative_number: INVALID,
  no_price_for_event_type: INVALID,
  no_balance_for_denomination: INVALID,
  event_id_reused_with_different_content: CONFLICT,
  event_completed_at_another_cost: CONFLICT,
  timestamp_out_of_range: INVALID,
  from_must_be_before_to: INVALID,
  time_not_on_the_hour: INVALID,
  unknown_window: INVALID,
  unknown_group_by: INVALID,
  too_many_windows: INVALID,
  usage_retention_exceeded: INVALID,
  usage_sum_out_of_range: INVALID,
  usage_query_too_large: INVALID,
  event_not_pending: CONFLICT,
  lease_not_for_pending_events: INVALID,
  unknown_lease: INVALID,
  lease_expired: CONFLICT,
  lease_id_reused_with_different_content: CONFLICT,
  insufficient_balance: { status: 402, type: 'insufficient_balance' },
  spend_limit_reached: { status: 402, type: 'spend_limit_reached' },
  unknown_alert_metric: INVALID,
  unknown_alert_window: INVALID,
  window_only_for_spend_alerts: INVALID,
  event_type_only_for_spend_alerts: INVALID,
  spend_alert_needs_window: INVALID,
  spend_alert_threshold_below_1: INVALID,
  too_many_alerts: INVALID,
  too_many_topup_offers: INVALID,
  unknown_feature_kind: INVALID,
  metered_feature_needs_event_type: INVALID,
  event_type_only_for_metered_features: INVALID,
  feature_kind_cannot_change: CONFLICT,
  feature_in_use: CONFLICT,
  unknown_feature: INVALID,
  feature_listed_twice: INVALID,
  too_many_features: INVALID,
  config_value_must_be_json: INVALID,
  config_value_too_large: INVALID,
  value_only_for_config_features: INVALID,
  override_expires_in_the_past: INVALID,
  not_entitled: { status: 403, type: 'not_entitled' },
  // --- cards, charges and the payment processor
  invalid_card_token: INVALID,
  card_declined: PAYMENT_FAILED,
  card_authentication_required: PAYMENT_FAILED,
  charge_declined: PAYMENT_FAILED,
  no_card_on_file: PAYMENT_FAILED,
  processor_rejected_request: INVALID,
  processor_customer_changed: CONFLICT,
  processor_unavailable: { status: 503, type: 'service_unavailable' },
  // --- auto-refill and the mid-month increase
  denomination_does_not_match_path: INVALID,
  account_id_does_not_match_path: INVALID,
  refill_period_contradicts_refill_monthly: INVALID,
  auto_refill_needs_amount_and_usd_charge: INVALID,
  amount_is_required: INVALID,
  amount_must_be_a_non_negative_integer: INVALID,
  amount_exceeds_maximum: INVALID,
  usd_charge_is_required: INVALID,
  usd_charge_must_be_a_non_negative_integer: INVALID,
  usd_charge_exceeds_maximum: INVALID,
  amount_must_exceed_current_refill_amount: INVALID,
  monthly_refill_not_enabled: INVALID,
  resulting_balance_exceeds_maximum: INVALID,
  // --- plans
  name_is_required: INVALID,
  name_must_be_a_non_empty_string: INVALID,
  name_is_too_long: INVALID,
  charge_amount_is_required: INVALID,
  charge_amount_must_be_a_non_negative_integer: INVALID,
  charge_amount_exceeds_maximum: INVALID,
  charge_denomination_must_be_usd: INVALID,
  unknown_billing_period: INVALID,
  unknown_overage_charge_mode: INVALID,
  threshold_alert_percentage_must_be_a_number_from_0_to_100: INVALID,
  plan_needs_at_least_one_balance: INVALID,
  plan_has_too_many_balances: INVALID,
  plan_balance_amount_is_required: INVALID,
  plan_balance_amount_must_be_a_non_negative_integer: INVALID,
  plan_balance_amount_exceeds_maximum: INVALID,
  denomination_is_required: INVALID,
  denomination_is_invalid: INVALID,
  denomination_appears_twice_in_plan: INVALID,
  overage_charge_amount_is_required: INVALID,
  overage_charge_amount_must_be_a_non_negative_integer: INVALID,
  overage_charge_amount_exceeds_maximum: INVALID,
  overage_charge_denomination_must_be_usd: INVALID,
  // --- webhooks
  unknown_webhook_type: INVALID,
  webhook_url_not_allowed: INVALID,
  threshold_needs_threshold_type: INVALID,
  threshold_must_not_be_negative: INVALID,
  too_many_webhooks: INVALID,
  webhook_already_exists: CONFLICT,
  delivery_in_progress: CONFLICT,
  // --- the test clock
  invalid_timestamp: INVALID,
  clock_cannot_go_backwards: INVALID,
} satisfies Record<ErrorCode, Mapping>;

export function statusOf(code: ErrorCode): Mapping {
  // Only a cast can bring a code the compiler does not know; that is a bug, so it is answered as one.
  return REGISTRY[code] ?? REGISTRY.internal;
}

export interface ErrorBody {
  error: { type: ErrorType; code: ErrorCode; message: string; param?: string; details?: unknown };
}

export function errorBody(
  code: ErrorCode,
  message: string,
  param?: string,
  details?: unknown,
): { status: number; body: ErrorBody } {
  const { status, type } = statusOf(code);
  const error: ErrorBody['error'] = { type, code, message };
  if (param !== undefined) error.param = param;
  if (details !== undefined) error.details = details;
  return { status, body: { error } };
}
