// Guarantees: on SQLite and PostgreSQL, the store's side of the ledger's port (src/store/ledger/) locks only the
// balances that exist, applies every delta atomically (concurrent increments lose nothing, a failed write keeps
// none), and writes a posting's events, balance deltas and transactions all or nothing.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newId } from '../../src/lib/ids.js';
import { portOf } from '../../src/ledger/port.js';
import { forEachDialect, seedBalance, seedCompanyAndAccount } from '../support/stores.js';
import { T0, balanceState, eventRow, sortStrings, txRow } from './contract-support.js';

forEachDialect((store) => {
  describe('the ledger port', () => {
    test('lockBalances returns only the keys that exist', async () => {
      const a = await seedCompanyAndAccount(store);
      await seedBalance(store, a.companyId, a.accountId, 'x', 5);
      await seedBalance(store, a.companyId, a.accountId, 'y', 7);
      const rows = await store.write((tx) =>
        portOf(tx).lockBalances([
          { accountId: a.accountId, denomination: 'y' },
          { accountId: a.accountId, denomination: 'missing' },
          { accountId: newId('a'), denomination: 'x' },
          { accountId: a.accountId, denomination: 'x' },
        ]),
      );
      assert.deepEqual(sortStrings(rows.map((r) => `${r.denomination}=${r.amount}`)), ['x=5', 'y=7']);
      assert.deepEqual(await store.write((tx) => portOf(tx).lockBalances([])), []);
    });

    test('deltas: amount = amount + Δ and pending = pending + Δ, returning the new figures', async () => {
      const a = await seedCompanyAndAccount(store);
      await seedBalance(store, a.companyId, a.accountId, 'x', 100);
      await seedBalance(store, a.companyId, a.accountId, 'y', 0);
      const out = await store.write(async (tx) => {
        await portOf(tx).lockBalances([
          { accountId: a.accountId, denomination: 'x' },
          { accountId: a.accountId, denomination: 'y' },
        ]);
        return portOf(tx).writeLedger(
          [],
          [
            { accountId: a.accountId, denomination: 'x', amount: -30, pending: 5 },
            { accountId: a.accountId, denomination: 'y', amount: 12, pending: 0 },
            { accountId: a.accountId, denomination: 'missing', amount: 1, pending: 1 },
          ],
          [],
        );
      });
      assert.deepEqual(sortStrings(out.map((r) => `${r.denomination}:${r.amount}/${r.pending}`)), ['x:70/5', 'y:12/0']);
      assert.deepEqual(await store.write((tx) => portOf(tx).writeLedger([], [], [])), []);
      assert.equal(
        await store.read((tx) => tx.balances.findBalance(a.accountId, 'missing')),
        undefined,
        'a delta never creates a balance',
      );
    });

    test('a delta with spend windows writes them with its figures; one without leaves them; limits stay', async () => {
      const a = await seedCompanyAndAccount(store);
      await seedBalance(store, a.companyId, a.accountId, 'x', 100);
      const key = { accountId: a.accountId, denomination: 'x' };
      assert.equal(
        await store.write((tx) => tx.balances.setSpendLimits(a.accountId, 'x', { daily: 9, monthly: null })),
        true,
      );
      assert.equal(
        await store.write((tx) => tx.balances.setSpendLimits(a.accountId, 'nope', { daily: 1, monthly: 1 })),
        false,
      );
      const spend = { dayStartMs: T0 - (T0 % 86_400_000), day: 12, monthStartMs: T0 - 5 * 86_400_000, month: 40 };
      const written = await store.write(async (tx) => {
        await portOf(tx).lockBalances([key]);
        return portOf(tx).writeLedger([], [{ ...key, amount: -12, pending: 0, spend }], []);
      });
      assert.deepEqual([written[0]!.amount, written[0]!.spend], [88, spend]);
      await store.write(async (tx) => {
        await portOf(tx).lockBalances([key]);
        await portOf(tx).writeLedger([], [{ ...key, amount: 1, pending: 0 }], []);
      });
      const b = (await store.read((tx) => tx.balances.findBalance(a.accountId, 'x')))!;
      assert.deepEqual([b.amount, b.spend, b.limits], [89, spend, { daily: 9, monthly: null }]);
    });

    test('every delta is applied it is given, even two for one balance', async () => {
      const a = await seedCompanyAndAccount(store);
      await seedBalance(store, a.companyId, a.accountId, 'x', 0);
      await store.write((tx) =>
        portOf(tx).writeLedger(
          [],
          [
            { accountId: a.accountId, denomination: 'x', amount: 3, pending: 1 },
            { accountId: a.accountId, denomination: 'x', amount: 4, pending: 2 },
          ],
          [],
        ),
      );
      const b = await store.read((tx) => tx.balances.findBalance(a.accountId, 'x'));
      assert.equal(b!.amount, 7);
      assert.equal(b!.pending, 3);
    });

    test(
      'deltas are atomic: concurrent unlocked increments lose nothing, ' + 'and a failed write keeps none',
      async () => {
        const a = await seedCompanyAndAccount(store);
        await seedBalance(store, a.companyId, a.accountId, 'x', 0);
        await Promise.all(
          Array.from({ length: 40 }, () =>
            store.write((tx) =>
              portOf(tx).writeLedger([], [{ accountId: a.accountId, denomination: 'x', amount: 1, pending: 2 }], []),
            ),
          ),
        );
        let b = await store.read((tx) => tx.balances.findBalance(a.accountId, 'x'));
        assert.equal(b!.amount, 40);
        assert.equal(b!.pending, 80);
        await assert.rejects(
          store.write(async (tx) => {
            await portOf(tx).writeLedger(
              [],
              [{ accountId: a.accountId, denomination: 'x', amount: 1000, pending: 0 }],
              [],
            );
            throw new Error('boom');
          }),
          /boom/,
        );
        b = await store.read((tx) => tx.balances.findBalance(a.accountId, 'x'));
        assert.equal(b!.amount, 40);
      },
    );

    test('writeLedger: events, summed balance deltas and ledger rows in one posting, all or nothing', async () => {
      const a = await seedCompanyAndAccount(store);
      await seedBalance(store, a.companyId, a.accountId, 'x', 100);
      await seedBalance(store, a.companyId, a.accountId, 'y', 50);
      const x0 = (await balanceState(store, a.accountId, 'x')).transactions.length;
      const events = [
        eventRow(a.companyId, a.accountId, { denomination: 'x', costAmount: 3 }),
        eventRow(a.companyId, a.accountId, {
          denomination: 'x',
          costAmount: 4,
          state: 'pending',
          expiresAtMs: T0 + 1,
        }),
      ];
      const rows = [
        txRow(a.accountId, 'x', -3, 97, { kind: 'usage', eventId: events[0]!.eventId }),
        txRow(a.accountId, 'y', 5, 55),
        txRow(a.accountId, 'x', -1, 96),
      ];
      const after = await store.write(async (tx) => {
        await portOf(tx).lockBalances([
          { accountId: a.accountId, denomination: 'x' },
          { accountId: a.accountId, denomination: 'y' },
        ]);
        // Two deltas of one balance: both count.
        return portOf(tx).writeLedger(
          events,
          [
            { accountId: a.accountId, denomination: 'x', amount: -3, pending: 4 },
            { accountId: a.accountId, denomination: 'y', amount: 5, pending: 0 },
            { accountId: a.accountId, denomination: 'x', amount: -1, pending: 0 },
          ],
          rows,
        );
      });
      const byDenomination = new Map(after.map((b) => [b.denomination, [b.amount, b.pending]]));
      assert.deepEqual(
        Object.fromEntries(byDenomination),
        { x: [96, 4], y: [55, 0] },
        'the balances after are returned, once each',
      );
      assert.deepEqual(
        await store
          .read((tx) =>
            tx.events.findEventsByIds(
              a.companyId,
              events.map((e) => e.eventId),
            ),
          )
          .then((r) => r.sort((p, q) => p.costAmount - q.costAmount)),
        events,
      );
      const x = await balanceState(store, a.accountId, 'x');
      assert.deepEqual(
        x.transactions.slice(0, x.transactions.length - x0).reverse(),
        [rows[0], rows[2]],
        'ledger rows in order',
      );
      assert.deepEqual(
        (await store.read((tx) => tx.transactions.auditLedger())).filter((v) => v.accountId === a.accountId),
        [],
      );

      // Only deltas, or nothing at all.
      assert.deepEqual(
        (
          await store.write((tx) =>
            portOf(tx).writeLedger([], [{ accountId: a.accountId, denomination: 'y', amount: 0, pending: 2 }], []),
          )
        ).map((b) => b.pending),
        [2],
      );
      assert.deepEqual(await store.write((tx) => portOf(tx).writeLedger([], [], [])), []);
      // A duplicate event id fails the whole posting: no delta, no row stays.
      await assert.rejects(
        store.write((tx) =>
          portOf(tx).writeLedger(
            [events[0]!],
            [{ accountId: a.accountId, denomination: 'y', amount: 9, pending: 0 }],
            [txRow(a.accountId, 'y', 9, 64)],
          ),
        ),
      );
      const y = await store.read((tx) => tx.balances.findBalance(a.accountId, 'y'));
      assert.deepEqual([y!.amount, y!.pending], [55, 2]);
    });
  });
});
