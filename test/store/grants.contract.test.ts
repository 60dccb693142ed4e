// Guarantees: a balance's grants are stored so that reading them back gives exactly what was written, on any
// amount; a group of events that draws only from the grant being drawn leaves the row's grants text as it is (the
// amount carries the change), and any other change writes it; `drawn_from` reads back as it was written.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { take } from '../../src/domain/grants.js';
import { balanceKey } from '../../src/lib/keys.js';
import { grantEntry, newGrantRow } from '../../src/ledger/grants.js';
import {
  decodeAllocations,
  decodeStoredLots,
  derivedLot,
  encodeAllocations,
  encodeLots,
  storesSame,
} from '../../src/store/grants/sql.js';
import type { Grant } from '../../src/store/grants/types.js';
import type { BalanceRow, Store } from '../../src/store/types.js';
import { forEachDialect, seedBalance, seedCompanyAndAccount } from '../support/stores.js';
import { T0, ledger } from './contract-support.js';
import { portOf } from '../../src/ledger/port.js';

const lotArb: fc.Arbitrary<Grant> = fc
  .record({
    n: fc.integer({ min: 0, max: 1_000 }),
    remaining: fc.integer({ min: 0, max: 1_000 }),
    held: fc.integer({ min: 0, max: 1_000 }),
    priority: fc.integer({ min: 0, max: 100 }),
    category: fc.constantFrom('promotional' as const, 'paid' as const),
    source: fc.constantFrom('initial' as const, 'grant' as const, 'refill' as const, 'plan' as const),
    effectiveAtMs: fc.integer({ min: 0, max: 2 * T0 }),
    expiresAtMs: fc.option(fc.integer({ min: 0, max: 2 * T0 })),
    voidedAtMs: fc.option(fc.integer({ min: 0, max: 2 * T0 })),
    opened: fc.boolean(),
    closed: fc.boolean(),
  })
  .map(({ n, remaining, held, ...rest }) => ({
    grantId: `g_${n}`,
    amount: Math.max(remaining, held, 1),
    remaining: Math.max(remaining, held),
    held: Math.min(remaining, held),
    ...rest,
  }));
const lotsArb = fc.uniqueArray(lotArb, { minLength: 0, maxLength: 5, selector: (g) => g.grantId });

