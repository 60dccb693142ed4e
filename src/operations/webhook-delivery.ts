/**
 * Sending one leased delivery and deciding what follows: delivered, retried later with
 * backoff, given up after the retry window, or (410 Gone) the subscription disabled. Used by
 * the delivery worker and by the manual retry endpoint. Runs outside any transaction; the
 * caller writes the returned update (in a batch, for the worker).
 */
import type { Clock } from '../lib/clock.js';
import type { SecretBox } from '../lib/secret-box.js';
import { webhookSecretContext } from './secrets.js';
import type { ClaimedWebhookDelivery, WebhookAttemptRow, WebhookDeliveryUpdate } from '../store/types.js';
import { deliverOnce, type DeliveryResult } from '../webhooks/deliver.js';
import { DELIVERY_TIMEOUT_MS, nextAttemptAt } from '../webhooks/notifications.js';
import { webhookHeaders } from '../webhooks/signing.js';

/**
 * How long a claim keeps every other sender off a delivery (wall clock). Far longer than one
 * attempt (≤ 10 s) plus writing its outcome, so attempts of one notification never overlap.
 */
export const DELIVERY_LEASE_MS = 60_000;

export interface WebhookSettings {
  /** BILLING_WEBHOOK_ALLOW_PRIVATE: loopback/private receivers allowed (development, tests). */
  allowPrivate: boolean;
  /** Per-attempt limit; the contract's 10 s unless a test needs less. */
  timeoutMs?: number;
}

export interface SendOptions {
  /** The manual retry endpoint: sends even to a disabled subscription and never downgrades a delivered notification. */
  manual: boolean;
  /** Jitter source (tests pass a fixed one). */
  random?: () => number;
}

/** PostgreSQL text cannot hold U+0000; a receiver's reply may contain anything. */
const clean = (s: string): string => s.replaceAll('\u0000', '\uFFFD');

export async function sendClaimedDelivery(
  d: ClaimedWebhookDelivery,
  deps: { clock: Clock; webhooks: WebhookSettings; secrets: SecretBox },
  opts: SendOptions,
): Promise<WebhookDeliveryUpdate> {
  const { clock, webhooks: settings } = deps;
  const base = { callbackId: d.callbackId, claimToken: d.claimToken, deliveredAtMs: d.deliveredAtMs, disable: null };
  if (d.subscriptionState === 'deleted' || (d.subscriptionState === 'disabled' && !opts.manual)) {
    // Nothing is sent; the notification is closed with the reason.
    return {
      ...base,
      attempt: null,
      status: d.status === 'pending' ? 'failed' : d.status,
      nextAttemptAtMs: null,
      lastError: `subscription_${d.subscriptionState}`,
    };
  }
  let result: DeliveryResult;
  try {
    // Unix seconds of the attempt from the WALL clock, even under the test clock (receivers check it).
    const headers = webhookHeaders({
      secret: deps.secrets.open(d.secret, webhookSecretContext(d.webhookId)),
      msgId: d.callbackId,
      timestampSeconds: Math.floor(Date.now() / 1000),
      body: d.payload,
    });
    result = await deliverOnce({
      url: d.url,
      headers: { ...headers },
      body: d.payload,
      allowPrivate: settings.allowPrivate,
      timeoutMs: settings.timeoutMs ?? DELIVERY_TIMEOUT_MS,
    });
  } catch (err) {
    result = {
      ok: false,
      statusCode: null,
      latencyMs: 0,
      responseSnippet: '',
      error: `internal: ${err instanceof Error ? err.message : String(err)}`,
      gone: false,
    };
  }
  const nowMs = clock.now();
  const attempt: WebhookAttemptRow = {
    callbackId: d.callbackId,
    attemptedAtMs: nowMs,
    statusCode: result.statusCode,
    latencyMs: result.latencyMs,
    responseSnippet: clean(result.responseSnippet),
    error: result.error === null ? null : clean(result.error),
    manual: opts.manual,
  };
  if (result.ok)
    return {
      ...base,
      attempt,
      status: 'delivered',
      nextAttemptAtMs: null,
      deliveredAtMs: d.deliveredAtMs ?? nowMs,
      lastError: null,
    };

  const error = attempt.error ?? `HTTP ${result.statusCode}`;
  if (result.gone) {
    return {
      ...base,
      attempt,
      status: d.status === 'delivered' ? 'delivered' : 'failed',
      nextAttemptAtMs: null,
      lastError: error,
      disable: { webhookId: d.webhookId, atMs: nowMs, reason: 'the receiver answered 410 Gone' },
    };
  }
  // A manual resend of a delivered or given-up notification does not reopen it.
  if (d.status !== 'pending') return { ...base, attempt, status: d.status, nextAttemptAtMs: null, lastError: error };
  const next = nextAttemptAt(d.createdAtMs, d.attempts + 1, nowMs, (opts.random ?? Math.random)());
  return next === null
    ? { ...base, attempt, status: 'failed', nextAttemptAtMs: null, lastError: `retry_window_exceeded: ${error}` }
    : { ...base, attempt, status: 'pending', nextAttemptAtMs: next, lastError: error };
}
