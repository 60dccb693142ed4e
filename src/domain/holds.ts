/**
 * Holds: a pending event holds its cost apart from the posted amount (TigerBeetle's two-phase
 * transfer). `pending` grows by the held cost; `amount` moves only when the hold is settled as
 * complete. A hold is resolved exactly once: complete, cancelled, or expired after an hour. What
 * a settle does to the balance's grants is domain/grants.ts (`settleHold`, `releaseHold`).
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

/** What repeating or changing the state of an event means: the contract's settle rules. */
export type SettleDecision = 'apply' | 'noop' | 'not_pending';

export function decideSettle(current: EventState, requested: 'complete' | 'cancelled'): SettleDecision {
  if (current === 'pending') return 'apply';
  return current === requested ? 'noop' : 'not_pending';
}
