// Guarantee: on SQLite and PostgreSQL, a lease reads back exactly as the ledger wrote it (by company and id, by
// client id, by ids of any company), its changes are written whole, an account's list pages newest first and filters
// by the status at an instant (an open lease past its expiry is expired), and the ledger finds the open leases whose
// expiry has come, of any balance or of some, soonest first.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { portOf } from '../../src/ledger/port.js';
import { newId } from '../../src/lib/ids.js';
import type { LeaseRow } from '../../src/store/types.js';
import { forEachDialect, seedBalance, seedCompanyAndAccount } from '../support/stores.js';
import { T0 } from './contract-support.js';

forEachDialect((store) => {
  describe('leases', () => {
    const lease = (companyId: string, accountId: string, over: Partial<LeaseRow> = {}): LeaseRow => ({
      leaseId: newId('ls'),
      companyId,
      accountId,
      denomination: 'tokens',
      clientId: null,
      amount: 100,
      used: 0,
      released: 0,
      status: 'open',
      heldFrom: [{ grantId: 'g_1', amount: 60 }],
      expiresAtMs: T0 + 60_000,
      createdAtMs: T0,
      closedAtMs: null,
      ...over,
    });

    test('round trip; changes; by client id; another company’s is not found', async () => {
      const a = await seedCompanyAndAccount(store);
      const b = await seedCompanyAndAccount(store);
      const row = lease(a.companyId, a.accountId, { clientId: 'mine' });
      await store.write((tx) => portOf(tx).insertLease(row));
      assert.deepEqual(await store.read((tx) => tx.leases.findLease(a.companyId, row.leaseId)), row);
      assert.deepEqual(await store.read((tx) => tx.leases.findLeaseByClientId(a.companyId, 'mine')), row);
      assert.equal(await store.read((tx) => tx.leases.findLease(b.companyId, row.leaseId)), undefined);
      assert.equal(await store.read((tx) => tx.leases.findLeaseByClientId(b.companyId, 'mine')), undefined);
      assert.deepEqual(await store.read((tx) => tx.leases.findLeasesByIds([row.leaseId, 'ls_none'])), [row]);
      const closed = { ...row, used: 30, released: 70, status: 'closed' as const, heldFrom: [], closedAtMs: T0 + 5 };
      await store.write((tx) =>
        portOf(tx).updateLeases([
          {
            leaseId: row.leaseId,
            used: 30,
            released: 70,
            status: 'closed',
            heldFrom: [],
            closedAtMs: T0 + 5,
          },
        ]),
      );
      assert.deepEqual(await store.read((tx) => tx.leases.findLease(a.companyId, row.leaseId)), closed);
    });

    test('list: newest first, paged, by status at an instant', async () => {
      const a = await seedCompanyAndAccount(store);
      const open = lease(a.companyId, a.accountId, { expiresAtMs: T0 + 100 });
      const closed = lease(a.companyId, a.accountId, { status: 'closed', released: 100, closedAtMs: T0 });
      const late = lease(a.companyId, a.accountId, { expiresAtMs: T0 + 200 });
      for (const l of [open, closed, late]) await store.write((tx) => portOf(tx).insertLease(l));
      const list = (status: LeaseRow['status'] | undefined, nowMs: number, startingAfter?: string) =>
        store.read((tx) =>
          tx.leases.listLeases(a.accountId, { ...(status ? { status } : {}), nowMs }, { limit: 2, startingAfter }),
        );
      const first = (await list(undefined, T0))!;
      assert.deepEqual(
        first.rows.map((l) => l.leaseId),
        [late.leaseId, closed.leaseId],
      );
      assert.equal(first.hasMore, true);
      const second = (await list(undefined, T0, closed.leaseId))!;
      assert.deepEqual(
        second.rows.map((l) => l.leaseId),
        [open.leaseId],
      );
      assert.equal(second.hasMore, false);
      const ids = async (status: LeaseRow['status'], nowMs: number) =>
        (await list(status, nowMs))!.rows.map((l) => l.leaseId);
      assert.deepEqual(await ids('open', T0 + 99), [late.leaseId, open.leaseId]);
      assert.deepEqual(await ids('open', T0 + 100), [late.leaseId], 'expired from expires_at on');
      assert.deepEqual(await ids('expired', T0 + 100), [open.leaseId]);
      assert.deepEqual(await ids('closed', T0 + 100), [closed.leaseId]);
      assert.equal(await list(undefined, T0, 'ls_unknown'), undefined);
    });

    test('expired open leases: of any balance, or of some, soonest first', async () => {
      const a = await seedCompanyAndAccount(store);
      await seedBalance(store, a.companyId, a.accountId, 'x', 1000);
      await seedBalance(store, a.companyId, a.accountId, 'y', 1000);
      const x1 = lease(a.companyId, a.accountId, { denomination: 'x', expiresAtMs: T0 + 20 });
      const x2 = lease(a.companyId, a.accountId, { denomination: 'x', expiresAtMs: T0 + 10 });
      const y = lease(a.companyId, a.accountId, { denomination: 'y', expiresAtMs: T0 + 15 });
      const gone = lease(a.companyId, a.accountId, { denomination: 'x', status: 'closed', expiresAtMs: T0 });
      for (const l of [x1, x2, y, gone]) await store.write((tx) => portOf(tx).insertLease(l));
      const found = (nowMs: number, only?: { accountId: string; denomination: string }[]) =>
        store.read(async (tx) =>
          (await portOf(tx).findExpiredLeases(nowMs, 10, only))
            .filter((l) => l.accountId === a.accountId)
            .map((l) => l.leaseId),
        );
      assert.deepEqual(await found(T0 + 9), []);
      assert.deepEqual(await found(T0 + 20), [x2.leaseId, y.leaseId, x1.leaseId]);
      assert.deepEqual(await found(T0 + 20, [{ accountId: a.accountId, denomination: 'x' }]), [x2.leaseId, x1.leaseId]);
      assert.deepEqual(await found(T0 + 15, [{ accountId: a.accountId, denomination: 'y' }]), [y.leaseId]);
    });
  });
});
