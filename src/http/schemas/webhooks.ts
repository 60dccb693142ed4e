/**
 * Webhooks: subscriptions, the delivery log with its attempts, and the OpenAPI prose on how
 * deliveries are signed, retried, coalesced and kept.
 */
import { Type } from '@sinclair/typebox';
import { RETRY_WINDOW_MS, WEBHOOKS_PER_COMPANY_MAX } from '../../webhooks/notifications.js';
import { companyAuth, errorResponses, PageOf, PageQuery, SafeInteger } from './common.js';
import { toIso } from '../../lib/clock.js';
import type { WebhookSubscriptionRow } from '../../store/types.js';
import type { DeliveryView } from '../../operations/webhooks.js';

const WebhookTypeSchema = Type.Union(
  [
    Type.Literal('balance_change'),
    Type.Literal('negative_balance'),
    Type.Literal('auto_refill'),
    Type.Literal('threshold'),
    Type.Literal('refill_capped'),
    Type.Literal('alert_triggered'),
    Type.Literal('alert_resolved'),
    Type.Literal('entitlements_change'),
  ],
  {
    description:
      'balance_change: every change of a balance (amount or pending; holds, refills, adjustments, renewals and ' +
      'automatically cancelled holds included). negative_balance: a change that lowers `available` and leaves it ' +
      'below 0. auto_refill: a refill or plan renewal. threshold: `available` of any balance of the company drops ' +
      'from ≥ `threshold` to < `threshold`; a threshold subscription without `threshold` receives the ' +
      "plan's threshold_alert_percentage alerts instead (payload: available, pending, threshold_alert_percentage). " +
      'refill_capped: a threshold refill was not attempted because the balance reached its max_refills_per_month; ' +
      'once per balance per UTC month (payload: available, pending, max_refills_per_month, refills_this_month). ' +
      "alert_triggered / alert_resolved: an alert's status changed, written in the transaction of the change; one " +
      'per alert per crossing (payload: alert_id, name, denomination, metric, threshold, window, event_type, value ' +
      "— the metric after the change —, window_start: the spend window's start, null for `available`). " +
      "entitlements_change: an account's override set, removed or ended (payload: account_id, feature), or a plan's " +
      'features changed, once per feature whose presence or value changed (payload: plan_id, feature).',
  },
);

const Webhook = Type.Object({
  webhook_id: Type.String({ description: 'wh_…' }),
  type: WebhookTypeSchema,
  url: Type.String(),
  threshold: Type.Union([Type.Integer(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  disabled_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'Set when the receiver answered 410 Gone: nothing more is sent to it',
  }),
  disabled_reason: Type.Union([Type.String(), Type.Null()]),
});

const CreatedWebhook = Type.Object({
  webhook_id: Type.String(),
  type: WebhookTypeSchema,
  url: Type.String(),
  threshold: Type.Union([Type.Integer(), Type.Null()]),
  secret: Type.String({ description: 'whsec_…: the Standard Webhooks signing secret, shown only here' }),
  created_at: Type.String({ format: 'date-time' }),
});

const Attempt = Type.Object({
  attempted_at: Type.String({ format: 'date-time' }),
  status_code: Type.Union([Type.Integer(), Type.Null()], { description: 'null when no HTTP response arrived' }),
  latency_ms: Type.Integer(),
  response_snippet: Type.String({ description: 'The first 1 KiB of the response body' }),
  error: Type.Union([Type.String(), Type.Null()], {
    description: 'timeout, connection_refused, address_refused, … (null when a response arrived)',
  }),
  success: Type.Boolean(),
  manual: Type.Boolean({ description: 'Sent by the retry endpoint' }),
});

const Delivery = Type.Object({
  callback_id: Type.String({ description: 'cl_…: the webhook-id header of every attempt' }),
  webhook_id: Type.String(),
  type: WebhookTypeSchema,
  status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  payload: Type.Any({ description: 'The JSON body sent' }),
  created_at: Type.String({ format: 'date-time' }),
  next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  delivered_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()]),
  attempts: Type.Array(Attempt),
});

const IdParams = Type.Object({ webhook_id: Type.String({ maxLength: 64 }) });

