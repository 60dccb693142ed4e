// Guarantee: finished outbox rows and old webhook delivery logs are deleted after their retention,
// oldest first and in bounded batches, while anything still to do (an unfinished outbox row, a
// pending delivery, one a sender holds) stays whatever its age — on both databases, and in a
// running server on the test clock.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { RETENTION_BATCH } from '../../src/jobs/retention.js';
import type { Store, WebhookDeliveryRow } from '../../src/store/types.js';
import {
  HTTP_DIALECTS,
  createAccountWithBalance,
  freshStore,
  signUpCompany,
  startHarness,
  type Harness,
} from '../support/harness.js';
import { createWebhook, runJobs, seedWebhookSubscription, startReceiver } from '../support/webhooks.js';

const DAY_S = 24 * 60 * 60;

const delivery = (id: string, status: WebhookDeliveryRow['status'], createdAtMs: number): WebhookDeliveryRow => ({
  callbackId: id,
  webhookId: 'wh_1',
  companyId: 'c_1',
  type: 'balance_change',
  payload: '{}',
  status,
  attempts: 1,
  nextAttemptAtMs: status === 'pending' ? 10_000_000 : null,
  createdAtMs,
  deliveredAtMs: status === 'delivered' ? createdAtMs : null,
  lastError: null,
});

async function attemptsOf(store: Store, ids: string[]): Promise<string[]> {
  return (await store.read((tx) => tx.webhooks.listWebhookAttempts(ids))).map((a) => a.callbackId).sort();
}

