// Guarantee: notifications survive a server restart or crash in the middle of deliveries — another server on the same
// database delivers every one, at least once, always under its original webhook-id.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newId } from '../../src/lib/ids.js';
import { sendClaimedDelivery } from '../../src/operations/webhooks.js';
import { HTTP_DIALECTS as DIALECTS, createAccountWithBalance, signUpCompany } from '../support/harness.js';
import {
  asHarness,
  createWebhook,
  runJobs,
  serverOn,
  sharedDatabase,
  startReceiver,
  verifySignature,
} from '../support/webhooks.js';
import { testSecretBox } from '../support/stores.js';

const NOTIFICATIONS = 40;

for (const dialect of DIALECTS) {
  describe(`webhook delivery across restarts (${dialect}${dialect === 'sqlite' ? ' file' : ''})`, () => {
    test(
      'server A writes notifications and delivers some, ' + 'then stops; server B delivers the rest; none lost',
      async () => {
        const db = sharedDatabase(dialect);
        // Down for half of the notifications until B runs: A leaves them pending.
        let up = false;
        const blocked = new Set<string>();
        const rx = await startReceiver({ respond: ({ id }) => (!up && blocked.has(id) ? 500 : 200) });
        try {
          const a = await serverOn(await db.open());
          const co = await signUpCompany(asHarness(a));
          const w = await createWebhook(a, co.auth, { type: 'balance_change', url: rx.url });
          for (let i = 0; i < NOTIFICATIONS; i++) await createAccountWithBalance(asHarness(a), co, 'tokens', i + 1);
          const ids = (await a.store.read((tx) =>
            tx.webhooks.listWebhookDeliveries(w.webhook_id, { limit: 100 }),
          ))!.rows.map((d) => d.callbackId);
          assert.equal(ids.length, NOTIFICATIONS, 'one notification per committed balance change');
          for (const id of ids.filter((_, i) => i % 2 === 0)) blocked.add(id);
          await runJobs(a, co.auth);
          assert.equal(rx.delivered().size, NOTIFICATIONS / 2, 'A delivered half');
          await a.close();

          up = true;
          const b = await serverOn(await db.open());
          try {
            await runJobs(b, co.auth, 3600);
            const delivered = rx.delivered();
            assert.deepEqual([...delivered.keys()].sort(), [...ids].sort(), 'every notification delivered');
            for (const [id, oks] of delivered) {
              assert.equal(oks.length, 1);
              assert.equal(verifySignature(w.secret, oks[0]!).callback_id, id);
            }
            const rows = (await b.store.read((tx) => tx.webhooks.listWebhookDeliveries(w.webhook_id, { limit: 100 })))!
              .rows;
            assert.ok(rows.every((d) => d.status === 'delivered'));
          } finally {
            await b.close();
          }
        } finally {
          await rx.close();
          await db.drop();
        }
      },
    );

    test(
      'a crash after claiming and sending, before recording: ' +
        'the lease runs out and B sends again under the same id',
      async () => {
        const db = sharedDatabase(dialect);
        const rx = await startReceiver();
        try {
          const a = await serverOn(await db.open());
          const co = await signUpCompany(asHarness(a));
          const w = await createWebhook(a, co.auth, { type: 'balance_change', url: rx.url });
          for (let i = 0; i < NOTIFICATIONS; i++) await createAccountWithBalance(asHarness(a), co, 'tokens', i + 1);
          // What A's worker does before it dies: lease a batch and send part of it, recording nothing.
          // The lease is given already run out, as it is once the crashed worker's lease time has passed.
          const nowMs = a.server.clock.now();
          const claimed = await a.store.write((tx) =>
            tx.webhooks.claimWebhookDeliveries(nowMs, Date.now(), -1, 25, newId('cl')),
          );
          assert.equal(claimed.length, 25);
          const sentBeforeCrash = claimed.slice(0, 10);
          for (const d of sentBeforeCrash)
            await sendClaimedDelivery(
              d,
              { clock: a.server.clock, webhooks: { allowPrivate: true }, secrets: testSecretBox() },
              { manual: false },
            );
          await a.close(); // the outcomes are never written

          const b = await serverOn(await db.open());
          try {
            await runJobs(b, co.auth);
            const all = (await b.store.read((tx) => tx.webhooks.listWebhookDeliveries(w.webhook_id, { limit: 100 })))!
              .rows;
            assert.equal(all.length, NOTIFICATIONS);
            const delivered = rx.delivered();
            for (const d of all) {
              assert.equal(d.status, 'delivered');
              assert.ok(delivered.has(d.callbackId), `${d.callbackId} arrived`);
            }
            for (const d of sentBeforeCrash)
              assert.equal(
                delivered.get(d.callbackId)!.length,
                2,
                'sent again under the same webhook-id (at least once)',
              );
            assert.equal(delivered.size, NOTIFICATIONS);
          } finally {
            await b.close();
          }
        } finally {
          await rx.close();
          await db.drop();
        }
      },
    );

    test('a live lease keeps a second server off until it runs out', async () => {
      const db = sharedDatabase(dialect);
      const rx = await startReceiver();
      try {
        const a = await serverOn(await db.open());
        const co = await signUpCompany(asHarness(a));
        await createWebhook(a, co.auth, { type: 'balance_change', url: rx.url });
        await createAccountWithBalance(asHarness(a), co, 'tokens', 1);
        const claimed = await a.store.write((tx) =>
          tx.webhooks.claimWebhookDeliveries(a.server.clock.now(), Date.now(), 60_000, 10, newId('cl')),
        );
        assert.equal(claimed.length, 1);
        await a.close();
        const b = await serverOn(await db.open());
        try {
          await runJobs(b, co.auth, 3600);
          assert.equal(rx.requests.length, 0, 'leased: not sent by anyone else');
          const manual = await b.request('POST', `/v1/webhooks/deliveries/${claimed[0]!.callbackId}/retry`, {
            auth: co.auth,
          });
          assert.equal(manual.status, 409, manual.text);
          assert.equal(manual.body.error.type, 'conflict');
        } finally {
          await b.close();
        }
      } finally {
        await rx.close();
        await db.drop();
      }
    });
  });
}
