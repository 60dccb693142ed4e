// Guarantees: on SQLite and PostgreSQL, accounts are scoped to their company and paged newest first.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newId } from '../../src/lib/ids.js';
import { forEachDialect, seedAccount, seedCompanyAndAccount } from '../support/stores.js';
import { accountRow } from './contract-support.js';

forEachDialect((store) => {
  describe('accounts', () => {
    test('findAccount is scoped to the company; update; owners', async () => {
      const a = await seedCompanyAndAccount(store);
      const b = await seedCompanyAndAccount(store);
      const row = accountRow(a.companyId, {
        name: 'Acme',
        email: 'billing@acme.test',
        metadata: { tier: 'gold', n: 1, nested: { x: [1, 2] } },
        processorId: 'cus_1',
      });
      await store.write((tx) => tx.accounts.insertAccount(row));
      assert.deepEqual(await store.read((tx) => tx.accounts.findAccount(a.companyId, row.accountId)), row);
      assert.equal(
        await store.read((tx) => tx.accounts.findAccount(b.companyId, row.accountId)),
        undefined,
        'another company sees nothing',
      );
      assert.equal(await store.read((tx) => tx.accounts.findAccount(a.companyId, newId('a'))), undefined);

      const changed = { ...row, name: 'Acme 2', email: null, metadata: null, processorId: null, planId: 'p_x' };
      await store.write((tx) => tx.accounts.updateAccount(changed));
      assert.deepEqual(await store.read((tx) => tx.accounts.findAccount(a.companyId, row.accountId)), changed);
      await store.write((tx) => tx.accounts.updateAccount({ ...changed, companyId: b.companyId, name: 'hijack' }));
      assert.equal(
        (await store.read((tx) => tx.accounts.findAccount(a.companyId, row.accountId)))!.name,
        'Acme 2',
        'update is scoped to the company',
      );

      const owners = await store.read((tx) => tx.accounts.findAccountOwners([row.accountId, b.accountId, newId('a')]));
      assert.deepEqual(
        owners.sort((x, y) => x.accountId.localeCompare(y.accountId)),
        [
          { accountId: row.accountId, companyId: a.companyId },
          { accountId: b.accountId, companyId: b.companyId },
        ].sort((x, y) => x.accountId.localeCompare(y.accountId)),
      );
      assert.deepEqual(await store.read((tx) => tx.accounts.findAccountOwners([])), []);
    });

    test('an account id is unique', async () => {
      const a = await seedCompanyAndAccount(store);
      const b = await seedCompanyAndAccount(store);
      await assert.rejects(
        store.write((tx) => tx.accounts.insertAccount(accountRow(b.companyId, { accountId: a.accountId }))),
      );
      assert.equal(await store.read((tx) => tx.accounts.findAccount(b.companyId, a.accountId)), undefined);
    });

    test('listAccounts: keyset paging, newest first, has_more, unknown cursor', async () => {
      const a = await seedCompanyAndAccount(store);
      const b = await seedCompanyAndAccount(store);
      const ids = [a.accountId];
      for (let i = 0; i < 4; i++) ids.push(await seedAccount(store, a.companyId));
      const newestFirst = [...ids].reverse();

      const p1 = await store.read((tx) => tx.accounts.listAccounts(a.companyId, { limit: 2 }));
      assert.ok(p1);
      assert.deepEqual(
        p1.rows.map((r) => r.accountId),
        newestFirst.slice(0, 2),
      );
      assert.equal(p1.hasMore, true);
      const p2 = await store.read((tx) =>
        tx.accounts.listAccounts(a.companyId, { limit: 2, startingAfter: p1.rows[1]!.accountId }),
      );
      assert.ok(p2);
      assert.deepEqual(
        p2.rows.map((r) => r.accountId),
        newestFirst.slice(2, 4),
      );
      assert.equal(p2.hasMore, true);
      const p3 = await store.read((tx) =>
        tx.accounts.listAccounts(a.companyId, { limit: 2, startingAfter: p2.rows[1]!.accountId }),
      );
      assert.ok(p3);
      assert.deepEqual(
        p3.rows.map((r) => r.accountId),
        newestFirst.slice(4),
      );
      assert.equal(p3.hasMore, false);

      const exact = await store.read((tx) => tx.accounts.listAccounts(a.companyId, { limit: 5 }));
      assert.equal(exact!.rows.length, 5);
      assert.equal(exact!.hasMore, false, 'a page that ends exactly at the last row has no more');

      assert.equal(
        await store.read((tx) => tx.accounts.listAccounts(a.companyId, { limit: 2, startingAfter: newId('a') })),
        undefined,
        'unknown cursor',
      );
      assert.equal(
        await store.read((tx) => tx.accounts.listAccounts(a.companyId, { limit: 2, startingAfter: b.accountId })),
        undefined,
        "another company's account is no cursor",
      );
      const bList = await store.read((tx) => tx.accounts.listAccounts(b.companyId, { limit: 10 }));
      assert.deepEqual(
        bList!.rows.map((r) => r.accountId),
        [b.accountId],
      );
    });
  });
});
