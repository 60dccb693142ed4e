// Guarantee: a webhook delivery is leased to one sender at a time (wall-clock lease, due by the injected clock),
// concurrent claimers never share one, and only the current lease holder's outcome changes it — on both databases.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { WebhookDeliveryRow } from '../../src/store/types.js';
import { HTTP_DIALECTS, freshStore } from '../support/harness.js';
import { seedWebhookSubscription } from '../support/webhooks.js';

const delivery = (i: number, nextAttemptAtMs: number): WebhookDeliveryRow => ({
  callbackId: `cl_${i}`,
  webhookId: 'wh_1',
  companyId: 'c_1',
  type: 'balance_change',
  payload: `{"n":${i}}`,
  status: 'pending',
  attempts: 0,
  nextAttemptAtMs,
  createdAtMs: 0,
  deliveredAtMs: null,
  lastError: null,
});

for (const dialect of HTTP_DIALECTS) {
  describe(`webhook delivery claims (${dialect})`, () => {
    test(
      'due rows only, leased on the wall clock, released ' + 'by the holder, outcome ignored from a stale holder',
      async () => {
        const { store, drop } = await freshStore(dialect);
        try {
          await seedWebhookSubscription(store);
          await store.write((tx) =>
            tx.webhooks.insertWebhookDeliveries([delivery(1, 100), delivery(2, 5_000), delivery(1, 100)]),
          );
          const first = await store.write((tx) =>
            tx.webhooks.claimWebhookDeliveries(1_000, 50_000, 10_000, 10, 'tok_a'),
          );
          assert.deepEqual(
            first.map((d) => [d.callbackId, d.url, d.subscriptionState, d.claimedUntilMs]),
            [['cl_1', 'https://example.com/', 'active', 60_000]],
          );
          assert.deepEqual(
            await store
              .write((tx) => tx.webhooks.claimWebhookDeliveries(10_000, 55_000, 10_000, 10, 'tok_b'))
              .then((r) => r.map((d) => d.callbackId)),
            ['cl_2'],
            'cl_1 is leased',
          );
          const stale = await store.write((tx) =>
            tx.webhooks.claimWebhookDeliveries(10_000, 60_000, 10_000, 10, 'tok_c'),
          );
          assert.deepEqual(
            stale.map((d) => d.callbackId),
            ['cl_1'],
            'the lease ran out (wall clock): claimed again',
          );
          const attempt = (token: string, status: 'delivered' | 'pending') =>
            store.write((tx) =>
              tx.webhooks.recordWebhookDeliveries([
                {
                  callbackId: 'cl_1',
                  claimToken: token,
                  status,
                  nextAttemptAtMs: status === 'pending' ? 20_000 : null,
                  deliveredAtMs: status === 'delivered' ? 1 : null,
                  lastError: null,
                  disable: null,
                  attempt: {
                    callbackId: 'cl_1',
                    attemptedAtMs: 1,
                    statusCode: 200,
                    latencyMs: 3,
                    responseSnippet: 'ok',
                    error: null,
                    manual: false,
                  },
                },
              ]),
            );
          await attempt('tok_a', 'delivered'); // the first holder, too late
          let row = await store.read((tx) => tx.webhooks.findWebhookDelivery('c_1', 'cl_1'));
          assert.equal(row?.status, 'pending', 'a stale holder does not change it');
          await attempt('tok_c', 'pending');
          row = await store.read((tx) => tx.webhooks.findWebhookDelivery('c_1', 'cl_1'));
          assert.deepEqual([row?.status, row?.nextAttemptAtMs, row?.attempts], ['pending', 20_000, 1]);
          assert.equal(
            (await store.read((tx) => tx.webhooks.listWebhookAttempts(['cl_1']))).length,
            2,
            'both attempts are logged',
          );
          assert.deepEqual(
            await store
              .write((tx) => tx.webhooks.claimWebhookDeliveries(19_999, 60_001, 10_000, 10, 'tok_d'))
              .then((r) => r.map((d) => d.callbackId)),
            [],
          );
          assert.equal(
            await store.write((tx) => tx.webhooks.claimWebhookDelivery('c_1', 'cl_2', 60_000, 1_000, 'tok_e')),
            'busy',
          );
          assert.equal(
            await store.write((tx) => tx.webhooks.claimWebhookDelivery('c_2', 'cl_2', 99_000, 1_000, 'tok_e')),
            undefined,
            'another company',
          );
        } finally {
          await drop();
        }
      },
    );

    test('concurrent claimers never share a delivery', async () => {
      const { store, drop } = await freshStore(dialect);
      try {
        await seedWebhookSubscription(store);
        await store.write((tx) =>
          tx.webhooks.insertWebhookDeliveries(Array.from({ length: 300 }, (_, i) => delivery(i, i))),
        );
        const claims = await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            store.write((tx) => tx.webhooks.claimWebhookDeliveries(1_000, 1_000, 60_000, 40, `tok_${i}`)),
          ),
        );
        const ids = claims.flat().map((d) => d.callbackId);
        assert.equal(new Set(ids).size, ids.length, 'no delivery claimed twice');
        assert.equal(ids.length, 300);
      } finally {
        await drop();
      }
    });
  });
}
