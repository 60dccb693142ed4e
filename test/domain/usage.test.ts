// Guarantees: usage queries are checked exactly (RFC 3339, whole hours, known windows and keys, at most 1,000
// windows, retention), windows are UTC calendar periods cut to [from, to) — month ends and leap days included —
// and hourly rollup rows add up into windows and groups exactly, whatever their order.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { addDecimal, formatDecimal, parseDecimal } from '../../src/lib/decimal.js';
import {
  EVENT_TIMESTAMP_FUTURE_MS,
  eventContentHash,
  type NormalizedEvent,
  normalizeEvent,
} from '../../src/domain/events.js';
import { canonicalJson, sha256Hex } from '../../src/lib/canonical.js';
import { HOUR_MS, parseRfc3339 } from '../../src/domain/time.js';
import {
  USAGE_WINDOWS_MAX,
  aggregateUsage,
  pageUsage,
  parseUsageQuery,
  windowsOf,
  type UsageHour,
  type UsageQuery,
  usageOf,
} from '../../src/domain/usage.js';

const at = (iso: string) => Date.parse(iso);
const q = (from: string, to: string, window?: string, group_by?: string): UsageQuery => {
  const r = parseUsageQuery({ from, to, ...(window ? { window } : {}), ...(group_by ? { group_by } : {}) }, 0);
  assert.ok(r.ok, JSON.stringify(r));
  return r.value;
};
const iso = (ms: number) => new Date(ms).toISOString();

describe('RFC 3339', () => {
  test('accepts Z and offsets, fractions; refuses what Date.parse would guess', () => {
    assert.equal(parseRfc3339('2026-11-23T10:00:00Z'), at('2026-11-23T10:00:00Z'));
    assert.equal(parseRfc3339('2026-11-23t10:00:00z'), at('2026-11-23T10:00:00Z'));
    assert.equal(parseRfc3339('2026-11-23T11:30:00+01:30'), at('2026-11-23T10:00:00Z'));
    assert.equal(parseRfc3339('2026-11-23T08:00:00-02:00'), at('2026-11-23T10:00:00Z'));
    assert.equal(parseRfc3339('2026-11-23T10:00:00.25Z'), at('2026-11-23T10:00:00.250Z'));
    assert.equal(parseRfc3339('2026-11-23T10:00:00.123456789Z'), at('2026-11-23T10:00:00.123Z'));
    assert.equal(parseRfc3339('2028-02-29T00:00:00Z'), at('2028-02-29T00:00:00Z'));
    for (const bad of [
      '2026-11-23',
      '2026-11-23T10:00:00',
      '2026-11-23 10:00:00Z',
      '2027-02-29T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-11-23T24:00:00Z',
      '2026-11-23T10:60:00Z',
      '2026-11-23T10:00:60Z',
      '2026-11-23T10:00:00+24:00',
      'Mon, 23 Nov 2026 10:00:00 GMT',
      '1700000000000',
      '',
    ])
      assert.equal(parseRfc3339(bad), null, bad);
  });
});

