/**
 * Webhooks: subscriptions, the notifications a balance change writes (inside its transaction,
 * through the balance-effect seam), the fan-out of notifications other operations leave in the
 * outbox, the delivery log and the manual resend.
 */
import { fail } from '../domain/outcome.js';
import { newId } from '../lib/ids.js';
import type {
  ClaimedOutboxRow,
  Page,
  PageResult,
  Tx,
  WebhookAttemptRow,
  WebhookDeliveryRow,
  WebhookSubscriptionRow,
  WebhookTarget,
  WebhookType,
} from '../store/types.js';
import { checkWebhookUrl } from '../webhooks/url-policy.js';
import {
  WEBHOOKS_PER_COMPANY_MAX,
  changeNotifies,
  derivedCallbackId,
  isWebhookType,
  notificationPayload,
} from '../webhooks/notifications.js';
import { generateWebhookSecret } from '../webhooks/signing.js';
import { registerBalanceEffect, type BalanceChange } from './balance-effects.js';
import type { Deps } from './deps.js';
import { DELIVERY_LEASE_MS, sendClaimedDelivery, type WebhookSettings } from './webhook-delivery.js';

export type { WebhookSettings };

/** Outbox topics of notifications written by other operations (refills, renewals, plan alerts). */
export const WEBHOOK_TOPIC_PREFIX = 'webhook.';

const settingsByDeps = new WeakMap<Deps, WebhookSettings>();

/**
 * Turns webhooks on for a server: remembers its settings (per server, several may share a
 * process) and registers the balance effect that writes notifications.
 */
export function configureWebhooks(deps: Deps, settings: WebhookSettings): void {
  settingsByDeps.set(deps, settings);
  registerBalanceEffect(writeBalanceNotifications);
}

/** Unconfigured (a bare buildApp): the strict policy, private receivers refused. */
export function webhookSettings(deps: Deps): WebhookSettings {
  return settingsByDeps.get(deps) ?? { allowPrivate: false };
}

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
): Promise<WebhookSubscriptionRow> {
  if (!isWebhookType(input.type))
    fail(
      'unknown_webhook_type',
      `type must be one of balance_change, negative_balance, auto_refill, threshold`,
      'type',
    );
  const checked = checkWebhookUrl(input.url, { allowPrivate: webhookSettings(deps).allowPrivate });
  if (!checked.ok) fail('webhook_url_not_allowed', checked.reason, 'url');
  if (input.threshold !== undefined && input.type !== 'threshold') {
    fail('threshold_needs_threshold_type', 'threshold is only for subscriptions of type threshold', 'threshold');
  }
  if (input.threshold !== undefined && input.threshold < 0)
    fail('threshold_must_not_be_negative', 'threshold must be ≥ 0', 'threshold');
  return deps.store.write(async (tx) => {
    if ((await tx.countWebhookSubscriptions(companyId)) >= WEBHOOKS_PER_COMPANY_MAX) {
      fail('too_many_webhooks', `a company may have at most ${WEBHOOKS_PER_COMPANY_MAX} webhooks; delete one first`);
    }
    const row: WebhookSubscriptionRow = {
      webhookId: newId('wh'),
      companyId,
      type: input.type,
      url: input.url,
      threshold: input.threshold ?? null,
      secret: generateWebhookSecret(),
      createdAtMs: deps.clock.now(),
      deletedAtMs: null,
      disabledAtMs: null,
      disabledReason: null,
    };
    await tx.insertWebhookSubscription(row);
    return row;
  });
}

function unknownCursor(): never {
  fail('unknown_cursor', 'starting_after names no item of this list', 'starting_after');
}

export async function listWebhooks(
  deps: Deps,
  companyId: string,
  page: Page,
): Promise<PageResult<WebhookSubscriptionRow>> {
  return (await deps.store.read((tx) => tx.listWebhookSubscriptions(companyId, page))) ?? unknownCursor();
}

export async function deleteWebhook(deps: Deps, companyId: string, webhookId: string): Promise<void> {
  const deleted = await deps.store.write((tx) => tx.deleteWebhookSubscription(companyId, webhookId, deps.clock.now()));
  if (!deleted) fail('not_found', `no such webhook: ${webhookId}`, 'webhook_id');
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
    if (!(await tx.findWebhookSubscription(companyId, webhookId)))
      fail('not_found', `no such webhook: ${webhookId}`, 'webhook_id');
    const deliveries = (await tx.listWebhookDeliveries(webhookId, page)) ?? unknownCursor();
    const attempts = await tx.listWebhookAttempts(deliveries.rows.map((d) => d.callbackId));
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
    tx.claimWebhookDelivery(companyId, callbackId, Date.now(), DELIVERY_LEASE_MS, token),
  );
  if (claimed === undefined || (claimed !== 'busy' && claimed.subscriptionState === 'deleted'))
    fail('not_found', `no such delivery: ${callbackId}`, 'callback_id');
  if (claimed === 'busy')
    fail('delivery_in_progress', 'this notification is being sent right now; try again in a moment', 'callback_id');
  try {
    const update = await sendClaimedDelivery(claimed, deps.clock, webhookSettings(deps), { manual: true });
    await deps.store.write((tx) => tx.recordWebhookDeliveries([update]));
  } catch (err) {
    // Never leave the lease behind: release it unchanged so the worker carries on.
    await deps.store.write((tx) =>
      tx.recordWebhookDeliveries([
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
    delivery: (await tx.findWebhookDelivery(companyId, callbackId))!,
    attempts: await tx.listWebhookAttempts([callbackId]),
  }));
}

