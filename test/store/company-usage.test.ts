// Guarantee: the company rollup of a group's usage rows (companyUsage, what both databases upsert into
// usage_company_hours) is one row per company, hour, denomination and type, with the exact sums of its rows' events,
// costs and decimal quantities, and no account; in key order (the order their row locks are taken).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { UsageRow } from '../../src/domain/usage.js';
import { companyUsage } from '../../src/store/usage/sql.js';

const row = fc.record({
  companyId: fc.constantFrom('co_a', 'co_b', 'co_ab'),
  accountId: fc.constantFrom('a_1', 'a_2', 'a_3'),
  denomination: fc.constantFrom('tokens', 'credits', 'Tokens'),
  type: fc.constantFrom('call', 'call2', 'Call'),
  hourMs: fc.constantFrom(0, 3_600_000, 7_200_000),
  events: fc.integer({ min: 1, max: 1_000 }),
  quantity: fc.oneof(
    fc.integer({ min: 0, max: 10 ** 9 }).map(String),
    fc.tuple(fc.integer({ min: 0, max: 999 }), fc.integer({ min: 1, max: 999_999 })).map(([a, b]) => `${a}.${b}`),
  ),
  cost: fc.integer({ min: 0, max: 10 ** 9 }),
});

/** Quantities summed as scaled integers, independently of the decimal library. */
function sumQuantities(qs: string[]): string {
  const scale = Math.max(0, ...qs.map((q) => (q.split('.')[1] ?? '').length));
  const total = qs.reduce((t, q) => {
    const [whole, fraction = ''] = q.split('.');
    return t + BigInt(whole!) * 10n ** BigInt(scale) + BigInt(fraction.padEnd(scale, '0') || '0');
  }, 0n);
  const digits = total.toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return scale === 0 ? text : text.replace(/0+$/, '').replace(/\.$/, '');
}

test('property: one row per key, exact sums, no account, in key order', () => {
  fc.assert(
    fc.property(fc.array(row, { maxLength: 40 }), (rows: UsageRow[]) => {
      const out = companyUsage(rows);
      const keyOf = (r: UsageRow) => [r.companyId, r.hourMs, r.denomination, r.type] as const;
      const groups = new Map<string, UsageRow[]>();
      for (const r of rows) {
        const k = JSON.stringify(keyOf(r));
        groups.set(k, [...(groups.get(k) ?? []), r]);
      }
      assert.equal(out.length, groups.size);
      for (const o of out) {
        const members = groups.get(JSON.stringify(keyOf(o)))!;
        assert.ok(members, 'a key of the input');
        assert.equal(o.accountId, null);
        assert.equal(
          o.events,
          members.reduce((t, m) => t + m.events, 0),
        );
        assert.equal(
          o.cost,
          members.reduce((t, m) => t + m.cost, 0),
        );
        assert.equal(o.quantity, sumQuantities(members.map((m) => m.quantity)));
      }
      for (let i = 1; i < out.length; i++) {
        const [a, b] = [keyOf(out[i - 1]!), keyOf(out[i]!)];
        const order =
          a[0] !== b[0] ? a[0] < b[0] : a[1] !== b[1] ? a[1] < b[1] : a[2] !== b[2] ? a[2] < b[2] : a[3] < b[3];
        assert.ok(order, `rows ${i - 1} and ${i} in key order`);
      }
    }),
    { numRuns: 500 },
  );
});
