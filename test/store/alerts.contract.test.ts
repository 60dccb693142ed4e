// Guarantees: on SQLite and PostgreSQL, an alert round-trips every field; inserting and deleting one counts it on its
// balance (`alert_count`, read with the balance); an account's alerts page newest first; the alerts of several
// balances are read at once; states are written as given; the company's triggered list leaves out other companies'
// alerts, `ok` ones and spend alerts whose window ended by the instant asked; the balances with alerts resolving by
// an instant are found each once.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newId } from '../../src/lib/ids.js';
import type { AlertRow } from '../../src/store/types.js';
import { balanceRow, forEachDialect, seedCompanyAndAccount } from '../support/stores.js';
import { T0 } from './contract-support.js';

function alertRow(companyId: string, accountId: string, over: Partial<AlertRow> = {}): AlertRow {
  return {
    alertId: newId('al'),
    companyId,
    accountId,
    denomination: 'tokens',
    metric: 'available',
    threshold: 10,
    window: null,
    eventType: null,
    name: null,
    status: 'ok',
    windowStartMs: null,
    resolvesAtMs: null,
    triggeredAtMs: null,
    resolvedAtMs: null,
    typeSpend: null,
    createdAtMs: T0,
    ...over,
  };
}

forEachDialect((store) => {
  describe('alerts', () => {
    test('insert, read, count on the balance, page, update, delete', async () => {
      const a = await seedCompanyAndAccount(store);
      await store.write(async (tx) => {
        await tx.balances.insertBalance(balanceRow(a.companyId, a.accountId, 'tokens'));
        await tx.balances.insertBalance(balanceRow(a.companyId, a.accountId, 'credits'));
      });
      const full = alertRow(a.companyId, a.accountId, {
        metric: 'spend',
        threshold: 500,
        window: 'month',
        eventType: 'gpt',
        name: 'gpt burn',
        status: 'triggered',
        windowStartMs: T0 - 5,
        resolvesAtMs: T0 + 100,
        triggeredAtMs: T0 - 1,
        resolvedAtMs: T0 - 2,
        typeSpend: { windowStartMs: T0 - 5, units: 512 },
      });
      const plain = alertRow(a.companyId, a.accountId);
      const other = alertRow(a.companyId, a.accountId, { denomination: 'credits', threshold: -3 });
      await store.write(async (tx) => {
        for (const r of [full, plain, other]) await tx.alerts.insertAlert(r);
      });
      assert.deepEqual(await store.read((tx) => tx.alerts.findAlert(full.alertId)), full);
      assert.deepEqual(await store.read((tx) => tx.alerts.findAlert(other.alertId)), other);
      assert.equal(await store.read((tx) => tx.alerts.findAlert('al_missing')), undefined);
      assert.equal((await store.read((tx) => tx.balances.findBalance(a.accountId, 'tokens')))!.alertCount, 2);
      assert.equal((await store.read((tx) => tx.balances.findBalance(a.accountId, 'credits')))!.alertCount, 1);
      assert.equal(await store.read((tx) => tx.alerts.countAlerts(a.accountId)), 3);

      const first = await store.read((tx) => tx.alerts.listAlerts(a.accountId, { limit: 2 }));
      assert.deepEqual(
        first!.rows.map((r) => r.alertId),
        [other.alertId, plain.alertId],
      );
      assert.equal(first!.hasMore, true);
      const rest = await store.read((tx) =>
        tx.alerts.listAlerts(a.accountId, { limit: 2, startingAfter: plain.alertId }),
      );
      assert.deepEqual(
        rest!.rows.map((r) => r.alertId),
        [full.alertId],
      );
      assert.equal(
        await store.read((tx) => tx.alerts.listAlerts(a.accountId, { limit: 2, startingAfter: 'al_x' })),
        undefined,
      );

      const ofTokens = await store.write((tx) =>
        tx.alerts.alertsOfBalances([{ accountId: a.accountId, denomination: 'tokens' }]),
      );
      assert.deepEqual(
        ofTokens.map((r) => r.alertId),
        [full.alertId, plain.alertId],
      );

      const state = {
        alertId: plain.alertId,
        status: 'triggered' as const,
        windowStartMs: null,
        resolvesAtMs: null,
        triggeredAtMs: T0 + 7,
        resolvedAtMs: null,
        typeSpend: null,
      };
      await store.write((tx) => tx.alerts.updateAlerts([state]));
      assert.deepEqual(await store.read((tx) => tx.alerts.findAlert(plain.alertId)), { ...plain, ...state });

      assert.equal(await store.write((tx) => tx.alerts.deleteAlert(plain)), true);
      assert.equal(await store.write((tx) => tx.alerts.deleteAlert(plain)), false);
      assert.equal((await store.read((tx) => tx.balances.findBalance(a.accountId, 'tokens')))!.alertCount, 1);
      assert.equal(await store.read((tx) => tx.alerts.countAlerts(a.accountId)), 2);
    });

    test('the triggered list and the balances with alerts resolving by an instant', async () => {
      const a = await seedCompanyAndAccount(store);
      const b = await seedCompanyAndAccount(store);
      await store.write(async (tx) => {
        await tx.balances.insertBalance(balanceRow(a.companyId, a.accountId, 'tokens'));
        await tx.balances.insertBalance(balanceRow(b.companyId, b.accountId, 'tokens'));
      });
      const low = alertRow(a.companyId, a.accountId, { status: 'triggered', triggeredAtMs: T0 });
      const ok = alertRow(a.companyId, a.accountId);
      const spend = (resolvesAtMs: number) =>
        alertRow(a.companyId, a.accountId, {
          metric: 'spend',
          window: 'day',
          threshold: 1,
          status: 'triggered',
          windowStartMs: resolvesAtMs - 86_400_000,
          resolvesAtMs,
        });
      const endsSoon = spend(T0 + 10);
      const endsLater = spend(T0 + 1000);
      const foreign = alertRow(b.companyId, b.accountId, { status: 'triggered' });
      await store.write(async (tx) => {
        for (const r of [low, ok, endsSoon, endsLater, foreign]) await tx.alerts.insertAlert(r);
      });
      const at = async (nowMs: number) =>
        (await store.read((tx) => tx.alerts.listTriggeredAlerts(a.companyId, nowMs, { limit: 10 })))!.rows.map(
          (r) => r.alertId,
        );
      assert.deepEqual(await at(T0), [endsLater.alertId, endsSoon.alertId, low.alertId]);
      assert.deepEqual(await at(T0 + 10), [endsLater.alertId, low.alertId]);
      assert.deepEqual(await at(T0 + 1000), [low.alertId]);

      // Only this test's account: the store is shared with the other tests.
      const due = async (nowMs: number) =>
        (await store.write((tx) => tx.alerts.findBalancesWithAlertsResolving(nowMs, 100))).filter(
          (k) => k.accountId === a.accountId,
        );
      assert.deepEqual(await due(T0 + 9), []);
      assert.deepEqual(await due(T0 + 10), [{ accountId: a.accountId, denomination: 'tokens' }]);
      assert.deepEqual(await due(T0 + 5000), [{ accountId: a.accountId, denomination: 'tokens' }], 'each balance once');
    });
  });
});
