// Guarantees (contract "Spend limits and alerts": alerts), over HTTP on SQLite and PostgreSQL:
// - an `available` alert is triggered while available is below its threshold and resolved when it is back at or
//   above it: one alert_triggered and one alert_resolved notification, each written with the change, carrying the
//   alert's fields, the value after the change and window_start null; an alert created already triggered notifies
//   at once;
// - a request crossing three alerts writes three notifications; a request that crosses and comes back (a grant
//   expiry it applies first, then its own credit) writes none;
// - a spend alert (of all usage, or of one event type) is triggered when its window's spend reaches the
//   threshold, stays triggered whatever is given back, reads ok from the next window's first instant, and is
//   resolved once (value 0, the new window's start) by the job or by the next change, never by both; an event-type
//   alert created mid-window starts from that type's usage already recorded;
// - create 201, list, get, delete ({alerts_deleted}); bad rules and the 51st alert are 400 naming the field,
//   another company's alert or account 404; the ledger audit is clean after every test.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import {
  assertError,
  createAccountWithBalance,
  HTTP_DIALECTS,
  signUpCompany,
  startHarness,
  type Harness,
} from '../support/harness.js';
import { createWebhook, notificationsOf, runJobs } from '../support/webhooks.js';

type Auth = [string, string];

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const utcDay = (ms: number) => Math.floor(ms / DAY) * DAY;

