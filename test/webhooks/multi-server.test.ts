// Guarantee: several servers on one PostgreSQL database, their delivery workers running at once, deliver every
// notification exactly once when nothing crashes, and never run two attempts of one notification at the same time.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAccountWithBalance, signUpCompany } from '../support/harness.js';
import { POSTGRES_ONLY_SKIP } from '../support/stores.js';
import {
  asHarness,
  createWebhook,
  serverOn,
  sharedDatabase,
  startReceiver,
  type TestServer,
} from '../support/webhooks.js';

const ACCOUNTS = 60;

describe('webhook delivery with several servers (postgres)', { skip: POSTGRES_ONLY_SKIP }, () => {
  test('two servers with workers deliver everything; attempts of one notification never overlap', async () => {
    const db = sharedDatabase('postgres');
    // Every first attempt fails, so retries (re-claims) race as well as first claims; answers are slowed so overlaps
    // would show.
    const rx = await startReceiver({ respond: (_r, n) => (n === 0 ? 500 : 200), delayMs: 5 });
    const env = { BILLING_WORKERS: '1', BILLING_WORKER_INTERVAL_MS: '10' };
    const servers: TestServer[] = [];
    try {
      servers.push(await serverOn(await db.open(4), env), await serverOn(await db.open(4), env));
      const [a, b] = servers as [TestServer, TestServer];
      const co = await signUpCompany(asHarness(a));
      const w = await createWebhook(b, co.auth, { type: 'balance_change', url: rx.url });
      const accounts: string[] = [];
      for (let i = 0; i < ACCOUNTS; i++)
        accounts.push(await createAccountWithBalance(asHarness(i % 2 === 0 ? a : b), co, 'tokens', 10));
      await Promise.all(
        accounts.map((id, i) =>
          (i % 2 === 0 ? b : a).request('POST', `/v1/accounts/${id}/balance/tokens/adjustments`, {
            auth: co.auth,
            body: { amount: 1 },
          }),
        ),
      );
      const expected = 2 * ACCOUNTS;

      // Move both clocks on (each advance also runs the jobs, racing the interval workers) until all arrived.
      for (let round = 0; round < 200 && rx.delivered().size < expected; round++) {
        const advanced = await Promise.all(
          servers.map((s) => s.request('POST', '/v1/test_clock/advance', { auth: co.auth, body: { seconds: 60 } })),
        );
        for (const r of advanced) assert.equal(r.status, 200, r.text);
      }
      const delivered = rx.delivered();
      assert.equal(delivered.size, expected, 'every notification delivered');
      for (const [, oks] of delivered) assert.equal(oks.length, 1, 'exactly once without crashes');
      assert.equal(rx.maxOverlap(), 1, 'no two attempts of one notification at once');

      for (const s of servers) await s.server.jobs.stop();
      const rows = (await a.store.read((tx) => tx.webhooks.listWebhookDeliveries(w.webhook_id, { limit: 100 })))!.rows;
      const more = (await a.store.read((tx) =>
        tx.webhooks.listWebhookDeliveries(w.webhook_id, { limit: 100, startingAfter: rows.at(-1)!.callbackId }),
      ))!.rows;
      const all = [...rows, ...more];
      assert.equal(all.length, expected);
      const attempts = await a.store.read((tx) => tx.webhooks.listWebhookAttempts(all.map((d) => d.callbackId)));
      for (const d of all) {
        assert.equal(d.status, 'delivered');
        const mine = attempts.filter((x) => x.callbackId === d.callbackId);
        assert.deepEqual(
          mine.map((x) => x.statusCode),
          [500, 200],
          'every attempt recorded once, in order',
        );
        assert.equal(d.attempts, 2);
        assert.equal(rx.requests.filter((r) => r.id === d.callbackId).length, 2);
      }
    } finally {
      for (const s of servers) await s.close();
      await rx.close();
      await db.drop();
    }
  });
});
