/**
 * Webhooks: subscriptions, the delivery log and the manual resend, and sending one leased delivery
 * (for the delivery worker and the resend). Notifications themselves are written by
 * operations/notifications.ts, in the transaction of the change that causes them.
 */
import { fail } from '../domain/outcome.js';
import { newId } from '../lib/ids.js';
import type {
  ClaimedWebhookDelivery,
  Page,
  PageResult,
  WebhookAttemptRow,
  WebhookDeliveryRow,
  WebhookDeliveryUpdate,
  WebhookSubscriptionRow,
  WebhookType,
} from '../store/types.js';
import { checkWebhookUrl } from '../webhooks/url-policy.js';
import {
  DELIVERY_TIMEOUT_MS,
  isWebhookType,
  nextAttemptAt,
  WEBHOOKS_PER_COMPANY_MAX,
} from '../webhooks/notifications.js';
import { generateWebhookSecret, webhookHeaders } from '../webhooks/signing.js';
import { webhookSecretContext } from './secrets.js';
import type { Command, Deps } from './deps.js';
import { unknownCursor } from './lookups.js';
import type { Clock } from '../lib/clock.js';
import type { SecretBox } from '../lib/secret-box.js';
import { deliverOnce, type DeliveryResult } from '../webhooks/deliver.js';

// ---------------------------------------------------------------------------------------
// Subscriptions

export interface WebhookInput {
  type: WebhookType;
  url: string;
  threshold?: number;
}

export async function createWebhook(
  deps: Deps,
  companyId: string,
  input: WebhookInput,
): Promise<Command<WebhookSubscriptionRow>> {
  if (!isWebhookType(input.type))
    fail(
      'unknown_webhook_type',
      `type must be one of balance_change, negative_balance, auto_refill, threshold`,
      'type',
    );
  const checked = checkWebhookUrl(input.url, { allowPrivate: deps.webhooks.allowPrivate });
  if (!checked.ok) fail('webhook_url_not_allowed', checked.reason, 'url');
  if (input.threshold !== undefined && input.type !== 'threshold') {
    fail('threshold_needs_threshold_type', 'threshold is only for subscriptions of type threshold', 'threshold');
  }
  if (input.threshold !== undefined && input.threshold < 0)
    fail('threshold_must_not_be_negative', 'threshold must be ≥ 0', 'threshold');
  return async (tx) => {
    if ((await tx.webhooks.countWebhookSubscriptions(companyId)) >= WEBHOOKS_PER_COMPANY_MAX) {
      fail('too_many_webhooks', `a company may have at most ${WEBHOOKS_PER_COMPANY_MAX} webhooks; delete one first`);
    }
    // The same live subscription twice would deliver every notification twice: refuse, naming the
    // one that exists. (A disabled one may be subscribed again: that is how it is re-enabled.)
    const live = await tx.webhooks.listWebhookSubscriptions(companyId, { limit: WEBHOOKS_PER_COMPANY_MAX });
    const same = live?.rows.find(
      (w) =>
        w.type === input.type &&
        w.url === input.url &&
        w.threshold === (input.threshold ?? null) &&
        w.disabledAtMs === null,
    );
    if (same) {
      fail('webhook_already_exists', `this subscription exists already: ${same.webhookId}`, 'url', {
        webhook_id: same.webhookId,
      });
    }
    const webhookId = newId('wh');
    const secret = generateWebhookSecret();
    const row: WebhookSubscriptionRow = {
      webhookId,
      companyId,
      type: input.type,
      url: input.url,
      threshold: input.threshold ?? null,
      secret,
      createdAtMs: deps.clock.now(),
      deletedAtMs: null,
      disabledAtMs: null,
      disabledReason: null,
    };
    // Stored sealed; the answer (the only time the secret is shown) has it in the clear.
    await tx.webhooks.insertWebhookSubscription({
      ...row,
      secret: deps.secrets.seal(secret, webhookSecretContext(webhookId)),
    });
    return row;
  };
}

export async function listWebhooks(
  deps: Deps,
  companyId: string,
  page: Page,
): Promise<PageResult<WebhookSubscriptionRow>> {
  return (await deps.store.read((tx) => tx.webhooks.listWebhookSubscriptions(companyId, page))) ?? unknownCursor();
}

export async function deleteWebhook(deps: Deps, companyId: string, webhookId: string): Promise<Command<void>> {
  return async (tx) => {
    if (!(await tx.webhooks.deleteWebhookSubscription(companyId, webhookId, deps.clock.now())))
      fail('not_found', `no such webhook: ${webhookId}`, 'webhook_id');
  };
}

export interface DeliveryView {
  delivery: WebhookDeliveryRow;
  attempts: WebhookAttemptRow[];
}

export async function listDeliveries(
  deps: Deps,
  companyId: string,
  webhookId: string,
  page: Page,
): Promise<PageResult<DeliveryView>> {
  return deps.store.read(async (tx) => {
    if (!(await tx.webhooks.findWebhookSubscription(companyId, webhookId)))
      fail('not_found', `no such webhook: ${webhookId}`, 'webhook_id');
    const deliveries = (await tx.webhooks.listWebhookDeliveries(webhookId, page)) ?? unknownCursor();
    const attempts = await tx.webhooks.listWebhookAttempts(deliveries.rows.map((d) => d.callbackId));
    return {
      rows: deliveries.rows.map((delivery) => ({
        delivery,
        attempts: attempts.filter((a) => a.callbackId === delivery.callbackId),
      })),
      hasMore: deliveries.hasMore,
    };
  });
}

/** Sends a notification again now, whatever its status; answers after the attempt. */
export async function retryDelivery(deps: Deps, companyId: string, callbackId: string): Promise<DeliveryView> {
  const token = newId('cl');
  const claimed = await deps.store.write((tx) =>
    tx.webhooks.claimWebhookDelivery(companyId, callbackId, Date.now(), DELIVERY_LEASE_MS, token),
  );
  if (claimed === undefined || (claimed !== 'busy' && claimed.subscriptionState === 'deleted'))
    fail('not_found', `no such delivery: ${callbackId}`, 'callback_id');
  if (claimed === 'busy')
    fail('delivery_in_progress', 'this notification is being sent right now; try again in a moment', 'callback_id');
  try {
    const update = await sendClaimedDelivery(claimed, deps, { manual: true });
    await deps.store.write((tx) => tx.webhooks.recordWebhookDeliveries([update]));
  } catch (err) {
    // Never leave the lease behind: release it unchanged so the worker carries on.
    await deps.store.write((tx) =>
      tx.webhooks.recordWebhookDeliveries([
        {
          callbackId,
          claimToken: token,
          attempt: null,
          status: claimed.status,
          nextAttemptAtMs: claimed.nextAttemptAtMs,
          deliveredAtMs: claimed.deliveredAtMs,
          lastError: claimed.lastError,
          disable: null,
        },
      ]),
    );
    throw err;
  }
  return deps.store.read(async (tx) => ({
    delivery: (await tx.webhooks.findWebhookDelivery(companyId, callbackId))!,
    attempts: await tx.webhooks.listWebhookAttempts([callbackId]),
  }));
}

// ---------------------------------------------------------------------------------------
// Sending one leased delivery and deciding what follows: delivered, retried later with
// backoff, given up after the retry window, or (410 Gone) the subscription disabled. Used by
// the delivery worker and by the manual retry endpoint. Runs outside any transaction; the
// caller writes the returned update (in a batch, for the worker).

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
