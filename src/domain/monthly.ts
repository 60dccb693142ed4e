/**
 * The monthly day rule (spec "Monthly refill scheduling rule"; contract "Auto-refill"), in UTC.
 *
 * A schedule is fully determined by its start instant (the moment monthly refill was enabled,
 * the plan account was created, or a mid-month increase was made):
 *
 * - refill 0 is the start instant itself ("refills at once and anchors the day");
 * - start on day d ≤ 28: refill n (n ≥ 1) is on day d of the n-th following month;
 * - start on day d > 28: refill n (n ≥ 1) is on the 1st of the (n + 1)-th following month,
 *   so set on 30 January: 30 Jan, 1 Mar, 1 Apr, …; 31 Dec: 31 Dec, 1 Feb, 1 Mar, …;
 *   29 Feb 2024: 29 Feb, 1 Apr, 1 May, ….
 *
 * Time of day: every refill after the first is due at 00:00 UTC of its day. The rule is stated
 * in days, so a refill is due for the whole of its day: anyone looking at any moment of day d
 * (a client, a test clock advanced to "day d") sees it done, and a start late in the evening
 * never pushes the refill into the next day's business. Only refill 0 keeps its exact instant,
 * because it happens at the moment of setting.
 *
 * Refills are computed from the start and an index, never by adding a month to the previous
 * refill, so late or repeated wake-ups cannot drift the day.
 */

/** Days 1..28 exist in every month; later start days move the schedule to the 1st. */
export const LAST_DAY_IN_EVERY_MONTH = 28;

/** ECMAScript time values are valid within ±8.64e15 ms of the epoch. */
const INSTANT_MS_MAX = 8.64e15;

function assertInstant(ms: number, name: string): void {
  if (!Number.isSafeInteger(ms) || Math.abs(ms) > INSTANT_MS_MAX) {
    throw new RangeError(`${name} must be an integer epoch-millisecond instant, got ${ms}`);
  }
}

interface CalendarDay {
  year: number;
  month: number; // 0-based, as in Date
  day: number;
}

function calendarDayOf(ms: number): CalendarDay {
  const d = new Date(ms);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth(), day: d.getUTCDate() };
}

/** UTC day of month of the start instant (1..31). */
export function anchorDay(startMs: number): number {
  assertInstant(startMs, 'startMs');
  return calendarDayOf(startMs).day;
}

/** Day of month of every refill after the first: the anchor day when ≤ 28, else 1. */
export function recurringRefillDay(startMs: number): number {
  const day = anchorDay(startMs);
  return day <= LAST_DAY_IN_EVERY_MONTH ? day : 1;
}

/**
 * The balance's `refill_on_day` as the contract shows it: a string such as "15" or "1".
 * A start after the 28th is stored as "1", the day every later refill falls on.
 */
export function refillDayOf(startMs: number): string {
  return String(recurringRefillDay(startMs));
}

/** Refill number `index` of the schedule started at `startMs` (index 0 is the start itself). */
export function refillAt(startMs: number, index: number): number {
  assertInstant(startMs, 'startMs');
  if (!Number.isSafeInteger(index) || index < 0) {
    throw new RangeError(`index must be a non-negative integer, got ${index}`);
  }
  if (index === 0) return startMs;
  const { year, month, day } = calendarDayOf(startMs);
  const at = day <= LAST_DAY_IN_EVERY_MONTH ? Date.UTC(year, month + index, day) : Date.UTC(year, month + 1 + index, 1);
  if (!Number.isSafeInteger(at)) throw new RangeError('refill lies beyond the representable dates');
  return at;
}

/** The first `count` refills of the schedule started at `startMs`, in order. */
export function refillSchedule(startMs: number, count: number): number[] {
  if (!Number.isSafeInteger(count) || count < 0) {
    throw new RangeError(`count must be a non-negative integer, got ${count}`);
  }
  return Array.from({ length: count }, (_, i) => refillAt(startMs, i));
}

/**
 * The first refill of the schedule strictly after `afterMs`: the smallest schedule instant
 * greater than it (the start itself when `afterMs` precedes it).
 *
 * Pass the due instant of the refill just done, not the moment a (possibly late) worker ran
 * it: then each missed month is produced in turn and none is skipped. Any instant is accepted,
 * so a caller that passes a wake-up time still gets a real schedule instant, strictly later.
 */
export function nextRefillAfter(startMs: number, afterMs: number): number {
  assertInstant(startMs, 'startMs');
  assertInstant(afterMs, 'afterMs');
  if (afterMs < startMs) return startMs;
  const start = calendarDayOf(startMs);
  const after = calendarDayOf(afterMs);
  const monthsApart = (after.year - start.year) * 12 + (after.month - start.month);
  // Refill n falls in calendar month start+n or start+n+1, so every refill with
  // n ≤ monthsApart − 2 lies in a month before afterMs's month: begin just past them.
  let index = Math.max(1, monthsApart - 2);
  while (refillAt(startMs, index) <= afterMs) index += 1;
  return refillAt(startMs, index);
}
