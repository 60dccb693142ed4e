/**
 * Jobs: the outbox. Rows written in the transaction of a balance change, describing a side effect
 * (a webhook, a charge) that workers claim and carry out after the commit; and their retention.
 */

export interface OutboxRow {
  outboxId: string;
  companyId: string;
  /** What the worker should do: e.g. `webhook.balance_change`, `charge.refill`. */
  topic: string;
  payload: Record<string, unknown>;
  runAtMs: number;
  createdAtMs: number;
}

/** An outbox row handed to one worker: nobody else gets it until `claimedUntilMs` passes. */
export interface ClaimedOutboxRow extends OutboxRow {
  /** How many times it has been claimed, this claim included. */
  attempts: number;
  claimedUntilMs: number;
}

export interface OutboxReadTx {
  /** Outbox rows of a company whose topic starts with `topicPrefix`, oldest first (done or not). */
  listOutboxOfCompany(companyId: string, topicPrefix: string): Promise<OutboxRow[]>;
  /** Unfinished rows (for /metrics): how many, and the earliest `run_at` among those due at `nowMs`. */
  outboxBacklog(nowMs: number): Promise<Backlog>;
}

/** A queue's backlog, read at scrape time through the queue's partial index. */
export interface Backlog {
  /** Items not finished (due now or scheduled later). */
  pending: number;
  /** The `run_at` of the longest-waiting item that is due, or null when none is due. */
  oldestDueAtMs: number | null;
}

export interface OutboxTx extends OutboxReadTx {
  insertOutbox(rows: OutboxRow[]): Promise<void>;
  /**
   * Claims up to `limit` due, unfinished outbox rows whose topic starts with `topicPrefix`
   * (run_at ≤ now, no live claim), oldest first, leasing them until `nowMs + leaseMs`.
   * Safe with many processes: PostgreSQL skips rows another transaction holds (SKIP LOCKED);
   * SQLite's single writer serialises claims.
   */
  claimOutbox(topicPrefix: string, nowMs: number, leaseMs: number, limit: number): Promise<ClaimedOutboxRow[]>;
  /** Marks a claimed row done. */
  completeOutbox(outboxId: string, nowMs: number): Promise<void>;
  /** Releases a claimed row to run again at `runAtMs`, remembering why it failed. */
  retryOutbox(outboxId: string, runAtMs: number, error: string | null): Promise<void>;
  /** Deletes up to `limit` rows finished before `doneBeforeMs`, oldest first; returns how many. */
  deleteFinishedOutbox(doneBeforeMs: number, limit: number): Promise<number>;
}
