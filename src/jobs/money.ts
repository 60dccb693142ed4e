/**
 * The workers of money movement: monthly refills and plan renewals started from due schedule
 * rows (one claimed row per transaction: PostgreSQL `FOR UPDATE SKIP LOCKED`, SQLite's single
 * writer), and the charges requested through the outbox. `runDue` runs them in this order until
 * none has work, so a test-clock advance sees every renewal charged and every refill applied.
 */
import { startDueMonthlyRefill } from '../operations/refills.js';
import { carryOutCharge, CHARGE_LEASE_MS, CHARGE_TOPIC_PREFIX } from '../operations/charges.js';
import type { Deps } from '../operations/deps.js';
import { renewPlanPeriod } from '../operations/plans.js';
import type { Tx } from '../store/types.js';
import { outboxJob } from './outbox.js';
import type { Job } from './runner.js';

/** Schedule rows handled per job round (each in its own transaction). */
const SCHEDULE_BATCH_MAX = 100;
const CHARGE_BATCH_SIZE = 20;
/** Processor calls in flight at once per worker. */
const CHARGE_CONCURRENCY = 4;

function scheduleJob(deps: Deps, name: string, claimAndRun: (tx: Tx, nowMs: number) => Promise<boolean>): Job {
  return {
    name,
    async runOnce(nowMs) {
      let handled = 0;
      while (handled < SCHEDULE_BATCH_MAX && (await deps.store.write((tx) => claimAndRun(tx, nowMs)))) handled++;
      return handled;
    },
  };
}

/** Told each charge the worker carried out: its reason (refill, plan…) and status (or `retry`). */
export type ChargeObserver = (reason: string, outcome: string) => void;

export function moneyJobs(deps: Deps, onCharge?: ChargeObserver): Job[] {
  return [
    scheduleJob(deps, 'monthly-refills', async (tx, nowMs) => {
      const due = await tx.claimDueMonthlyRefill(nowMs);
      if (due) await startDueMonthlyRefill(tx, deps.clock.now(), due);
      return due !== undefined;
    }),
    scheduleJob(deps, 'plan-renewals', async (tx, nowMs) => {
      const due = await tx.claimDuePlanRenewal(nowMs);
      if (due) await renewPlanPeriod(deps.ledger, tx, deps.clock.now(), due);
      return due !== undefined;
    }),
    outboxJob(
      deps,
      'charges',
      CHARGE_TOPIC_PREFIX,
      async (row) => {
        const charge = await carryOutCharge(deps, String(row.payload.charge_id), row.attempts);
        onCharge?.(
          row.topic.slice(CHARGE_TOPIC_PREFIX.length),
          charge.retryAtMs !== undefined ? 'retry' : charge.status,
        );
        if (charge.retryAtMs !== undefined)
          return { done: false, retryAtMs: charge.retryAtMs, error: charge.failureMessage ?? 'processor unavailable' };
        return { done: true, completed: charge.outboxCompleted === true };
      },
      { leaseMs: CHARGE_LEASE_MS, batchSize: CHARGE_BATCH_SIZE, concurrency: CHARGE_CONCURRENCY },
    ),
  ];
}
