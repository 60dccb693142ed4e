// Guarantees: on SQLite and PostgreSQL, prices are replaced and paged by type, per company; the terms of every model
// round-trip; a replaced price is kept as a version with its span, listed newest first; the period counts of graduated
// and package prices are read, locked, created and set exactly, per account, type and month.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDialect, seedCompanyAndAccount } from '../support/stores.js';
import { parseDecimal } from '../../src/lib/decimal.js';
import { pricePeriodKey } from '../../src/lib/keys.js';
import type { PriceRow } from '../../src/store/types.js';
import { T0 } from './contract-support.js';

forEachDialect((store, _t) => {
  describe('prices', () => {
    test('upsertPrice replaces; findPrices; listPrices paging by type', async () => {
      const a = await seedCompanyAndAccount(store);
      const b = await seedCompanyAndAccount(store);
      await store.write(async (tx) => {
        for (const type of ['d', 'b', 'a', 'c', 'e'])
          await tx.prices.replacePrice(
            {
              companyId: a.companyId,
              type,
              denomination: 'credits',
              terms: { model: 'unit', unitAmount: '1' },
              version: 1,
              updatedAtMs: T0,
            },
            undefined,
          );
        await tx.prices.replacePrice(
          {
            companyId: b.companyId,
            type: 'a',
            denomination: 'other',
            terms: { model: 'unit', unitAmount: '9' },
            version: 1,
            updatedAtMs: T0,
          },
          undefined,
        );
      });
      await store.write((tx) =>
        tx.prices.replacePrice(
          {
            companyId: a.companyId,
            type: 'c',
            denomination: 'USD',
            terms: { model: 'unit', unitAmount: '0.0015' },
            version: 1,
            updatedAtMs: T0 + 9,
          },
          undefined,
        ),
      );
      const found = await store.read((tx) => tx.prices.findPrices(a.companyId, ['c', 'zz']));
      assert.deepEqual(found, [
        {
          companyId: a.companyId,
          type: 'c',
          denomination: 'USD',
          terms: { model: 'unit', unitAmount: '0.0015' },
          version: 1,
          updatedAtMs: T0 + 9,
        },
      ]);
      assert.deepEqual(await store.read((tx) => tx.prices.findPrices(a.companyId, [])), []);

      const p1 = await store.read((tx) => tx.prices.listPrices(a.companyId, { limit: 2 }));
      assert.deepEqual(
        p1!.rows.map((p) => p.type),
        ['a', 'b'],
      );
      assert.equal(p1!.hasMore, true);
      assert.equal(p1!.rows[0]!.denomination, 'credits', "another company's price of the same type is not mixed in");
      const p2 = await store.read((tx) => tx.prices.listPrices(a.companyId, { limit: 2, startingAfter: 'b' }));
      assert.deepEqual(
        p2!.rows.map((p) => p.type),
        ['c', 'd'],
      );
      assert.equal(p2!.hasMore, true);
      const p3 = await store.read((tx) => tx.prices.listPrices(a.companyId, { limit: 2, startingAfter: 'd' }));
      assert.deepEqual(
        p3!.rows.map((p) => p.type),
        ['e'],
      );
      assert.equal(p3!.hasMore, false);
      assert.equal(
        await store.read((tx) => tx.prices.listPrices(a.companyId, { limit: 2, startingAfter: 'nope' })),
        undefined,
      );
      const all = await store.read((tx) => tx.prices.listPrices(a.companyId, { limit: 100 }));
      assert.equal(all!.rows.length, 5, 'upsert replaced rather than added');
    });

    test('replacePrice keeps the previous version with its span; terms of every model round-trip', async () => {
      const a = await seedCompanyAndAccount(store);
      const v1: PriceRow = {
        companyId: a.companyId,
        type: 'tok',
        denomination: 'credits',
        terms: { model: 'unit', unitAmount: '0.5' },
        version: 1,
        updatedAtMs: T0,
      };
      const v2: PriceRow = {
        ...v1,
        terms: {
          model: 'graduated',
          tiers: [
            { upTo: 1000, unitAmount: '0.002', flatAmount: null },
            { upTo: null, unitAmount: '0.001', flatAmount: '100' },
          ],
        },
        version: 2,
        updatedAtMs: T0 + 10,
      };
      const v3: PriceRow = {
        ...v1,
        denomination: 'usd',
        terms: { model: 'package', packageSize: 1000, packageAmount: '5.25' },
        version: 3,
        updatedAtMs: T0 + 20,
      };
      await store.write((tx) => tx.prices.replacePrice(v1, undefined));
      assert.deepEqual(await store.read((tx) => tx.prices.findPrice(a.companyId, 'tok')), v1);
      await store.write((tx) => tx.prices.replacePrice(v2, v1));
      assert.deepEqual(await store.write((tx) => tx.prices.lockPrice(a.companyId, 'tok')), v2);
      await store.write((tx) => tx.prices.replacePrice(v3, v2));
      assert.deepEqual(await store.read((tx) => tx.prices.findPrice(a.companyId, 'tok')), v3);
      assert.equal(await store.read((tx) => tx.prices.findPrice(a.companyId, 'other')), undefined);

      const versions = await store.read((tx) => tx.prices.listPriceVersions(a.companyId, 'tok', { limit: 1 }));
      assert.deepEqual(versions, { rows: [{ ...v2, effectiveToMs: T0 + 20 }], hasMore: true });
      const next = await store.read((tx) =>
        tx.prices.listPriceVersions(a.companyId, 'tok', { limit: 1, startingAfter: '2' }),
      );
      assert.deepEqual(next, { rows: [{ ...v1, effectiveToMs: T0 + 10 }], hasMore: false });
      for (const cursor of ['3', '0', 'x', '99999999999'])
        assert.equal(
          await store.read((tx) =>
            tx.prices.listPriceVersions(a.companyId, 'tok', { limit: 1, startingAfter: cursor }),
          ),
          undefined,
          `cursor ${cursor} names no version`,
        );
      const b = await seedCompanyAndAccount(store);
      assert.deepEqual(await store.read((tx) => tx.prices.listPriceVersions(b.companyId, 'tok', { limit: 10 })), {
        rows: [],
        hasMore: false,
      });
    });

    test('price periods: absent until set; set exactly; locked ones of a new period are 0 or absent', async () => {
      const a = await seedCompanyAndAccount(store);
      const k = (type: string, periodMs: number) => ({
        companyId: a.companyId,
        accountId: a.accountId,
        type,
        periodMs,
      });
      const june = Date.UTC(2026, 5, 1);
      const july = Date.UTC(2026, 6, 1);
      assert.deepEqual(await store.read((tx) => tx.prices.findPricePeriods([k('t', june)])), new Map());
      const exact = parseDecimal('123456789.000000000000000001')!;
      await store.write((tx) =>
        tx.prices.putPricePeriods([
          { ...k('t', june), quantity: exact },
          { ...k('u', june), quantity: parseDecimal('2.5')! },
        ]),
      );
      const read = await store.read((tx) => tx.prices.findPricePeriods([k('t', june), k('u', june), k('t', july)]));
      assert.deepEqual(
        read,
        new Map([
          [pricePeriodKey(k('t', june)), exact],
          [pricePeriodKey(k('u', june)), parseDecimal('2.5')!],
        ]),
      );
      await store.write(async (tx) => {
        const locked = await tx.prices.lockPricePeriods([k('t', july), k('t', june)]);
        assert.deepEqual(locked.get(pricePeriodKey(k('t', june))), exact);
        const fresh = locked.get(pricePeriodKey(k('t', july)));
        assert.ok(fresh === undefined || fresh.coef === 0n, 'a new period counts nothing yet');
        await tx.prices.putPricePeriods([{ ...k('t', july), quantity: parseDecimal('7')! }]);
      });
      assert.deepEqual(
        (await store.read((tx) => tx.prices.findPricePeriods([k('t', july)]))).get(pricePeriodKey(k('t', july))),
        parseDecimal('7')!,
      );
    });
  });
});
