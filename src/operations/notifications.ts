/**
 * Writing webhook notifications: every notification is a row of `webhook_deliveries`, written
 * in the database transaction of the change that causes it (so none is lost, even across a
 * crash), and sent later by the delivery worker. Two writers share one per-transaction memo
 * (`NotificationNotes`, in the transaction's `Posting` memo):
 * - `writeBalanceNotifications`, a balance effect: `balance_change`, `negative_balance` and
 *   `threshold` (with its own threshold), at most one per subscription and balance per
 *   transaction, carrying the balance after the last change;
 * - `notifyBalance`, for what an operation decides itself: `auto_refill` (a refill applied, a
 *   plan renewed) and `threshold` plan alerts (to threshold subscriptions without a threshold).
 */
import { newId } from '../lib/ids.js';
import type { BalanceRow, Tx, WebhookDeliveryRow, WebhookTarget, WebhookType } from '../store/types.js';
import { changeNotifies, notificationPayload } from '../webhooks/notifications.js';
import type { BalanceChange, MemoSlot, Posting } from '../ledger/posting.js';

/** What one transaction has already looked up and written. */
class NotificationNotes {
  /** Company id → its live subscriptions. */
  readonly targets = new Map<string, WebhookTarget[]>();
  /** Subscription + balance → the callback id of the coalesced notification written in this transaction. */
  readonly coalesced = new Map<string, string>();

  /** The live subscriptions of these companies: one indexed query for those not yet looked up. */
  async targetsOf(tx: Tx, companyIds: string[]): Promise<void> {
    const unknown = [...new Set(companyIds)].filter((c) => !this.targets.has(c));
    if (unknown.length === 0) return;
    for (const c of unknown) this.targets.set(c, []);
    for (const t of await tx.webhooks.findWebhookTargets(unknown)) this.targets.get(t.companyId)?.push(t);
  }
}

/** The notes' slot in each posting's memo. */
const NOTES: MemoSlot<NotificationNotes> = { name: 'webhook notifications', create: () => new NotificationNotes() };

function delivery(callbackId: string, t: WebhookTarget, payload: string, nowMs: number): WebhookDeliveryRow {
  return {
    callbackId,
    webhookId: t.webhookId,
    companyId: t.companyId,
    type: t.type,
    payload,
    status: 'pending',
    attempts: 0,
    nextAttemptAtMs: nowMs,
    createdAtMs: nowMs,
    deliveredAtMs: null,
    lastError: null,
  };
}

function payloadOf(callbackId: string, t: WebhookTarget, b: BalanceRow, nowMs: number, extra: object): string {
  return notificationPayload({
    companyId: b.companyId,
    callbackId,
    accountId: b.accountId,
    type: t.type,
    accountBalance: b.amount,
    denomination: b.denomination,
    createdAtMs: nowMs,
    extra: { available: b.amount - b.pending, pending: b.pending, ...extra },
  });
}

/**
 * The balance effect: runs after every posting. One indexed query per transaction for the
 * companies involved (nothing more when they have no subscriptions); a later posting in the
 * same transaction rewrites the body of the notification an earlier one wrote.
 */
export async function writeBalanceNotifications(p: Posting, changes: BalanceChange[]): Promise<void> {
  const notes = p.memo(NOTES);
  await notes.targetsOf(
    p.tx,
    changes.map((c) => c.after.companyId),
  );
  const inserts: WebhookDeliveryRow[] = [];
  for (const { before, after } of changes) {
    for (const t of notes.targets.get(after.companyId) ?? []) {
      if (!changeNotifies(t, before, after)) continue;
      const key = `${t.webhookId}\u0000${after.accountId}\u0000${after.denomination}`;
      const existing = notes.coalesced.get(key);
      const callbackId = existing ?? newId('cl');
      const payload = payloadOf(
        callbackId,
        t,
        after,
        p.nowMs,
        t.type === 'threshold' ? { threshold: t.threshold } : {},
      );
      if (existing !== undefined) {
        await p.tx.webhooks.updateWebhookDeliveryPayload(existing, payload);
        continue;
      }
      notes.coalesced.set(key, callbackId);
      inserts.push(delivery(callbackId, t, payload, p.nowMs));
    }
  }
  await p.tx.webhooks.insertWebhookDeliveries(inserts);
}

/**
 * One notification of `type` about no balance (`entitlements_change`) to each of the company's subscriptions of
 * that type, in the transaction `tx` of the change: the fields every notification carries, then `fields`.
 */
export async function notifyCompany(
  tx: Tx,
  companyId: string,
  type: Extract<WebhookType, 'entitlements_change'>,
  nowMs: number,
  fields: Record<string, unknown>,
): Promise<void> {
  const inserts: WebhookDeliveryRow[] = [];
  for (const t of await tx.webhooks.findWebhookTargets([companyId])) {
    if (t.type !== type) continue;
    const callbackId = newId('cl');
    const body: Record<string, unknown> = {
      company_id: companyId,
      callback_id: callbackId,
      type,
      created_at: new Date(nowMs).toISOString(),
    };
    for (const [k, v] of Object.entries(fields)) if (!(k in body)) body[k] = v;
    inserts.push(delivery(callbackId, t, JSON.stringify(body), nowMs));
  }
  await tx.webhooks.insertWebhookDeliveries(inserts);
}

/**
 * One `alert_triggered` or `alert_resolved` notification about balance `b` to each of its company's
 * subscriptions of that type: written by the alerts' decisions (operations/alerts.ts), one per crossing.
 * Returns their callback ids (a later change in the same transaction that undoes the crossing deletes them).
 */
export async function notifyAlert(
  p: Posting,
  type: Extract<WebhookType, 'alert_triggered' | 'alert_resolved'>,
  b: BalanceRow,
  fields: Record<string, unknown>,
): Promise<string[]> {
  const notes = p.memo(NOTES);
  await notes.targetsOf(p.tx, [b.companyId]);
  const inserts: WebhookDeliveryRow[] = [];
  for (const t of notes.targets.get(b.companyId) ?? []) {
    if (t.type !== type) continue;
    const callbackId = newId('cl');
    inserts.push(delivery(callbackId, t, payloadOf(callbackId, t, b, p.nowMs, fields), p.nowMs));
  }
  await p.tx.webhooks.insertWebhookDeliveries(inserts);
  return inserts.map((d) => d.callbackId);
}

/**
 * One notification of `type` about balance `b` to each of its company's subscriptions of that
 * type: `auto_refill`, `refill_capped`, or `threshold` for plan alerts, which go only to the threshold
 * subscriptions without a `threshold` of their own (one with its own threshold is about that
 * threshold only). `extra` fields follow the payload's (`available`, `pending`).
 */
export async function notifyBalance(
  p: Posting,
  type: Extract<WebhookType, 'auto_refill' | 'threshold' | 'refill_capped'>,
  b: BalanceRow,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const notes = p.memo(NOTES);
  await notes.targetsOf(p.tx, [b.companyId]);
  const inserts: WebhookDeliveryRow[] = [];
  for (const t of notes.targets.get(b.companyId) ?? []) {
    if (t.type !== type || (type === 'threshold' && t.threshold !== null)) continue;
    const callbackId = newId('cl');
    inserts.push(delivery(callbackId, t, payloadOf(callbackId, t, b, p.nowMs, extra), p.nowMs));
  }
  await p.tx.webhooks.insertWebhookDeliveries(inserts);
}
