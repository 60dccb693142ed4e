// Guarantee: the TypeScript client's alerts (sdk/typescript, `billing.alerts`) do what their routes do on the real
// server, on SQLite and PostgreSQL, with the types the compiler checks: create, list (every page with `for await`),
// listTriggered, retrieve and delete round-trip on the wire's field names; a rule the server refuses is a
// BillingError naming the field (400, `param: 'window'`); another company's alert is a 404; a verified
// `alert_triggered` delivery is told apart by `isAlertWebhook` and carries the alert's fields; and past a monthly
// spend limit an events call is a 402 `spend_limit_reached` BillingError whose `details` say which limit and when it
// resets, with the month's spend alert triggered at the limit and the refused request recorded nowhere.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import {
  type Alert,
  type AlertCreateParams,
  type AlertDeleted,
  type AlertWebhookPayload,
  Billing,
  BillingError,
  isAlertWebhook,
} from '../../sdk/typescript/src/index.js';
import { HTTP_DIALECTS, type Harness, signUpCompany, startHarness } from '../support/harness.js';
import { type Receiver, runJobs, startReceiver } from '../support/webhooks.js';
import { until } from '../support/wait.js';

/** The error a call rejects with (the test fails if it resolves). */
async function refusal(call: Promise<unknown>): Promise<BillingError> {
  try {
    await call;
  } catch (err) {
    assert.ok(err instanceof BillingError, `a BillingError, not ${String(err)}`);
    return err;
  }
  assert.fail('the call succeeded');
}

/** Every item of a list, through `for await` (every page). */
async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of items) out.push(x);
  return out;
}

/**
 * What the compiler must accept and refuse (each `@ts-expect-error` fails tsc if its line compiles). Never called,
 * hence the `_`: its lines would send requests. tsc checks it with the rest of the file (`tsc -p tsconfig.json`).
 */
function _alertTypes(billing: Billing, alert: Alert): void {
  const metric: 'available' | 'spend' = alert.metric;
  const window: 'day' | 'month' | null = alert.window;
  const status: 'ok' | 'triggered' = alert.status;
  const when: string | null = alert.triggered_at;
  void [metric, window, status, when];
  const body: AlertCreateParams = { denomination: 'tokens', metric: 'spend', threshold: 10, window: 'day' };
  const created: Promise<Alert> = billing.alerts.create('a_x', body, { idempotencyKey: 'alert-1' });
  const deleted: Promise<AlertDeleted> = billing.alerts.delete('al_x');
  const one: Promise<Alert> = billing.alerts.retrieve('al_x');
  const first: Promise<{ data: Alert[]; has_more: boolean; next_cursor: string | null }> = billing.alerts.list('a_x');
  const triggered: AsyncIterable<Alert> = billing.alerts.listTriggered({ limit: 10 });
  void [created, deleted, one, first, triggered];
  // @ts-expect-error the body is required
  billing.alerts.create('a_x');
  // @ts-expect-error threshold is required
  billing.alerts.create('a_x', { denomination: 'tokens', metric: 'available' });
  // @ts-expect-error an unknown field of the body
  billing.alerts.create('a_x', { ...body, limit: 3 });
  // @ts-expect-error list takes the account's id
  billing.alerts.list({ limit: 1 });
  // @ts-expect-error paging only: no filter by status
  billing.alerts.listTriggered({ status: 'triggered' });
}

