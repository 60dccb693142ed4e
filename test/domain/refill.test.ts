// Guarantees: a threshold refill starts only when settings are complete, available is below the threshold, none is in
// flight and it is not paused; three declines in a row pause it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  DECLINES_BEFORE_PAUSE,
  afterChargeOutcome,
  countRefill,
  refillsInMonth,
  thresholdRefillDecision,
  type ChargeOutcome,
  type ThresholdRefillState,
} from '../../src/domain/refills.js';

/** Whether the decision is to refill. */
const refills = (s: ThresholdRefillState): boolean => thresholdRefillDecision(s).refill;

const base: ThresholdRefillState = {
  available: 99,
  threshold: 100,
  refillAmount: 1000,
  refillUsdCents: 500,
  inFlight: false,
  paused: false,
};

test('below the threshold with complete settings: refill', () => {
  assert.equal(refills(base), true);
  assert.equal(refills({ ...base, available: -5000 }), true);
  assert.equal(refills({ ...base, refillUsdCents: 0 }), true, 'a free refill is allowed');
});

test('at or above the threshold: no refill', () => {
  assert.deepEqual(thresholdRefillDecision({ ...base, available: 100 }), {
    refill: false,
    reason: 'available_not_below_threshold',
  });
  assert.equal(refills({ ...base, available: 101 }), false);
});

test('incomplete settings: no refill', () => {
  for (const s of [
    { ...base, threshold: null },
    { ...base, refillAmount: null },
    { ...base, refillUsdCents: null },
    { ...base, refillAmount: 0 },
  ]) {
    assert.deepEqual(thresholdRefillDecision(s), { refill: false, reason: 'refill_settings_incomplete' });
  }
});

test('a refill in flight or a paused refill: no second refill', () => {
  assert.deepEqual(thresholdRefillDecision({ ...base, inFlight: true }), {
    refill: false,
    reason: 'refill_already_in_flight',
  });
  assert.deepEqual(thresholdRefillDecision({ ...base, paused: true }), {
    refill: false,
    reason: 'refill_paused_after_declines',
  });
});

test('max_refills_per_month: the refill past the cap is not decided, and the month count resets', () => {
  assert.equal(refills({ ...base, maxPerMonth: 2, refillsThisMonth: 1 }), true);
  assert.deepEqual(thresholdRefillDecision({ ...base, maxPerMonth: 2, refillsThisMonth: 2 }), {
    refill: false,
    reason: 'refill_capped_for_month',
  });
  assert.equal(refills({ ...base, maxPerMonth: null, refillsThisMonth: 99 }), true, 'null: no cap');
  assert.deepEqual(
    thresholdRefillDecision({ ...base, available: 100, maxPerMonth: 1, refillsThisMonth: 1 }),
    { refill: false, reason: 'available_not_below_threshold' },
    'not below the threshold: that is the reason, not the cap',
  );
  const jan31 = Date.UTC(2027, 0, 31, 23);
  const one = countRefill({ monthStartMs: 0, count: 7 }, jan31);
  assert.deepEqual(one, { monthStartMs: Date.UTC(2027, 0, 1), count: 1 }, 'a count of an earlier month starts again');
  assert.deepEqual(countRefill(one, jan31 + 1), { monthStartMs: Date.UTC(2027, 0, 1), count: 2 });
  assert.equal(refillsInMonth(one, jan31), 1);
  assert.equal(refillsInMonth(one, Date.UTC(2027, 1, 1)), 0, 'February reads 0');
});

test('property: a refill is decided exactly when all its conditions hold', () => {
  const nullable = (arb: fc.Arbitrary<number>) => fc.option(arb, { nil: null });
  fc.assert(
    fc.property(
      fc.record({
        available: fc.integer({ min: -1e9, max: 1e9 }),
        threshold: nullable(fc.integer({ min: -1e9, max: 1e9 })),
        refillAmount: nullable(fc.integer({ min: 0, max: 1e9 })),
        refillUsdCents: nullable(fc.integer({ min: 0, max: 1e9 })),
        inFlight: fc.boolean(),
        paused: fc.boolean(),
      }),
      (s) => {
        const expected =
          s.threshold !== null &&
          s.refillAmount !== null &&
          s.refillAmount > 0 &&
          s.refillUsdCents !== null &&
          s.available < s.threshold &&
          !s.inFlight &&
          !s.paused;
        assert.equal(refills(s), expected);
      },
    ),
  );
});

test('declines count up and pause at the third; a success resets', () => {
  assert.equal(DECLINES_BEFORE_PAUSE, 3);
  assert.deepEqual(afterChargeOutcome(0, 'declined'), { consecutiveDeclines: 1, paused: false });
  assert.deepEqual(afterChargeOutcome(1, 'declined'), { consecutiveDeclines: 2, paused: false });
  assert.deepEqual(afterChargeOutcome(2, 'declined'), { consecutiveDeclines: 3, paused: true });
  assert.deepEqual(afterChargeOutcome(2, 'succeeded'), { consecutiveDeclines: 0, paused: false });
});

test('a processor error says nothing about the card: the count is unchanged', () => {
  assert.deepEqual(afterChargeOutcome(2, 'processor_error'), { consecutiveDeclines: 2, paused: false });
  assert.deepEqual(afterChargeOutcome(0, 'processor_error'), { consecutiveDeclines: 0, paused: false });
});

test('a nonsensical count is a bug', () => {
  assert.throws(() => afterChargeOutcome(-1, 'declined'), RangeError);
  assert.throws(() => afterChargeOutcome(1.5, 'declined'), RangeError);
});

test('property: paused exactly when the run of declines since the last success reaches 3', () => {
  const outcome = fc.constantFrom<ChargeOutcome>('succeeded', 'declined', 'processor_error');
  fc.assert(
    fc.property(fc.array(outcome, { maxLength: 30 }), (outcomes) => {
      let count = 0;
      let run = 0;
      for (const o of outcomes) {
        const next = afterChargeOutcome(count, o);
        if (o === 'succeeded') run = 0;
        if (o === 'declined') run += 1;
        assert.equal(next.consecutiveDeclines, run);
        assert.equal(next.paused, run >= DECLINES_BEFORE_PAUSE);
        count = next.consecutiveDeclines;
      }
    }),
  );
});
