// Guarantees (domain/spend.ts): spend windows are the UTC day and month of the instant they are read at; units
// taken count in both; units given back leave only the windows that hold the instant they were taken, never below 0;
// a limit passes exactly at its value and refuses one unit above (the day's first); resolving a hold gives back below
// it and takes the difference above it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  applySpend,
  holdResolved,
  limitBreach,
  noSpend,
  type SpendWindows,
  spendAt,
  windowResetsAt,
} from '../../src/domain/spend.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** 2028-02-28T00:00Z: a leap February, its last two days and the month after. */
const FEB28 = Date.UTC(2028, 1, 28);

const instant = fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2035, 0, 1) });

test('windows read at an instant: the same day as stored, a new day at 0, a new month at 0', () => {
  const w: SpendWindows = { ...noSpend(FEB28 + HOUR), day: 5, month: 9 };
  assert.equal(spendAt(w, FEB28 + 23 * HOUR), w, 'the same windows: the stored object');
  assert.deepEqual(spendAt(w, FEB28 + DAY), {
    dayStartMs: FEB28 + DAY,
    day: 0,
    monthStartMs: w.monthStartMs,
    month: 9,
  });
  assert.deepEqual(spendAt(w, FEB28 + 2 * DAY), noSpend(Date.UTC(2028, 2, 1)));
  assert.deepEqual(spendAt({ dayStartMs: 0, day: 7, monthStartMs: 0, month: 7 }, FEB28), noSpend(FEB28));
});

test('units taken count in both windows; given back, only in the windows of the instant they were taken', () => {
  const now = FEB28 + 10 * HOUR;
  const w = applySpend(noSpend(now), [{ units: 30, takenAtMs: now }], now);
  assert.deepEqual([w.day, w.month], [30, 30]);
  const back = applySpend(w, [{ units: -10, takenAtMs: now - HOUR }], now);
  assert.deepEqual([back.day, back.month], [20, 20]);
  const yesterday = applySpend(w, [{ units: -10, takenAtMs: now - DAY }], now);
  assert.deepEqual([yesterday.day, yesterday.month], [30, 20], 'taken yesterday, in this month');
  const lastMonth = applySpend(w, [{ units: -10, takenAtMs: Date.UTC(2028, 0, 31) }], now);
  assert.deepEqual([lastMonth.day, lastMonth.month], [30, 30]);
  const more = applySpend(w, [{ units: -50, takenAtMs: now }], now);
  assert.deepEqual([more.day, more.month], [0, 0], 'never below 0');
  assert.equal(applySpend(w, [{ units: 0, takenAtMs: now }], now), w);
});

test('property: a hold and its resolution leave the windows as the final cost alone would', () => {
  fc.assert(
    fc.property(
      instant,
      fc.integer({ min: 0, max: 1000 }),
      fc.option(fc.integer({ min: 0, max: 2000 })),
      fc.integer({ min: 0, max: 2 * HOUR }),
      fc.integer({ min: 0, max: 500 }),
      (heldAt, held, final, later, before) => {
        const now = heldAt + later;
        const start = applySpend(noSpend(heldAt), [{ units: before, takenAtMs: heldAt }], heldAt);
        const holding = applySpend(start, [{ units: held, takenAtMs: heldAt }], heldAt);
        const resolved = applySpend(holding, [holdResolved(held, heldAt, final, now, 'x')], now);
        const direct = applySpend(start, [{ units: final ?? 0, takenAtMs: heldAt }], now);
        // Within the day it was held in, a resolved hold counts exactly what its final cost would have.
        if (Math.floor(now / DAY) === Math.floor(heldAt / DAY)) assert.deepEqual(resolved, direct);
        // Whatever the windows: never below 0, and never more than was taken.
        assert.ok(resolved.day >= 0 && resolved.month >= 0);
        assert.ok(resolved.month <= before + Math.max(held, final ?? 0));
      },
    ),
  );
});

test('resolving a hold: below it the rest leaves its window; above it the difference is taken now', () => {
  assert.deepEqual(holdResolved(40, 100, 10, 500, 'x'), { units: -30, takenAtMs: 100, eventType: 'x' });
  assert.deepEqual(holdResolved(40, 100, 40, 500, 'x'), { units: 0, takenAtMs: 100, eventType: 'x' });
  assert.deepEqual(holdResolved(40, 100, 46, 500, 'x'), { units: 6, takenAtMs: 500, eventType: 'x' });
  assert.deepEqual(holdResolved(40, 100, null, 500, 'x'), { units: -40, takenAtMs: 100, eventType: 'x' });
});

test('limits: exactly at the limit passes, one unit above is refused, the day before the month', () => {
  const now = FEB28 + 5 * HOUR;
  const w = applySpend(noSpend(now), [{ units: 60, takenAtMs: now }], now);
  assert.equal(limitBreach(w, { daily: 100, monthly: null }, 40, now), undefined);
  assert.deepEqual(limitBreach(w, { daily: 100, monthly: null }, 41, now), {
    window: 'day',
    limit: 100,
    spend: 60,
    resetsAtMs: FEB28 + DAY,
  });
  assert.deepEqual(limitBreach(w, { daily: 100, monthly: 90 }, 41, now)?.window, 'day', 'both passed: the day');
  assert.deepEqual(limitBreach(w, { daily: null, monthly: 90 }, 31, now), {
    window: 'month',
    limit: 90,
    spend: 60,
    resetsAtMs: Date.UTC(2028, 2, 1),
  });
  assert.equal(limitBreach(w, { daily: 10, monthly: 10 }, 0, now), undefined, 'taking nothing passes no limit');
  assert.equal(limitBreach(w, { daily: 60, monthly: null }, 1, now + DAY), undefined, 'the next day starts at 0');
});

test('property: a limit refuses exactly the units that would take the window above it', () => {
  fc.assert(
    fc.property(
      instant,
      fc.integer({ min: 0, max: 10_000 }),
      fc.integer({ min: 0, max: 10_000 }),
      fc.integer({ min: 1, max: 10_000 }),
      (now, spent, limit, units) => {
        const w = applySpend(noSpend(now), [{ units: spent, takenAtMs: now }], now);
        const breach = limitBreach(w, { daily: limit, monthly: null }, units, now);
        assert.equal(breach !== undefined, spent + units > limit);
        if (breach)
          assert.deepEqual(breach, { window: 'day', limit, spend: spent, resetsAtMs: windowResetsAt('day', now) });
      },
    ),
  );
});

test('windows reset at the next UTC midnight and the first of the next month (December to January too)', () => {
  assert.equal(windowResetsAt('day', Date.UTC(2028, 11, 31, 23, 59)), Date.UTC(2029, 0, 1));
  assert.equal(windowResetsAt('month', Date.UTC(2028, 11, 15)), Date.UTC(2029, 0, 1));
  assert.equal(windowResetsAt('month', FEB28 + DAY), Date.UTC(2028, 2, 1), 'a leap February');
});
