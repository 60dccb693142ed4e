/**
 * Threshold refill decisions (contract "Auto-refill"): after a change leaves `available`
 * below `threshold`, the card is charged `usd_charge` and, only if that succeeds, `amount` is
 * added. At most one refill is in flight per balance. A declined charge adds nothing and is
 * retried only on the next change; after DECLINES_BEFORE_PAUSE declines in a row the threshold
 * refill pauses, so a dead card is not charged on every event of a busy account. With
 * `max_refills_per_month`, threshold refills past it in a UTC month are not attempted (contract
 * "Spend limits and alerts"): a runaway loop cannot charge the card without end.
 */

import { monthStart } from './time.js';

/** Consecutive declined refill charges after which threshold refill stops trying. */
export const DECLINES_BEFORE_PAUSE = 3;

export interface ThresholdRefillState {
  /** The balance's `available` (amount − pending) after the change. */
  available: number;
  /** `refill_threshold`, or null when unset. */
  threshold: number | null;
  /** `refill_amount`, or null when unset. */
  refillAmount: number | null;
  /** `refill_usd_amount`, or null when unset. */
  refillUsdCents: number | null;
  /** A refill charge for this balance has started and not finished. */
  inFlight: boolean;
  /** Paused after repeated declines. */
  paused: boolean;
  /** `max_refills_per_month`, or null: no cap. */
  maxPerMonth?: number | null;
  /** Threshold refills started in the current UTC month (refillsInMonth). */
  refillsThisMonth?: number;
}

export type ThresholdRefillDecision =
  | { refill: true }
  | {
      refill: false;
      reason:
        | 'refill_settings_incomplete'
        | 'available_not_below_threshold'
        | 'refill_already_in_flight'
        | 'refill_paused_after_declines'
        | 'refill_capped_for_month';
    };

/**
 * Settings are complete when threshold, amount and price are all set and the amount is
 * positive (a refill of 0 units would charge for nothing). A price of 0 cents is allowed:
 * a company may grant free refills.
 */
export function thresholdRefillDecision(s: ThresholdRefillState): ThresholdRefillDecision {
  if (s.threshold === null || s.refillAmount === null || s.refillUsdCents === null || s.refillAmount <= 0) {
    return { refill: false, reason: 'refill_settings_incomplete' };
  }
  if (s.paused) return { refill: false, reason: 'refill_paused_after_declines' };
  if (s.inFlight) return { refill: false, reason: 'refill_already_in_flight' };
  if (s.available >= s.threshold) return { refill: false, reason: 'available_not_below_threshold' };
  if (s.maxPerMonth != null && (s.refillsThisMonth ?? 0) >= s.maxPerMonth)
    return { refill: false, reason: 'refill_capped_for_month' };
  return { refill: true };
}

/** Threshold refills started in a UTC month, as stored: the month's start and the count. */
export interface MonthlyRefillCount {
  monthStartMs: number;
  count: number;
}

/** The count of the month holding `nowMs` (a count of an earlier month reads 0). */
export function refillsInMonth(stored: MonthlyRefillCount, nowMs: number): number {
  return stored.monthStartMs === monthStart(nowMs) ? stored.count : 0;
}

/** The count after one more threshold refill is started at `nowMs`. */
export function countRefill(stored: MonthlyRefillCount, nowMs: number): MonthlyRefillCount {
  return { monthStartMs: monthStart(nowMs), count: refillsInMonth(stored, nowMs) + 1 };
}

/**
 * - `succeeded`: the card was charged; the streak ends.
 * - `declined`: the processor refused the card; the streak grows.
 * - `processor_error`: the processor could not be reached or failed on its side; says
 *   nothing about the card, so the streak is left as it was.
 */
export type ChargeOutcome = 'succeeded' | 'declined' | 'processor_error';

export interface DeclineState {
  consecutiveDeclines: number;
  paused: boolean;
}

/**
 * The decline streak after a refill charge. Attaching a card resets it (to 0, unpaused:
 * operations/cards.ts); saving the auto-refill settings again does not.
 */
export function afterChargeOutcome(consecutiveDeclines: number, outcome: ChargeOutcome): DeclineState {
  if (!Number.isSafeInteger(consecutiveDeclines) || consecutiveDeclines < 0) {
    throw new RangeError(`consecutiveDeclines must be a non-negative integer, got ${consecutiveDeclines}`);
  }
  const count = outcome === 'succeeded' ? 0 : outcome === 'declined' ? consecutiveDeclines + 1 : consecutiveDeclines;
  return { consecutiveDeclines: count, paused: count >= DECLINES_BEFORE_PAUSE };
}
