// Guarantees: the monthly day rule puts every refill on day d (d ≤ 28) or the 1st (d > 28), one per calendar month,
// none skipped or doubled, for every start date.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  LAST_DAY_IN_EVERY_MONTH,
  anchorDay,
  nextRefillAfter,
  recurringRefillDay,
  refillAt,
  refillDayOf,
  refillSchedule,
} from '../../src/domain/monthly.js';

const DAY_MS = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
const at = (s: string) => Date.parse(s);

function scheduleIso(start: string, count: number): string[] {
  return refillSchedule(at(start), count).map(iso);
}

test('set on the 15th: refills on the 15th of every month, at 00:00 UTC after the first', () => {
  assert.deepEqual(scheduleIso('2025-01-15T10:30:00.000Z', 4), [
    '2025-01-15T10:30:00.000Z',
    '2025-02-15T00:00:00.000Z',
    '2025-03-15T00:00:00.000Z',
    '2025-04-15T00:00:00.000Z',
  ]);
  assert.equal(refillDayOf(at('2025-01-15T10:30:00Z')), '15');
  assert.equal(anchorDay(at('2025-01-15T10:30:00Z')), 15);
});

test('set on 30 January: 30 Jan, 1 Mar, 1 Apr, 1 May', () => {
  assert.deepEqual(scheduleIso('2025-01-30T08:00:00.000Z', 4), [
    '2025-01-30T08:00:00.000Z',
    '2025-03-01T00:00:00.000Z',
    '2025-04-01T00:00:00.000Z',
    '2025-05-01T00:00:00.000Z',
  ]);
  assert.equal(refillDayOf(at('2025-01-30T08:00:00Z')), '1');
  assert.equal(anchorDay(at('2025-01-30T08:00:00Z')), 30);
});

test('set on 31 December: 31 Dec, 1 Feb, 1 Mar (across the year end)', () => {
  assert.deepEqual(scheduleIso('2024-12-31T23:59:59.999Z', 3), [
    '2024-12-31T23:59:59.999Z',
    '2025-02-01T00:00:00.000Z',
    '2025-03-01T00:00:00.000Z',
  ]);
});

test('set on 29 February of a leap year: 29 Feb, 1 Apr, 1 May', () => {
  assert.deepEqual(scheduleIso('2024-02-29T12:00:00.000Z', 3), [
    '2024-02-29T12:00:00.000Z',
    '2024-04-01T00:00:00.000Z',
    '2024-05-01T00:00:00.000Z',
  ]);
});

test('set on the 28th: stays on the 28th, February included', () => {
  assert.deepEqual(scheduleIso('2025-01-28T00:00:00.000Z', 4), [
    '2025-01-28T00:00:00.000Z',
    '2025-02-28T00:00:00.000Z',
    '2025-03-28T00:00:00.000Z',
    '2025-04-28T00:00:00.000Z',
  ]);
  assert.equal(refillDayOf(at('2025-01-28T00:00:00Z')), '28');
  assert.equal(recurringRefillDay(at('2025-01-28T00:00:00Z')), 28);
});

test('set on the 29th of a 31-day month: next on the 1st of the second following month', () => {
  assert.deepEqual(scheduleIso('2025-03-29T05:00:00.000Z', 3), [
    '2025-03-29T05:00:00.000Z',
    '2025-05-01T00:00:00.000Z',
    '2025-06-01T00:00:00.000Z',
  ]);
});

test('nextRefillAfter: before the start gives the start; from a refill gives the following one', () => {
  const start = at('2025-01-30T08:00:00Z');
  assert.equal(nextRefillAfter(start, start - 1), start);
  assert.equal(iso(nextRefillAfter(start, start)), '2025-03-01T00:00:00.000Z');
  assert.equal(iso(nextRefillAfter(start, at('2025-03-01T00:00:00Z'))), '2025-04-01T00:00:00.000Z');
  // a worker that wakes two days late and passes its wake-up time still gets the next instant
  assert.equal(iso(nextRefillAfter(start, at('2025-03-03T07:00:00Z'))), '2025-04-01T00:00:00.000Z');
  // one millisecond before a refill gives that refill
  assert.equal(iso(nextRefillAfter(start, at('2025-03-31T23:59:59.999Z'))), '2025-04-01T00:00:00.000Z');
});

