// Guarantee: on SQLite and PostgreSQL, a plan reads back exactly as written (its balance entries in order), scoped
// to its company and paged newest first; the plan columns of a balance and an account's plan period change only
// where asked; a due plan renewal is claimed earliest first, only when due, not again once its period has moved on,
// and (PostgreSQL) an account claimed by an open transaction is skipped by the others, not waited for.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newId } from '../../src/lib/ids.js';
import type { AccountPlanRow, PlanRow, Store } from '../../src/store/types.js';
import { forEachDialect, seedAccount, seedBalance, seedCompanyAndAccount } from '../support/stores.js';
import { T0, deferred, endsOrWaits } from './contract-support.js';

/** Renewals of the claim tests fall due in [1_000, 100_000]; a renewed period moves to FAR, never due for them. */
const FAR = 4_000_000_000_000;

function planRow(companyId: string, over: Partial<PlanRow> = {}): PlanRow {
  return {
    planId: newId('p'),
    companyId,
    name: 'Pro',
    chargeAmountUsdCents: 2_000,
    billingPeriod: 'month',
    overageChargeMode: 'postpay',
    thresholdAlertPercentage: null,
    rollover: false,
    balances: [],
    features: [],
    createdAtMs: T0,
    ...over,
  };
}

/** A company with a plan and `n` accounts on it, each with its plan period due at the given instants. */
async function accountsOnPlan(store: Store, dueAtMs: number[]): Promise<{ companyId: string; rows: AccountPlanRow[] }> {
  const { companyId } = await seedCompanyAndAccount(store);
  const plan = planRow(companyId);
  await store.write((tx) => tx.plans.insertPlan(plan));
  const rows: AccountPlanRow[] = [];
  for (const due of dueAtMs) {
    const row = {
      accountId: await seedAccount(store, companyId),
      companyId,
      planId: plan.planId,
      anchorAtMs: 0,
      periodStartMs: 0,
      nextRenewalAtMs: due,
    };
    await store.write((tx) => tx.plans.insertAccountPlan(row));
    rows.push(row);
  }
  return { companyId, rows };
}

/** What the renewal job does with a claimed account: its period moves on, past every claim of these tests. */
const renew = (store: Store, nowMs: number) =>
  store.write(async (tx) => {
    const due = await tx.plans.claimDuePlanRenewal(nowMs);
    if (due) await tx.plans.updateAccountPlanPeriod(due.accountId, due.nextRenewalAtMs, FAR);
    return due;
  });

