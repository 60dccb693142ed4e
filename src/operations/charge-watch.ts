/**
 * Charges waiting for the customer at a processor that keeps the payment's state (Stripe): a charge `requires_action`
 * at Stripe's hosted page, or failed for want of the customer and still completable. The customer may authenticate and
 * close the tab before their browser comes back, or never come at all; so each such charge gets an outbox row of its
 * own (topic `charge_action.check`), written in the transaction that left it waiting, which becomes the charge's
 * `outboxId`: whoever records the charge's end (the customer's return, or the job) completes it in that transaction.
 * The job (jobs/charge-actions.ts) claims due rows like every outbox worker (leased, PostgreSQL SKIP LOCKED), reads
 * the payment, records it once it ended, and past the deadline gives it up (charge-actions.ts settleWaitingCharge).
 */
import { backoffDelayMs } from '../lib/backoff.js';
import { newId } from '../lib/ids.js';
import type { ChargeRow, Tx } from '../store/types.js';

/** The outbox topic of the checks (not under `charge.`: the charge worker does not take them). */
export const CHARGE_ACTION_TOPIC = 'charge_action.check';
/** The first check, and the base of the backoff between checks: about how long a 3-D Secure page takes. */
export const CHARGE_ACTION_CHECK_MS = 15 * 60_000;
/** The longest wait between two checks of the same payment. */
export const CHARGE_ACTION_CHECK_MAX_MS = 6 * 60 * 60_000;

/** Writes the check of a charge that now waits for the customer; answers its outbox id (the charge's from now on). */
export async function watchCharge(tx: Tx, charge: ChargeRow, nowMs: number): Promise<string> {
  const outboxId = newId('ob');
  await tx.outbox.insertOutbox([
    {
      outboxId,
      companyId: charge.companyId,
      topic: CHARGE_ACTION_TOPIC,
      payload: { charge_id: charge.chargeId },
      runAtMs: nowMs + CHARGE_ACTION_CHECK_MS,
      createdAtMs: nowMs,
    },
  ]);
  return outboxId;
}

/** When to look again after check number `attempts` (1-based) found the payment still open: never past `deadlineMs`. */
export function nextCheckAt(nowMs: number, attempts: number, deadlineMs: number): number {
  const later = nowMs + backoffDelayMs(attempts, CHARGE_ACTION_CHECK_MS, CHARGE_ACTION_CHECK_MAX_MS);
  return deadlineMs > nowMs ? Math.min(later, deadlineMs) : later;
}
