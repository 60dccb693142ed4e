// Guarantee: with the receiver down and back, and the server killed (-9) mid-delivery and restarted meanwhile, every
// notification is delivered, signed, under the same webhook-id and with the same body on every attempt.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CLI_DIALECTS, freshDatabase } from '../cli/support.js';
import { startReceiver, verifySignature } from '../support/webhooks.js';
import { report, rng, seed, size } from './support/config.js';
import { send, sleep } from './support/http.js';
import { judge } from './support/judge.js';
import { startChildServer } from './support/server.js';
import { account, signUp } from './support/setup.js';

const NOTIFICATIONS = size(30, 300);
const KILLS = size(2, 10);
/**
 * Short: each kill lands between delivery runs. Full: in the middle of one, so the dead server's leases (60 s or
 * more of real time, by design) must run out before another run may send those notifications again.
 */
const MID_DELIVERY = size(false, true);
/** Long enough for a lease left behind (60 s or more of real time) to run out. */
const DRAIN_MS = size(60_000, 400_000);

for (const dialect of CLI_DIALECTS) {
  describe(`webhooks through outages and crashes (${dialect})`, () => {
    test(`receiver down and back, server killed ${KILLS} times ` +
      `${MID_DELIVERY ? 'mid-delivery' : 'between deliveries'} ` +
      'and restarted once gracefully: ' +
      'every notification delivered, one id and one body per notification', { timeout: 600_000 }, async (t) => {
      const s = seed(dialect === 'sqlite' ? 16_601 : 16_602);
      t.diagnostic(`seed ${s}`);
      const random = rng(s);
      let down = true;
      const rx = await startReceiver({ respond: () => (down ? 503 : 200), delayMs: 20 });
      const db = await freshDatabase(dialect);
      const server = await startChildServer(db.url);
      try {
        const co = await signUp(server.url);
        const hook = await send(server.url, {
          method: 'POST',
          path: '/v1/webhooks',
          auth: co.auth,
          body: { type: 'balance_change', url: rx.url },
        });
        assert.equal(hook.status, 200, hook.text);
        const { webhook_id: webhookId, secret } = hook.json.data;
        const acc = await account(server.url, co, 'tokens', 1000);
        for (let i = 1; i < NOTIFICATIONS; i++) {
          const r = await send(server.url, {
            method: 'POST',
            path: `/v1/accounts/${acc}/balance/tokens/adjustments`,
            auth: co.auth,
            body: { amount: i },
          });
          assert.equal(r.status, 200, r.text);
        }
        const advance = (seconds: number) =>
          send(server.url, { method: 'POST', path: '/v1/test_clock/advance', auth: co.auth, body: { seconds } });
        const leased = async () =>
          Number((await db.sql('SELECT COUNT(*) AS n FROM webhook_deliveries WHERE claimed_until IS NOT NULL'))[0]!.n);
        // The outage: attempts fail; the server dies (between delivery runs, or in the middle of one).
        for (let k = 0; k < KILLS; k++) {
          const inFlight = advance(600).catch(() => null);
          if (MID_DELIVERY) await sleep(10 + random.int(200));
          else {
            const answered = await inFlight;
            assert.equal(answered?.status, 200, answered?.text);
            assert.equal(await leased(), 0, 'a run that answered leaves nothing leased');
          }
          await server.kill9();
          await inFlight;
          await server.restart();
          if (k === 0) down = false; // back up after the first crash: the next runs deliver while being killed
        }
        await server.stop();
        await server.restart();
        down = false;
        const drainUntil = Date.now() + DRAIN_MS;
        for (let i = 0; Date.now() < drainUntil; i++) {
          if (i > 0) await sleep(2_000);
          const r = await advance(3600);
          assert.equal(r.status, 200, r.text);
          const pending = await send(server.url, {
            method: 'GET',
            path: `/v1/webhooks/${webhookId}/deliveries?limit=100`,
            auth: co.auth,
          });
          if (pending.json.data.every((d: { status: string }) => d.status === 'delivered') && !pending.json.has_more)
            break;
        }
        const rows = await db.sql(
          'SELECT callback_id, status, attempts, next_attempt_at, claimed_until, last_error ' +
            'FROM webhook_deliveries WHERE webhook_id = ?',
          [webhookId],
        );
        assert.equal(rows.length, NOTIFICATIONS, 'one notification per balance change');
        const delivered = rx.delivered();
        const lost = rows.filter((r) => !delivered.has(String(r.callback_id)) || r.status !== 'delivered');
        assert.deepEqual(lost, [], 'notifications never delivered');
        const unknown = [...new Set(rx.requests.map((r) => r.id))].filter(
          (id) => !rows.some((r) => r.callback_id === id),
        );
        assert.deepEqual(unknown, [], 'webhook-ids the database does not know');
        const changed: string[] = [];
        for (const id of new Set(rx.requests.map((r) => r.id))) {
          const all = rx.requests.filter((r) => r.id === id);
          if (!all.every((r) => r.body === all[0]!.body)) changed.push(id);
          for (const r of all) assert.equal(verifySignature(secret, r).callback_id, id, 'signed, same id');
        }
        assert.deepEqual(changed, [], 'a body changed between attempts');
        assert.deepEqual(await judge(db), [], 'ledger audit');
        const twice = [...delivered.values()].filter((oks) => oks.length > 1).length;
        report(t, `webhooks-${dialect}`, {
          seed: s,
          notifications: NOTIFICATIONS,
          kills: KILLS,
          mid_delivery: MID_DELIVERY,
          attempts: rx.requests.length,
          delivered: delivered.size,
          delivered_more_than_once: twice,
          lost: lost.length,
        });
      } finally {
        await server.kill9();
        await rx.close();
        await db.drop();
      }
    });
  });
}