for (const dialect of HTTP_DIALECTS) {
  describe(`alerts (${dialect})`, () => {
    let h: Harness;
    let co: { companyId: string; auth: Auth };
    let hooks: { triggered: string; resolved: string };
    before(async () => {
      h = await startHarness(dialect);
      co = await signUpCompany(h);
      hooks = {
        triggered: (await createWebhook(h, co.auth, { type: 'alert_triggered', url: 'https://example.com/a' }))
          .webhook_id,
        resolved: (await createWebhook(h, co.auth, { type: 'alert_resolved', url: 'https://example.com/a' }))
          .webhook_id,
      };
    });
    after(async () => h.close());
    afterEach(async () => h.audit());

    const call = (method: string, path: string, body?: unknown, auth: Auth = co.auth) =>
      h.request(method, path, body === undefined ? { auth } : { auth, body });
    async function now(): Promise<number> {
      const r = await call('GET', '/v1/test_clock');
      assert.equal(r.status, 200, r.text);
      return Date.parse(r.body.data.now);
    }
    /** Moves the clock without running any job. */
    function jump(toMs: number): void {
      assert.ok((h.server.clock as unknown as { advanceTo(ms: number): boolean }).advanceTo(toMs));
    }
    /** A new account with a tokens balance, the clock two hours into a new UTC day (never a month's first). */
    async function fresh(amount = 1000): Promise<string> {
      const target = utcDay(await now()) + DAY + 2 * HOUR;
      jump(new Date(target).getUTCDate() === 1 ? target + DAY : target);
      return createAccountWithBalance(h, co, 'tokens', amount);
    }
    async function alert(acc: string, body: object) {
      const r = await call('POST', `/v1/accounts/${acc}/alerts`, { denomination: 'tokens', ...body });
      assert.equal(r.status, 201, r.text);
      return r.body.data;
    }
    const getAlert = async (id: string) => {
      const r = await call('GET', `/v1/alerts/${id}`);
      assert.equal(r.status, 200, r.text);
      return r.body.data;
    };
    const use = (amount: number, type = 'call', state?: 'pending') => ({
      type,
      cost_override: { amount, denomination: 'tokens' },
      ...(state ? { state } : {}),
    });
    /** One second on, so that what each request notifies has its own created_at. */
    const tick = async () => jump((await now()) + 1000);
    async function events(acc: string, list: object[]): Promise<string[]> {
      await tick();
      const r = await call('POST', `/v1/accounts/${acc}/events`, { events: list });
      assert.equal(r.status, 200, r.text);
      return r.body.event_ids;
    }
    async function adjust(acc: string, amount: number) {
      await tick();
      const r = await call('POST', `/v1/accounts/${acc}/balance/tokens/adjustments`, { amount });
      assert.equal(r.status, 200, r.text);
    }
    /** The alert notifications written about one alert, oldest first. */
    async function notes(alertId: string) {
      const all = [
        ...(await notificationsOf(h, co.auth, hooks.triggered)),
        ...(await notificationsOf(h, co.auth, hooks.resolved)),
      ];
      return all
        .filter((n) => n.alert_id === alertId)
        .sort(
          (a, b) => String(a.created_at).localeCompare(String(b.created_at)) || (a.type === 'alert_resolved' ? -1 : 1),
        );
    }

    test('an available alert: one notification down, one back up; created triggered notifies at once', async () => {
      const acc = await fresh(1000);
      const a = await alert(acc, { metric: 'available', threshold: 500, name: 'low' });
      assert.match(a.alert_id, /^al_/);
      assert.equal(a.status, 'ok');
      assert.equal(a.value, 1000);
      assert.equal(a.window, null);
      assert.equal(a.event_type, null);
      assert.equal(a.triggered_at, null);
      assert.deepEqual(await notes(a.alert_id), []);

      await events(acc, [use(300), use(300)]);
      let n = await notes(a.alert_id);
      assert.equal(n.length, 1);
      assert.equal(n[0]!.type, 'alert_triggered');
      assert.equal(typeof n[0]!.callback_id, 'string');
      assert.equal(n[0]!.account_id, acc);
      assert.equal(n[0]!.metric, 'available');
      assert.equal(n[0]!.threshold, 500);
      assert.equal(n[0]!.value, 400);
      assert.equal(n[0]!.window_start, null);
      assert.equal(n[0]!.name, 'low');
      const got = await getAlert(a.alert_id);
      assert.equal(got.status, 'triggered');
      assert.equal(got.value, 400);
      assert.notEqual(got.triggered_at, null);

      await events(acc, [use(10)]);
      assert.equal((await notes(a.alert_id)).length, 1, 'still below: nothing more');
      await adjust(acc, 200);
      n = await notes(a.alert_id);
      assert.deepEqual(
        n.map((x) => [x.type, x.value]),
        [
          ['alert_triggered', 400],
          ['alert_resolved', 590],
        ],
      );
      assert.equal((await getAlert(a.alert_id)).status, 'ok');

      const already = await alert(acc, { metric: 'available', threshold: 1000 });
      assert.equal(already.status, 'triggered');
      assert.equal(already.value, 590);
      n = await notes(already.alert_id);
      assert.equal(n.length, 1);
      assert.equal(n[0]!.type, 'alert_triggered');
      assert.equal(n[0]!.value, 590);
    });

    test('one request crossing three alerts writes three notifications', async () => {
      const acc = await fresh(1000);
      const ids = [
        (await alert(acc, { metric: 'available', threshold: 900 })).alert_id,
        (await alert(acc, { metric: 'available', threshold: 800 })).alert_id,
        (await alert(acc, { metric: 'spend', window: 'day', threshold: 250 })).alert_id,
      ];
      await events(acc, [use(100), use(150)]);
      for (const id of ids) {
        const n = await notes(id);
        assert.equal(n.length, 1, id);
        assert.equal(n[0]!.type, 'alert_triggered');
      }
      const spendNote = (await notes(ids[2]!))[0]!;
      assert.equal(spendNote.value, 250);
      assert.equal(spendNote.window_start, new Date(utcDay(await now())).toISOString());
    });

    test('a request that crosses and comes back writes nothing; one that stays across writes one', async () => {
      const acc = await fresh(100);
      const t0 = await now();
      const g = await call('POST', `/v1/accounts/${acc}/balance/tokens/grants`, {
        amount: 1000,
        expires_at: new Date(t0 + HOUR).toISOString(),
      });
      assert.equal(g.status, 201, g.text);
      const a = await alert(acc, { metric: 'available', threshold: 500 });
      assert.equal(a.status, 'ok');
      jump(t0 + 2 * HOUR);
      // The read sees the expiry before anything wrote it.
      assert.equal((await getAlert(a.alert_id)).status, 'triggered');
      // One request: the expiry it applies first takes available to 100, its own credit back to 600.
      await adjust(acc, 500);
      assert.deepEqual(await notes(a.alert_id), []);
      assert.equal((await getAlert(a.alert_id)).status, 'ok');

      const g2 = await call('POST', `/v1/accounts/${acc}/balance/tokens/grants`, {
        amount: 1000,
        expires_at: new Date(t0 + 3 * HOUR).toISOString(),
      });
      assert.equal(g2.status, 201, g2.text);
      jump(t0 + 4 * HOUR);
      // The expiry takes available from 1600 to 600, the debit to 400: across, once.
      await adjust(acc, -200);
      const n = await notes(a.alert_id);
      assert.deepEqual(
        n.map((x) => [x.type, x.value]),
        [['alert_triggered', 400]],
      );
    });

    test('spend alerts of all usage and of one type: triggered once, kept, resolved once next window', async () => {
      const acc = await fresh(10_000);
      const gpt = await alert(acc, { metric: 'spend', window: 'day', threshold: 30, event_type: 'gpt' });
      const all = await alert(acc, { metric: 'spend', window: 'month', threshold: 100 });
      await events(acc, [use(20, 'gpt'), use(50, 'other')]);
      assert.equal((await getAlert(gpt.alert_id)).value, 20);
      assert.equal((await getAlert(all.alert_id)).value, 70);
      const [held] = await events(acc, [use(15, 'gpt', 'pending')]);
      let g = await getAlert(gpt.alert_id);
      assert.equal(g.status, 'triggered');
      assert.equal(g.value, 35);
      // Given back below the threshold: still triggered for the rest of the window.
      const s = await call('PUT', `/v1/events/${held}`, { state: 'cancelled' });
      assert.equal(s.status, 200, s.text);
      g = await getAlert(gpt.alert_id);
      assert.equal(g.status, 'triggered');
      assert.equal(g.value, 20);
      await events(acc, [use(40, 'other')]);
      assert.equal((await getAlert(all.alert_id)).status, 'triggered');
      assert.equal((await notes(gpt.alert_id)).length, 1);

      // Created mid-window: the type's usage already recorded counts.
      const late = await alert(acc, { metric: 'spend', window: 'day', threshold: 20, event_type: 'gpt' });
      assert.equal(late.status, 'triggered');
      assert.equal(late.value, 20);

      // The next day: read ok at once, nothing written until the job runs; then one alert_resolved, once.
      const nextDay = utcDay(await now()) + DAY;
      jump(nextDay + 60_000);
      g = await getAlert(gpt.alert_id);
      assert.equal(g.status, 'ok');
      assert.equal(g.value, 0);
      assert.equal((await notes(gpt.alert_id)).length, 1);
      await runJobs(h, co.auth);
      await runJobs(h, co.auth);
      const n = await notes(gpt.alert_id);
      assert.deepEqual(
        n.map((x) => [x.type, x.value, x.window_start]),
        [
          ['alert_triggered', 35, new Date(nextDay - DAY).toISOString()],
          ['alert_resolved', 0, new Date(nextDay).toISOString()],
        ],
      );
      assert.equal((await notes(late.alert_id)).filter((x) => x.type === 'alert_resolved').length, 1);
      // The month's alert stays triggered (same month unless the day was its last).
      const monthChanged = new Date(nextDay).getUTCDate() === 1;
      assert.equal((await getAlert(all.alert_id)).status, monthChanged ? 'ok' : 'triggered');
      await events(acc, [use(5, 'gpt')]);
      assert.equal((await notes(gpt.alert_id)).length, 2, 'a change after the job writes nothing more');
    });

    test('a spend alert resolved by the next change, not the job; triggered again in the new window', async () => {
      const acc = await fresh(10_000);
      const a = await alert(acc, { metric: 'spend', window: 'day', threshold: 10 });
      await events(acc, [use(12)]);
      const nextDay = utcDay(await now()) + DAY;
      jump(nextDay + 60_000);
      await events(acc, [use(11)]);
      await runJobs(h, co.auth);
      const n = await notes(a.alert_id);
      assert.deepEqual(
        n.map((x) => [x.type, x.value, x.window_start]),
        [
          ['alert_triggered', 12, new Date(nextDay - DAY).toISOString()],
          ['alert_resolved', 0, new Date(nextDay).toISOString()],
          ['alert_triggered', 11, new Date(nextDay).toISOString()],
        ],
      );
      assert.equal((await getAlert(a.alert_id)).status, 'triggered');
    });

    test('list, the company’s triggered alerts, delete; bad rules and the 51st are 400; isolation', async () => {
      const acc = await fresh(1000);
      const a = await alert(acc, { metric: 'available', threshold: 2000 });
      const b = await alert(acc, { metric: 'spend', window: 'month', threshold: 5 });
      const list = await call('GET', `/v1/accounts/${acc}/alerts`);
      assert.equal(list.status, 200, list.text);
      assert.deepEqual(
        list.body.data.map((x: { alert_id: string }) => x.alert_id),
        [b.alert_id, a.alert_id],
      );
      const triggered = await call('GET', '/v1/alerts');
      assert.equal(triggered.status, 200, triggered.text);
      const ids = triggered.body.data.map((x: { alert_id: string }) => x.alert_id);
      assert.ok(ids.includes(a.alert_id));
      assert.ok(!ids.includes(b.alert_id));

      const bad: [object, string][] = [
        [{ metric: 'balance', threshold: 1 }, 'metric'],
        [{ metric: 'spend', threshold: 1 }, 'window'],
        [{ metric: 'spend', threshold: 1, window: 'week' }, 'window'],
        [{ metric: 'spend', threshold: 0, window: 'day' }, 'threshold'],
        [{ metric: 'available', threshold: 1, window: 'day' }, 'window'],
        [{ metric: 'available', threshold: 1, event_type: 'x' }, 'event_type'],
        [{ metric: 'spend', threshold: 1, window: 'day', event_type: '' }, 'event_type'],
        [{ metric: 'available', threshold: 1.5 }, 'threshold'],
        [{ metric: 'available' }, 'threshold'],
      ];
      for (const [body, param] of bad) {
        const r = await call('POST', `/v1/accounts/${acc}/alerts`, { denomination: 'tokens', ...body });
        assertError(r, 400, 'invalid_request');
        assert.equal(r.body.error.param, param, r.text);
      }
      const none = await call('POST', `/v1/accounts/${acc}/alerts`, {
        denomination: 'credits',
        metric: 'available',
        threshold: 1,
      });
      assertError(none, 404, 'not_found');

      for (let i = 2; i < 50; i++) await alert(acc, { metric: 'available', threshold: -i });
      const fiftyFirst = await call('POST', `/v1/accounts/${acc}/alerts`, {
        denomination: 'tokens',
        metric: 'available',
        threshold: 1,
      });
      assertError(fiftyFirst, 400, 'invalid_request');
      assert.equal(fiftyFirst.body.error.code, 'too_many_alerts');
      assert.equal((await call('GET', `/v1/accounts/${acc}/alerts?limit=100`)).body.data.length, 50);

      const other = await signUpCompany(h, 'Other');
      assertError(await call('GET', `/v1/alerts/${a.alert_id}`, undefined, other.auth), 404, 'not_found');
      assertError(await call('DELETE', `/v1/alerts/${a.alert_id}`, undefined, other.auth), 404, 'not_found');
      assertError(await call('GET', `/v1/accounts/${acc}/alerts`, undefined, other.auth), 404, 'not_found');
      assertError(
        await call(
          'POST',
          `/v1/accounts/${acc}/alerts`,
          { denomination: 'tokens', metric: 'available', threshold: 1 },
          other.auth,
        ),
        404,
        'not_found',
      );
      assert.equal((await call('GET', '/v1/alerts', undefined, other.auth)).body.data.length, 0);

      const del = await call('DELETE', `/v1/alerts/${a.alert_id}`);
      assert.equal(del.status, 200, del.text);
      assert.deepEqual(del.body, { alerts_deleted: a.alert_id });
      assertError(await call('GET', `/v1/alerts/${a.alert_id}`), 404, 'not_found');
      assertError(await call('DELETE', `/v1/alerts/${a.alert_id}`), 404, 'not_found');
      // Room for one more again.
      await alert(acc, { metric: 'available', threshold: 1 });
    });
  });
}
