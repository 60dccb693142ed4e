/**
 * The monthly refill job: balances whose monthly refill is due, claimed one per transaction
 * (PostgreSQL `FOR UPDATE SKIP LOCKED`, SQLite's single writer), each requesting its refill's charge
 * through the outbox (carried out by the charge worker, charges.ts).
 */
import type { Deps } from '../operations/deps.js';
import { startDueMonthlyRefill } from '../operations/refills.js';
import { type Job, scheduleJob } from './runner.js';

export function refillJob(deps: Deps): Job {
  return scheduleJob(deps, 'monthly-refills', async (tx, nowMs) => {
    const due = await tx.refills.claimDueMonthlyRefill(nowMs);
    if (due) await startDueMonthlyRefill(tx, deps.clock.now(), due);
    return due !== undefined;
  });
}
