// Guarantee: on SQLite and PostgreSQL, the hourly usage rollups add up exactly (event counts, costs and decimal
// quantities, never through a binary float, concurrent writers included), per account and per company, only when
// their transaction commits; listUsage reads the rows its filter names ([from, to), types, denominations, one
// account or all, at most `limit`); deleteUsageBefore deletes the hours before its bound, in batches of `limit`.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addDecimal, formatDecimal, parseDecimal } from '../../src/lib/decimal.js';
import type { UsageFilter, UsageRow } from '../../src/store/types.js';
import { forEachDialect, seedAccount, seedCompanyAndAccount } from '../support/stores.js';
import { T0 } from './contract-support.js';
import { portOf } from '../../src/ledger/port.js';

const HOUR_MS = 3_600_000;
/** The first hour of these tests (whole hours from T0); retention's test keeps to the hours of 1970. */
const H0 = Math.floor(T0 / HOUR_MS) * HOUR_MS;
const hour = (n: number) => H0 + n * HOUR_MS;

function usage(
  companyId: string,
  accountId: string,
  hourMs: number,
  over: Partial<Pick<UsageRow, 'denomination' | 'type' | 'events' | 'quantity' | 'cost'>> = {},
): UsageRow {
  return {
    companyId,
    accountId,
    hourMs,
    denomination: 'credits',
    type: 'api_call',
    events: 1,
    quantity: '1',
    cost: 1,
    ...over,
  };
}

/** A decimal as one spelling ('2.50' and '2.5' are one value): a sum that is off by any digit still differs. */
const exact = (text: string) => {
  const d = parseDecimal(text);
  assert.ok(d, `${text} is a decimal`);
  return formatDecimal(d);
};

const key = (r: UsageRow) => [r.accountId ?? '', r.hourMs, r.denomination, r.type].join('|');

/**
 * Rows summed per (account, hour, denomination, type), sorted: the rollup as a reader sees it. PostgreSQL spreads a
 * company's hour over several rows (shards, written by different transactions), so the company rollup is compared
 * by its sums.
 */