describe('event timestamps', () => {
  const nowMs = at('2026-11-23T10:00:00Z');
  const time = { nowMs, maxAgeMs: 35 * 86_400_000 };
  const ev = (timestamp?: string) => normalizeEvent({ type: 'x', ...(timestamp ? { timestamp } : {}) }, 2, time);

  test('accepted from max age ago up to five minutes ahead, inclusive; refused beyond, naming the field', () => {
    const edges = [nowMs - time.maxAgeMs, nowMs + EVENT_TIMESTAMP_FUTURE_MS, nowMs];
    for (const ms of edges) {
      const r = ev(iso(ms));
      assert.ok(r.ok, iso(ms));
      assert.equal(r.value.timestampMs, ms);
    }
    for (const ms of [nowMs - time.maxAgeMs - 1, nowMs + EVENT_TIMESTAMP_FUTURE_MS + 1]) {
      const r = ev(iso(ms));
      assert.ok(!r.ok, iso(ms));
      assert.deepEqual([r.reason, r.param, r.details], ['timestamp_out_of_range', 'events[2].timestamp', { index: 2 }]);
    }
    for (const bad of ['2026-11-23', 'now', '2026-02-30T00:00:00Z']) {
      const r = ev(bad);
      assert.ok(!r.ok);
      assert.deepEqual([r.reason, r.param], ['invalid_timestamp', 'events[2].timestamp']);
    }
    const none = ev();
    assert.ok(none.ok);
    assert.equal(none.value.timestampMs, null);
  });

  test('a given timestamp is content; an event without one hashes as it always did', () => {
    const none = ev();
    const one = ev('2026-11-23T09:00:00Z');
    const other = ev('2026-11-23T09:00:01Z');
    assert.ok(none.ok && one.ok && other.ok);
    const legacy = sha256Hex(canonicalJson({ a: 'a_1', t: 'x', q: 1, o: null, m: null, s: 'complete' }));
    assert.equal(eventContentHash('a_1', none.value), legacy);
    assert.notEqual(eventContentHash('a_1', one.value), legacy);
    assert.notEqual(eventContentHash('a_1', one.value), eventContentHash('a_1', other.value));
    const again = ev('2026-11-23T10:00:00+01:00');
    assert.ok(again.ok);
    assert.equal(eventContentHash('a_1', again.value), eventContentHash('a_1', one.value), 'the same instant');
  });
});