forEachDialect((store, t) => {
  describe('plans', () => {
    test('insertPlan, findPlan: an exact round trip, entries in their order, scoped to the company', async () => {
      const a = await seedCompanyAndAccount(store);
      const b = await seedCompanyAndAccount(store);
      const plan = planRow(a.companyId, {
        name: 'Team (annual)',
        chargeAmountUsdCents: Number.MAX_SAFE_INTEGER,
        thresholdAlertPercentage: '12.5',
        rollover: true,
        // Not in denomination order: the entries keep the order they were given in.
        balances: [
          { denomination: 'tokens', amount: 1_000_000, overageUnitUsdCents: 2 },
          { denomination: 'gpu.hours', amount: 0, overageUnitUsdCents: 0 },
          { denomination: 'credits', amount: Number.MAX_SAFE_INTEGER, overageUnitUsdCents: 9_007_199 },
        ],
      });
      const bare = planRow(a.companyId, { name: 'Empty' });
      await store.write(async (tx) => {
        await tx.plans.insertPlan(plan);
        await tx.plans.insertPlan(bare);
      });
      assert.deepEqual(await store.read((tx) => tx.plans.findPlan(a.companyId, plan.planId)), plan);
      assert.deepEqual(
        await store.read((tx) => tx.plans.findPlan(a.companyId, bare.planId)),
        bare,
        'a plan without entries',
      );
      assert.equal(
        await store.read((tx) => tx.plans.findPlan(b.companyId, plan.planId)),
        undefined,
        "another company's plan is not found",
      );
      assert.equal(await store.read((tx) => tx.plans.findPlan(a.companyId, newId('p'))), undefined);

      // A plan id is unique: the second insert fails, and its entries are not added to the first plan's.
      await assert.rejects(
        store.write((tx) => tx.plans.insertPlan({ ...plan, name: 'Again', balances: [plan.balances[0]!] })),
      );
      assert.deepEqual(await store.read((tx) => tx.plans.findPlan(a.companyId, plan.planId)), plan);
    });

    test("listPlans: newest first with each plan's own entries, paging, has_more, unknown cursor", async () => {
      const a = await seedCompanyAndAccount(store);
      const b = await seedCompanyAndAccount(store);
      const plans = Array.from({ length: 5 }, (_, i) =>
        planRow(a.companyId, {
          name: `Plan ${i}`,
          // The same instant for all: the order is that of insertion.
          createdAtMs: T0,
          balances: Array.from({ length: i }, (_, j) => ({
            denomination: `d${i}.${j}`,
            amount: i * 10 + j,
            overageUnitUsdCents: j,
          })),
        }),
      );
      const other = planRow(b.companyId, { balances: [{ denomination: 'x', amount: 1, overageUnitUsdCents: 1 }] });
      for (const p of [plans[0]!, other, ...plans.slice(1)]) await store.write((tx) => tx.plans.insertPlan(p));
      const newestFirst = [...plans].reverse();

      const p1 = await store.read((tx) => tx.plans.listPlans(a.companyId, { limit: 2 }));
      assert.deepEqual(p1, { rows: newestFirst.slice(0, 2), hasMore: true });
      const p2 = await store.read((tx) =>
        tx.plans.listPlans(a.companyId, { limit: 2, startingAfter: p1!.rows[1]!.planId }),
      );
      assert.deepEqual(p2, { rows: newestFirst.slice(2, 4), hasMore: true });
      const p3 = await store.read((tx) =>
        tx.plans.listPlans(a.companyId, { limit: 2, startingAfter: p2!.rows[1]!.planId }),
      );
      assert.deepEqual(p3, { rows: newestFirst.slice(4), hasMore: false });
      assert.deepEqual(
        await store.read((tx) => tx.plans.listPlans(a.companyId, { limit: 5 })),
        { rows: newestFirst, hasMore: false },
        'a page that ends exactly at the last plan has no more',
      );

      assert.equal(
        await store.read((tx) => tx.plans.listPlans(a.companyId, { limit: 2, startingAfter: newId('p') })),
        undefined,
        'unknown cursor',
      );
      assert.equal(
        await store.read((tx) => tx.plans.listPlans(a.companyId, { limit: 2, startingAfter: other.planId })),
        undefined,
        "another company's plan is no cursor",
      );
      assert.deepEqual(await store.read((tx) => tx.plans.listPlans(b.companyId, { limit: 10 })), {
        rows: [other],
        hasMore: false,
      });
      const none = await seedCompanyAndAccount(store);
      assert.deepEqual(await store.read((tx) => tx.plans.listPlans(none.companyId, { limit: 10 })), {
        rows: [],
        hasMore: false,
      });
    });

    test('setPlanBalance, setPlanAlerted: the plan columns of that one balance', async () => {
      const a = await seedCompanyAndAccount(store);
      const other = await seedAccount(store, a.companyId);
      await seedBalance(store, a.companyId, a.accountId, 'tokens', 50);
      await seedBalance(store, a.companyId, a.accountId, 'credits');
      await seedBalance(store, a.companyId, other, 'tokens');
      const plan = (accountId: string, denomination: string) =>
        store.read(async (tx) => {
          const bal = await tx.balances.findBalance(accountId, denomination);
          assert.ok(bal);
          return [bal.planIncluded, bal.planAlertPercentage, bal.planAlerted, bal.amount];
        });
      assert.deepEqual(await plan(a.accountId, 'tokens'), [null, null, false, 50], 'a new balance is no plan balance');

      await store.write((tx) => tx.plans.setPlanBalance(a.accountId, 'tokens', 1_000, '20.5'));
      assert.deepEqual(await plan(a.accountId, 'tokens'), [1_000, '20.5', false, 50], 'the amount is not touched');
      assert.deepEqual(await plan(a.accountId, 'credits'), [null, null, false, 0], 'another denomination');
      assert.deepEqual(await plan(other, 'tokens'), [null, null, false, 0], 'another account');

      await store.write((tx) => tx.plans.setPlanAlerted(a.accountId, 'tokens', true));
      assert.deepEqual(await plan(a.accountId, 'tokens'), [1_000, '20.5', true, 50]);
      assert.deepEqual(await plan(other, 'tokens'), [null, null, false, 0], 'only that balance is alerted');
      await store.write((tx) => tx.plans.setPlanAlerted(a.accountId, 'tokens', false));
      assert.deepEqual(await plan(a.accountId, 'tokens'), [1_000, '20.5', false, 50]);

      await store.write((tx) => tx.plans.setPlanAlerted(a.accountId, 'tokens', true));
      await store.write((tx) => tx.plans.setPlanBalance(a.accountId, 'tokens', 500, null));
      assert.deepEqual(
        await plan(a.accountId, 'tokens'),
        [500, null, false, 50],
        'marked again (a new plan): no alert percentage, and not alerted',
      );
    });

    test('insertAccountPlan, findAccountPlan, updateAccountPlanPeriod: one period row per account', async () => {
      const { rows } = await accountsOnPlan(store, [T0 + 30 * 86_400_000, T0 + 31 * 86_400_000]);
      const [first, second] = rows as [AccountPlanRow, AccountPlanRow];
      assert.deepEqual(await store.read((tx) => tx.plans.findAccountPlan(first.accountId)), first);
      assert.equal(await store.read((tx) => tx.plans.findAccountPlan(newId('a'))), undefined);
      await assert.rejects(
        store.write((tx) => tx.plans.insertAccountPlan({ ...first, anchorAtMs: 1 })),
        'an account has one plan period row',
      );
      assert.deepEqual(await store.read((tx) => tx.plans.findAccountPlan(first.accountId)), first);

      await store.write((tx) => tx.plans.updateAccountPlanPeriod(first.accountId, first.nextRenewalAtMs, FAR));
      assert.deepEqual(await store.read((tx) => tx.plans.findAccountPlan(first.accountId)), {
        ...first,
        periodStartMs: first.nextRenewalAtMs,
        nextRenewalAtMs: FAR,
      });
      assert.deepEqual(
        await store.read((tx) => tx.plans.findAccountPlan(second.accountId)),
        second,
        "another account's period is not touched",
      );
    });

    test('claimDuePlanRenewal: earliest due first, due at its instant, not again once renewed', async () => {
      const { rows } = await accountsOnPlan(store, [3_000, 1_000, 2_000, 50_000]);
      const [at3, at1, at2, later] = rows as [AccountPlanRow, AccountPlanRow, AccountPlanRow, AccountPlanRow];
      assert.equal(await renew(store, 999), undefined, 'nothing is due before its instant');
      assert.deepEqual(await renew(store, 1_000), at1, 'due at its instant, claimed whole');
      assert.equal(await renew(store, 1_999), undefined, 'a renewed period is not claimed again');
      assert.deepEqual(await renew(store, 10_000), at2, 'the earliest due first');
      assert.deepEqual(await renew(store, 10_000), at3);
      assert.equal(await renew(store, 10_000), undefined, 'none left due at 10 000');
      assert.deepEqual(
        await store.read((tx) => tx.plans.findAccountPlan(at3.accountId)),
        { ...at3, periodStartMs: 3_000, nextRenewalAtMs: FAR },
        'the renewal moved the period on',
      );
      // A claim that renews nothing (the transaction rolls back) leaves the account due.
      await assert.rejects(
        store.write(async (tx) => {
          assert.deepEqual(await tx.plans.claimDuePlanRenewal(60_000), later);
          throw new Error('abandon');
        }),
        /abandon/,
      );
      assert.deepEqual(await renew(store, 60_000), later, 'still due after an abandoned claim');
      assert.equal(await renew(store, 60_000), undefined);
    });

    test('claimDuePlanRenewal (PostgreSQL): an account claimed by an open transaction is skipped, not waited for', {
      skip: t.dialect === 'sqlite' ? "SQLite's single writer never has two claims open at once" : false,
    }, async () => {
      const { rows } = await accountsOnPlan(store, [70_000, 80_000]);
      const [soon, next] = rows as [AccountPlanRow, AccountPlanRow];
      const claimed = deferred<AccountPlanRow | undefined>();
      const release = deferred();
      const first = store.write(async (tx) => {
        const due = await tx.plans.claimDuePlanRenewal(100_000);
        claimed.resolve(due);
        await release.promise;
        if (due) await tx.plans.updateAccountPlanPeriod(due.accountId, due.nextRenewalAtMs, FAR);
      });
      try {
        assert.deepEqual(await claimed.promise, soon);
        const meanwhile = await endsOrWaits(t, 'account_plans', renew(store, 100_000));
        assert.deepEqual(meanwhile, { value: next }, 'the other claimer took the next due account at once');
        const none = await endsOrWaits(t, 'account_plans', renew(store, 100_000));
        assert.deepEqual(none, { value: undefined }, 'and then found none, without waiting');
      } finally {
        release.resolve();
        await first;
      }
      assert.equal(await renew(store, 100_000), undefined, 'each renewed once');
      assert.equal((await store.read((tx) => tx.plans.findAccountPlan(soon.accountId)))?.nextRenewalAtMs, FAR);
    });
  });
});