for (const dialect of HTTP_DIALECTS) {
  describe(`the TypeScript client's alerts against the real server (${dialect})`, () => {
    let h: Harness;
    let rx: Receiver;
    let billing: Billing;
    let co: Awaited<ReturnType<typeof signUpCompany>>;
    before(async () => {
      h = await startHarness(dialect);
      rx = await startReceiver();
      co = await signUpCompany(h);
      billing = new Billing({ baseUrl: h.url, companyId: co.companyId, apiKey: co.apiKey });
    });
    after(async () => {
      await h.close();
      await rx.close();
    });
    afterEach(async () => h.audit());

    /** A new account with a balance of `amount` tokens. */
    async function account(amount: number): Promise<string> {
      const a = await billing.accounts.create({ name: 'Alerted' });
      await billing.balances.create(a.account_id, 'tokens', { amount });
      return a.account_id;
    }
    const use = (amount: number, type = 'call') => ({ type, cost_override: { amount, denomination: 'tokens' } });

    test('create, list (every page), listTriggered, retrieve, delete', async () => {
      const acc = await account(1000);
      const low = await billing.alerts.create(acc, { denomination: 'tokens', metric: 'available', threshold: 500 });
      assert.match(low.alert_id, /^al_/);
      assert.deepEqual(
        [low.account_id, low.denomination, low.metric, low.threshold, low.window, low.event_type, low.name],
        [acc, 'tokens', 'available', 500, null, null, null],
      );
      assert.deepEqual([low.status, low.value, low.triggered_at], ['ok', 1000, null]);
      const burn = await billing.alerts.create(acc, {
        denomination: 'tokens',
        metric: 'spend',
        window: 'day',
        threshold: 5000,
        event_type: 'gpt',
        name: 'daily burn',
      });
      assert.deepEqual(
        [burn.metric, burn.window, burn.event_type, burn.name, burn.status, burn.value],
        ['spend', 'day', 'gpt', 'daily burn', 'ok', 0],
      );
      const never = await billing.alerts.create(acc, { denomination: 'tokens', metric: 'available', threshold: -1 });

      const first = await billing.alerts.list(acc, { limit: 2 });
      assert.deepEqual(
        first.data.map((a) => a.alert_id),
        [never.alert_id, burn.alert_id],
        'newest first',
      );
      assert.equal(first.has_more, true);
      assert.equal(typeof first.next_cursor, 'string');
      const listed = await all(billing.alerts.list(acc, { limit: 1 }));
      assert.deepEqual(
        listed.map((a) => a.alert_id),
        [never.alert_id, burn.alert_id, low.alert_id],
        'three pages of one, each alert once',
      );
      assert.deepEqual(listed[2], low, 'a listed alert is the created one while nothing changed');

      await billing.events.ingest(acc, [use(300), use(300, 'gpt')]);
      const triggered = await billing.alerts.retrieve(low.alert_id);
      assert.deepEqual([triggered.status, triggered.value], ['triggered', 400]);
      assert.ok(triggered.triggered_at !== null && Date.parse(triggered.triggered_at) > 0);
      assert.deepEqual(
        [(await billing.alerts.retrieve(burn.alert_id)).value, (await billing.alerts.retrieve(never.alert_id)).status],
        [300, 'ok'],
        "the spend alert counts only gpt's 300",
      );
      const company = await all(billing.alerts.listTriggered({ limit: 1 }));
      const mine = company.filter((a) => a.account_id === acc);
      assert.deepEqual(
        mine.map((a) => a.alert_id),
        [low.alert_id],
        'only the triggered one',
      );
      assert.deepEqual(mine[0], triggered);

      const deleted = await billing.alerts.delete(low.alert_id, { idempotencyKey: `delete-${low.alert_id}` });
      assert.deepEqual(deleted, { alerts_deleted: low.alert_id });
      const gone = await refusal(billing.alerts.retrieve(low.alert_id));
      assert.deepEqual([gone.status, gone.type, gone.code], [404, 'not_found', 'not_found']);
      const again = await refusal(billing.alerts.delete(low.alert_id));
      assert.equal(again.status, 404, 'a new call (a new key) on a deleted alert');
      assert.deepEqual(
        (await all(billing.alerts.list(acc))).map((a) => a.alert_id),
        [never.alert_id, burn.alert_id],
      );
      assert.ok(!(await all(billing.alerts.listTriggered())).some((a) => a.alert_id === low.alert_id));
      assert.throws(() => billing.alerts.retrieve(''), TypeError, 'an empty id is refused before any request');
    });

    test('a spend alert without window: a 400 BillingError naming the field; nothing created', async () => {
      const acc = await account(100);
      const err = await refusal(billing.alerts.create(acc, { denomination: 'tokens', metric: 'spend', threshold: 10 }));
      assert.ok(err instanceof Error);
      assert.deepEqual([err.status, err.type, err.param], [400, 'invalid_request', 'window']);
      assert.match(err.message, /window/);
      assert.ok(err.requestId, 'the request-id of the answer');
      const week = await refusal(
        billing.alerts.create(acc, { denomination: 'tokens', metric: 'spend', threshold: 10, window: 'week' }),
      );
      assert.deepEqual([week.status, week.param], [400, 'window']);
      const noBalance = await refusal(
        billing.alerts.create(acc, { denomination: 'credits', metric: 'available', threshold: 1 }),
      );
      assert.deepEqual([noBalance.status, noBalance.code], [404, 'not_found'], 'a balance the account lacks');
      assert.deepEqual((await billing.alerts.list(acc)).data, []);
    });

    test("another company's alert and account: 404 on every call; its triggered list is its own", async () => {
      const acc = await account(100);
      const mine = await billing.alerts.create(acc, { denomination: 'tokens', metric: 'available', threshold: 1000 });
      assert.equal(mine.status, 'triggered', 'created already triggered (100 < 1000)');
      const other = await signUpCompany(h, 'Other');
      const them = new Billing({ baseUrl: h.url, companyId: other.companyId, apiKey: other.apiKey });
      const calls: (() => Promise<unknown>)[] = [
        () => them.alerts.retrieve(mine.alert_id),
        () => them.alerts.delete(mine.alert_id),
        async () => them.alerts.list(acc),
        () => them.alerts.create(acc, { denomination: 'tokens', metric: 'available', threshold: 1 }),
      ];
      for (const call of calls) {
        const err = await refusal(call());
        assert.deepEqual([err.status, err.type, err.code], [404, 'not_found', 'not_found']);
      }
      assert.deepEqual(await all(them.alerts.listTriggered()), []);
      assert.deepEqual(await billing.alerts.retrieve(mine.alert_id), mine, 'still there, unchanged');
    });

    test('an alert_triggered delivery, verified, is told apart by isAlertWebhook and has the alert', async () => {
      const hook = await billing.webhooks.create({ type: 'alert_triggered', url: rx.url });
      const acc = await account(100);
      const a = await billing.alerts.create(acc, {
        denomination: 'tokens',
        metric: 'spend',
        window: 'month',
        threshold: 30,
        name: 'monthly',
      });
      await billing.events.ingest(acc, [use(20), use(15)]);
      await runJobs(h, co.auth); // the test clock delivers what is due (the harness runs no background workers)
      const delivery = await until('the alert_triggered delivery arrives', () =>
        rx.requests.find((r) => r.json?.alert_id === a.alert_id),
      );
      const payload = billing.webhooks.verify(delivery.body, delivery.headers, hook.secret);
      assert.ok(isAlertWebhook(payload));
      const p: AlertWebhookPayload = payload;
      assert.deepEqual(
        [p.type, p.account_id, p.alert_id, p.name, p.denomination, p.metric, p.threshold, p.window, p.event_type],
        ['alert_triggered', acc, a.alert_id, 'monthly', 'tokens', 'spend', 30, 'month', null],
      );
      assert.equal(p.value, 35, 'the metric after the change');
      const now = new Date(h.server.clock.now());
      assert.equal(p.window_start, new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString());
      assert.deepEqual([p.account_balance, p.available], [65, 65]);
      assert.equal(isAlertWebhook({ ...p, type: 'balance_change' }), false);
      await billing.webhooks.delete(hook.webhook_id);
    });

    test('past a monthly limit: a 402 spend_limit_reached whose details say which and when it resets', async () => {
      const acc = await account(100);
      const limited = await billing.balances.setLimits(acc, 'tokens', { monthly: 10 });
      assert.deepEqual(limited.limits, { daily: null, monthly: 10 });
      const atLimit = await billing.alerts.create(acc, {
        denomination: 'tokens',
        metric: 'spend',
        window: 'month',
        threshold: 10,
      });
      await billing.events.ingest(acc, [use(4), use(6)]);
      const reached = await billing.alerts.retrieve(atLimit.alert_id);
      assert.deepEqual([reached.status, reached.value], ['triggered', 10], 'the alert fires at the limit');

      const err = await refusal(billing.events.ingest(acc, [use(1)]));
      assert.deepEqual([err.status, err.type, err.code], [402, 'spend_limit_reached', 'spend_limit_reached']);
      const details = err.details as { denomination: string; window: string; limit: number; spend: number };
      assert.deepEqual(
        [details.denomination, details.window, details.limit, details.spend],
        ['tokens', 'month', 10, 10],
        'spend before the request',
      );
      const now = new Date(h.server.clock.now());
      const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
      assert.equal(Date.parse((err.details as { resets_at: string }).resets_at), nextMonth);

      const check = await billing.check(acc, [use(1)]);
      assert.equal(check.allowed, false);
      assert.equal(check.reason, 'spend_limit_reached');
      const b = await billing.balances.retrieve(acc, 'tokens');
      assert.deepEqual([b.amount, b.spend.month], [90, 10], 'the refused request recorded nothing');
      assert.equal((await billing.alerts.retrieve(atLimit.alert_id)).value, 10);
    });
  });
}