describe('the content hash of an event', () => {
  /** The fingerprint as first written: SHA-256 of canonicalJson of the content object. */
  const canonical = (accountId: string, e: NormalizedEvent) => {
    const content: Record<string, unknown> = { a: accountId, t: e.type, q: e.quantity, o: e.override };
    Object.assign(content, { m: e.metadata, s: e.state });
    if (e.timestampMs !== null) content.ts = e.timestampMs;
    return sha256Hex(canonicalJson(content));
  };
  const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.string({ unit: 'binary' }),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.boolean(),
      fc.constant(null),
      fc.array(tie('value'), { maxLength: 3 }),
      fc.dictionary(fc.string({ unit: 'binary' }), tie('value'), { maxKeys: 3 }),
    ),
  })).value;

  test('written field by field, it is byte for byte the canonical JSON hash stored events were given', () => {
    const event = fc.record({
      clientId: fc.constant('id'),
      type: fc.string({ unit: 'binary', minLength: 1 }),
      quantity: fc.oneof(fc.nat(), fc.double({ min: 0, noNaN: true, noDefaultInfinity: true })),
      override: fc.option(fc.record({ amount: fc.nat(), denomination: fc.string({ unit: 'binary' }) })),
      metadata: fc.option(fc.dictionary(fc.string({ unit: 'binary' }), json, { maxKeys: 4 })),
      state: fc.constantFrom('pending', 'complete', 'cancelled'),
      gate: fc.boolean(),
      timestampMs: fc.option(fc.integer({ min: 0, max: 4_102_444_800_000 })),
      leaseId: fc.option(fc.string()),
    }) as fc.Arbitrary<NormalizedEvent>;
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), event, (accountId, e) => {
        assert.equal(eventContentHash(accountId, e), canonical(accountId, e));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('usage queries', () => {
  test('bad queries name their parameter', () => {
    const cases: [Record<string, string>, string, string][] = [
      [{ from: 'yesterday', to: '2026-11-23T00:00:00Z' }, 'invalid_timestamp', 'from'],
      [{ from: '2026-11-23T00:00:00Z', to: '2026-11-32T00:00:00Z' }, 'invalid_timestamp', 'to'],
      [{ from: '2026-11-23T00:00:00Z', to: '2026-11-23T00:00:00Z' }, 'from_must_be_before_to', 'from'],
      [{ from: '2026-11-24T00:00:00Z', to: '2026-11-23T00:00:00Z' }, 'from_must_be_before_to', 'from'],
      [{ from: '2026-11-23T00:30:00Z', to: '2026-11-24T00:00:00Z' }, 'time_not_on_the_hour', 'from'],
      [{ from: '2026-11-23T00:00:00Z', to: '2026-11-24T00:00:00.001Z' }, 'time_not_on_the_hour', 'to'],
      [{ from: '2026-11-23T00:00:00Z', to: '2026-11-24T00:00:00Z', window: 'week' }, 'unknown_window', 'window'],
      [
        { from: '2026-11-23T00:00:00Z', to: '2026-11-24T00:00:00Z', group_by: 'type,cost' },
        'unknown_group_by',
        'group_by',
      ],
      [
        { from: '2026-11-23T00:00:00Z', to: '2026-11-24T00:00:00Z', group_by: 'type,type' },
        'unknown_group_by',
        'group_by',
      ],
      [{ from: '2026-11-23T00:00:00Z', to: '2026-11-24T00:00:00Z', group_by: '' }, 'unknown_group_by', 'group_by'],
      [{ from: '2026-01-01T00:00:00Z', to: '2026-03-01T00:00:00Z', window: 'hour' }, 'too_many_windows', 'window'],
    ];
    for (const [input, reason, param] of cases) {
      const r = parseUsageQuery(input as { from: string; to: string }, 0);
      assert.ok(!r.ok, JSON.stringify(input));
      assert.deepEqual([r.reason, r.param], [reason, param], JSON.stringify(input));
    }
    const old = parseUsageQuery(
      { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' },
      at('2026-01-01T01:00:00Z'),
    );
    assert.ok(!old.ok);
    assert.deepEqual([old.reason, old.param], ['usage_retention_exceeded', 'from']);
    assert.match(old.message, /2026-01-01T01:00:00.000Z/);
  });

  test('exactly 1,000 windows pass, 1,001 do not; defaults are day windows by type and denomination', () => {
    const from = at('2026-01-01T00:00:00Z');
    assert.ok(parseUsageQuery({ from: iso(from), to: iso(from + USAGE_WINDOWS_MAX * HOUR_MS), window: 'hour' }, 0).ok);
    assert.ok(
      !parseUsageQuery({ from: iso(from), to: iso(from + (USAGE_WINDOWS_MAX + 1) * HOUR_MS), window: 'hour' }, 0).ok,
    );
    const d = q('2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z');
    assert.deepEqual([d.window, d.groupBy], ['day', { type: true, denomination: true, accountId: false }]);
  });

  test('day windows are UTC days cut to [from, to)', () => {
    const w = windowsOf(q('2026-11-23T10:00:00Z', '2026-11-25T05:00:00Z', 'day')).map((x) => [
      iso(x.startMs),
      iso(x.endMs),
    ]);
    assert.deepEqual(w, [
      ['2026-11-23T10:00:00.000Z', '2026-11-24T00:00:00.000Z'],
      ['2026-11-24T00:00:00.000Z', '2026-11-25T00:00:00.000Z'],
      ['2026-11-25T00:00:00.000Z', '2026-11-25T05:00:00.000Z'],
    ]);
  });

  test('month windows end at month ends, leap February included; all is one window', () => {
    const w = windowsOf(q('2028-01-31T12:00:00Z', '2028-04-01T00:00:00Z', 'month')).map((x) => [
      iso(x.startMs),
      iso(x.endMs),
    ]);
    assert.deepEqual(w, [
      ['2028-01-31T12:00:00.000Z', '2028-02-01T00:00:00.000Z'],
      ['2028-02-01T00:00:00.000Z', '2028-03-01T00:00:00.000Z'],
      ['2028-03-01T00:00:00.000Z', '2028-04-01T00:00:00.000Z'],
    ]);
    const leapDay = windowsOf(q('2028-02-28T00:00:00Z', '2028-03-02T00:00:00Z', 'day')).map((x) => iso(x.startMs));
    assert.deepEqual(leapDay, ['2028-02-28T00:00:00.000Z', '2028-02-29T00:00:00.000Z', '2028-03-01T00:00:00.000Z']);
    const all = windowsOf(q('2028-01-31T12:00:00Z', '2028-04-01T00:00:00Z', 'all'));
    assert.deepEqual(all, [{ startMs: at('2028-01-31T12:00:00Z'), endMs: at('2028-04-01T00:00:00Z') }]);
  });
});

describe('aggregating rollup rows', () => {
  const row = (
    hour: string,
    type: string,
    quantity: string,
    cost: number,
    accountId = 'a_1',
    denomination = 'tokens',
  ) => ({ hourMs: at(hour), accountId, denomination, type, events: 1, quantity, cost }) satisfies UsageHour;

  test('windows, groups and order; rows outside [from, to) ignored; quantities exact', () => {
    const rows = [
      row('2026-11-24T23:00:00Z', 'b', '0.1', 1),
      row('2026-11-24T00:00:00Z', 'a', '0.2', 2),
      row('2026-11-24T05:00:00Z', 'a', '0.1', 3, 'a_2'),
      row('2026-11-23T09:00:00Z', 'a', '9', 100),
      row('2026-11-25T00:00:00Z', 'a', '9', 100),
      row('2026-11-23T10:00:00Z', 'a', '0.0000001', 4, 'a_1', 'credits'),
    ];
    const r = aggregateUsage(rows, q('2026-11-23T10:00:00Z', '2026-11-25T00:00:00Z', 'day'));
    assert.ok(r.ok);
    assert.deepEqual(
      r.value.map((g) => [
        iso(g.windowStartMs),
        iso(g.windowEndMs),
        g.type,
        g.denomination,
        g.events,
        g.quantity,
        g.cost,
      ]),
      [
        ['2026-11-23T10:00:00.000Z', '2026-11-24T00:00:00.000Z', 'a', 'credits', 1, '0.0000001', 4],
        ['2026-11-24T00:00:00.000Z', '2026-11-25T00:00:00.000Z', 'a', 'tokens', 2, '0.3', 5],
        ['2026-11-24T00:00:00.000Z', '2026-11-25T00:00:00.000Z', 'b', 'tokens', 1, '0.1', 1],
      ],
    );
    const byAccount = aggregateUsage(rows, q('2026-11-23T10:00:00Z', '2026-11-25T00:00:00Z', 'all', 'account_id'));
    assert.ok(byAccount.ok);
    assert.deepEqual(
      byAccount.value.map((g) => [g.accountId, g.type, g.denomination, g.events, g.cost]),
      [
        ['a_1', undefined, undefined, 3, 7],
        ['a_2', undefined, undefined, 1, 3],
      ],
    );
  });

  test('property: any order and any window gives the sums computed directly from the rows', () => {
    const base = at('2028-01-30T00:00:00Z');
    const rowArb = fc.record({
      hour: fc.integer({ min: 0, max: 24 * 70 }),
      type: fc.constantFrom('a', 'b', 'c'),
      denomination: fc.constantFrom('tokens', 'credits'),
      accountId: fc.constantFrom('a_1', 'a_2'),
      quantity: fc.tuple(fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 0, max: 6 })),
      cost: fc.integer({ min: 0, max: 1_000_000_000 }),
    });
    fc.assert(
      fc.property(
        fc.array(rowArb, { maxLength: 60 }),
        fc.constantFrom('hour', 'day', 'month', 'all'),
        fc.integer({ min: 0, max: 24 * 35 }),
        fc.integer({ min: 1, max: 24 * 35 }),
        (specs, window, fromH, spanH) => {
          const fromMs = base + fromH * HOUR_MS;
          const toMs = fromMs + spanH * HOUR_MS;
          const parsed = parseUsageQuery({ from: iso(fromMs), to: iso(toMs), window, group_by: 'type' }, 0);
          if (!parsed.ok) return parsed.reason === 'too_many_windows';
          const rows: UsageHour[] = specs.map((s) => ({
            hourMs: base + s.hour * HOUR_MS,
            accountId: s.accountId,
            denomination: s.denomination,
            type: s.type,
            events: 1,
            quantity: formatDecimal({ coef: BigInt(s.quantity[0]), scale: s.quantity[1] }),
            cost: s.cost,
          }));
          const r = aggregateUsage([...rows].reverse(), parsed.value);
          assert.ok(r.ok);
          const windows = windowsOf(parsed.value);
          for (const g of r.value) {
            const mine = rows.filter(
              (x) => x.type === g.type && x.hourMs >= g.windowStartMs && x.hourMs < g.windowEndMs,
            );
            assert.ok(windows.some((w) => w.startMs === g.windowStartMs && w.endMs === g.windowEndMs));
            assert.equal(g.events, mine.length);
            assert.equal(
              g.cost,
              mine.reduce((s, x) => s + x.cost, 0),
            );
            const sum = mine.reduce((s, x) => addDecimal(s, parseDecimal(x.quantity)!), { coef: 0n, scale: 0 });
            assert.equal(g.quantity, formatDecimal(sum));
          }
          const counted = r.value.reduce((s, g) => s + g.events, 0);
          assert.equal(counted, rows.filter((x) => x.hourMs >= fromMs && x.hourMs < toMs).length);
          return true;
        },
      ),
      { numRuns: 300 },
    );
  });

  test('pages continue after the cursor position, in order', () => {
    const rows = ['a', 'b', 'c', 'd', 'e'].map((t, i) => row('2026-11-23T00:00:00Z', t, String(i), i));
    const r = aggregateUsage(rows, q('2026-11-23T00:00:00Z', '2026-11-24T00:00:00Z'));
    assert.ok(r.ok);
    const first = pageUsage(r.value, undefined, 2);
    assert.deepEqual([first.rows.map((g) => g.type), first.hasMore], [['a', 'b'], true]);
    const second = pageUsage(r.value, first.rows.at(-1), 2);
    assert.deepEqual([second.rows.map((g) => g.type), second.hasMore], [['c', 'd'], true]);
    const third = pageUsage(r.value, second.rows.at(-1), 2);
    assert.deepEqual([third.rows.map((g) => g.type), third.hasMore], [['e'], false]);
  });
});

describe('the rollup additions of events (usageOf)', () => {
  test('property: one addition per account, hour, denomination and type, summed exactly, in key order', () => {
    const base = at('2026-11-26T00:00:00Z');
    const eventArb = fc.record({
      accountId: fc.constantFrom('a_1', 'a_2', 'a_10'),
      denomination: fc.constantFrom('tokens', 'credits'),
      type: fc.constantFrom('a', 'b'),
      occurredAtMs: fc.integer({ min: base, max: base + 3 * HOUR_MS }),
      quantity: fc.oneof(
        fc.integer({ min: 0, max: 2 ** 53 - 1 }),
        fc.integer({ min: 0, max: 10 ** 6 }).map((n) => n / 1000),
      ),
      costAmount: fc.integer({ min: 0, max: 1_000_000 }),
    });
    // Runs of events with one key (as a request's are) as well as keys that come back after another.
    const eventsArb = fc
      .array(fc.tuple(eventArb, fc.integer({ min: 1, max: 4 })), { maxLength: 30 })
      .map((runs) => runs.flatMap(([e, n]) => Array.from({ length: n }, () => ({ ...e, companyId: 'c_1' }))));
    fc.assert(
      fc.property(eventsArb, (events) => {
        const expected = new Map<string, { events: number; cost: number; quantity: string }>();
        for (const e of events) {
          const hourMs = e.occurredAtMs - (e.occurredAtMs % HOUR_MS);
          const key = JSON.stringify([e.accountId, hourMs, e.denomination, e.type]);
          const sum = expected.get(key) ?? { events: 0, cost: 0, quantity: '0' };
          const quantity = parseDecimal(String(e.quantity));
          const total = parseDecimal(sum.quantity);
          assert.ok(quantity !== null && total !== null);
          expected.set(key, {
            events: sum.events + 1,
            cost: sum.cost + e.costAmount,
            quantity: formatDecimal(addDecimal(total, quantity)),
          });
        }
        const got = usageOf(events);
        assert.deepEqual(
          got.map((u) => [JSON.stringify([u.accountId, u.hourMs, u.denomination, u.type]), u]),
          [...expected.entries()]
            .map(([key, sum]) => {
              const [accountId, hourMs, denomination, type] = JSON.parse(key) as [string, number, string, string];
              return [key, { companyId: 'c_1', accountId, denomination, type, hourMs, ...sum }] as const;
            })
            .sort(([a], [b]) => {
              const [x, y] = [JSON.parse(a) as unknown[], JSON.parse(b) as unknown[]];
              for (let i = 0; i < 4; i++)
                if (x[i] !== y[i]) return (x[i] as string | number) < (y[i] as string | number) ? -1 : 1;
              return 0;
            }),
        );
      }),
      { numRuns: 500 },
    );
  });
});