// ---------------------------------------------------------------------------------------
// Notifications written with the balance change

/** What one transaction has already looked up and written (coalescing across its ledger postings). */
interface TxNotes {
  targets: Map<string, WebhookTarget[]>;
  /** Subscription + balance → the callback id written in this transaction. */
  written: Map<string, string>;
}

const notesByTx = new WeakMap<Tx, TxNotes>();

/**
 * The balance effect: runs inside every transaction that changes balances. One indexed query
 * per transaction for the companies involved (nothing more when they have no subscriptions);
 * at most one notification per subscription and balance per transaction, carrying the balance
 * after the last change (a later posting in the same transaction rewrites the body).
 */
export async function writeBalanceNotifications(tx: Tx, nowMs: number, changes: BalanceChange[]): Promise<void> {
  let notes = notesByTx.get(tx);
  if (!notes) {
    notes = { targets: new Map(), written: new Map() };
    notesByTx.set(tx, notes);
  }
  const unknown = [...new Set(changes.map((c) => c.after.companyId))].filter((c) => !notes.targets.has(c));
  if (unknown.length > 0) {
    for (const c of unknown) notes.targets.set(c, []);
    for (const t of await tx.findWebhookTargets(unknown)) notes.targets.get(t.companyId)?.push(t);
  }
  const inserts: WebhookDeliveryRow[] = [];
  for (const { before, after } of changes) {
    const targets = notes.targets.get(after.companyId) ?? [];
    for (const t of targets) {
      if (!changeNotifies(t, before, after)) continue;
      const key = `${t.webhookId}\u0000${after.accountId}\u0000${after.denomination}`;
      const existing = notes.written.get(key);
      const callbackId = existing ?? newId('cl');
      const payload = notificationPayload({
        companyId: after.companyId,
        callbackId,
        accountId: after.accountId,
        type: t.type,
        accountBalance: after.amount,
        denomination: after.denomination,
        createdAtMs: nowMs,
        extra: {
          available: after.amount - after.pending,
          pending: after.pending,
          ...(t.type === 'threshold' ? { threshold: t.threshold } : {}),
        },
      });
      if (existing !== undefined) {
        await tx.updateWebhookDeliveryPayload(existing, payload);
        continue;
      }
      notes.written.set(key, callbackId);
      inserts.push(newDelivery(callbackId, t, payload, nowMs));
    }
  }
  await tx.insertWebhookDeliveries(inserts);
}

function newDelivery(
  callbackId: string,
  t: Pick<WebhookTarget, 'webhookId' | 'companyId' | 'type'>,
  payload: string,
  nowMs: number,
): WebhookDeliveryRow {
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

// ---------------------------------------------------------------------------------------
// Notifications other operations leave in the outbox

/** A row never handled again (parked) because it cannot be delivered as written: a bug to look at. */
const PARKED_RUN_AT_MS = Number.MAX_SAFE_INTEGER;

/**
 * Fans `webhook.<type>` outbox rows (payload `{account_id, denomination, account_balance, …}`)
 * out to the company's subscriptions of that type, in the transaction that claimed them, so a
 * row is done exactly when its deliveries exist. Callback ids derive from the outbox row, so a
 * second run could never write a second copy.
 */
export async function fanOutWebhookOutbox(tx: Tx, nowMs: number, rows: ClaimedOutboxRow[]): Promise<void> {
  if (rows.length === 0) return;
  const targets = await tx.findWebhookTargets([...new Set(rows.map((r) => r.companyId))]);
  const inserts: WebhookDeliveryRow[] = [];
  for (const row of rows) {
    const type = row.topic.slice(WEBHOOK_TOPIC_PREFIX.length);
    const {
      account_id: accountId,
      denomination,
      account_denomination: accountDenomination,
      account_balance: balance,
      type: _type,
      ...rest
    } = row.payload;
    const denom = denomination ?? accountDenomination;
    if (
      !isWebhookType(type) ||
      typeof accountId !== 'string' ||
      typeof denom !== 'string' ||
      typeof balance !== 'number'
    ) {
      await tx.retryOutbox(row.outboxId, PARKED_RUN_AT_MS, `not a deliverable webhook notification: ${row.topic}`);
      continue;
    }
    for (const t of targets) {
      if (t.companyId !== row.companyId || t.type !== type) continue;
      const callbackId = derivedCallbackId(row.outboxId, t.webhookId);
      const payload = notificationPayload({
        companyId: row.companyId,
        callbackId,
        accountId,
        type,
        accountBalance: balance,
        denomination: denom,
        createdAtMs: row.createdAtMs,
        extra: rest,
      });
      inserts.push(newDelivery(callbackId, t, payload, nowMs));
    }
    await tx.completeOutbox(row.outboxId, nowMs);
  }
  await tx.insertWebhookDeliveries(inserts);
}
