// Guarantees: on SQLite and PostgreSQL, features are put (inserted, then renamed, kind kept), found, paged by key,
// deleted, found by the event types they meter; a plan's features round-trip with it and are replaced in one write;
// an account's plan entries and overrides are read together (of all features or one), and for several accounts at
// once; whether a feature is in use; overrides are put, replaced, deleted (returned), and ended by their expires_at
// once (returned by the one statement that deletes them).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newId } from '../../src/lib/ids.js';
import type { FeatureRow, PlanRow } from '../../src/store/types.js';
import { forEachDialect, seedCompanyAndAccount } from '../support/stores.js';
import { T0 } from './contract-support.js';

const feature = (companyId: string, key: string, over: Partial<FeatureRow> = {}): FeatureRow => ({
  companyId,
  key,
  kind: 'boolean',
  name: null,
  eventType: null,
  createdAtMs: T0,
  updatedAtMs: T0,
  ...over,
});

function plan(companyId: string, features: PlanRow['features']): PlanRow {
  return {
    planId: newId('p'),
    companyId,
    name: 'Pro',
    chargeAmountUsdCents: 0,
    billingPeriod: 'month',
    overageChargeMode: 'postpay',
    thresholdAlertPercentage: null,
    rollover: false,
    balances: [],
    features,
    createdAtMs: T0,
  };
}

forEachDialect((store) => {
  describe('features', () => {
    test('put, find, page by key, metered by type, delete', async () => {
      const a = await seedCompanyAndAccount(store);
      const b = await seedCompanyAndAccount(store);
      await store.write(async (tx) => {
        await tx.features.putFeature(feature(a.companyId, 'sso'));
        await tx.features.putFeature(feature(a.companyId, 'gpt4', { kind: 'metered', eventType: 'tok' }));
        await tx.features.putFeature(feature(a.companyId, 'cfg', { kind: 'config', name: 'Config' }));
        await tx.features.putFeature(feature(b.companyId, 'sso', { name: 'other company' }));
      });
      await store.write((tx) =>
        tx.features.putFeature(feature(a.companyId, 'sso', { name: 'SSO', createdAtMs: T0 + 5, updatedAtMs: T0 + 9 })),
      );
      assert.deepEqual(await store.read((tx) => tx.features.findFeature(a.companyId, 'sso')), {
        ...feature(a.companyId, 'sso'),
        name: 'SSO',
        updatedAtMs: T0 + 9,
      });
      const first = await store.read((tx) => tx.features.listFeatures(a.companyId, { limit: 2 }));
      assert.deepEqual(
        first!.rows.map((f) => f.key),
        ['cfg', 'gpt4'],
      );
      assert.equal(first!.hasMore, true);
      const rest = await store.read((tx) => tx.features.listFeatures(a.companyId, { limit: 2, startingAfter: 'gpt4' }));
      assert.deepEqual(
        rest!.rows.map((f) => f.key),
        ['sso'],
      );
      assert.equal(
        await store.read((tx) => tx.features.listFeatures(a.companyId, { limit: 2, startingAfter: 'zz' })),
        undefined,
      );
      assert.deepEqual(
        (await store.read((tx) => tx.features.findMeteredFeatures(a.companyId, ['tok', 'other']))).map((f) => f.key),
        ['gpt4'],
      );
      assert.deepEqual(await store.read((tx) => tx.features.findMeteredFeatures(b.companyId, ['tok'])), []);
      assert.equal((await store.read((tx) => tx.features.allFeatures(a.companyId))).length, 3);
      assert.equal(await store.write((tx) => tx.features.deleteFeature(a.companyId, 'cfg')), true);
      assert.equal(await store.write((tx) => tx.features.deleteFeature(a.companyId, 'cfg')), false);
      assert.equal((await store.read((tx) => tx.features.findFeature(b.companyId, 'sso')))!.name, 'other company');
    });

    test("plans' features, overrides, an account's rows in one read, in use, ended overrides", async () => {
      const a = await seedCompanyAndAccount(store);
      const p = plan(a.companyId, [
        { feature: 'sso', value: null },
        { feature: 'seats', value: '5' },
      ]);
      await store.write(async (tx) => {
        await tx.plans.insertPlan(p);
        await tx.plans.insertAccountPlan({
          accountId: a.accountId,
          companyId: a.companyId,
          planId: p.planId,
          anchorAtMs: T0,
          periodStartMs: T0,
          nextRenewalAtMs: T0 + 1e12,
        });
      });
      assert.deepEqual((await store.read((tx) => tx.plans.findPlan(a.companyId, p.planId)))!.features, p.features);
      const override = {
        accountId: a.accountId,
        companyId: a.companyId,
        feature: 'seats',
        enabled: true,
        value: '50',
        expiresAtMs: T0 + 100,
        updatedAtMs: T0,
      };
      await store.write(async (tx) => {
        await tx.features.putOverride(override);
        await tx.features.putOverride({ ...override, feature: 'beta', value: null, expiresAtMs: null });
      });
      const rows = await store.read((tx) => tx.features.entitlementRows(a.accountId));
      assert.deepEqual(
        rows.plan.sort((x, y) => x.feature.localeCompare(y.feature)),
        [
          { feature: 'seats', value: '5' },
          { feature: 'sso', value: null },
        ],
      );
      assert.deepEqual(
        rows.overrides.sort((x, y) => x.feature.localeCompare(y.feature)),
        [{ ...override, feature: 'beta', value: null, expiresAtMs: null }, override],
      );
      const one = await store.read((tx) => tx.features.entitlementRows(a.accountId, 'seats'));
      assert.deepEqual(one, { plan: [{ feature: 'seats', value: '5' }], overrides: [override] });
      const many = await store.read((tx) => tx.features.entitlementRowsOfAccounts([a.accountId, 'a_none'], ['sso']));
      assert.deepEqual([...many.keys()], [a.accountId]);
      assert.deepEqual(many.get(a.accountId), { plan: [{ feature: 'sso', value: null }], overrides: [] });
      assert.equal(await store.read((tx) => tx.features.featureInUse(a.companyId, 'sso')), true);
      assert.equal(await store.read((tx) => tx.features.featureInUse(a.companyId, 'beta')), true);
      assert.equal(await store.read((tx) => tx.features.featureInUse(a.companyId, 'none')), false);

      await store.write(async (tx) => {
        const locked = await tx.plans.lockPlan(a.companyId, p.planId);
        await tx.plans.replacePlanFeatures(locked!, [{ feature: 'beta', value: null }]);
      });
      assert.deepEqual((await store.read((tx) => tx.plans.findPlan(a.companyId, p.planId)))!.features, [
        { feature: 'beta', value: null },
      ]);
      assert.equal(await store.read((tx) => tx.features.featureInUse(a.companyId, 'sso')), false);

      // Ended by their expires_at: once, by the statement that deletes them.
      const ended = await store.write((tx) => tx.features.endOverrides(T0 + 100, 10));
      assert.deepEqual(
        ended.filter((o) => o.accountId === a.accountId),
        [override],
      );
      assert.deepEqual(
        (await store.write((tx) => tx.features.endOverrides(T0 + 100, 10))).filter((o) => o.accountId === a.accountId),
        [],
      );
      const removed = await store.write((tx) => tx.features.deleteOverride(a.accountId, 'beta'));
      assert.equal(removed?.feature, 'beta');
      assert.equal(await store.write((tx) => tx.features.deleteOverride(a.accountId, 'beta')), undefined);
      assert.deepEqual((await store.read((tx) => tx.features.entitlementRows(a.accountId))).overrides, []);
    });
  });
});
