// Guarantees: on SQLite and PostgreSQL, an idempotency key is claimed once per scope, completed with its
// answer, released only while in progress, and deleted only when strictly older than asked.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newId } from '../../src/lib/ids.js';
import { forEachDialect } from '../support/stores.js';

forEachDialect((store) => {
  describe('idempotency keys', () => {
    test('claim, complete, release, deleteBefore', async () => {
      const scope = newId('c');
      const row = {
        scope,
        key: 'k1',
        requestHash: 'h',
        statusCode: null,
        responseBody: null,
        createdAtMs: 10,
        owner: 'o1',
        leaseExpiresAtMs: 1_000,
      };
      assert.equal(await store.write((tx) => tx.idempotency.claimIdempotency(row, 500)), true);
      assert.equal(
        await store.write((tx) => tx.idempotency.claimIdempotency({ ...row, requestHash: 'other' }, 500)),
        false,
        'claimed already',
      );
      assert.deepEqual(await store.read((tx) => tx.idempotency.findIdempotency(scope, 'k1')), row);
      assert.equal(await store.read((tx) => tx.idempotency.findIdempotency(newId('c'), 'k1')), undefined, 'scoped');

      await store.write((tx) => tx.idempotency.releaseIdempotency(scope, 'k1', 'someone else'));
      assert.ok(
        await store.read((tx) => tx.idempotency.findIdempotency(scope, 'k1')),
        'only its owner releases a claim',
      );
      await store.write((tx) => tx.idempotency.releaseIdempotency(scope, 'k1', 'o1'));
      assert.equal(
        await store.read((tx) => tx.idempotency.findIdempotency(scope, 'k1')),
        undefined,
        'an in-progress claim is released',
      );
      assert.equal(
        await store.write((tx) => tx.idempotency.claimIdempotency(row, 500)),
        true,
        'and can be claimed again',
      );

      assert.equal(
        await store.write((tx) => tx.idempotency.completeIdempotency(scope, 'k1', 'someone else', 201, '{"ok":true}')),
        false,
      );
      assert.equal(
        (await store.read((tx) => tx.idempotency.findIdempotency(scope, 'k1')))!.statusCode,
        null,
        'owner only',
      );
      assert.equal(
        await store.write((tx) => tx.idempotency.completeIdempotency(scope, 'k1', 'o1', 201, '{"ok":true}')),
        true,
      );
      assert.equal(
        await store.write((tx) => tx.idempotency.completeIdempotency(scope, 'k1', 'o1', 200, '{"again":true}')),
        false,
        'an answered key is answered once',
      );
      assert.deepEqual(await store.read((tx) => tx.idempotency.findIdempotency(scope, 'k1')), {
        ...row,
        statusCode: 201,
        responseBody: '{"ok":true}',
        leaseExpiresAtMs: null,
      });
      assert.equal(
        await store.write((tx) => tx.idempotency.claimIdempotency({ ...row, owner: 'o2' }, 1_000_000)),
        false,
        'an answered key is never taken over',
      );
      await store.write((tx) => tx.idempotency.releaseIdempotency(scope, 'k1', 'o1'));
      assert.equal(
        (await store.read((tx) => tx.idempotency.findIdempotency(scope, 'k1')))!.statusCode,
        201,
        'a completed key is never released',
      );

      assert.equal(
        await store.write((tx) => tx.idempotency.claimIdempotency({ ...row, key: 'k2', createdAtMs: 20 }, 500)),
        true,
      );
      assert.equal(
        await store.write((tx) => tx.idempotency.claimIdempotency({ ...row, key: 'k3', createdAtMs: 30 }, 500)),
        true,
      );
      assert.equal(await store.write((tx) => tx.idempotency.deleteIdempotencyBefore(20)), 1, 'strictly older only');
      assert.equal(await store.read((tx) => tx.idempotency.findIdempotency(scope, 'k1')), undefined);
      assert.ok(await store.read((tx) => tx.idempotency.findIdempotency(scope, 'k2')));
      assert.equal(await store.write((tx) => tx.idempotency.deleteIdempotencyBefore(31)), 2);
      assert.equal(await store.write((tx) => tx.idempotency.deleteIdempotencyBefore(31)), 0);
    });

    test('a claim is leased: live it holds, lapsed it is taken over by the same request only', async () => {
      const scope = newId('c');
      const row = {
        scope,
        key: 'lease',
        requestHash: 'h',
        statusCode: null,
        responseBody: null,
        createdAtMs: 10,
        owner: 'dead',
        leaseExpiresAtMs: 1_000,
      };
      assert.equal(await store.write((tx) => tx.idempotency.claimIdempotency(row, 0)), true);
      const retry = { ...row, owner: 'retry', leaseExpiresAtMs: 31_000 };
      assert.equal(await store.write((tx) => tx.idempotency.claimIdempotency(retry, 999)), false, 'the lease is live');
      assert.equal(await store.write((tx) => tx.idempotency.renewIdempotency(scope, 'lease', 'dead', 2_000)), true);
      assert.equal(
        await store.write((tx) => tx.idempotency.claimIdempotency(retry, 1_500)),
        false,
        'renewed, still live',
      );
      assert.equal(
        await store.write((tx) => tx.idempotency.claimIdempotency({ ...retry, requestHash: 'other' }, 5_000)),
        false,
        'another request never takes a key over',
      );
      assert.equal(
        await store.write((tx) => tx.idempotency.claimIdempotency(retry, 2_000)),
        true,
        'lapsed: taken over',
      );
      assert.equal(
        await store.write((tx) => tx.idempotency.renewIdempotency(scope, 'lease', 'dead', 9_000)),
        false,
        'the old owner has lost it',
      );
      assert.equal(
        await store.write((tx) => tx.idempotency.completeIdempotency(scope, 'lease', 'dead', 200, '"stale"')),
        false,
      );
      assert.equal(
        await store.write((tx) => tx.idempotency.completeIdempotency(scope, 'lease', 'retry', 201, '"fresh"')),
        true,
      );
      const found = await store.read((tx) => tx.idempotency.findIdempotency(scope, 'lease'));
      assert.equal(found?.owner, 'retry');
      assert.equal(found?.statusCode, 201);
      assert.equal(found?.responseBody, '"fresh"');
    });
  });
});
