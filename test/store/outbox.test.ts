// Guarantee: an outbox row is handed to one worker at a time (leased), only when due, and is
// retried or finished exactly as the worker says — on both databases, with concurrent claimers.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HTTP_DIALECTS, freshStore } from '../support/harness.js';

for (const dialect of HTTP_DIALECTS) {
  describe(`outbox claims (${dialect})`, () => {
    test('due rows of the topic, leased, retried later, completed once', async () => {
      const { store, drop } = await freshStore(dialect);
      try {
        await store.write((tx) =>
          tx.outbox.insertOutbox([
            {
              outboxId: 'ob_1',
              companyId: 'c_1',
              topic: 'webhook.balance_change',
              payload: { n: 1 },
              runAtMs: 100,
              createdAtMs: 1,
            },
            {
              outboxId: 'ob_2',
              companyId: 'c_1',
              topic: 'webhook.threshold',
              payload: { n: 2 },
              runAtMs: 200,
              createdAtMs: 1,
            },
            {
              outboxId: 'ob_3',
              companyId: 'c_1',
              topic: 'charge.refill',
              payload: { n: 3 },
              runAtMs: 100,
              createdAtMs: 1,
            },
            {
              outboxId: 'ob_4',
              companyId: 'c_1',
              topic: 'webhook.later',
              payload: { n: 4 },
              runAtMs: 5_000,
              createdAtMs: 1,
            },
            { outboxId: 'ob_5', companyId: 'c_1', topic: 'webhookXlike', payload: {}, runAtMs: 100, createdAtMs: 1 },
          ]),
        );
        const first = await store.write((tx) => tx.outbox.claimOutbox('webhook.', 1000, 500, 10));
        assert.deepEqual(
          first.map((r) => r.outboxId),
          ['ob_1', 'ob_2'],
        );
        assert.deepEqual(first[0]!.payload, { n: 1 });
        assert.equal(first[0]!.attempts, 1);
        assert.equal(first[0]!.claimedUntilMs, 1500);
        assert.deepEqual(
          await store.write((tx) => tx.outbox.claimOutbox('webhook.', 1200, 500, 10)),
          [],
          'leased rows are not claimed again',
        );
        await store.write((tx) => tx.outbox.retryOutbox('ob_1', 3000, 'HTTP 500'));
        await store.write((tx) => tx.outbox.completeOutbox('ob_2', 1300));
        assert.deepEqual(await store.write((tx) => tx.outbox.claimOutbox('webhook.', 2000, 500, 10)), []);
        const again = await store.write((tx) => tx.outbox.claimOutbox('webhook.', 6000, 500, 10));
        assert.deepEqual(
          again.map((r) => [r.outboxId, r.attempts]),
          [
            ['ob_1', 2],
            ['ob_4', 1],
          ],
        );
        const expired = await store.write((tx) => tx.outbox.claimOutbox('webhook.', 7000, 500, 10));
        assert.deepEqual(
          expired.map((r) => r.outboxId),
          ['ob_1', 'ob_4'],
          'an expired lease (crashed worker) is claimed again',
        );
      } finally {
        await drop();
      }
    });

    test('concurrent claimers never share a row', async () => {
      const { store, drop } = await freshStore(dialect);
      try {
        const rows = Array.from({ length: 300 }, (_, i) => ({
          outboxId: `ob_${i}`,
          companyId: 'c',
          topic: 't.x',
          payload: { i },
          runAtMs: i,
          createdAtMs: 0,
        }));
        await store.write((tx) => tx.outbox.insertOutbox(rows));
        const claims = await Promise.all(
          Array.from({ length: 12 }, () => store.write((tx) => tx.outbox.claimOutbox('t.', 1000, 60_000, 40))),
        );
        const ids = claims.flat().map((r) => r.outboxId);
        assert.equal(new Set(ids).size, ids.length, 'no row claimed twice');
        assert.equal(ids.length, 300);
      } finally {
        await drop();
      }
    });
  });
}
