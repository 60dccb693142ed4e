/**
 * Holds that outlive their hour are cancelled: by the sweeper job, by a read of the balance,
 * by ingest before it gates on a balance, and by settling an expired event.
 */
import { balanceKey } from '../domain/events.js';
import { settleHold } from '../domain/holds.js';
import type { BalanceKey, EventRow } from '../store/types.js';
import { lockBalanceMap, type NetDelta, type Posting } from './ledger.js';

/** Most holds one sweep transaction cancels; the sweeper loops until none are due. */
export const EXPIRE_BATCH_MAX = 1000;

/** Cancels expired holds (of `only` balances, or any); returns the events cancelled. */
export async function expireHolds(p: Posting, only?: BalanceKey[]): Promise<EventRow[]> {
  const expired = await p.tx.findExpiredHolds(p.nowMs, EXPIRE_BATCH_MAX, only);
  if (expired.length === 0) return [];
  await cancelHolds(p, expired);
  return expired;
}

/** Releases the holds of these (locked, pending) events and marks them cancelled. */
export async function cancelHolds(p: Posting, events: EventRow[]): Promise<void> {
  const { tx, nowMs } = p;
  const deltas = new Map<string, NetDelta>();
  for (const e of events) {
    const key = balanceKey(e.accountId, e.denomination);
    const d = deltas.get(key) ?? { amount: 0, pending: 0 };
    d.pending += settleHold(e.costAmount, 'cancelled').pendingDelta;
    deltas.set(key, d);
  }
  const locked = await lockBalanceMap(tx, events);
  await p.post(locked, [], deltas);
  await tx.updateEvents(
    events.map((e) => ({
      companyId: e.companyId,
      eventId: e.eventId,
      state: 'cancelled' as const,
      costAmount: e.costAmount,
      updatedAtMs: nowMs,
    })),
  );
}
