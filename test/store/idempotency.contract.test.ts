// Guarantees: on SQLite and PostgreSQL, an idempotency key is claimed once per scope, completed with its
// answer, released only while in progress, and deleted only when strictly older than asked.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { newId } from '../../src/lib/ids.js';
import type { Store } from '../../src/store/types.js';
import { DIALECTS, openTestStore, type TestStore } from '../support/stores.js';

for (const dialect of DIALECTS) {
  describe(dialect, () => {
    let t: TestStore;
    let store: Store;

    before(async () => {
      t = await openTestStore(dialect, { poolSize: 8 });
      store = t.store;
    });
    after(async () => {
      await t.cleanup();
    });

    describe('idempotency keys', () => {
      test('claim, complete, release, deleteBefore', async () => {
        const scope = newId('c');
        const row = { scope, key: 'k1', requestHash: 'h', statusCode: null, responseBody: null, createdAtMs: 10 };
        assert.equal(await store.write((tx) => tx.claimIdempotency(row)), true);
        assert.equal(
          await store.write((tx) => tx.claimIdempotency({ ...row, requestHash: 'other' })),
          false,
          'claimed already',
        );
        assert.deepEqual(await store.read((tx) => tx.findIdempotency(scope, 'k1')), row);
        assert.equal(await store.read((tx) => tx.findIdempotency(newId('c'), 'k1')), undefined, 'scoped');

        await store.write((tx) => tx.releaseIdempotency(scope, 'k1'));
        assert.equal(
          await store.read((tx) => tx.findIdempotency(scope, 'k1')),
          undefined,
          'an in-progress claim is released',
        );
        assert.equal(await store.write((tx) => tx.claimIdempotency(row)), true, 'and can be claimed again');

        await store.write((tx) => tx.completeIdempotency(scope, 'k1', 201, '{"ok":true}'));
        assert.deepEqual(await store.read((tx) => tx.findIdempotency(scope, 'k1')), {
          ...row,
          statusCode: 201,
          responseBody: '{"ok":true}',
        });
        await store.write((tx) => tx.releaseIdempotency(scope, 'k1'));
        assert.equal(
          (await store.read((tx) => tx.findIdempotency(scope, 'k1')))!.statusCode,
          201,
          'a completed key is never released',
        );

        assert.equal(await store.write((tx) => tx.claimIdempotency({ ...row, key: 'k2', createdAtMs: 20 })), true);
        assert.equal(await store.write((tx) => tx.claimIdempotency({ ...row, key: 'k3', createdAtMs: 30 })), true);
        assert.equal(await store.write((tx) => tx.deleteIdempotencyBefore(20)), 1, 'strictly older only');
        assert.equal(await store.read((tx) => tx.findIdempotency(scope, 'k1')), undefined);
        assert.ok(await store.read((tx) => tx.findIdempotency(scope, 'k2')));
        assert.equal(await store.write((tx) => tx.deleteIdempotencyBefore(31)), 2);
        assert.equal(await store.write((tx) => tx.deleteIdempotencyBefore(31)), 0);
      });
    });
  });
}
