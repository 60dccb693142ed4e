// Guarantees (domain/alerts.ts): an available alert is triggered exactly while available < threshold and notifies
// each change of status once; a spend alert triggers once its window's spend reaches the threshold, stays so for the
// window whatever is given back, and resolves when the next window starts (value 0, that window's start), then may
// trigger again in it; a sequence of changes notifies alternately, never the same crossing twice, and ends in the
// status its last value says; bad rules name their field; a spend alert of one event type counts that type's changes
// exactly as the balance counts all of them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  type AlertRule,
  type AlertState,
  alertRuleOf,
  alertValue,
  alertWatchOf,
  applyTypeSpend,
  decideAlert,
  resolvesAt,
  statusAt,
  typeSpendAt,
  windowStartOf,
  withinWatch,
} from '../../src/domain/alerts.js';
import { applySpend, noSpend, spendAt } from '../../src/domain/spend.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T = Date.UTC(2027, 4, 10, 12);
const OK: AlertState = { status: 'ok', windowStartMs: null };
const available = (threshold: number): AlertRule => ({ metric: 'available', threshold, window: null, eventType: null });
const spend = (threshold: number, window: 'day' | 'month' = 'day'): AlertRule => ({
  metric: 'spend',
  threshold,
  window,
  eventType: null,
});

test('available: triggered below the threshold, resolved at or above it, each change notified once', () => {
  const down = decideAlert(available(100), OK, 99, T);
  assert.deepEqual(down, {
    state: { status: 'triggered', windowStartMs: null },
    crossings: [{ type: 'alert_triggered', value: 99, windowStartMs: null }],
  });
  assert.deepEqual(decideAlert(available(100), down.state, 50, T).crossings, [], 'still below: nothing');
  assert.deepEqual(decideAlert(available(100), down.state, 100, T), {
    state: OK,
    crossings: [{ type: 'alert_resolved', value: 100, windowStartMs: null }],
  });
  assert.deepEqual(decideAlert(available(-5), OK, -6, T).state.status, 'triggered', 'any integer threshold');
});

test('spend: triggered on reaching the threshold, kept for the window, resolved when the next starts', () => {
  const day = Date.UTC(2027, 4, 10);
  const up = decideAlert(spend(100), OK, 100, T);
  assert.deepEqual(up, {
    state: { status: 'triggered', windowStartMs: day },
    crossings: [{ type: 'alert_triggered', value: 100, windowStartMs: day }],
  });
  assert.deepEqual(decideAlert(spend(100), up.state, 40, T + HOUR).crossings, [], 'a give-back keeps it triggered');
  assert.equal(statusAt(spend(100), up.state, day + DAY - 1), 'triggered');
  assert.equal(statusAt(spend(100), up.state, day + DAY), 'ok', 'read at the reset: resolved before any write');
  assert.equal(resolvesAt(spend(100), up.state), day + DAY);
  assert.deepEqual(decideAlert(spend(100), up.state, 0, day + DAY), {
    state: OK,
    crossings: [{ type: 'alert_resolved', value: 0, windowStartMs: day + DAY }],
  });
  assert.deepEqual(
    decideAlert(spend(100), up.state, 120, day + DAY + HOUR).crossings.map((c) => c.type),
    ['alert_resolved', 'alert_triggered'],
    'resolved by the new window, then triggered again in it',
  );
  assert.equal(
    resolvesAt(spend(100, 'month'), decideAlert(spend(100, 'month'), OK, 100, T).state),
    Date.UTC(2027, 5, 1),
  );
  assert.equal(resolvesAt(available(1), decideAlert(available(1), OK, 0, T).state), null);
});

test('property: alternating crossings, none twice, and the last status is what the last value says', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.integer({ min: -50, max: 50 }).map(available),
        fc.integer({ min: 1, max: 50 }).map((n) => spend(n)),
      ),
      fc.array(fc.record({ value: fc.integer({ min: -60, max: 60 }), later: fc.integer({ min: 0, max: 6 * HOUR }) }), {
        maxLength: 30,
      }),
      (rule, steps) => {
        let state = OK;
        let now = T;
        let last: string | undefined;
        for (const { value, later } of steps) {
          now += later;
          const d = decideAlert(rule, state, rule.metric === 'spend' ? Math.max(0, value) : value, now);
          for (const c of d.crossings) {
            assert.notEqual(c.type, last, 'a crossing is never notified twice in a row');
            last = c.type;
          }
          assert.equal(d.crossings.length === 0, d.state === state, 'nothing notified exactly when nothing changed');
          state = d.state;
          if (rule.metric === 'available') assert.equal(state.status === 'triggered', value < rule.threshold);
          else if (Math.max(0, value) >= rule.threshold) assert.equal(state.status, 'triggered');
        }
      },
    ),
  );
});

test('a rule names the field that makes it invalid', () => {
  const bad: [Parameters<typeof alertRuleOf>[0], string][] = [
    [{ metric: 'balance', threshold: 1 }, 'metric'],
    [{ metric: 'spend', threshold: 1 }, 'window'],
    [{ metric: 'spend', threshold: 1, window: 'week' }, 'window'],
    [{ metric: 'spend', threshold: 0, window: 'day' }, 'threshold'],
    [{ metric: 'available', threshold: 1, window: 'day' }, 'window'],
    [{ metric: 'available', threshold: 1, event_type: 'llm' }, 'event_type'],
  ];
  for (const [input, param] of bad) {
    const r = alertRuleOf(input);
    assert.ok(!r.ok && r.param === param, `${JSON.stringify(input)}: ${JSON.stringify(r)}`);
  }
  assert.deepEqual(alertRuleOf({ metric: 'spend', threshold: 5, window: 'month', event_type: 'llm' }), {
    ok: true,
    value: { metric: 'spend', threshold: 5, window: 'month', eventType: 'llm' },
  });
  assert.deepEqual(alertRuleOf({ metric: 'available', threshold: -3 }), { ok: true, value: available(-3) });
});

