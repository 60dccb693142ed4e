/**
 * The charge worker: the charges requested through the outbox (refills, plan charges, overage,
 * proration) carried out after the commit that decided them, a few processor calls at once
 * (operations/charges.ts carryOutCharge records each outcome in its own transaction).
 */
import { CHARGE_LEASE_MS, CHARGE_TOPIC_PREFIX, carryOutCharge } from '../operations/charges.js';
import type { Deps } from '../operations/deps.js';
import { outboxJob } from './outbox.js';
import type { Job } from './runner.js';

const CHARGE_BATCH_SIZE = 20;
/** Processor calls in flight at once per worker. */
const CHARGE_CONCURRENCY = 4;

/** Told each charge the worker carried out: its reason (refill, plan…) and status (or `retry`). */
export type ChargeObserver = (reason: string, outcome: string) => void;

export function chargeJob(deps: Deps, onCharge?: ChargeObserver): Job {
  return outboxJob(
    deps,
    'charges',
    CHARGE_TOPIC_PREFIX,
    async (row) => {
      const key = row.payload.attempt_key;
      const charge = await carryOutCharge(
        deps,
        String(row.payload.charge_id),
        row.attempts,
        typeof key === 'string' ? key : undefined,
      );
      onCharge?.(row.topic.slice(CHARGE_TOPIC_PREFIX.length), charge.retryAtMs !== undefined ? 'retry' : charge.status);
      if (charge.retryAtMs !== undefined)
        return { done: false, retryAtMs: charge.retryAtMs, error: charge.failureMessage ?? 'processor unavailable' };
      return { done: true, completed: charge.outboxCompleted === true };
    },
    { leaseMs: CHARGE_LEASE_MS, batchSize: CHARGE_BATCH_SIZE, concurrency: CHARGE_CONCURRENCY },
  );
}