export const createWebhookSchema = {
  operationId: 'createWebhook',
  tags: ['webhooks'],
  summary: 'Subscribe a URL to one type of notification',
  description:
    'Deliveries are POSTs signed as in Standard Webhooks (webhook-id = callback_id, the same on every retry; ' +
    'webhook-timestamp from the wall clock; webhook-signature v1 HMAC-SHA256 keyed with the secret). Success is ' +
    'a 2xx within 10 s; otherwise retried with exponential backoff and jitter ' +
    `for at least ${RETRY_WINDOW_MS / 3_600_000} hours. 410 Gone disables the subscription. Redirects are not ` +
    'followed. balance_change and negative_balance are coalesced: at most one of each per balance per request, ' +
    'carrying the balance after it. Payload: company_id, callback_id, account_id, type, account_balance (the ' +
    'balance amount), account_denomination, created_at, and for balance changes available and pending. URLs ' +
    'must be http(s) and, unless BILLING_WEBHOOK_ALLOW_PRIVATE=1, point at a public address (checked again at ' +
    `connect time). At most ${WEBHOOKS_PER_COMPANY_MAX} webhooks per company. The same type, url and threshold ` +
    'as a live (not deleted, not disabled) subscription is 409 webhook_already_exists, naming it in ' +
    'details.webhook_id: a second one would deliver every notification twice.',
  security: companyAuth,
  body: Type.Object(
    {
      type: WebhookTypeSchema,
      url: Type.String({ minLength: 1, maxLength: 2048 }),
      threshold: Type.Optional(
        SafeInteger({ minimum: 0, description: 'Only for type threshold: absolute units of available balance' }),
      ),
    },
    { additionalProperties: false, examples: [{ type: 'balance_change', url: 'https://example.com/hooks/billing' }] },
  ),
  response: {
    200: Type.Object(
      { data: CreatedWebhook },
      { description: 'The subscription, with its signing secret (shown this once)' },
    ),
    ...errorResponses(409),
  },
};

export const listWebhooksSchema = {
  operationId: 'listWebhooks',
  tags: ['webhooks'],
  summary: 'List webhooks (without secrets), newest first',
  description:
    'The subscriptions of the company, disabled ones too (disabled_at, disabled_reason); deleted ones are not ' +
    'listed. The signing secret is not shown: it was shown once, when the subscription was created. The cursor ' +
    'is a webhook_id of this list (a deleted or unknown one is 400 unknown_cursor).',
  security: companyAuth,
  querystring: PageQuery,
  response: { 200: PageOf(Webhook), ...errorResponses() },
};

export const deleteWebhookSchema = {
  operationId: 'deleteWebhook',
  tags: ['webhooks'],
  summary: 'Delete a webhook',
  description: 'Nothing more is sent to it, pending retries included.',
  security: companyAuth,
  params: IdParams,
  response: {
    200: Type.Object({ webhooks_deleted: Type.String() }, { description: 'The id of the deleted subscription' }),
    ...errorResponses(404),
  },
};

export const listDeliveriesSchema = {
  operationId: 'listWebhookDeliveries',
  tags: ['webhooks'],
  summary: 'Notifications of a webhook with every attempt, newest first',
  description:
    'status: pending (being retried), delivered, or failed (given up after the retry window, 410 Gone, or the ' +
    'webhook was disabled). A delivered or failed notification stays in this log, with its attempts, for ' +
    'BILLING_WEBHOOK_LOG_RETENTION_DAYS days after it was created (30 unless the server sets it); then it is ' +
    'deleted and can no longer be retried. A pending one stays until it is finished.',
  security: companyAuth,
  params: IdParams,
  querystring: PageQuery,
  response: { 200: PageOf(Delivery), ...errorResponses(404) },
};

export const retryDeliverySchema = {
  operationId: 'retryWebhookDelivery',
  tags: ['webhooks'],
  summary: 'Send a notification again now',
  description:
    'One attempt, now, with the same webhook-id and body; answers with the notification after it. A pending ' +
    'notification that fails keeps its retry schedule; a delivered or failed one keeps its status. 409 while a ' +
    'worker is sending it.',
  security: companyAuth,
  params: Type.Object({ callback_id: Type.String({ maxLength: 64 }) }),
  body: Type.Object({}, { additionalProperties: false }),
  response: {
    200: Type.Object({ data: Delivery }, { description: 'The delivery, due again now' }),
    ...errorResponses(404, 409),
  },
};

const isoOrNull = (ms: number | null): string | null => (ms === null ? null : toIso(ms));

export function presentWebhook(w: WebhookSubscriptionRow) {
  return {
    webhook_id: w.webhookId,
    type: w.type,
    url: w.url,
    threshold: w.threshold,
    created_at: toIso(w.createdAtMs),
    disabled_at: isoOrNull(w.disabledAtMs),
    disabled_reason: w.disabledReason,
  };
}

/** A new subscription: the only time its signing secret is shown. */
export function presentCreatedWebhook(w: WebhookSubscriptionRow) {
  return {
    webhook_id: w.webhookId,
    type: w.type,
    url: w.url,
    threshold: w.threshold,
    secret: w.secret,
    created_at: toIso(w.createdAtMs),
  };
}

export function presentDelivery({ delivery: d, attempts }: DeliveryView) {
  return {
    callback_id: d.callbackId,
    webhook_id: d.webhookId,
    type: d.type,
    status: d.status,
    payload: JSON.parse(d.payload) as unknown,
    created_at: toIso(d.createdAtMs),
    next_attempt_at: d.status === 'pending' ? isoOrNull(d.nextAttemptAtMs) : null,
    delivered_at: isoOrNull(d.deliveredAtMs),
    last_error: d.lastError,
    attempts: attempts.map((a) => ({
      attempted_at: toIso(a.attemptedAtMs),
      status_code: a.statusCode,
      latency_ms: a.latencyMs,
      response_snippet: a.responseSnippet,
      error: a.error,
      success: a.statusCode !== null && a.statusCode >= 200 && a.statusCode < 300,
      manual: a.manual,
    })),
  };
}
