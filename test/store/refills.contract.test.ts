// Guarantee: on SQLite and PostgreSQL, a balance's refill settings are replaced whole and its refill bookkeeping
// changes only in the fields given, on that one balance, read back by every read of it; a due monthly refill is
// claimed earliest first, only when due, not while a refill is in flight but again once it is no longer, and
// (PostgreSQL) a balance claimed by an open transaction is skipped by the others, not waited for.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { BalanceRow, RefillSettings, Store } from '../../src/store/types.js';
import { forEachDialect, seedAccount, seedBalance, seedCompanyAndAccount } from '../support/stores.js';
import { T0, deferred, endsOrWaits } from './contract-support.js';

/** A balance's refill fields as the store reads them back. */
const refillOf = (b: BalanceRow) => ({
  refillThreshold: b.refillThreshold,
  refillAmount: b.refillAmount,
  refillUsdCents: b.refillUsdCents,
  refillOnDay: b.refillOnDay,
  refillMonthly: b.refillMonthly,
  monthlyAnchorAtMs: b.monthlyAnchorAtMs,
  nextRefillAtMs: b.nextRefillAtMs,
  refillChargeId: b.refillChargeId,
  consecutiveDeclines: b.consecutiveDeclines,
  autoRefillPaused: b.autoRefillPaused,
  refillMaxPerMonth: b.refillMaxPerMonth,
  refillsInMonth: b.refillsInMonth,
  refillCappedMonthStartMs: b.refillCappedMonthStartMs,
});

const NONE = {
  refillThreshold: null,
  refillAmount: null,
  refillUsdCents: null,
  refillOnDay: null,
  refillMonthly: false,
  monthlyAnchorAtMs: null,
  nextRefillAtMs: null,
  refillChargeId: null,
  consecutiveDeclines: 0,
  autoRefillPaused: false,
  refillMaxPerMonth: null,
  refillsInMonth: { monthStartMs: 0, count: 0 },
  refillCappedMonthStartMs: null,
};

const monthly = (nextRefillAtMs: number): RefillSettings => ({
  refillThreshold: null,
  refillAmount: 100,
  refillUsdCents: 500,
  refillOnDay: '1',
  refillMonthly: true,
  monthlyAnchorAtMs: nextRefillAtMs,
  nextRefillAtMs,
  refillMaxPerMonth: null,
});

/**
 * Balances with a monthly refill due at each instant (the claim tests' instants lie in [1_000, 100_000]: nothing
 * else in this store is due then), one account each.
 */
async function dueBalances(store: Store, dueAtMs: number[]): Promise<{ accountId: string; denomination: string }[]> {
  const { companyId } = await seedCompanyAndAccount(store);
  const out = [];
  for (const due of dueAtMs) {
    const accountId = await seedAccount(store, companyId);
    await seedBalance(store, companyId, accountId, 'tokens');
    await store.write((tx) => tx.refills.updateRefillSettings(accountId, 'tokens', monthly(due)));
    out.push({ accountId, denomination: 'tokens' });
  }
  return out;
}

/** What the monthly job does with a claimed balance: its refill goes in flight (a charge id marks it). */
const startRefill = (store: Store, nowMs: number) =>
  store.write(async (tx) => {
    const due = await tx.refills.claimDueMonthlyRefill(nowMs);
    if (due)
      await tx.refills.updateRefillState(due.accountId, due.denomination, { refillChargeId: `ch_${due.accountId}` });
    return due && { accountId: due.accountId, denomination: due.denomination };
  });

/** What settling it does: nothing in flight, the next month scheduled (null: the monthly refill is off). */
const finishRefill = (store: Store, key: { accountId: string; denomination: string }, nextRefillAtMs: number | null) =>
  store.write((tx) =>
    tx.refills.updateRefillState(key.accountId, key.denomination, { refillChargeId: null, nextRefillAtMs }),
  );

