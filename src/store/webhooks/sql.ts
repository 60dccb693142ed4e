/**
 * Webhooks: row mappers, the column lists of the batch inserts, and the SQL both databases share
 * (mixed into SqlTx, sql-base.ts). PostgreSQL writes batches as one statement each: postgres/tx.ts.
 */
import type { Page } from '../common.js';
import { SqlCore, num, numOrNull, strOrNull, type SqlRow } from '../sql-core.js';
import type {
  ClaimedWebhookDelivery,
  WebhookAttemptRow,
  WebhookDeliveryRow,
  WebhookDeliveryUpdate,
  WebhookSubscriptionRow,
  WebhookTarget,
  WebhookType,
  WebhooksTx,
} from './types.js';

export const toWebhookSubscription = (r: SqlRow): WebhookSubscriptionRow => ({
  webhookId: String(r.webhook_id),
  companyId: String(r.company_id),
  type: String(r.type) as WebhookType,
  url: String(r.url),
  threshold: numOrNull(r.threshold),
  secret: String(r.secret),
  createdAtMs: num(r.created_at),
  deletedAtMs: numOrNull(r.deleted_at),
  disabledAtMs: numOrNull(r.disabled_at),
  disabledReason: strOrNull(r.disabled_reason),
});
const toWebhookTarget = (r: SqlRow): WebhookTarget => ({
  webhookId: String(r.webhook_id),
  companyId: String(r.company_id),
  type: String(r.type) as WebhookType,
  threshold: numOrNull(r.threshold),
});
export const toWebhookDelivery = (r: SqlRow): WebhookDeliveryRow => ({
  callbackId: String(r.callback_id),
  webhookId: String(r.webhook_id),
  companyId: String(r.company_id),
  type: String(r.type) as WebhookType,
  payload: String(r.payload),
  status: String(r.status) as WebhookDeliveryRow['status'],
  attempts: num(r.attempts),
  nextAttemptAtMs: numOrNull(r.next_attempt_at),
  createdAtMs: num(r.created_at),
  deliveredAtMs: numOrNull(r.delivered_at),
  lastError: strOrNull(r.last_error),
});
const toWebhookAttempt = (r: SqlRow): WebhookAttemptRow => ({
  callbackId: String(r.callback_id),
  attemptedAtMs: num(r.attempted_at),
  statusCode: numOrNull(r.status_code),
  latencyMs: num(r.latency_ms),
  responseSnippet: String(r.response_snippet),
  error: strOrNull(r.error),
  manual: Boolean(r.manual),
});
export const WEBHOOK_DELIVERY_COLUMNS =
  'callback_id, webhook_id, company_id, type, payload, status, attempts, next_attempt_at, created_at, ' +
  'delivered_at, last_error';
export const webhookDeliveryParams = (d: WebhookDeliveryRow): unknown[] => [
  d.callbackId,
  d.webhookId,
  d.companyId,
  d.type,
  d.payload,
  d.status,
  d.attempts,
  d.nextAttemptAtMs,
  d.createdAtMs,
  d.deliveredAtMs,
  d.lastError,
];
export const WEBHOOK_ATTEMPT_COLUMNS =
  'callback_id, attempted_at, status_code, latency_ms, response_snippet, error, manual';
export const webhookAttemptParams = (a: WebhookAttemptRow, bool: (b: boolean) => unknown): unknown[] => [
  a.callbackId,
  a.attemptedAtMs,
  a.statusCode,
  a.latencyMs,
  a.responseSnippet,
  a.error,
  bool(a.manual),
];