for (const dialect of HTTP_DIALECTS) {
  describe(`retention (${dialect})`, () => {
    test(
      'finished outbox rows older than the cutoff go, oldest ' + 'first, a batch at a time; unfinished ones stay',
      async () => {
        const { store, drop } = await freshStore(dialect);
        try {
          const rows = ['ob_a', 'ob_b', 'ob_c', 'ob_d', 'ob_e'].map((outboxId) => ({
            outboxId,
            companyId: 'c_1',
            topic: 'webhook.x',
            payload: {},
            runAtMs: 0,
            createdAtMs: 0,
          }));
          await store.write((tx) => tx.outbox.insertOutbox(rows));
          await store.write(async (tx) => {
            await tx.outbox.claimOutbox('webhook.', 0, 1_000, 10);
            await tx.outbox.completeOutbox('ob_a', 300);
            await tx.outbox.completeOutbox('ob_b', 100);
            await tx.outbox.completeOutbox('ob_c', 200);
            await tx.outbox.completeOutbox('ob_d', 5_000); // finished, but after the cutoff
            // ob_e: claimed, never finished
          });
          const left = async () =>
            (await store.read((tx) => tx.outbox.listOutboxOfCompany('c_1', 'webhook.'))).map((o) => o.outboxId);
          assert.equal(await store.write((tx) => tx.outbox.deleteFinishedOutbox(1_000, 2)), 2);
          assert.deepEqual(await left(), ['ob_a', 'ob_d', 'ob_e'], 'the two finished first went first');
          assert.equal(await store.write((tx) => tx.outbox.deleteFinishedOutbox(1_000, 2)), 1);
          assert.equal(await store.write((tx) => tx.outbox.deleteFinishedOutbox(1_000, 2)), 0);
          assert.deepEqual(await left(), ['ob_d', 'ob_e']);
          assert.equal(
            await store.write((tx) => tx.outbox.deleteFinishedOutbox(1e15, 10)),
            1,
            'an unfinished row stays whatever its age',
          );
          assert.deepEqual(await left(), ['ob_e']);
        } finally {
          await drop();
        }
      },
    );

    test('finished deliveries older than the cutoff go with their attempts; pending and leased ones stay', async () => {
      const { store, drop } = await freshStore(dialect);
      try {
        await seedWebhookSubscription(store);
        await store.write((tx) =>
          tx.webhooks.insertWebhookDeliveries([
            delivery('cl_old_ok', 'delivered', 100),
            delivery('cl_old_failed', 'failed', 200),
            delivery('cl_old_pending', 'pending', 50),
            delivery('cl_old_leased', 'failed', 60),
            delivery('cl_new_ok', 'delivered', 5_000),
          ]),
        );
        await store.write((tx) =>
          tx.webhooks.recordWebhookDeliveries(
            ['cl_old_ok', 'cl_old_failed', 'cl_new_ok'].map((callbackId) => ({
              callbackId,
              claimToken: 'nobody',
              status: 'delivered' as const,
              nextAttemptAtMs: null,
              deliveredAtMs: 1,
              lastError: null,
              disable: null,
              attempt: {
                callbackId,
                attemptedAtMs: 1,
                statusCode: 200,
                latencyMs: 1,
                responseSnippet: 'ok',
                error: null,
                manual: false,
              },
            })),
          ),
        );
        // A manual retry's sender holds cl_old_leased until wall time 90,000.
        assert.ok(
          await store.write((tx) => tx.webhooks.claimWebhookDelivery('c_1', 'cl_old_leased', 80_000, 10_000, 'tok')),
        );
        const all = ['cl_old_ok', 'cl_old_failed', 'cl_old_pending', 'cl_old_leased', 'cl_new_ok'];
        const present = async () => {
          const out: string[] = [];
          for (const id of all) if (await store.read((tx) => tx.webhooks.findWebhookDelivery('c_1', id))) out.push(id);
          return out;
        };
        assert.deepEqual(await attemptsOf(store, all), ['cl_new_ok', 'cl_old_failed', 'cl_old_ok']);
        assert.equal(await store.write((tx) => tx.webhooks.deleteWebhookDeliveriesBefore(1_000, 85_000, 1)), 1);
        assert.deepEqual(
          await present(),
          ['cl_old_failed', 'cl_old_pending', 'cl_old_leased', 'cl_new_ok'],
          'the oldest finished one first',
        );
        assert.equal(await store.write((tx) => tx.webhooks.deleteWebhookDeliveriesBefore(1_000, 85_000, 10)), 1);
        assert.equal(await store.write((tx) => tx.webhooks.deleteWebhookDeliveriesBefore(1_000, 85_000, 10)), 0);
        assert.deepEqual(await present(), ['cl_old_pending', 'cl_old_leased', 'cl_new_ok']);
        assert.deepEqual(await attemptsOf(store, all), ['cl_new_ok'], 'the attempts went with their deliveries');
        assert.equal(
          await store.write((tx) => tx.webhooks.deleteWebhookDeliveriesBefore(1_000, 95_000, 10)),
          1,
          'once the lease has run out',
        );
        assert.deepEqual(await present(), ['cl_old_pending', 'cl_new_ok']);
      } finally {
        await drop();
      }
    });

    test('a backlog larger than a batch is cleared by the runner, a batch per transaction', async () => {
      const { store, drop } = await freshStore(dialect);
      try {
        const n = RETENTION_BATCH * 2 + 7;
        const rows = Array.from({ length: n }, (_, i) => ({
          outboxId: `ob_${i}`,
          companyId: 'c_1',
          topic: 't.x',
          payload: {},
          runAtMs: 0,
          createdAtMs: 0,
        }));
        await store.write((tx) => tx.outbox.insertOutbox(rows));
        await store.write(async (tx) => {
          await tx.outbox.claimOutbox('t.', 0, 1_000, n);
          for (const r of rows) await tx.outbox.completeOutbox(r.outboxId, 10);
        });
        const batches: number[] = [];
        for (;;) {
          const did = await store.write((tx) => tx.outbox.deleteFinishedOutbox(1_000, RETENTION_BATCH));
          if (did === 0) break;
          batches.push(did);
        }
        assert.deepEqual(batches, [RETENTION_BATCH, RETENTION_BATCH, 7]);
        assert.deepEqual(await store.read((tx) => tx.outbox.listOutboxOfCompany('c_1', 't.')), []);
      } finally {
        await drop();
      }
    });
  });

  describe(`retention in a running server (${dialect})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(dialect, { BILLING_WEBHOOK_LOG_RETENTION_DAYS: '30', BILLING_OUTBOX_RETENTION_DAYS: '7' });
    });
    after(async () => h.close());
    afterEach(async () => h.audit());

    test(
      'a delivered notification is listed for 30 days, then ' + 'its log is gone; a finished outbox row after 7 days',
      async () => {
        const rx = await startReceiver();
        try {
          const co = await signUpCompany(h);
          const w = await createWebhook(h, co.auth, { type: 'balance_change', url: rx.url });
          await createAccountWithBalance(h, co, 'tokens', 500);
          await runJobs(h, co.auth, 60);
          assert.equal(rx.delivered().size, 1, `${rx.requests.length} requests`);
          const list = async () => {
            const r = await h.request('GET', `/v1/webhooks/${w.webhook_id}/deliveries`, { auth: co.auth });
            assert.equal(r.status, 200, r.text);
            return r.body.data as { callback_id: string; status: string; created_at: string }[];
          };
          const [d] = await list();
          assert.equal(d?.status, 'delivered');
          // Balance notifications are written as deliveries directly; charges and refills go
          // through the outbox. One finished outbox row, as a worker leaves it:
          const nowMs = Date.parse(d!.created_at);
          await h.store.write(async (tx) => {
            await tx.outbox.insertOutbox([
              {
                outboxId: 'ob_retention',
                companyId: co.companyId,
                topic: 'test.retention',
                payload: {},
                runAtMs: nowMs,
                createdAtMs: nowMs,
              },
            ]);
            await tx.outbox.claimOutbox('test.', nowMs, 1_000, 1);
            await tx.outbox.completeOutbox('ob_retention', nowMs);
          });
          const outbox = () => h.store.read((tx) => tx.outbox.listOutboxOfCompany(co.companyId, 'test.'));
          assert.equal((await outbox()).length, 1);
          await runJobs(h, co.auth, 6 * DAY_S);
          assert.equal((await outbox()).length, 1, 'kept for 7 days');
          await runJobs(h, co.auth, 2 * DAY_S);
          assert.deepEqual(await outbox(), [], 'the finished outbox row is gone after 7 days');
          await runJobs(h, co.auth, 21 * DAY_S);
          assert.deepEqual(
            (await list()).map((x) => x.callback_id),
            [d!.callback_id],
            'still in the log after 29 days',
          );
          await runJobs(h, co.auth, 2 * DAY_S);
          assert.deepEqual(await list(), [], 'gone after 31 days');
          const retry = await h.request('POST', `/v1/webhooks/deliveries/${d!.callback_id}/retry`, { auth: co.auth });
          assert.equal(retry.status, 404, retry.text);
        } finally {
          await rx.close();
        }
      },
    );
  });
}

test('retention is configured in whole days, 1 to 3650', () => {
  assert.deepEqual([loadConfig({}).outboxRetentionDays, loadConfig({}).webhookLogRetentionDays], [7, 30]);
  assert.equal(loadConfig({ BILLING_WEBHOOK_LOG_RETENTION_DAYS: '90' }).webhookLogRetentionDays, 90);
  for (const bad of ['0', '3651', '1.5', '-1', 'week']) {
    assert.throws(() => loadConfig({ BILLING_OUTBOX_RETENTION_DAYS: bad }), /BILLING_OUTBOX_RETENTION_DAYS/);
  }
});