test("a type's spend: only its changes; taken now counts, given back leaves its window, an ended one is 0", () => {
  const day = Date.UTC(2027, 4, 10);
  const c = { windowStartMs: day, units: 30 };
  assert.deepEqual(
    applyTypeSpend(c, 'day', 'gpt', [{ units: 5, takenAtMs: T, eventType: 'other' }], T),
    c,
    'another type: unchanged (the same object)',
  );
  assert.deepEqual(applyTypeSpend(c, 'day', 'gpt', [{ units: 5, takenAtMs: T, eventType: 'gpt' }], T), {
    windowStartMs: day,
    units: 35,
  });
  assert.deepEqual(applyTypeSpend(c, 'day', 'gpt', [{ units: -50, takenAtMs: T - HOUR, eventType: 'gpt' }], T), {
    windowStartMs: day,
    units: 0,
  });
  // Given back from yesterday's window: today's stays.
  assert.deepEqual(applyTypeSpend(c, 'day', 'gpt', [{ units: -10, takenAtMs: day - HOUR, eventType: 'gpt' }], T), c);
  assert.deepEqual(typeSpendAt(c, 'day', T + DAY), { windowStartMs: day + DAY, units: 0 });
  assert.deepEqual(typeSpendAt(c, 'month', T), { windowStartMs: Date.UTC(2027, 4, 1), units: 0 });
  const rule: AlertRule = { metric: 'spend', threshold: 1, window: 'day', eventType: 'gpt' };
  const b = {
    amount: 100,
    pending: 10,
    spend: { dayStartMs: day, day: 70, monthStartMs: Date.UTC(2027, 4, 1), month: 90 },
  };
  assert.equal(alertValue(rule, b, c, T), 30);
  assert.equal(alertValue(rule, b, null, T), 0);
  assert.equal(alertValue({ ...rule, eventType: null }, b, null, T), 70);
  assert.equal(alertValue({ ...rule, eventType: null, window: 'month' }, b, null, T), 90);
  assert.equal(alertValue({ ...rule, eventType: null, window: 'day' }, b, null, T + DAY), 0);
  assert.equal(alertValue(available(5), b, null, T), 90);
});

test("property: a type's spend equals the balance's own windows fed only that type's changes", () => {
  const day = Date.UTC(2027, 4, 10);
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          units: fc.integer({ min: -40, max: 40 }),
          back: fc.integer({ min: 0, max: 3 * DAY }),
          type: fc.constantFrom('gpt', 'other'),
          later: fc.integer({ min: 0, max: 10 * HOUR }),
        }),
        { maxLength: 30 },
      ),
      (steps) => {
        let now = day + HOUR;
        let c = { windowStartMs: day, units: 0 };
        let w = noSpend(now);
        for (const s of steps) {
          now += s.later;
          const change = { units: s.units, takenAtMs: s.units > 0 ? now : now - s.back, eventType: s.type };
          c = applyTypeSpend(c, 'day', 'gpt', [change], now);
          if (s.type === 'gpt') w = applySpend(w, [change], now);
          else w = spendAt(w, now);
          assert.equal(c.units, w.day);
          assert.equal(c.windowStartMs, w.dayStartMs);
        }
      },
    ),
  );
});

test("property: a balance inside its alerts' watch changes no alert's status", () => {
  const day = Date.UTC(2027, 4, 10);
  const rule = fc.oneof(
    fc.integer({ min: -50, max: 50 }).map(available),
    fc
      .record({ t: fc.integer({ min: 1, max: 60 }), w: fc.constantFrom<'day' | 'month'>('day', 'month') })
      .map(({ t, w }) => spend(t, w)),
  );
  fc.assert(
    fc.property(
      fc.array(fc.record({ rule, triggered: fc.boolean(), windowBack: fc.integer({ min: 0, max: 2 }) }), {
        minLength: 1,
        maxLength: 6,
      }),
      fc.record({
        amount: fc.integer({ min: -60, max: 60 }),
        pending: fc.integer({ min: 0, max: 20 }),
        day: fc.integer({ min: 0, max: 70 }),
        month: fc.integer({ min: 0, max: 70 }),
        later: fc.integer({ min: 0, max: 3 * DAY }),
      }),
      (alerts, b) => {
        const decidedAt = day + HOUR;
        const states = alerts.map(({ rule: r, triggered, windowBack }) => ({
          rule: r,
          state: (triggered
            ? {
                status: 'triggered',
                windowStartMs: r.metric === 'spend' ? windowStartOfRule(r, decidedAt, windowBack) : null,
              }
            : OK) as AlertState,
        }));
        const now = decidedAt + b.later;
        const balance = {
          amount: b.amount,
          pending: b.pending,
          spend: { dayStartMs: day, day: b.day, monthStartMs: Date.UTC(2027, 4, 1), month: Math.max(b.day, b.month) },
        };
        if (!withinWatch(alertWatchOf(states), balance, now)) return;
        for (const { rule: r, state } of states) {
          const value = alertValue(r, balance, null, now);
          const d = decideAlert(r, state, value, now);
          assert.deepEqual(d.crossings, [], `${JSON.stringify(r)} ${JSON.stringify(state)} value ${value}`);
        }
      },
    ),
  );
});

/** The start of a spend rule's window `back` windows before the one holding `atMs` (0: that one). */
function windowStartOfRule(r: AlertRule, atMs: number, back: number): number {
  let w = windowStartOf(r.window!, atMs);
  for (let i = 0; i < back; i++) w = windowStartOf(r.window!, w - 1);
  return w;
}
