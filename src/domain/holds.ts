/**
 * Holds: a pending event holds its cost apart from the posted amount (TigerBeetle's two-phase
 * transfer). `pending` grows by the held cost; `amount` moves only when the hold is settled as
 * complete. A hold is resolved exactly once: complete, cancelled, or expired after an hour.
 */
export const HOLD_DURATION_MS = 60 * 60 * 1000;

export type EventState = 'pending' | 'complete' | 'cancelled';

export function available(amount: number, pending: number): number {
  return amount - pending;
}

export function holdExpiresAt(recordedAtMs: number): number {
  return recordedAtMs + HOLD_DURATION_MS;
}

export function isHoldExpired(expiresAtMs: number | null, nowMs: number): boolean {
  return expiresAtMs !== null && expiresAtMs <= nowMs;
}

export interface Settlement {
  /** Change to the balance's posted amount (negative: a debit). */
  amountDelta: number;
  /** Change to the balance's pending amount (releases the hold). */
  pendingDelta: number;
}

/** The balance movement that resolves a hold of `heldCost` into `to`, at `finalCost` when completed. */
export function settleHold(heldCost: number, to: 'complete' | 'cancelled', finalCost: number = heldCost): Settlement {
  if (to === 'cancelled') return { amountDelta: 0, pendingDelta: -heldCost };
  return { amountDelta: -finalCost, pendingDelta: -heldCost };
}

/** What repeating or changing the state of an event means: the contract's settle rules. */
export type SettleDecision = 'apply' | 'noop' | 'not_pending';

export function decideSettle(current: EventState, requested: 'complete' | 'cancelled'): SettleDecision {
  if (current === 'pending') return 'apply';
  return current === requested ? 'noop' : 'not_pending';
}
