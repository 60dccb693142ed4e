// Guarantee: due monthly refills and plan renewals are each claimed by exactly one of many concurrent workers, only
// when due, and never while a refill is in flight — on both databases.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HTTP_DIALECTS, freshStore } from '../support/harness.js';
import type { Store } from '../../src/store/types.js';

const ACCOUNTS = 40;
const WORKERS = 8;

async function seed(store: Store): Promise<string[]> {
  return store.write(async (tx) => {
    const user = await tx.identity.insertUser({
      name: 'U',
      email: `u${Math.random()}@example.com`,
      passwordHash: 'x',
      dateOfBirth: null,
      emailVerified: false,
      createdAtMs: 0,
    });
    await tx.identity.insertCompany({
      companyId: 'c_1',
      name: 'C',
      ownerUserId: user.id,
      processor: 'sandbox',
      processorApiKey: null,
      createdAtMs: 0,
    });
    await tx.plans.insertPlan({
      planId: 'p_1',
      companyId: 'c_1',
      name: 'P',
      chargeAmountUsdCents: 0,
      billingPeriod: 'month',
      overageChargeMode: 'postpay',
      thresholdAlertPercentage: null,
      rollover: false,
      balances: [],
      features: [],
      createdAtMs: 0,
    });
    const ids: string[] = [];
    for (let i = 0; i < ACCOUNTS; i++) {
      const accountId = `a_${i}`;
      ids.push(accountId);
      await tx.accounts.insertAccount({
        accountId,
        companyId: 'c_1',
        name: null,
        email: null,
        metadata: null,
        processorId: null,
        planId: 'p_1',
        createdAtMs: 0,
      });
      await tx.balances.insertBalance({
        accountId,
        companyId: 'c_1',
        denomination: 'tokens',
        amount: 0,
        pending: 0,
        refillThreshold: null,
        refillAmount: 1,
        refillUsdCents: 1,
        refillOnDay: '1',
        createdAtMs: 0,
      });
      // Half are due at 1000, half only at 5000.
      const due = i % 2 === 0 ? 1000 : 5000;
      await tx.refills.updateRefillSettings(accountId, 'tokens', {
        refillThreshold: null,
        refillAmount: 1,
        refillUsdCents: 1,
        refillOnDay: '1',
        refillMonthly: true,
        monthlyAnchorAtMs: due,
        nextRefillAtMs: due,
        refillMaxPerMonth: null,
      });
      await tx.plans.insertAccountPlan({
        accountId,
        companyId: 'c_1',
        planId: 'p_1',
        anchorAtMs: 0,
        periodStartMs: 0,
        nextRenewalAtMs: due,
      });
    }
    return ids;
  });
}

for (const dialect of HTTP_DIALECTS) {
  describe(`schedule claims (${dialect})`, () => {
    test('concurrent workers claim each due balance and plan account once', async () => {
      const { store, drop } = await freshStore(dialect);
      try {
        await seed(store);
        const refills: string[] = [];
        const renewals: string[] = [];
        const worker = async () => {
          for (;;) {
            const got = await store.write(async (tx) => {
              const b = await tx.refills.claimDueMonthlyRefill(2000);
              // What the monthly job does: the refill goes in flight, so nobody claims the row again.
              if (b)
                await tx.refills.updateRefillState(b.accountId, b.denomination, {
                  refillChargeId: `ch_${b.accountId}`,
                });
              const p = await tx.plans.claimDuePlanRenewal(2000);
              if (p) await tx.plans.updateAccountPlanPeriod(p.accountId, p.nextRenewalAtMs, 99_000);
              return { b: b?.accountId, p: p?.accountId };
            });
            if (got.b) refills.push(got.b);
            if (got.p) renewals.push(got.p);
            if (!got.b && !got.p) return;
          }
        };
        await Promise.all(Array.from({ length: WORKERS }, worker));
        const due = Array.from({ length: ACCOUNTS / 2 }, (_, i) => `a_${i * 2}`).sort();
        assert.deepEqual([...refills].sort(), due, 'each due balance claimed exactly once, none early');
        assert.deepEqual([...renewals].sort(), due, 'each due plan account claimed exactly once, none early');
        const later = await store.write((tx) => tx.refills.claimDueMonthlyRefill(10_000).then((b) => b?.accountId));
        assert.match(later ?? '', /^a_\d*[13579]$/, 'in-flight balances are skipped; later ones come due');
      } finally {
        await drop();
      }
    });
  });
}
