// Guarantees: on SQLite and PostgreSQL, balances are created once, found and listed, and keep amounts beyond 2^31
// exactly. Their locks and changes are the ledger port's (ledger.contract.test.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newId } from '../../src/lib/ids.js';
import { forEachDialect, balanceRow, seedBalance, seedCompanyAndAccount } from '../support/stores.js';
import { T0, balanceState } from './contract-support.js';

forEachDialect((store) => {
  describe('balances', () => {
    test('insertBalance creates a zero balance once; find and list', async () => {
      const a = await seedCompanyAndAccount(store);
      assert.equal(
        await store.write((tx) =>
          tx.balances.insertBalance({
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
        await store.write((tx) => tx.balances.insertBalance(balanceRow(a.companyId, a.accountId, 'credits'))),
        false,
        'duplicate',
      );
      assert.equal(
        await store.write((tx) => tx.balances.insertBalance(balanceRow(a.companyId, a.accountId, 'Credits'))),
        true,
        'denominations are case-sensitive',
      );
      assert.equal(
        await store.write((tx) => tx.balances.insertBalance(balanceRow(a.companyId, a.accountId, 'USD'))),
        true,
      );
      const credits = await store.read((tx) => tx.balances.findBalance(a.accountId, 'credits'));
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
      assert.equal(await store.read((tx) => tx.balances.findBalance(a.accountId, 'nope')), undefined);
      const listed = await store.read((tx) => tx.balances.listBalances(a.accountId));
      assert.deepEqual(
        listed.map((b) => b.denomination),
        ['Credits', 'USD', 'credits'].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)),
      );
      assert.deepEqual(await store.read((tx) => tx.balances.listBalances(newId('a'))), []);
    });

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