test('bad instants and indices are refused', () => {
  assert.throws(() => refillAt(1.5, 1), RangeError);
  assert.throws(() => refillAt(0, -1), RangeError);
  assert.throws(() => nextRefillAfter(0, Number.NaN), RangeError);
  assert.throws(() => anchorDay(9e15), RangeError);
});

const monthIndex = (ms: number) => {
  const d = new Date(ms);
  return d.getUTCFullYear() * 12 + d.getUTCMonth();
};

test('every start day from 2000-01-01 to 2100-12-31: 14 refills follow the day rule', () => {
  const first = Date.UTC(2000, 0, 1);
  const last = Date.UTC(2100, 11, 31);
  let starts = 0;
  for (let dayMs = first, i = 0; dayMs <= last; dayMs += DAY_MS, i += 1) {
    const start = dayMs + ((i * 7_919_123) % DAY_MS); // a varying time of day, 00:00 included
    const d = new Date(start).getUTCDate();
    const expectedDay = d <= LAST_DAY_IN_EVERY_MONTH ? d : 1;
    const r = refillSchedule(start, 14);
    const where = iso(start);

    assert.equal(r[0], start, where);
    assert.equal(refillDayOf(start), String(expectedDay), where);
    for (let k = 1; k < r.length; k += 1) {
      const prev = r[k - 1]!;
      const cur = r[k]!;
      assert.ok(cur > prev, `${where}: refill ${k} not after refill ${k - 1}`);
      const c = new Date(cur);
      assert.equal(c.getUTCDate(), expectedDay, `${where}: refill ${k} on day ${c.getUTCDate()}`);
      assert.equal(cur % DAY_MS, 0, `${where}: refill ${k} not at 00:00 UTC`);
      // month of refill 1: the next month (d ≤ 28) or the second following one (d > 28);
      // afterwards exactly one calendar month apart: no month skipped or doubled
      const monthsApart = monthIndex(cur) - monthIndex(prev);
      const expectedApart = k === 1 && d > LAST_DAY_IN_EVERY_MONTH ? 2 : 1;
      assert.equal(monthsApart, expectedApart, `${where}: refill ${k} ${monthsApart} months after the previous`);
      assert.equal(nextRefillAfter(start, prev), cur, `${where}: nextRefillAfter refill ${k - 1}`);
    }
    starts += 1;
  }
  assert.equal(starts, 36_890);
});

const instant = fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2200, 0, 1) });

test('property: nextRefillAfter is the smallest schedule instant strictly after any instant', () => {
  fc.assert(
    fc.property(instant, fc.integer({ min: -DAY_MS, max: 400 * 40 * DAY_MS }), (start, offset) => {
      const t = start + offset;
      const next = nextRefillAfter(start, t);
      assert.ok(next > t);
      if (t < start) {
        assert.equal(next, start);
        return;
      }
      // next is refill k for some k ≥ 1, and refill k − 1 is not after t
      let k = 1;
      while (refillAt(start, k) < next) k += 1;
      assert.equal(refillAt(start, k), next);
      assert.ok(refillAt(start, k - 1) <= t);
    }),
    { numRuns: 2000 },
  );
});

test(
  'property: a late wake-up, passing either the due instant ' + 'or the wake time, never skips or repeats a refill',
  () => {
    fc.assert(
      fc.property(
        instant,
        fc.integer({ min: 0, max: 200 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (start, k, f) => {
          const due = refillAt(start, k);
          const following = refillAt(start, k + 1);
          const wake = due + Math.floor((following - due - 1) * f); // late, but before the following refill
          assert.equal(nextRefillAfter(start, due), following);
          assert.equal(nextRefillAfter(start, wake), following);
        },
      ),
      { numRuns: 2000 },
    );
  },
);
