/**
 * Webhooks: a company's subscriptions, the deliveries (one notification to one subscription),
 * their attempts, the leases senders claim them under, and their retention.
 */
import type { Page, PageResult, StoredSecret } from '../common.js';
import type { Backlog } from '../outbox/types.js';

export type WebhookType =
  | 'balance_change'
  | 'negative_balance'
  | 'auto_refill'
  | 'threshold'
  | 'refill_capped'
  | 'alert_triggered'
  | 'alert_resolved'
  | 'entitlements_change';
export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookSubscriptionRow {
  webhookId: string;
  companyId: string;
  type: WebhookType;
  url: string;
  /** Absolute units; only `threshold` subscriptions have one (null: plan alerts only). */
  threshold: number | null;
  /** `whsec_…`; shown to the company once, at creation. */
  secret: string;
  createdAtMs: number;
  deletedAtMs: number | null;
  disabledAtMs: number | null;
  disabledReason: string | null;
}

/** What the hot path needs to decide which notifications a balance change causes. */
export interface WebhookTarget {
  webhookId: string;
  companyId: string;
  type: WebhookType;
  threshold: number | null;
}

/** One notification to one subscription; `callbackId` is the `webhook-id` of every attempt. */
export interface WebhookDeliveryRow {
  callbackId: string;
  webhookId: string;
  companyId: string;
  type: WebhookType;
  /** The exact JSON body sent (and signed) on every attempt. */
  payload: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  /** Injected clock; null once no further automatic attempt is planned. */
  nextAttemptAtMs: number | null;
  createdAtMs: number;
  deliveredAtMs: number | null;
  lastError: string | null;
}

export interface WebhookAttemptRow {
  callbackId: string;
  attemptedAtMs: number;
  /** Null when no HTTP response arrived. */
  statusCode: number | null;
  latencyMs: number;
  responseSnippet: string;
  error: string | null;
  /** Sent by `POST /v1/webhooks/deliveries/{callback_id}/retry`. */
  manual: boolean;
}

/** A delivery leased to one sender, with what it needs to send it. */
export interface ClaimedWebhookDelivery extends WebhookDeliveryRow {
  claimToken: string;
  /** Wall clock: nobody else sends it before then. */
  claimedUntilMs: number;
  url: string;
  secret: string;
  subscriptionState: 'active' | 'disabled' | 'deleted';
}

/** The outcome of handling one claimed delivery, written back in one batch with others. */
export interface WebhookDeliveryUpdate {
  callbackId: string;
  claimToken: string;
  /** Absent when nothing was sent (the subscription was deleted or disabled meanwhile). */
  attempt: WebhookAttemptRow | null;
  status: WebhookDeliveryStatus;
  nextAttemptAtMs: number | null;
  deliveredAtMs: number | null;
  lastError: string | null;
  /** The receiver answered 410 Gone: stop sending to this subscription. */
  disable: { webhookId: string; atMs: number; reason: string } | null;
}

export interface WebhooksReadTx {
  /** Subscriptions of the company that are not deleted (disabled ones included), newest first. */
  listWebhookSubscriptions(companyId: string, page: Page): Promise<PageResult<WebhookSubscriptionRow> | undefined>;
  /** A subscription of the company that is not deleted. */
  findWebhookSubscription(companyId: string, webhookId: string): Promise<WebhookSubscriptionRow | undefined>;
  /**
   * Active (not deleted, not disabled) subscriptions of these companies: one indexed query
   * (ingest hot path).
   */
  findWebhookTargets(companyIds: string[]): Promise<WebhookTarget[]>;
  countWebhookSubscriptions(companyId: string): Promise<number>;
  findWebhookDelivery(companyId: string, callbackId: string): Promise<WebhookDeliveryRow | undefined>;
  /** Deliveries of one subscription, newest first. */
  listWebhookDeliveries(webhookId: string, page: Page): Promise<PageResult<WebhookDeliveryRow> | undefined>;
  /** Attempts of these deliveries, oldest first. */
  listWebhookAttempts(callbackIds: string[]): Promise<WebhookAttemptRow[]>;
  /** Every subscription's stored secret (deleted ones too), by webhook id after `afterId`, `limit` at most. */
  listWebhookSecrets(afterId: string | null, limit: number): Promise<StoredSecret[]>;
  /** Pending deliveries (for /metrics): how many, and the earliest attempt time among those due at `nowMs`. */
  webhookDeliveryBacklog(nowMs: number): Promise<Backlog>;
}

export interface WebhooksTx extends WebhooksReadTx {
  /** `secret` is stored as given: the operations seal it first (operations/secrets.ts). */
  insertWebhookSubscription(row: WebhookSubscriptionRow): Promise<void>;
  /** Replaces a stored secret if it is still `from` (another process may have re-sealed it). */
  replaceWebhookSecret(webhookId: string, from: string, to: string): Promise<boolean>;
  /** Soft delete; returns false when the company has no such (undeleted) subscription. */
  deleteWebhookSubscription(companyId: string, webhookId: string, atMs: number): Promise<boolean>;
  /** Inserts deliveries; a `callbackId` that already exists is skipped (idempotent fan-out). */
  insertWebhookDeliveries(rows: WebhookDeliveryRow[]): Promise<void>;
  /** Replaces the body of a delivery written earlier in the same transaction (coalescing). */
  updateWebhookDeliveryPayload(callbackId: string, payload: string): Promise<void>;
  /** Deletes notifications written earlier in the same transaction that it has undone (never one sent). */
  deleteWebhookDeliveries(callbackIds: string[]): Promise<void>;
  /**
   * Leases up to `limit` pending deliveries due at `nowMs` (injected clock) whose lease has
   * passed (`wallNowMs`, wall clock) until `wallNowMs + leaseMs`, oldest first. Safe with many
   * processes: PostgreSQL skips rows another transaction holds (SKIP LOCKED); SQLite's single
   * writer serialises claims. A leased delivery is never attempted by anyone else, so attempts
   * of one notification never overlap while the lease outlasts the attempt.
   */
  claimWebhookDeliveries(
    nowMs: number,
    wallNowMs: number,
    leaseMs: number,
    limit: number,
    claimToken: string,
  ): Promise<ClaimedWebhookDelivery[]>;
  /**
   * Leases one delivery of the company whatever its status (manual retry); 'busy' while another
   * sender holds it.
   */
  claimWebhookDelivery(
    companyId: string,
    callbackId: string,
    wallNowMs: number,
    leaseMs: number,
    claimToken: string,
  ): Promise<ClaimedWebhookDelivery | 'busy' | undefined>;
  /**
   * Appends the attempts and, where the claim is still the writer's (`claimToken`), sets the
   * outcome and releases the lease; disables subscriptions that answered 410.
   */
  recordWebhookDeliveries(updates: WebhookDeliveryUpdate[]): Promise<void>;
  /**
   * Deletes up to `limit` finished deliveries (delivered or failed) created before
   * `createdBeforeMs`, oldest first, with their attempts; one a sender holds (a live lease on
   * the wall clock, `wallNowMs`) stays. Returns how many deliveries went.
   */
  deleteWebhookDeliveriesBefore(createdBeforeMs: number, wallNowMs: number, limit: number): Promise<number>;
}