describe('grants: the stored form', () => {
  test('what is encoded against an amount decodes to the same lots on that amount, whatever the amount', () => {
    fc.assert(
      fc.property(lotsArb, fc.integer({ min: -1_000, max: 6_000 }), fc.boolean(), (lots, offset, consistent) => {
        const sum = lots.reduce((s, g) => s + g.remaining, 0);
        // Mostly the balance's own amount (Σ remaining − debt); sometimes any amount at all.
        const amount = consistent ? sum - Math.max(0, offset) : offset;
        assert.deepEqual(decodeStoredLots(encodeLots(lots, amount), amount).lots, lots);
        assert.deepEqual(
          decodeStoredLots(encodeLots(lots), amount).lots,
          lots,
          'encoded without an amount: every figure kept',
        );
      }),
      { numRuns: 2_000 },
    );
  });

  test('the drawing head is stored without its remaining exactly when the amount gives it', () => {
    const head: Grant = {
      grantId: 'g_head',
      amount: 100,
      remaining: 60,
      held: 10,
      priority: 10,
      category: 'promotional',
      source: 'grant',
      effectiveAtMs: T0,
      expiresAtMs: T0 + 1_000,
      voidedAtMs: null,
      opened: true,
      closed: false,
    };
    const rest: Grant = { ...head, grantId: 'g_rest', amount: 500, remaining: 500, held: 0, priority: 50 };
    const before = encodeLots([head, rest], 560);
    assert.ok(before.startsWith('[["g_head",100,null,10,'), before);
    // Units drawn from the head: the same text, the amount tells the new remaining.
    const after = encodeLots([{ ...head, remaining: 25 }, rest], 525);
    assert.equal(after, before);
    assert.equal(decodeStoredLots(after, 525).lots[0]!.remaining, 25);
    // Units drawn from the next grant, a hold, or debt change the text.
    assert.notEqual(encodeLots([head, { ...rest, remaining: 499 }], 559), before);
    assert.notEqual(encodeLots([{ ...head, held: 11 }, rest], 560), before);
    const spent = { ...head, remaining: 10 }; // all unheld units drawn: the next grant is the head
    assert.notEqual(encodeLots([spent, rest], 510), before);
    const remainders = (text: string) => (JSON.parse(text) as unknown[][]).map((e) => e[2]);
    const owing = encodeLots([spent, { ...rest, remaining: 0, held: 0 }], -5);
    assert.deepEqual(remainders(owing), [10, 0], 'in debt, no grant is stored without its remaining');
    assert.deepEqual(decodeStoredLots(owing, -5).lots, [spent, { ...rest, remaining: 0, held: 0 }]);
    // A closed or not yet opened grant is never the head.
    assert.deepEqual(remainders(encodeLots([{ ...head, closed: true }], 60)), [60]);
    assert.deepEqual(remainders(encodeLots([{ ...head, opened: false }], 0)), [60]);
    assert.deepEqual(remainders(before), [null, 500]);
  });

  test('storesSame answers as comparing the encoded texts, and decoding tells the lot stored without remaining', () => {
    /** `before` changed: the head's remaining only (as a draw from it), one field of one lot, or a lot fewer. */
    const changeArb = fc.record({
      kind: fc.constantFrom('head-remaining', 'field', 'drop', 'none'),
      index: fc.nat(),
      field: fc.constantFrom(
        'remaining',
        'held',
        'amount',
        'priority',
        'category',
        'source',
        'effectiveAtMs',
        'expiresAtMs',
        'voidedAtMs',
        'opened',
        'closed',
      ),
      by: fc.integer({ min: 1, max: 50 }),
    });
    fc.assert(
      fc.property(lotsArb, fc.integer({ min: -50, max: 6_000 }), changeArb, (before, amountBefore, change) => {
        const head = derivedLot(before, amountBefore);
        const stored = decodeStoredLots(encodeLots(before, amountBefore), amountBefore);
        assert.equal(stored.head, head);
        assert.deepEqual(stored.lots, before);
        let after = before.map((g) => ({ ...g }));
        let amountAfter = amountBefore;
        const i = before.length === 0 ? -1 : change.index % before.length;
        if (change.kind === 'head-remaining' && head !== -1) {
          const taken = Math.min(change.by, after[head]!.remaining - after[head]!.held);
          after[head]!.remaining -= taken;
          amountAfter -= taken;
        } else if (change.kind === 'field' && i !== -1) {
          const g = after[i]! as unknown as Record<string, unknown>;
          const v = g[change.field];
          g[change.field] =
            typeof v === 'boolean'
              ? !v
              : typeof v === 'number'
                ? v + change.by
                : v === null
                  ? change.by
                  : v === 'paid'
                    ? 'promotional'
                    : v === 'promotional'
                      ? 'paid'
                      : v === 'grant'
                        ? 'refill'
                        : 'grant';
        } else if (change.kind === 'drop' && i !== -1) after = after.filter((_, j) => j !== i);
        assert.equal(
          storesSame(before, head, after, amountAfter),
          encodeLots(after, amountAfter) === encodeLots(before, amountBefore),
        );
      }),
      { numRuns: 2_000 },
    );
  });

  test('drawn_from: all units from one grant is stored as its id; anything else as the list', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ grantId: fc.constantFrom('g_a', 'g_b', 'g_c'), amount: fc.integer({ min: 1, max: 9 }) }), {
          maxLength: 3,
        }),
        fc.integer({ min: 0, max: 30 }),
        (generated, whole) => {
          const allocations = generated.map((a) => ({ grantId: a.grantId, amount: a.amount }));
          const text = encodeAllocations(allocations, whole);
          assert.deepEqual(decodeAllocations(text, whole), allocations);
          assert.equal(text === allocations[0]?.grantId, allocations.length === 1 && allocations[0]!.amount === whole);
        },
      ),
    );
    assert.equal(encodeAllocations(null, 5), null);
    assert.equal(decodeAllocations(null, 5), null);
    assert.throws(() => decodeAllocations('g_a'), /without their units/);
  });
});