function totals(rows: UsageRow[]): UsageRow[] {
  const sums = new Map<string, UsageRow>();
  for (const r of rows) {
    const s = sums.get(key(r));
    if (!s) sums.set(key(r), { ...r, quantity: exact(r.quantity) });
    else {
      s.events += r.events;
      s.cost += r.cost;
      s.quantity = formatDecimal(addDecimal(parseDecimal(s.quantity)!, parseDecimal(r.quantity)!));
    }
  }
  return [...sums.values()].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

forEachDialect((store) => {
  const list = (filter: UsageFilter, limit = 1_000) => store.read((tx) => tx.usage.listUsage(filter, limit));

  describe('usage', () => {
    test('addUsage adds exactly per account and per company; listUsage reads each rollup back', async () => {
      const a = await seedCompanyAndAccount(store);
      const b = await seedAccount(store, a.companyId);
      const other = await seedCompanyAndAccount(store);
      // One call's rows: distinct keys in (account, hour, denomination, type) order, as the ledger writes them.
      const [first, second] = [a.accountId, b].sort();
      await store.write((tx) =>
        portOf(tx).writeLedger(
          [],
          [],
          [],
          [
            usage(a.companyId, first!, hour(0), { events: 2, quantity: '0.1', cost: 3 }),
            usage(a.companyId, first!, hour(0), { type: 'gpu', denomination: 'gpu.hours', quantity: '2.5', cost: 7 }),
            usage(a.companyId, first!, hour(1), { events: 1, quantity: '12345678901234567890.1', cost: 1 }),
            usage(a.companyId, second!, hour(0), { events: 4, quantity: '0.2', cost: 5 }),
          ],
        ),
      );
      await store.write((tx) =>
        portOf(tx).writeLedger([], [], [], [usage(other.companyId, other.accountId, hour(0), { quantity: '9' })]),
      );
      // Ten more additions of 0.1 to one row: exactly 1.1 in all (a binary float would not be), and a tiny
      // fraction onto a 20-digit quantity keeps every digit.
      for (let i = 0; i < 10; i++)
        await store.write((tx) =>
          portOf(tx).writeLedger([], [], [], [usage(a.companyId, first!, hour(0), { quantity: '0.1', cost: 2 })]),
        );
      await store.write((tx) =>
        portOf(tx).writeLedger(
          [],
          [],
          [],
          [usage(a.companyId, first!, hour(1), { events: 0, quantity: '0.000000000000000009', cost: 0 })],
        ),
      );
      await store.write((tx) => portOf(tx).writeLedger([], [], [], []));

      const byFirst = await list({
        companyId: a.companyId,
        accountId: first!,
        byAccount: false,
        fromMs: 0,
        toMs: hour(9),
      });
      assert.deepEqual(totals(byFirst), [
        usage(a.companyId, first!, hour(0), { events: 12, quantity: '1.1', cost: 23 }),
        usage(a.companyId, first!, hour(0), { type: 'gpu', denomination: 'gpu.hours', quantity: '2.5', cost: 7 }),
        usage(a.companyId, first!, hour(1), {
          events: 1,
          quantity: '12345678901234567890.100000000000000009',
          cost: 1,
        }),
      ]);
      assert.equal(byFirst.length, 3, "one account's rollup is one row per key");

      const byAccount = await list({ companyId: a.companyId, byAccount: true, fromMs: 0, toMs: hour(9) });
      assert.deepEqual(
        totals(byAccount),
        totals([...byFirst, usage(a.companyId, second!, hour(0), { events: 4, quantity: '0.2', cost: 5 })]),
        "every account of the company, none of another company's",
      );

      const company = await list({ companyId: a.companyId, byAccount: false, fromMs: 0, toMs: hour(9) });
      assert.ok(
        company.every((r) => r.accountId === null && r.companyId === a.companyId),
        'the company rollup has no account',
      );
      assert.deepEqual(totals(company), [
        { ...usage(a.companyId, '', hour(0), { events: 16, quantity: '1.3', cost: 28 }), accountId: null },
        {
          ...usage(a.companyId, '', hour(0), { type: 'gpu', denomination: 'gpu.hours', quantity: '2.5', cost: 7 }),
          accountId: null,
        },
        {
          ...usage(a.companyId, '', hour(1), {
            events: 1,
            quantity: '12345678901234567890.100000000000000009',
            cost: 1,
          }),
          accountId: null,
        },
      ]);
      assert.deepEqual(totals(await list({ companyId: other.companyId, byAccount: false, fromMs: 0, toMs: hour(9) })), [
        { ...usage(other.companyId, '', hour(0), { quantity: '9' }), accountId: null },
      ]);
    });

    test('listUsage: [fromMs, toMs), types and denominations filters, at most limit rows', async () => {
      const a = await seedCompanyAndAccount(store);
      const rows = [
        usage(a.companyId, a.accountId, hour(10), { type: 'a' }),
        usage(a.companyId, a.accountId, hour(10), { type: 'b' }),
        usage(a.companyId, a.accountId, hour(10), { type: 'b', denomination: 'tokens' }),
        usage(a.companyId, a.accountId, hour(11), { type: 'a' }),
        usage(a.companyId, a.accountId, hour(12), { type: 'a' }),
      ].sort((x, y) => (key(x) < key(y) ? -1 : 1));
      // One call: one company row per key on either database.
      await store.write((tx) => portOf(tx).writeLedger([], [], [], rows));
      const keysOf = (filter: Omit<UsageFilter, 'companyId'>, limit?: number) =>
        list({ companyId: a.companyId, ...filter }, limit).then((r) =>
          r
            .map((u) => `${u.accountId === null ? 'company' : 'account'} ${u.hourMs - H0} ${u.denomination} ${u.type}`)
            .sort(),
        );
      const one = { accountId: a.accountId, byAccount: false };
      const h = (n: number) => n * HOUR_MS;

      assert.deepEqual(await keysOf({ ...one, fromMs: hour(11), toMs: hour(12) }), [`account ${h(11)} credits a`]);
      assert.deepEqual(
        await keysOf({ byAccount: false, fromMs: hour(11), toMs: hour(13) }),
        [`company ${h(11)} credits a`, `company ${h(12)} credits a`],
        'from is included, to is not',
      );
      assert.deepEqual(await keysOf({ ...one, fromMs: hour(10), toMs: hour(10) }), [], 'an empty span');
      assert.deepEqual(await keysOf({ ...one, fromMs: hour(10), toMs: hour(13), types: ['b'] }), [
        `account ${h(10)} credits b`,
        `account ${h(10)} tokens b`,
      ]);
      assert.deepEqual(await keysOf({ byAccount: true, fromMs: hour(10), toMs: hour(13), denominations: ['tokens'] }), [
        `account ${h(10)} tokens b`,
      ]);
      assert.deepEqual(
        await keysOf({
          byAccount: false,
          fromMs: hour(10),
          toMs: hour(13),
          types: ['a', 'b'],
          denominations: ['credits'],
        }),
        [
          `company ${h(10)} credits a`,
          `company ${h(10)} credits b`,
          `company ${h(11)} credits a`,
          `company ${h(12)} credits a`,
        ],
        'filters combine',
      );
      assert.deepEqual(await keysOf({ ...one, fromMs: hour(10), toMs: hour(13), types: ['none'] }), []);
      assert.deepEqual(await keysOf({ ...one, fromMs: hour(10), toMs: hour(13), types: [] }), [], 'no type: nothing');
      const capped = await keysOf({ ...one, fromMs: hour(10), toMs: hour(13) }, 2);
      assert.equal(capped.length, 2, 'at most limit rows');
      assert.equal((await keysOf({ ...one, fromMs: hour(10), toMs: hour(13) }, 6)).length, 5);
    });

    test('addUsage: concurrent writers to the same hour lose no addition; a rolled-back one adds nothing', async () => {
      const a = await seedCompanyAndAccount(store);
      const row = () => usage(a.companyId, a.accountId, hour(20), { events: 1, quantity: '0.01', cost: 3 });
      await Promise.all(
        Array.from({ length: 40 }, () => store.write((tx) => portOf(tx).writeLedger([], [], [], [row()]))),
      );
      await assert.rejects(
        store.write(async (tx) => {
          await portOf(tx).writeLedger([], [], [], [row()]);
          throw new Error('abandon');
        }),
        /abandon/,
      );
      const expected = { events: 40, quantity: '0.4', cost: 120 };
      const span = { companyId: a.companyId, fromMs: hour(20), toMs: hour(21) };
      assert.deepEqual(totals(await list({ ...span, accountId: a.accountId, byAccount: false })), [
        usage(a.companyId, a.accountId, hour(20), expected),
      ]);
      assert.deepEqual(totals(await list({ ...span, byAccount: false })), [
        { ...usage(a.companyId, '', hour(20), expected), accountId: null },
      ]);
    });

    test('deleteUsageBefore: the hours before the bound from both rollups, at most limit a call', async () => {
      // Hours of 1970: older than anything the other tests write, so this store's only rows this old.
      const a = await seedCompanyAndAccount(store);
      const b = await seedAccount(store, a.companyId);
      const [first, second] = [a.accountId, b].sort();
      const rows: UsageRow[] = [];
      for (const accountId of [first!, second!])
        for (const n of [0, 1, 2]) rows.push(usage(a.companyId, accountId, n * HOUR_MS));
      // One call: three company rows (hours 0, 1, 2) beside the six account rows.
      await store.write((tx) => portOf(tx).writeLedger([], [], [], rows));
      const names = new Map([
        [first, 'first'],
        [second, 'second'],
      ]);
      const left = async () =>
        [
          ...(await list({ companyId: a.companyId, byAccount: true, fromMs: 0, toMs: 3 * HOUR_MS })),
          ...(await list({ companyId: a.companyId, byAccount: false, fromMs: 0, toMs: 3 * HOUR_MS })),
        ]
          .map((r) => `${names.get(r.accountId ?? '') ?? 'company'} ${r.hourMs / HOUR_MS}`)
          .sort();

      assert.equal(await store.write((tx) => tx.usage.deleteUsageBefore(0, 100)), 0, 'nothing before the first hour');
      // Before hour 2: 4 account rows and 2 company rows, at most limit a call, whichever rollup they are in.
      const before2 = (limit: number) => store.write((tx) => tx.usage.deleteUsageBefore(2 * HOUR_MS, limit));
      assert.equal(await before2(3), 3);
      assert.equal((await left()).length, 9 - 3);
      assert.equal(await before2(2), 2, 'a batch across both rollups counts as one');
      assert.equal((await left()).length, 9 - 5);
      assert.equal(await before2(5), 1, 'the rest, fewer than limit');
      assert.equal(await before2(5), 0, 'then none');
      assert.deepEqual(await left(), ['company 2', 'first 2', 'second 2'], 'the bound hour itself is kept');
      await assert.rejects(
        store.write(async (tx) => {
          assert.equal(await tx.usage.deleteUsageBefore(3 * HOUR_MS, 100), 3);
          throw new Error('abandon');
        }),
        /abandon/,
      );
      assert.deepEqual(await left(), ['company 2', 'first 2', 'second 2'], 'a rolled-back delete deletes nothing');
      assert.equal(await store.write((tx) => tx.usage.deleteUsageBefore(3 * HOUR_MS, 100)), 3);
      assert.deepEqual(await left(), []);
    });
  });
});
