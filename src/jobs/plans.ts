/**
 * The plan renewal job: plan accounts whose period has ended, claimed one per transaction
 * (PostgreSQL `FOR UPDATE SKIP LOCKED`, SQLite's single writer), each renewed (operations/plans.ts).
 */
import type { Deps } from '../operations/deps.js';
import { renewPlanPeriod } from '../operations/plans.js';
import { type Job, scheduleJob } from './runner.js';

export function planJob(deps: Deps): Job {
  return scheduleJob(deps, 'plan-renewals', async (tx, nowMs) => {
    const due = await tx.plans.claimDuePlanRenewal(nowMs);
    if (due) await renewPlanPeriod(deps.ledger, tx, deps.clock.now(), due);
    return due !== undefined;
  });
}
