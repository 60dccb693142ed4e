// Guarantees: on SQLite and PostgreSQL, outbox rows are written with their transaction and only if it
// commits; outbox ids are unique.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newId } from '../../src/lib/ids.js';
import { forEachDialect, seedCompanyAndAccount } from '../support/stores.js';
import { T0 } from './contract-support.js';

forEachDialect((store, t) => {
  describe('outbox', () => {
    test('insertOutbox writes rows with the transaction, and only if it commits', async () => {
      const a = await seedCompanyAndAccount(store);
      const o1 = {
        outboxId: newId('ob'),
        companyId: a.companyId,
        topic: 'webhook.balance_change',
        payload: { amount: 5, nested: { a: [1] } },
        runAtMs: T0,
        createdAtMs: T0,
      };
      const o2 = { ...o1, outboxId: newId('ob'), topic: 'charge.refill', payload: {} };
      await store.write((tx) => tx.outbox.insertOutbox([o1, o2]));
      await store.write((tx) => tx.outbox.insertOutbox([]));
      await assert.rejects(
        store.write(async (tx) => {
          await tx.outbox.insertOutbox([{ ...o1, outboxId: newId('ob') }]);
          throw new Error('abort');
        }),
      );
      await assert.rejects(
        store.write((tx) => tx.outbox.insertOutbox([o1])),
        'outbox ids are unique',
      );
      const rows = await t.query(
        'SELECT outbox_id, topic, payload, run_at, done_at FROM outbox WHERE company_id = ? ORDER BY seq',
        [a.companyId],
      );
      assert.deepEqual(
        rows.map((r) => [r.outbox_id, r.topic, JSON.parse(String(r.payload)), Number(r.run_at), r.done_at]),
        [
          [o1.outboxId, o1.topic, o1.payload, T0, null],
          [o2.outboxId, o2.topic, {}, T0, null],
        ],
      );
    });
  });
});