export class WebhooksSql extends SqlCore implements WebhooksTx {
  listWebhookSubscriptions(companyId: string, page: Page) {
    return this.pageBySeq(
      'webhook_subscriptions',
      'webhook_id',
      [['company_id', companyId]],
      page,
      toWebhookSubscription,
      ' AND deleted_at IS NULL',
    );
  }
  async findWebhookSubscription(companyId: string, webhookId: string) {
    const r = await this.one(
      'SELECT * FROM webhook_subscriptions WHERE webhook_id = ? AND company_id = ? AND deleted_at IS NULL',
      [webhookId, companyId],
    );
    return r && toWebhookSubscription(r);
  }
  async findWebhookTargets(companyIds: string[]): Promise<WebhookTarget[]> {
    if (companyIds.length === 0) return [];
    const [inIds, params] = this.inList('company_id', companyIds);
    const rows = await this.db.all(
      `SELECT webhook_id, company_id, type, threshold FROM webhook_subscriptions
     WHERE ${inIds} AND deleted_at IS NULL AND disabled_at IS NULL`,
      params,
    );
    return rows.map(toWebhookTarget);
  }
  async countWebhookSubscriptions(companyId: string) {
    return num(
      (
        await this.one('SELECT COUNT(*) AS n FROM webhook_subscriptions WHERE company_id = ? AND deleted_at IS NULL', [
          companyId,
        ])
      )?.n ?? 0,
    );
  }
  async findWebhookDelivery(companyId: string, callbackId: string) {
    const r = await this.one('SELECT * FROM webhook_deliveries WHERE callback_id = ? AND company_id = ?', [
      callbackId,
      companyId,
    ]);
    return r && toWebhookDelivery(r);
  }
  listWebhookDeliveries(webhookId: string, page: Page) {
    return this.pageBySeq('webhook_deliveries', 'callback_id', [['webhook_id', webhookId]], page, toWebhookDelivery);
  }
  async listWebhookAttempts(callbackIds: string[]) {
    if (callbackIds.length === 0) return [];
    const [inIds, params] = this.inList('callback_id', callbackIds);
    return (await this.db.all(`SELECT * FROM webhook_attempts WHERE ${inIds} ORDER BY seq`, params)).map(
      toWebhookAttempt,
    );
  }
  async listWebhookSecrets(afterId: string | null, limit: number) {
    const rows = await this.db.all(
      'SELECT webhook_id, secret FROM webhook_subscriptions WHERE webhook_id > ? ORDER BY webhook_id LIMIT ?',
      [afterId ?? '', limit],
    );
    return rows.map((r) => ({ id: String(r.webhook_id), value: String(r.secret) }));
  }
  async replaceWebhookSecret(webhookId: string, from: string, to: string) {
    return (
      (await this.db.run('UPDATE webhook_subscriptions SET secret = ? WHERE webhook_id = ? AND secret = ?', [
        to,
        webhookId,
        from,
      ])) > 0
    );
  }
  async webhookDeliveryBacklog(nowMs: number) {
    // Both figures come from the partial index webhook_deliveries_due (WHERE status = 'pending').
    const [count] = await this.db.all("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending'", []);
    const [due] = await this.db.all(
      'SELECT min(next_attempt_at) AS oldest FROM webhook_deliveries ' +
        "WHERE status = 'pending' AND next_attempt_at <= ?",
      [nowMs],
    );
    return { pending: num(count?.n ?? 0), oldestDueAtMs: numOrNull(due?.oldest) };
  }
  async insertWebhookSubscription(w: WebhookSubscriptionRow) {
    await this.db.run(
      'INSERT INTO webhook_subscriptions (webhook_id, company_id, type, url, threshold, secret, created_at, ' +
        `deleted_at, disabled_at, disabled_reason)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        w.webhookId,
        w.companyId,
        w.type,
        w.url,
        w.threshold,
        w.secret,
        w.createdAtMs,
        w.deletedAtMs,
        w.disabledAtMs,
        w.disabledReason,
      ],
    );
  }
  async deleteWebhookSubscription(companyId: string, webhookId: string, atMs: number) {
    return (
      (await this.db.run(
        'UPDATE webhook_subscriptions SET deleted_at = ? ' +
          'WHERE webhook_id = ? AND company_id = ? AND deleted_at IS NULL',
        [atMs, webhookId, companyId],
      )) > 0
    );
  }
  async insertWebhookDeliveries(rows: WebhookDeliveryRow[]) {
    for (const d of rows)
      await this.db.run(
        `INSERT INTO webhook_deliveries (${WEBHOOK_DELIVERY_COLUMNS}) ` +
          'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (callback_id) DO NOTHING',
        webhookDeliveryParams(d),
      );
  }
  async updateWebhookDeliveryPayload(callbackId: string, payload: string) {
    await this.db.run('UPDATE webhook_deliveries SET payload = ? WHERE callback_id = ?', [payload, callbackId]);
  }
  async deleteWebhookDeliveries(callbackIds: string[]) {
    if (callbackIds.length === 0) return;
    const [inIds, params] = this.inList('callback_id', callbackIds);
    await this.db.run(`DELETE FROM webhook_deliveries WHERE ${inIds}`, params);
  }
  async claimWebhookDeliveries(nowMs: number, wallNowMs: number, leaseMs: number, limit: number, claimToken: string) {
    const rows = await this.db.all(
      `UPDATE webhook_deliveries SET claimed_until = ?, claim_token = ?
     WHERE seq IN (SELECT seq FROM webhook_deliveries
                   WHERE status = 'pending' AND next_attempt_at <= ? AND (claimed_until IS NULL OR claimed_until <= ?)
                   ORDER BY next_attempt_at, seq LIMIT ?${this.skipLocked()})
     RETURNING *`,
      [wallNowMs + leaseMs, claimToken, nowMs, wallNowMs, limit],
    );
    const claimed = rows.map(toWebhookDelivery).sort((a, b) => (a.nextAttemptAtMs ?? 0) - (b.nextAttemptAtMs ?? 0));
    return this.withSubscriptions(claimed, claimToken, wallNowMs + leaseMs);
  }
  async claimWebhookDelivery(
    companyId: string,
    callbackId: string,
    wallNowMs: number,
    leaseMs: number,
    claimToken: string,
  ) {
    const rows = await this.db.all(
      `UPDATE webhook_deliveries SET claimed_until = ?, claim_token = ?
     WHERE callback_id = ? AND company_id = ? AND (claimed_until IS NULL OR claimed_until <= ?) RETURNING *`,
      [wallNowMs + leaseMs, claimToken, callbackId, companyId, wallNowMs],
    );
    if (rows.length === 0)
      return (await this.findWebhookDelivery(companyId, callbackId)) ? ('busy' as const) : undefined;
    return (await this.withSubscriptions(rows.map(toWebhookDelivery), claimToken, wallNowMs + leaseMs))[0];
  }
  protected async withSubscriptions(
    rows: WebhookDeliveryRow[],
    claimToken: string,
    claimedUntilMs: number,
  ): Promise<ClaimedWebhookDelivery[]> {
    if (rows.length === 0) return [];
    const ids = [...new Set(rows.map((r) => r.webhookId))];
    const [inIds, params] = this.inList('webhook_id', ids);
    const subs = new Map(
      (await this.db.all(`SELECT * FROM webhook_subscriptions WHERE ${inIds}`, params)).map((r) => [
        String(r.webhook_id),
        toWebhookSubscription(r),
      ]),
    );
    return rows.map((d) => {
      const sub = subs.get(d.webhookId);
      const subscriptionState =
        !sub || sub.deletedAtMs !== null
          ? ('deleted' as const)
          : sub.disabledAtMs !== null
            ? ('disabled' as const)
            : ('active' as const);
      return { ...d, claimToken, claimedUntilMs, url: sub?.url ?? '', secret: sub?.secret ?? '', subscriptionState };
    });
  }
  async recordWebhookDeliveries(updates: WebhookDeliveryUpdate[]) {
    for (const u of updates) {
      if (u.attempt)
        await this.db.run(
          `INSERT INTO webhook_attempts (${WEBHOOK_ATTEMPT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`,
          webhookAttemptParams(u.attempt, (b) => this.bool(b)),
        );
      await this.db.run(
        'UPDATE webhook_deliveries SET status = ?, attempts = attempts + ?, next_attempt_at = ?, delivered_at = ?, ' +
          `last_error = ?, claimed_until = NULL, claim_token = NULL
       WHERE callback_id = ? AND claim_token = ?`,
        [u.status, u.attempt ? 1 : 0, u.nextAttemptAtMs, u.deliveredAtMs, u.lastError, u.callbackId, u.claimToken],
      );
      if (u.disable) {
        await this.db.run(
          'UPDATE webhook_subscriptions SET disabled_at = ?, disabled_reason = ? ' +
            'WHERE webhook_id = ? AND disabled_at IS NULL',
          [u.disable.atMs, u.disable.reason, u.disable.webhookId],
        );
      }
    }
  }
  async deleteWebhookDeliveriesBefore(createdBeforeMs: number, wallNowMs: number, limit: number) {
    const ids = (
      await this.db.all(
        `SELECT callback_id FROM webhook_deliveries
     WHERE created_at < ? AND status <> 'pending' AND (claimed_until IS NULL OR claimed_until <= ?)
     ORDER BY created_at LIMIT ?${this.skipLocked()}`,
        [createdBeforeMs, wallNowMs, limit],
      )
    ).map((r) => String(r.callback_id));
    if (ids.length === 0) return 0;
    const [inIds, params] = this.inList('callback_id', ids);
    await this.db.run(`DELETE FROM webhook_attempts WHERE ${inIds}`, params);
    return this.db.run(`DELETE FROM webhook_deliveries WHERE ${inIds}`, params);
  }
}
