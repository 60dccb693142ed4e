/**
 * Webhooks on PostgreSQL: one statement per batch of deliveries and attempts instead of one round trip per row; the
 * subscriptions of companies whose balances the transaction locked are read with the lock (read-ahead.ts).
 */
import type {
  WebhookDeliveryRow,
  WebhookDeliveryUpdate,
  WebhookSubscriptionRow,
  WebhookTarget,
} from '../webhooks/types.js';
import { WEBHOOK_ATTEMPT_COLUMNS, WEBHOOK_DELIVERY_COLUMNS, WebhooksSql } from '../webhooks/sql.js';
import { POSTGRES } from './dialect.js';
import type { PgExec } from './exec.js';
import type { TxReadAhead } from './read-ahead.js';

export class PgWebhooks extends WebhooksSql {
  constructor(
    db: PgExec,
    private readonly ahead: TxReadAhead,
  ) {
    super(db, POSTGRES);
  }
  /** Those of companies whose balances this transaction locked were read with them (read-ahead.ts): no query. */
  override async findWebhookTargets(companyIds: string[]): Promise<WebhookTarget[]> {
    const out: WebhookTarget[] = [];
    const rest: string[] = [];
    for (const c of new Set(companyIds)) {
      const known = this.ahead.targetsOf(c);
      if (known === undefined) rest.push(c);
      else for (const t of known) out.push(t);
    }
    if (rest.length === 0) return out;
    const rows = await this.db.all(
      `SELECT webhook_id, company_id, type, threshold FROM webhook_subscriptions
       WHERE company_id = ANY(?::text[]) AND deleted_at IS NULL AND disabled_at IS NULL ORDER BY seq`,
      [rest],
    );
    for (const r of rows)
      out.push({
        webhookId: String(r.webhook_id),
        companyId: String(r.company_id),
        type: String(r.type) as WebhookTarget['type'],
        threshold: r.threshold === null ? null : Number(r.threshold),
      });
    return out;
  }
  override async insertWebhookSubscription(w: WebhookSubscriptionRow) {
    this.ahead.forgetTargets();
    return super.insertWebhookSubscription(w);
  }
  override async deleteWebhookSubscription(companyId: string, webhookId: string, atMs: number) {
    this.ahead.forgetTargets();
    return super.deleteWebhookSubscription(companyId, webhookId, atMs);
  }
  override async insertWebhookDeliveries(rows: WebhookDeliveryRow[]) {
    if (rows.length === 0) return;
    await this.db.run(
      `INSERT INTO webhook_deliveries (${WEBHOOK_DELIVERY_COLUMNS})
       SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::int[], ?::bigint[], ` +
        `?::bigint[], ?::bigint[], ?::text[])
       ON CONFLICT (callback_id) DO NOTHING`,
      [
        rows.map((d) => d.callbackId),
        rows.map((d) => d.webhookId),
        rows.map((d) => d.companyId),
        rows.map((d) => d.type),
        rows.map((d) => d.payload),
        rows.map((d) => d.status),
        rows.map((d) => d.attempts),
        rows.map((d) => d.nextAttemptAtMs),
        rows.map((d) => d.createdAtMs),
        rows.map((d) => d.deliveredAtMs),
        rows.map((d) => d.lastError),
      ],
    );
  }
  override async recordWebhookDeliveries(updates: WebhookDeliveryUpdate[]) {
    if (updates.length === 0) return;
    const attempts = updates.flatMap((u) => (u.attempt ? [u.attempt] : []));
    if (attempts.length > 0) {
      await this.db.run(
        `INSERT INTO webhook_attempts (${WEBHOOK_ATTEMPT_COLUMNS})
         SELECT * FROM unnest(?::text[], ?::bigint[], ?::int[], ?::int[], ?::text[], ?::text[], ?::boolean[])`,
        [
          attempts.map((a) => a.callbackId),
          attempts.map((a) => a.attemptedAtMs),
          attempts.map((a) => a.statusCode),
          attempts.map((a) => a.latencyMs),
          attempts.map((a) => a.responseSnippet),
          attempts.map((a) => a.error),
          attempts.map((a) => a.manual),
        ],
      );
    }
    await this.db.run(
      `UPDATE webhook_deliveries d SET status = u.status, attempts = d.attempts + u.attempted, ` +
        `next_attempt_at = u.next_attempt_at,
         delivered_at = u.delivered_at, last_error = u.last_error, claimed_until = NULL, claim_token = NULL
       FROM unnest(?::text[], ?::text[], ?::text[], ?::int[], ?::bigint[], ?::bigint[], ?::text[])
         AS u(callback_id, claim_token, status, attempted, next_attempt_at, delivered_at, last_error)
       WHERE d.callback_id = u.callback_id AND d.claim_token = u.claim_token`,
      [
        updates.map((u) => u.callbackId),
        updates.map((u) => u.claimToken),
        updates.map((u) => u.status),
        updates.map((u) => (u.attempt ? 1 : 0)),
        updates.map((u) => u.nextAttemptAtMs),
        updates.map((u) => u.deliveredAtMs),
        updates.map((u) => u.lastError),
      ],
    );
    for (const u of updates) {
      if (!u.disable) continue;
      this.ahead.forgetTargets();
      await this.db.run(
        'UPDATE webhook_subscriptions SET disabled_at = ?, disabled_reason = ? ' +
          'WHERE webhook_id = ? AND disabled_at IS NULL',
        [u.disable.atMs, u.disable.reason, u.disable.webhookId],
      );
    }
  }
}
