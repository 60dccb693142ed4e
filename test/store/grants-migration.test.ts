// Guarantee (issue "Credit grants", migration 14), on SQLite and PostgreSQL: a database of the previous schema with
// balances in it opens on the new one with every positive balance held by exactly one `initial` grant (promotional,
// priority 50, never expiring) of its amount, a negative balance as debt with no grant, a zero balance with none;
// the ledger and grants audits are clean, and the next usage draws from the initial grant.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CLI_DIALECTS, freshDatabase, type TestDatabase } from '../cli/support.js';
import { openStore } from '../../src/store/open.js';
import { oldCompanies, schemaBefore } from './migration-support.js';
import { auditGrants } from '../../src/operations/grants.js';
import { takeEntry } from '../../src/ledger/grants.js';
import { Ledger } from '../../src/ledger/ledger.js';

const T0 = 1_700_000_000_000;

/** A company with one account holding three balances (500, −20, 0), each with the transactions of its amount. */
async function oldBalances(db: TestDatabase): Promise<string> {
  await oldCompanies(db, ['c_old'], T0);
  const balances: [string, number][] = [
    ['tokens', 500],
    ['credits', -20],
    ['units', 0],
  ];
  for (const [denomination, amount] of balances) {
    await db.sql(
      'INSERT INTO balances (account_id, denomination, company_id, amount, pending, created_at) ' +
        'VALUES (?, ?, ?, ?, 0, ?)',
      ['a_c_old', denomination, 'c_old', amount, T0],
    );
    if (amount !== 0)
      await db.sql(
        'INSERT INTO transactions (transaction_id, account_id, denomination, amount, balance_after, kind, ' +
          'created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
        [`tx_old_${denomination}`, 'a_c_old', denomination, amount, amount, amount > 0 ? 'grant' : 'usage', T0],
      );
  }
  return 'a_c_old';
}

for (const dialect of CLI_DIALECTS) {
  describe(`migration 14: balances become grants (${dialect})`, () => {
    test('one initial grant per positive balance, debt for a negative one; audits clean; usage uses it', async () => {
      const db = await freshDatabase(dialect);
      try {
        await schemaBefore(db, 14, T0);
        const accountId = await oldBalances(db);
        const store = await openStore(db.url);
        try {
          const balances = await store.read((tx) => tx.balances.listBalances(accountId));
          const by = new Map(balances.map((b) => [b.denomination, b]));
          const tokens = by.get('tokens')!;
          assert.equal(tokens.amount, 500);
          assert.equal(tokens.grants.length, 1);
          const lot = tokens.grants[0]!;
          assert.deepEqual(
            { ...lot, grantId: 'g' },
            {
              grantId: 'g',
              amount: 500,
              remaining: 500,
              held: 0,
              priority: 50,
              category: 'promotional',
              source: 'initial',
              effectiveAtMs: T0,
              expiresAtMs: null,
              voidedAtMs: null,
              opened: true,
              closed: false,
            },
          );
          assert.match(lot.grantId, /^g_0[0-9a-f]{20}$/);
          assert.deepEqual(by.get('credits')!.grants, [], 'a negative balance is debt: no grant');
          assert.equal(by.get('credits')!.amount, -20);
          assert.deepEqual(by.get('units')!.grants, []);

          const row = await store.read((tx) => tx.grants.findGrant('c_old', lot.grantId));
          assert.equal(row?.source, 'initial');
          assert.equal(row?.amount, 500);
          assert.equal(row?.accountId, accountId);
          assert.equal(row?.denomination, 'tokens');
          const listed = await store.read((tx) =>
            tx.grants.listGrants('c_old', { statuses: ['active'], nowMs: T0 }, { limit: 10 }),
          );
          assert.deepEqual(
            listed?.rows.map((g) => g.grantId),
            [lot.grantId],
          );
          assert.deepEqual(
            await store.read(async (tx) => [...(await tx.transactions.auditLedger()), ...(await auditGrants(tx))]),
            [],
          );

          const now = T0 + 1000;
          const posted = await store.write(async (tx) => {
            const p = await new Ledger([]).open(tx, [{ accountId, denomination: 'tokens' }], now);
            return p.post([takeEntry({ accountId, denomination: 'tokens' }, 120, now, 'usage')]);
          });
          assert.deepEqual(posted.transactions[0]?.drawnFrom, [{ grantId: lot.grantId, amount: 120 }]);
          assert.equal(posted.transactions[0]?.balanceAfter, 380);
          assert.deepEqual(
            await store.read(async (tx) => [...(await tx.transactions.auditLedger()), ...(await auditGrants(tx))]),
            [],
          );
        } finally {
          await store.close();
        }
      } finally {
        await db.drop();
      }
    });
  });
}
