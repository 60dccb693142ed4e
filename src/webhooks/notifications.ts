/**
 * Pure rules of webhook notifications: which balance changes notify which subscriptions, what
 * the delivered JSON says, and when a failed delivery is tried again. No I/O, no clock reads,
 * no randomness of its own (callers pass the jitter).
 *
 * Decisions (also in the OpenAPI descriptions):
 * - `balance_change`: every change of a balance's `amount` or `pending`, holds included: a hold
 *   moves `available`, which is what gates requests, so the customer's user sees a different
 *   balance. Refills, adjustments, renewals and automatically cancelled holds all notify.
 * - `negative_balance`: a change that lowers `available` and leaves it below zero (the figure
 *   `gate_on_balance` refuses on). A credit that leaves a balance still negative does not notify.
 * - `threshold` with its own `threshold`: `available` drops from ≥ threshold to < threshold.
 *   Plan alerts (`threshold_alert_percentage`) and `auto_refill` are written by the operations
 *   that decide them (operations/notifications.ts): `auto_refill` to every subscription of that
 *   type, plan alerts to the `threshold` subscriptions without a threshold of their own; `refill_capped`
 *   by the threshold refill that max_refills_per_month stops, once per balance per UTC month;
 *   `alert_triggered` and `alert_resolved` by the alerts' decisions (operations/alerts.ts), one per crossing;
 *   `entitlements_change` by the operations on overrides and plans' features (operations/features.ts).
 * - `account_balance` is the balance's `amount`; `available` and `pending` are sent too.
 */
import type { BalanceFigures } from '../domain/ingest-plan.js';
import { backoffDelayMs, withEqualJitter } from '../lib/backoff.js';
import type { WebhookTarget, WebhookType } from '../store/types.js';

export const WEBHOOK_TYPES = [
  'balance_change',
  'negative_balance',
  'auto_refill',
  'threshold',
  'refill_capped',
  'alert_triggered',
  'alert_resolved',
  'entitlements_change',
] as const satisfies readonly WebhookType[];

export function isWebhookType(t: string): t is WebhookType {
  return (WEBHOOK_TYPES as readonly string[]).includes(t);
}

/** Most live subscriptions per company: bounds the fan-out written on the ingest path. */
export const WEBHOOKS_PER_COMPANY_MAX = 50;

const availableOf = (b: BalanceFigures): number => b.amount - b.pending;

/** Does this change of one balance notify this subscription? */
export function changeNotifies(
  target: Pick<WebhookTarget, 'type' | 'threshold'>,
  before: BalanceFigures,
  after: BalanceFigures,
): boolean {
  const was = availableOf(before);
  const now = availableOf(after);
  switch (target.type) {
    case 'balance_change':
      return before.amount !== after.amount || before.pending !== after.pending;
    case 'negative_balance':
      return now < 0 && now < was;
    case 'threshold':
      return target.threshold !== null && was >= target.threshold && now < target.threshold;
    case 'auto_refill':
    case 'refill_capped':
    case 'alert_triggered':
    case 'alert_resolved':
    case 'entitlements_change':
      return false;
  }
}

export interface PayloadInput {
  companyId: string;
  callbackId: string;
  accountId: string;
  type: WebhookType;
  accountBalance: number;
  denomination: string;
  createdAtMs: number;
  /** More fields after the spec's (available, pending, threshold, …). */
  extra?: Record<string, unknown>;
}

/** The exact body of every attempt: the spec's fields first, then ours (never overriding the spec's). */
export function notificationPayload(p: PayloadInput): string {
  const body: Record<string, unknown> = {
    company_id: p.companyId,
    callback_id: p.callbackId,
    account_id: p.accountId,
    type: p.type,
    account_balance: p.accountBalance,
    account_denomination: p.denomination,
    created_at: new Date(p.createdAtMs).toISOString(),
  };
  for (const [k, v] of Object.entries(p.extra ?? {})) if (!(k in body) && v !== undefined) body[k] = v;
  return JSON.stringify(body);
}

// ---------------------------------------------------------------------------------------
// Retries

/** The contract: success is a 2xx within 10 s. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** Failed deliveries are retried for at least this long before they are given up. */
export const RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;
export const RETRY_BASE_DELAY_MS = 10_000;
export const RETRY_MAX_DELAY_MS = 2 * 60 * 60 * 1000;

/**
 * When to try again after failed attempt number `attempt` (1-based) at `nowMs`, or null to
 * give up. Exponential (10 s, 20 s, 40 s … capped at 2 h) with "equal jitter": half the delay
 * is fixed, half random, so a receiver coming back is not hit by every sender at once.
 * Gives up only after a failed attempt at least RETRY_WINDOW_MS after the notification was
 * written, so retries always span at least the window.
 */
export function nextAttemptAt(createdAtMs: number, attempt: number, nowMs: number, random01: number): number | null {
  if (nowMs - createdAtMs >= RETRY_WINDOW_MS) return null;
  return nowMs + withEqualJitter(backoffDelayMs(attempt, RETRY_BASE_DELAY_MS, RETRY_MAX_DELAY_MS), random01);
}