forEachDialect((store, t) => {
  describe('grants', () => {
    async function balance(accountId: string): Promise<BalanceRow> {
      const b = await store.read((tx) => tx.balances.findBalance(accountId, 'credits'));
      assert.ok(b);
      return b;
    }
    /** Takes units as a complete event does (domain take), through the server's ledger. */
    async function takeUnits(s: Store, accountId: string, units: number): Promise<void> {
      await s.write(async (tx) => {
        const p = await ledger.open(tx, [{ accountId, denomination: 'credits' }], T0);
        await p.post([{ accountId, denomination: 'credits', apply: (lots) => take(lots, units, T0) }]);
      });
    }

    /** A balance of 100 credits (its initial grant) and a grant of 30 beside it, drawn first (priority 10). */
    async function seedTwoGrants() {
      const a = await seedCompanyAndAccount(store);
      await seedBalance(store, a.companyId, a.accountId, 'credits', 100, T0);
      const owner = { companyId: a.companyId, accountId: a.accountId, denomination: 'credits' };
      await store.write(async (tx) => {
        const p = await ledger.open(tx, [owner], T0);
        await p.post([grantEntry(owner, { amount: 30, priority: 10, source: 'grant' }, T0, 'grant')]);
      });
      return { a, owner };
    }

    test('a posting returns each balance as a read finds it, columns changed earlier in its write too', async () => {
      const { a, owner } = await seedTwoGrants();
      for (const units of [5, 40]) {
        // 5 from the grant being drawn (the text stays), then 40 across both grants (the text is written)
        const posted = await store.write(async (tx) => {
          await tx.refills.updateRefillSettings(a.accountId, 'credits', {
            refillThreshold: 1,
            refillAmount: 50 + units,
            refillUsdCents: 500,
            refillOnDay: null,
            refillMonthly: false,
            monthlyAnchorAtMs: T0 + units,
            nextRefillAtMs: null,
            refillMaxPerMonth: null,
          });
          await tx.plans.setPlanBalance(a.accountId, 'credits', 10, '50');
          const p = await ledger.open(tx, [owner], T0);
          const posted = await p.post([{ ...owner, apply: (lots) => take(lots, units, T0) }]);
          return posted.balances.get(balanceKey(a.accountId, 'credits'));
        });
        assert.ok(posted);
        assert.equal(posted.refillAmount, 50 + units, 'a column changed earlier in the transaction');
        assert.equal(posted.planIncluded, 10);
        assert.deepEqual(posted, await balance(a.accountId));
      }
    });

    test('insertGrants writes many rows in one call, every column as given', async () => {
      const a = await seedCompanyAndAccount(store);
      const owner = { companyId: a.companyId, accountId: a.accountId, denomination: 'credits' };
      const rows = [
        newGrantRow(owner, { amount: 5, source: 'grant' }, T0),
        newGrantRow(
          owner,
          {
            amount: 9_007_199_254_740_991,
            source: 'refill',
            category: 'paid',
            priority: 0,
            costBasis: '0.012345',
            name: 'Top-up "large"',
            metadata: { order: 'o_1', lines: [1, 2] },
            effectiveAtMs: T0 + 1,
            expiresAtMs: T0 + 86_400_000,
          },
          T0,
        ),
        ...Array.from({ length: 70 }, (_, i) =>
          newGrantRow(owner, { amount: i + 1, source: 'plan', priority: 100 }, T0),
        ),
      ];
      await store.write((tx) => portOf(tx).insertGrants(rows));
      for (const r of rows) assert.deepEqual(await store.read((tx) => tx.grants.findGrant(a.companyId, r.grantId)), r);
      await store.write((tx) => portOf(tx).insertGrants([]));
    });

    test('events drawing from the head leave the grants text; the next grant, a new grant, debt write it', async () => {
      const { a } = await seedTwoGrants();
      const seeded = await balance(a.accountId);
      assert.deepEqual(
        seeded.grants.map((g) => [g.amount, g.remaining]),
        [
          [30, 30],
          [100, 100],
        ],
      );

      // How the row stores its grants: the store's own business, seen only through raw SQL.
      const grantsText = async () =>
        (
          await t.query('SELECT grants FROM balances WHERE account_id = ? AND denomination = ?', [
            a.accountId,
            'credits',
          ])
        )[0]!.grants;
      await takeUnits(store, a.accountId, 5);
      const firstText = await grantsText();
      await takeUnits(store, a.accountId, 7);
      const second = await balance(a.accountId);
      const secondText = await grantsText();
      assert.equal(second.amount, 118);
      assert.deepEqual(
        second.grants.map((g) => g.remaining),
        [18, 100],
      );
      assert.equal(secondText, firstText, 'only the amount moved');

      await takeUnits(store, a.accountId, 20); // 18 from the first grant, 2 from the initial one
      const crossed = await balance(a.accountId);
      const crossedText = await grantsText();
      assert.deepEqual(
        crossed.grants.map((g) => [g.grantId, g.remaining]),
        [[second.grants[1]!.grantId, 98]],
      );
      assert.notEqual(crossedText, secondText);

      await takeUnits(store, a.accountId, 100); // into debt: 2 owed
      const owing = await balance(a.accountId);
      assert.equal(owing.amount, -2);
      assert.deepEqual(owing.grants, [], 'the used-up grant left the lots');
      const page = await store.read((tx) => tx.transactions.listTransactions(a.accountId, 'credits', { limit: 10 }));
      assert.ok(page);
      assert.deepEqual(
        page.rows.slice(0, 4).map((t) => [t.amount, t.drawnFrom?.map((d) => d.amount)]),
        [
          [-100, [98]],
          [-20, [18, 2]],
          [-7, [7]],
          [-5, [5]],
        ],
      );
    });
  });
});