forEachDialect((store, t) => {
  const read = async (accountId: string, denomination: string) => {
    const b = await store.read((tx) => tx.balances.findBalance(accountId, denomination));
    assert.ok(b, `balance ${accountId}/${denomination}`);
    return b;
  };

  describe('refills', () => {
    test('updateRefillSettings replaces the settings of that one balance, and leaves its bookkeeping', async () => {
      const a = await seedCompanyAndAccount(store);
      const other = await seedAccount(store, a.companyId);
      await seedBalance(store, a.companyId, a.accountId, 'tokens', 40);
      await seedBalance(store, a.companyId, a.accountId, 'credits');
      await seedBalance(store, a.companyId, other, 'tokens');
      assert.deepEqual(refillOf(await read(a.accountId, 'tokens')), NONE, 'a new balance has no refill');

      const settings: RefillSettings = {
        refillThreshold: 10,
        refillAmount: Number.MAX_SAFE_INTEGER,
        refillUsdCents: 1_999,
        refillOnDay: '31',
        refillMonthly: true,
        monthlyAnchorAtMs: T0,
        nextRefillAtMs: T0 + 31 * 86_400_000,
        refillMaxPerMonth: null,
      };
      await store.write(async (tx) => {
        await tx.refills.updateRefillState(a.accountId, 'tokens', { refillChargeId: 'ch_1', consecutiveDeclines: 2 });
        await tx.refills.updateRefillSettings(a.accountId, 'tokens', settings);
      });
      const after = await read(a.accountId, 'tokens');
      assert.deepEqual(refillOf(after), { ...NONE, ...settings, refillChargeId: 'ch_1', consecutiveDeclines: 2 });
      assert.equal(after.amount, 40, 'the amount is not touched');
      assert.deepEqual(
        (await store.read((tx) => tx.balances.listBalances(a.accountId)))
          .map((b) => [b.denomination, b.refillAmount])
          .sort(),
        [
          ['credits', null],
          ['tokens', Number.MAX_SAFE_INTEGER],
        ],
        'every read of the balance carries them; another denomination is not touched',
      );
      assert.deepEqual(refillOf(await read(other, 'tokens')), NONE, 'another account is not touched');

      // Replaced whole: what the new settings leave out is gone.
      await store.write((tx) =>
        tx.refills.updateRefillSettings(a.accountId, 'tokens', {
          refillThreshold: 5,
          refillAmount: null,
          refillUsdCents: null,
          refillOnDay: null,
          refillMonthly: false,
          monthlyAnchorAtMs: null,
          nextRefillAtMs: null,
          refillMaxPerMonth: null,
        }),
      );
      assert.deepEqual(refillOf(await read(a.accountId, 'tokens')), {
        ...NONE,
        refillThreshold: 5,
        refillChargeId: 'ch_1',
        consecutiveDeclines: 2,
      });
    });

    test('updateRefillState changes only the fields given, on that one balance', async () => {
      const a = await seedCompanyAndAccount(store);
      await seedBalance(store, a.companyId, a.accountId, 'tokens');
      await seedBalance(store, a.companyId, a.accountId, 'credits');
      await store.write((tx) => tx.refills.updateRefillSettings(a.accountId, 'tokens', monthly(T0)));
      const base = { ...NONE, ...monthly(T0) };
      const state = async () => refillOf(await read(a.accountId, 'tokens'));

      await store.write((tx) => tx.refills.updateRefillState(a.accountId, 'tokens', { refillChargeId: 'ch_a' }));
      assert.deepEqual(await state(), { ...base, refillChargeId: 'ch_a' });
      await store.write((tx) => tx.refills.updateRefillState(a.accountId, 'tokens', { consecutiveDeclines: 3 }));
      assert.deepEqual(await state(), { ...base, refillChargeId: 'ch_a', consecutiveDeclines: 3 });
      await store.write((tx) => tx.refills.updateRefillState(a.accountId, 'tokens', { autoRefillPaused: true }));
      const paused = { ...base, refillChargeId: 'ch_a', consecutiveDeclines: 3, autoRefillPaused: true };
      assert.deepEqual(await state(), paused);
      await store.write((tx) => tx.refills.updateRefillState(a.accountId, 'tokens', { nextRefillAtMs: T0 + 1 }));
      assert.deepEqual(await state(), { ...paused, nextRefillAtMs: T0 + 1 }, 'the anchor stays');
      await store.write((tx) => tx.refills.updateRefillState(a.accountId, 'tokens', {}));
      assert.deepEqual(await state(), { ...paused, nextRefillAtMs: T0 + 1 }, 'no field: nothing changes');
      const counted = { monthStartMs: T0 - 1000, count: 2 };
      await store.write((tx) =>
        tx.refills.updateRefillState(a.accountId, 'tokens', { refillsInMonth: counted, refillCappedMonthStartMs: T0 }),
      );
      const withCount = { ...paused, nextRefillAtMs: T0 + 1, refillsInMonth: counted, refillCappedMonthStartMs: T0 };
      assert.deepEqual(await state(), withCount, 'the month count and the capped month');
      await store.write((tx) => tx.refills.updateRefillState(a.accountId, 'tokens', { consecutiveDeclines: 3 }));
      assert.deepEqual(await state(), withCount, 'left out, they stay');

      await store.write((tx) =>
        tx.refills.updateRefillState(a.accountId, 'tokens', {
          refillChargeId: null,
          consecutiveDeclines: 0,
          autoRefillPaused: false,
          nextRefillAtMs: null,
        }),
      );
      assert.deepEqual(
        await state(),
        { ...base, nextRefillAtMs: null, refillsInMonth: counted, refillCappedMonthStartMs: T0 },
        'null clears',
      );
      assert.deepEqual(refillOf(await read(a.accountId, 'credits')), NONE, 'another denomination is not touched');
    });

    test('claimDueMonthlyRefill: earliest due first, due at its instant, none in flight, then again', async () => {
      const [at3, at1, at2] = await dueBalances(store, [3_000, 1_000, 2_000]);
      assert.equal(await startRefill(store, 999), undefined, 'nothing is due before its instant');
      assert.deepEqual(await startRefill(store, 1_000), at1, 'due at its instant');
      assert.equal(await startRefill(store, 1_999), undefined, 'a refill in flight is not claimed again');
      assert.deepEqual(await startRefill(store, 10_000), at2, 'the earliest due first');
      assert.deepEqual(await startRefill(store, 10_000), at3);
      assert.equal(await startRefill(store, 10_000), undefined, 'all three in flight');

      // The claim reads the balance whole (its settings are what the refill needs).
      const claimed = await store.write(async (tx) => {
        await tx.refills.updateRefillState(at1!.accountId, 'tokens', { refillChargeId: null });
        const due = await tx.refills.claimDueMonthlyRefill(10_000);
        if (due) await tx.refills.updateRefillState(due.accountId, due.denomination, { refillChargeId: 'ch_again' });
        return due;
      });
      assert.deepEqual(
        claimed && refillOf(claimed),
        { ...NONE, ...monthly(1_000) },
        'no longer in flight: claimed again, with its settings',
      );
      assert.equal(claimed?.accountId, at1!.accountId);

      // A claim that starts nothing (the transaction rolls back) leaves the balance due.
      await finishRefill(store, at2!, 5_000);
      await assert.rejects(
        store.write(async (tx) => {
          assert.equal((await tx.refills.claimDueMonthlyRefill(10_000))?.accountId, at2!.accountId);
          throw new Error('abandon');
        }),
        /abandon/,
      );
      assert.deepEqual(await startRefill(store, 10_000), at2, 'still due after an abandoned claim');
      // A balance with no next refill (monthly refill off) is never due.
      for (const key of [at1!, at2!, at3!]) await finishRefill(store, key, null);
      assert.equal(await startRefill(store, 100_000), undefined);
    });

    test('claimDueMonthlyRefill (PostgreSQL): a balance claimed by an open transaction is skipped, not waited for', {
      skip: t.dialect === 'sqlite' ? "SQLite's single writer never has two claims open at once" : false,
    }, async () => {
      const [soon, next] = await dueBalances(store, [70_000, 80_000]);
      const claimed = deferred<string | undefined>();
      const release = deferred();
      // The first claimer holds its balance, then ends without starting a refill: the balance stays due.
      const first = store.write(async (tx) => {
        claimed.resolve((await tx.refills.claimDueMonthlyRefill(100_000))?.accountId);
        await release.promise;
      });
      try {
        assert.equal(await claimed.promise, soon!.accountId);
        assert.deepEqual(
          await endsOrWaits(t, 'balances', startRefill(store, 100_000)),
          { value: next },
          'the other claimer took the next due balance at once',
        );
        assert.deepEqual(
          await endsOrWaits(t, 'balances', startRefill(store, 100_000)),
          { value: undefined },
          'and then found none, without waiting',
        );
      } finally {
        release.resolve();
        await first;
      }
      assert.deepEqual(await startRefill(store, 100_000), soon, 'released by the first transaction: claimable');
      for (const key of [soon!, next!]) await finishRefill(store, key, null);
    });
  });
});
