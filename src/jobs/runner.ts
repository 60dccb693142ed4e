/**
 * Background work: each job kind is a function that does one bounded batch of what is due at
 * `nowMs` and says how much it did. `runDue` repeats every kind until nothing is due (the test
 * clock's advance waits for it); `start` polls on an interval with the injected clock.
 * Jobs claim their rows safely across processes (PostgreSQL SKIP LOCKED, SQLite's single writer).
 */
import { IDEMPOTENCY_RETENTION_MS } from '../domain/limits.js';
import { resolveEndedAlerts } from '../operations/alerts.js';
import { endOverrides } from '../operations/features.js';
import type { Deps } from '../operations/deps.js';
import type { Tx } from '../store/types.js';

export interface Job {
  name: string;
  /** Does one batch of work due at `nowMs`; returns how many items it handled (0: nothing due). */
  runOnce(nowMs: number): Promise<number>;
}

export function coreJobs(deps: Deps): Job[] {
  return [
    {
      name: 'expire-holds',
      runOnce: (nowMs) => deps.store.write((tx) => deps.ledger.expireHolds(tx, nowMs)),
    },
    {
      name: 'forget-idempotency-keys',
      runOnce: (nowMs) =>
        deps.store
          .write((tx) => tx.idempotency.deleteIdempotencyBefore(nowMs - IDEMPOTENCY_RETENTION_MS))
          .then(() => 0),
    },
  ];
}

/**
 * Grant starts and expiries of balances nobody touches (every read and write applies its own first).
 * The server runs it after the refill, plan and charge jobs: a plan renewal due at the same instant
 * ends the plan's grant inside its one period_reset transaction, before this job would expire it.
 */
export function grantJob(deps: Deps): Job {
  return {
    name: 'apply-grant-instants',
    runOnce: (nowMs) => deps.store.write((tx) => deps.ledger.applyDueGrants(tx, nowMs)),
  };
}

/**
 * Spend alerts triggered in a window that has ended, on balances nobody has touched since: their
 * `alert_resolved` notifications (a read already shows them resolved; a change of the balance writes them
 * itself). After the grant job: a grant expiry at midnight is applied, and decided, first.
 */
export function alertJob(deps: Deps): Job {
  return {
    name: 'resolve-ended-alerts',
    runOnce: (nowMs) => deps.store.write((tx) => resolveEndedAlerts(deps, tx, nowMs)),
  };
}

/** Feature overrides whose `expires_at` has come: ended, each with its `entitlements_change`. */
export function overrideJob(deps: Deps): Job {
  return { name: 'end-feature-overrides', runOnce: (nowMs) => deps.store.write((tx) => endOverrides(tx, nowMs)) };
}

/** Schedule rows handled per job round (each in its own transaction). */
const SCHEDULE_BATCH_MAX = 100;

/**
 * A job over due schedule rows: `claimAndRun` claims one due row in a transaction (PostgreSQL
 * `FOR UPDATE SKIP LOCKED`, SQLite's single writer) and runs it there, saying whether it found one;
 * a round handles up to SCHEDULE_BATCH_MAX rows, one transaction each.
 */
export function scheduleJob(deps: Deps, name: string, claimAndRun: (tx: Tx, nowMs: number) => Promise<boolean>): Job {
  return {
    name,
    async runOnce(nowMs) {
      let handled = 0;
      while (handled < SCHEDULE_BATCH_MAX && (await deps.store.write((tx) => claimAndRun(tx, nowMs)))) handled++;
      return handled;
    },
  };
}

/** Safety stop for runDue: a job that always reports work would otherwise spin forever. */
const ROUNDS_MAX = 100_000;

export class JobRunner {
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #stopping = false;

  constructor(
    private readonly deps: Deps,
    private readonly jobs: Job[],
    private readonly onError: (job: string, err: unknown) => void,
  ) {}

  /** Runs every job until none has anything due at `nowMs`. */
  async runDue(nowMs: number): Promise<void> {
    for (let round = 0; round < ROUNDS_MAX; round++) {
      let did = 0;
      for (const job of this.jobs) {
        // Shutting down: the batch a job has claimed is finished, no new one is started.
        if (this.#stopping) return;
        did += await job.runOnce(nowMs);
      }
      if (did === 0) return;
    }
    throw new Error('jobs kept reporting work; giving up this round');
  }

  start(intervalMs: number): void {
    const tick = () => {
      if (this.#running) return;
      this.#running = this.runDue(this.deps.clock.now())
        .catch((err) => this.onError('runDue', err))
        .finally(() => {
          this.#running = null;
        });
    };
    this.#timer = setInterval(tick, intervalMs);
    this.#timer.unref();
  }

  /** Stops polling and waits for the round in progress to finish its current job's batch. */
  async stop(): Promise<void> {
    this.#stopping = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#running;
  }
}
