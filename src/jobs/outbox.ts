/**
 * A worker over the outbox: claim due rows of one topic (leased, safe across processes), carry
 * each out after the commit that wrote it, then mark it done (unless the handler did, in its own
 * transaction) or schedule its next attempt.
 * Handlers run outside any transaction; a crash mid-way leaves the lease to expire and the row
 * to be claimed again, so handlers must be idempotent (processor idempotency keys, webhook ids).
 */
import type { Deps } from '../operations/deps.js';
import type { ClaimedOutboxRow } from '../store/types.js';
import type { Job } from './runner.js';

/**
 * What became of a row. `completed`: the handler completed the row itself, in the transaction that
 * recorded its outcome (a charge), so nothing is left to write.
 */
export type OutboxOutcome = { done: true; completed?: boolean } | { done: false; retryAtMs: number; error: string };

export interface OutboxJobOptions {
  /** How long a claim keeps other workers off a row (longer than one handler run can take). */
  leaseMs: number;
  /** Rows claimed per round. */
  batchSize: number;
  /** Rows handled at once (network-bound handlers benefit from more). */
  concurrency: number;
}

export function outboxJob(
  deps: Deps,
  name: string,
  topicPrefix: string,
  handle: (row: ClaimedOutboxRow, nowMs: number) => Promise<OutboxOutcome>,
  opts: OutboxJobOptions,
): Job {
  return {
    name,
    async runOnce(nowMs) {
      const rows = await deps.store.write((tx) =>
        tx.outbox.claimOutbox(topicPrefix, nowMs, opts.leaseMs, opts.batchSize),
      );
      let next = 0;
      const worker = async () => {
        while (next < rows.length) {
          const row = rows[next++]!;
          let outcome: OutboxOutcome;
          try {
            outcome = await handle(row, nowMs);
          } catch (err) {
            outcome = {
              done: false,
              retryAtMs: nowMs + opts.leaseMs,
              error: err instanceof Error ? err.message : String(err),
            };
          }
          if (outcome.done && outcome.completed) continue;
          await deps.store.write((tx) =>
            outcome.done
              ? tx.outbox.completeOutbox(row.outboxId, deps.clock.now())
              : tx.outbox.retryOutbox(row.outboxId, outcome.retryAtMs, outcome.error),
          );
        }
      };
      await Promise.all(Array.from({ length: Math.min(opts.concurrency, rows.length) }, worker));
      return rows.length;
    },
  };
}
