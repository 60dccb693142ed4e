/**
 * What one PostgreSQL transaction reads ahead for a later statement of its own: the live webhook subscriptions of
 * the companies whose balances it locks. The balance effect that writes notifications asks for exactly those after
 * each posting (operations/notifications.ts); read in the statement that locks the balances (PgLedger), they save
 * the transaction the round trip of their own query (PgWebhooks). A subscription created, deleted or disabled in
 * the transaction forgets them (no transaction that changes balances writes one).
 */
import type { WebhookTarget, WebhookType } from '../webhooks/types.js';

export class TxReadAhead {
  /** Company id → its live subscriptions, as read with its locked balances. */
  readonly #targets = new Map<string, WebhookTarget[]>();

  /** Keeps a company's subscriptions as the lock statement returned them (`[id, type, threshold]` each), once. */
  keepTargets(companyId: string, read: unknown): void {
    if (this.#targets.has(companyId)) return;
    const rows = (read ?? []) as [string, string, string | null][];
    this.#targets.set(
      companyId,
      rows.map(([webhookId, type, threshold]) => ({
        webhookId,
        companyId,
        type: type as WebhookType,
        threshold: threshold === null ? null : Number(threshold),
      })),
    );
  }

  /** The subscriptions of a company read ahead, or undefined when they were not. */
  targetsOf(companyId: string): WebhookTarget[] | undefined {
    return this.#targets.get(companyId);
  }

  /** Forgets what was read ahead (a subscription was written in this transaction). */
  forgetTargets(): void {
    this.#targets.clear();
  }
}
