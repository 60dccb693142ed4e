/**
 * Checking that a webhook came from the server, unchanged and recently, before acting on it. Deliveries are signed
 * as in Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`: HMAC-SHA256 over
 * `{id}.{timestamp}.{body}` keyed with the subscription's `whsec_…` secret), so the check is the reference
 * `standardwebhooks` package's, which also refuses a timestamp more than five minutes from now (a replay).
 */
import { Webhook } from 'standardwebhooks';

/** The notification types a subscription can have. */
export type WebhookType =
  | 'balance_change'
  | 'negative_balance'
  | 'auto_refill'
  | 'threshold'
  | 'refill_capped'
  | 'alert_triggered'
  | 'alert_resolved'
  | 'entitlements_change';

/** The fields every delivery carries. */
interface WebhookPayloadBase {
  company_id: string;
  /** The notification's id: the same on every retry of it, and the `webhook-id` header. */
  callback_id: string;
  type: WebhookType;
  created_at: string;
  [field: string]: unknown;
}

/**
 * The JSON body of a delivery (more fields may be added; unknown ones are kept): a balance's notification, or an
 * `entitlements_change` (about a feature, no balance). Its `type` tells them apart, as do `isAlertWebhook` and
 * `isEntitlementsWebhook`.
 */
export type WebhookPayload = BalanceWebhookPayload | EntitlementsWebhookPayload;

/** The body of a delivery about one balance: every type but `entitlements_change`. */
export interface BalanceWebhookPayload extends WebhookPayloadBase {
  type: Exclude<WebhookType, 'entitlements_change'>;
  account_id: string;
  /** The balance's `amount` after the change. */
  account_balance: number;
  account_denomination: string;
  /** Balance changes: `amount − pending` after the change. */
  available?: number;
  /** Balance changes: what pending events hold. */
  pending?: number;
}

/**
 * The body of an `alert_triggered` or `alert_resolved` delivery (`isAlertWebhook` tells one): an alert's status
 * changed, written in the transaction of the change, one per alert per crossing. The balance's fields
 * (`account_balance`, `available`, `pending`) are those after the change.
 */
export interface AlertWebhookPayload extends BalanceWebhookPayload {
  type: 'alert_triggered' | 'alert_resolved';
  /** The alert's id, `al_…`. */
  alert_id: string;
  name: string | null;
  denomination: string;
  metric: 'available' | 'spend';
  threshold: number;
  /** Spend alerts: `day` or `month`; null for `available`. */
  window: 'day' | 'month' | null;
  /** Spend alerts of one event type; null otherwise. */
  event_type: string | null;
  /** The metric after the change: a spend alert resolved by a new window has 0. */
  value: number;
  /** The start of the spend window the change is about (ISO-8601); null for `available`. */
  window_start: string | null;
}

/** Whether a verified payload is an alert's (`alert_triggered` or `alert_resolved`), with its alert fields. */
export function isAlertWebhook(payload: WebhookPayload): payload is AlertWebhookPayload {
  return payload.type === 'alert_triggered' || payload.type === 'alert_resolved';
}

/**
 * The body of an `entitlements_change` delivery (`isEntitlementsWebhook` tells one), written in the transaction of
 * the change: with `account_id` when an account's override was set, removed or ended; with `plan_id` once per
 * feature whose presence or value a plan's new list of features changed. It carries no balance and no answer:
 * `billing.entitlements.check` (or `list`) tells the entitlement now.
 */
export interface EntitlementsWebhookPayload extends WebhookPayloadBase {
  type: 'entitlements_change';
  /** The feature's key. */
  feature: string;
  /** The account whose override changed; absent when a plan's features changed. */
  account_id?: string;
  /** The plan whose features changed (`p_…`); absent when an account's override changed. */
  plan_id?: string;
}

/** Whether a verified payload is an `entitlements_change`, with its feature and its account or plan. */
export function isEntitlementsWebhook(payload: WebhookPayload): payload is EntitlementsWebhookPayload {
  return payload.type === 'entitlements_change';
}

/** The headers of a delivery, in any usual shape: fetch's Headers, Node's IncomingHttpHeaders, a plain object. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

/** A delivery that is not to be trusted: a changed body, another secret, a stale timestamp, missing headers. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

/**
 * The parsed payload of a delivery whose signature is valid for `secret` and whose timestamp is within five
 * minutes; throws WebhookVerificationError otherwise. `rawBody` must be the body exactly as received (the bytes or
 * their UTF-8 text), not JSON parsed and serialized again.
 */
export function verifyWebhook(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string): WebhookPayload {
  const body = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
  let payload: unknown;
  try {
    payload = new Webhook(secret).verify(body, plainHeaders(headers));
  } catch (err) {
    throw new WebhookVerificationError(`webhook refused: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
    throw new WebhookVerificationError('webhook refused: the signed body is not a JSON object');
  return payload as WebhookPayload;
}

function plainHeaders(headers: WebhookHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof Headers !== 'undefined' && headers instanceof Headers) {
    headers.forEach((value, name) => {
      out[name.toLowerCase()] = value;
    });
    return out;
  }
  for (const [name, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(' ') : value;
  }
  return out;
}
