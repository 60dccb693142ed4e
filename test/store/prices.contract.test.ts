// Guarantees: on SQLite and PostgreSQL, prices are upserted (replaced) and paged by type, per company.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDialect, seedCompanyAndAccount } from '../support/stores.js';
import { T0 } from './contract-support.js';

forEachDialect((store, _t) => {
  describe('prices', () => {
    test('upsertPrice replaces; findPrices; listPrices paging by type', async () => {
      const a = await seedCompanyAndAccount(store);
      const b = await seedCompanyAndAccount(store);
      await store.write(async (tx) => {
        for (const type of ['d', 'b', 'a', 'c', 'e'])
          await tx.upsertPrice({
            companyId: a.companyId,
            type,
            denomination: 'credits',
            unitAmount: '1',
            updatedAtMs: T0,
          });
        await tx.upsertPrice({
          companyId: b.companyId,
          type: 'a',
          denomination: 'other',
          unitAmount: '9',
          updatedAtMs: T0,
        });
      });
      await store.write((tx) =>
        tx.upsertPrice({
          companyId: a.companyId,
          type: 'c',
          denomination: 'USD',
          unitAmount: '0.0015',
          updatedAtMs: T0 + 9,
        }),
      );
      const found = await store.read((tx) => tx.findPrices(a.companyId, ['c', 'zz']));
      assert.deepEqual(found, [
        { companyId: a.companyId, type: 'c', denomination: 'USD', unitAmount: '0.0015', updatedAtMs: T0 + 9 },
      ]);
      assert.deepEqual(await store.read((tx) => tx.findPrices(a.companyId, [])), []);

      const p1 = await store.read((tx) => tx.listPrices(a.companyId, { limit: 2 }));
      assert.deepEqual(
        p1!.rows.map((p) => p.type),
        ['a', 'b'],
      );
      assert.equal(p1!.hasMore, true);
      assert.equal(p1!.rows[0]!.denomination, 'credits', "another company's price of the same type is not mixed in");
      const p2 = await store.read((tx) => tx.listPrices(a.companyId, { limit: 2, startingAfter: 'b' }));
      assert.deepEqual(
        p2!.rows.map((p) => p.type),
        ['c', 'd'],
      );
      assert.equal(p2!.hasMore, true);
      const p3 = await store.read((tx) => tx.listPrices(a.companyId, { limit: 2, startingAfter: 'd' }));
      assert.deepEqual(
        p3!.rows.map((p) => p.type),
        ['e'],
      );
      assert.equal(p3!.hasMore, false);
      assert.equal(
        await store.read((tx) => tx.listPrices(a.companyId, { limit: 2, startingAfter: 'nope' })),
        undefined,
      );
      const all = await store.read((tx) => tx.listPrices(a.companyId, { limit: 100 }));
      assert.equal(all!.rows.length, 5, 'upsert replaced rather than added');
    });
  });
});
