// Guarantee: the accounts' owners a process remembers (AccountOwners) answer as the store does — each existing
// account's company, nothing for an unknown id — and a remembered owner is not read again, while an id not found
// is read each time (it may exist by then), on both databases.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AccountOwners } from '../../src/operations/account-owners.js';
import type { ReadTx } from '../../src/store/types.js';
import { forEachDialect, seedAccount, seedCompanyAndAccount } from '../support/stores.js';

forEachDialect((store) => {
  /** The ids each call of `of` asked the store for (the real store answers). */
  async function ownersOf(owners: AccountOwners, ids: string[], asked: string[][]) {
    return store.read((tx) => {
      const counting: ReadTx = {
        ...tx,
        accounts: Object.assign(Object.create(tx.accounts) as ReadTx['accounts'], {
          findAccountOwners: (accountIds: string[]) => {
            asked.push([...accountIds].sort());
            return tx.accounts.findAccountOwners(accountIds);
          },
        }),
      };
      return owners.of(counting, ids);
    });
  }

  test('owners: read once, remembered; an unknown id read again each time', async () => {
    const a = await seedCompanyAndAccount(store);
    const b = await seedCompanyAndAccount(store);
    const a2 = await seedAccount(store, a.companyId);
    const owners = new AccountOwners();
    const asked: string[][] = [];
    const missing = 'a_not_created_yet';

    const first = await ownersOf(owners, [a.accountId, b.accountId, a.accountId, missing], asked);
    assert.deepEqual(
      Object.fromEntries(first),
      { [a.accountId]: a.companyId, [b.accountId]: b.companyId },
      'each existing account with its company, the unknown one absent',
    );
    assert.deepEqual(asked, [[a.accountId, b.accountId, missing].sort()], 'one read, each id once');

    const second = await ownersOf(owners, [b.accountId, a.accountId], asked);
    assert.deepEqual(Object.fromEntries(second), { [a.accountId]: a.companyId, [b.accountId]: b.companyId });
    assert.equal(asked.length, 1, 'remembered owners are not read again');

    const third = await ownersOf(owners, [a.accountId, a2, missing], asked);
    assert.deepEqual(Object.fromEntries(third), { [a.accountId]: a.companyId, [a2]: a.companyId });
    assert.deepEqual(asked[1], [a2, missing].sort(), 'only the ids not remembered are read');

    const late = await seedAccount(store, b.companyId);
    const fourth = await ownersOf(owners, [late, a2], asked);
    assert.deepEqual(Object.fromEntries(fourth), { [late]: b.companyId, [a2]: a.companyId });
    assert.deepEqual(asked[2], [late], 'an account created later is found');
  });
});
