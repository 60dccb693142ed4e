// Guarantees: on SQLite and PostgreSQL, balances are created once, locked, and changed only by atomic deltas
// that lose nothing.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newId } from '../../src/lib/ids.js';
import { forEachDialect, balanceRow, seedBalance, seedCompanyAndAccount } from '../support/stores.js';
import { T0, balanceState, sortStrings } from './contract-support.js';

forEachDialect((store) => {
  describe('balances', () => {
    test('insertBalance creates a zero balance once; find and list', async () => {
      const a = await seedCompanyAndAccount(store);
      assert.equal(
        await store.write((tx) =>
          tx.insertBalance({
            ...balanceRow(a.companyId, a.accountId, 'credits'),
            refillThreshold: 10,
            refillAmount: 100,
            refillUsdCents: 500,
            refillOnDay: '15',
          }),
        ),
        true,
      );
      assert.equal(
        await store.write((tx) => tx.insertBalance(balanceRow(a.companyId, a.accountId, 'credits'))),
        false,
        'duplicate',
      );
      assert.equal(
        await store.write((tx) => tx.insertBalance(balanceRow(a.companyId, a.accountId, 'Credits'))),
        true,
        'denominations are case-sensitive',
      );
      assert.equal(await store.write((tx) => tx.insertBalance(balanceRow(a.companyId, a.accountId, 'USD'))), true);
      const credits = await store.read((tx) => tx.findBalance(a.accountId, 'credits'));
      assert.ok(credits);
      assert.deepEqual(
        {
          accountId: credits.accountId,
          companyId: credits.companyId,
          denomination: credits.denomination,
          amount: credits.amount,
          pending: credits.pending,
          refillThreshold: credits.refillThreshold,
          refillAmount: credits.refillAmount,
          refillUsdCents: credits.refillUsdCents,
          refillOnDay: credits.refillOnDay,
          createdAtMs: credits.createdAtMs,
        },
        {
          accountId: a.accountId,
          companyId: a.companyId,
          denomination: 'credits',
          amount: 0,
          pending: 0,
          refillThreshold: 10,
          refillAmount: 100,
          refillUsdCents: 500,
          refillOnDay: '15',
          createdAtMs: T0,
        },
      );
      assert.equal(credits.autoRefillPaused, false, 'a new balance is not paused');
      assert.equal(await store.read((tx) => tx.findBalance(a.accountId, 'nope')), undefined);
      const listed = await store.read((tx) => tx.listBalances(a.accountId));
      assert.deepEqual(
        listed.map((b) => b.denomination),
        ['Credits', 'USD', 'credits'].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)),
      );
      assert.deepEqual(await store.read((tx) => tx.listBalances(newId('a'))), []);
    });

    test('lockBalances returns only the keys that exist', async () => {
      const a = await seedCompanyAndAccount(store);
      await seedBalance(store, a.companyId, a.accountId, 'x', 5);
      await seedBalance(store, a.companyId, a.accountId, 'y', 7);
      const rows = await store.write((tx) =>
        tx.lockBalances([
          { accountId: a.accountId, denomination: 'y' },
          { accountId: a.accountId, denomination: 'missing' },
          { accountId: newId('a'), denomination: 'x' },
          { accountId: a.accountId, denomination: 'x' },
        ]),
      );
      assert.deepEqual(sortStrings(rows.map((r) => `${r.denomination}=${r.amount}`)), ['x=5', 'y=7']);
      assert.deepEqual(await store.write((tx) => tx.lockBalances([])), []);
    });

    test('applyBalanceDeltas: amount = amount + Δ and pending = pending + Δ, returning the new figures', async () => {
      const a = await seedCompanyAndAccount(store);
      await seedBalance(store, a.companyId, a.accountId, 'x', 100);
      await seedBalance(store, a.companyId, a.accountId, 'y', 0);
      const out = await store.write(async (tx) => {
        await tx.lockBalances([
          { accountId: a.accountId, denomination: 'x' },
          { accountId: a.accountId, denomination: 'y' },
        ]);
        return tx.applyBalanceDeltas([
          { accountId: a.accountId, denomination: 'x', amount: -30, pending: 5 },
          { accountId: a.accountId, denomination: 'y', amount: 12, pending: 0 },
          { accountId: a.accountId, denomination: 'missing', amount: 1, pending: 1 },
        ]);
      });
      assert.deepEqual(sortStrings(out.map((r) => `${r.denomination}:${r.amount}/${r.pending}`)), ['x:70/5', 'y:12/0']);
      assert.deepEqual(await store.write((tx) => tx.applyBalanceDeltas([])), []);
      assert.equal(
        await store.read((tx) => tx.findBalance(a.accountId, 'missing')),
        undefined,
        'a delta never creates a balance',
      );
    });

    test('applyBalanceDeltas applies every delta it is given, even two for one balance', async () => {
      const a = await seedCompanyAndAccount(store);
      await seedBalance(store, a.companyId, a.accountId, 'x', 0);
      await store.write((tx) =>
        tx.applyBalanceDeltas([
          { accountId: a.accountId, denomination: 'x', amount: 3, pending: 1 },
          { accountId: a.accountId, denomination: 'x', amount: 4, pending: 2 },
        ]),
      );
      const b = await store.read((tx) => tx.findBalance(a.accountId, 'x'));
      assert.equal(b!.amount, 7);
      assert.equal(b!.pending, 3);
    });

    test(
      'applyBalanceDeltas is atomic: concurrent unlocked increments lose nothing, ' + 'and a failed write keeps none',
      async () => {
        const a = await seedCompanyAndAccount(store);
        await seedBalance(store, a.companyId, a.accountId, 'x', 0);
        await Promise.all(
          Array.from({ length: 40 }, () =>
            store.write((tx) =>
              tx.applyBalanceDeltas([{ accountId: a.accountId, denomination: 'x', amount: 1, pending: 2 }]),
            ),
          ),
        );
        let b = await store.read((tx) => tx.findBalance(a.accountId, 'x'));
        assert.equal(b!.amount, 40);
        assert.equal(b!.pending, 80);
        await assert.rejects(
          store.write(async (tx) => {
            await tx.applyBalanceDeltas([{ accountId: a.accountId, denomination: 'x', amount: 1000, pending: 0 }]);
            throw new Error('boom');
          }),
          /boom/,
        );
        b = await store.read((tx) => tx.findBalance(a.accountId, 'x'));
        assert.equal(b!.amount, 40);
      },
    );

    test('amounts beyond 2^31 are exact', async () => {
      const a = await seedCompanyAndAccount(store);
      const big = Number.MAX_SAFE_INTEGER - 1;
      await seedBalance(store, a.companyId, a.accountId, 'x', big);
      const { balance, transactions } = await balanceState(store, a.accountId, 'x');
      assert.equal(balance.amount, big);
      assert.equal(transactions[0]!.balanceAfter, big);
    });
  });
});
