// Guarantee: every method of the TypeScript client (sdk/typescript) does what its route does on the real server, on
// SQLite and PostgreSQL: answers come back on the wire's field names, lists page across pages with `for await`, a
// refusal is a BillingError with the server's status, type, code, param and request id (400 and 402 among them), and
// `webhooks.verify` accepts a delivery the server really sent and refuses it changed, under another secret, or late.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import {
  Billing,
  BillingError,
  type BillingEvent,
  type Transaction,
  WebhookVerificationError,
} from '../../sdk/typescript/src/index.js';
import { HTTP_DIALECTS, type Harness, signUpCompany, startHarness } from '../support/harness.js';
import { type Receiver, runJobs, startReceiver } from '../support/webhooks.js';
import { until } from '../support/wait.js';

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

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

for (const dialect of HTTP_DIALECTS) {
  describe(`the TypeScript client against the real server (${dialect})`, () => {
    let h: Harness;
    let rx: Receiver;
    let billing: Billing;
    let accountId = '';
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

    test('accounts: create, retrieve, update, list', async () => {
      const created = await billing.accounts.create({ name: 'Bob', email: 'bob@example.com', metadata: { n: 1 } });
      assert.match(created.account_id, /^a_/);
      assert.deepEqual(
        [created.name, created.email, created.metadata, created.balances],
        ['Bob', 'bob@example.com', { n: 1 }, []],
      );
      accountId = created.account_id;
      assert.deepEqual(await billing.accounts.retrieve(accountId), created);
      const updated = await billing.accounts.update(accountId, { name: 'Robert' });
      assert.equal(updated.name, 'Robert');
      assert.equal(updated.email, 'bob@example.com', 'a field left out keeps its value');
      const first = await billing.accounts.list({ q: 'Robert' });
      assert.deepEqual(
        first.data.map((a) => a.account_id),
        [accountId],
      );
      assert.equal(first.has_more, false);
      assert.equal(first.next_cursor, null);
    });

    test('balances: create, retrieve, adjust, setAutoRefill', async () => {
      const created = await billing.balances.create(accountId, 'tokens', { amount: 1000 });
      assert.deepEqual(
        [created.denomination, created.amount, created.pending, created.available],
        ['tokens', 1000, 0, 1000],
      );
      const empty = await billing.balances.create(accountId, 'credits:gpu');
      assert.equal(empty.amount, 0, 'no body: no initial amount (and the denomination survives the path)');
      const adjusted = await billing.balances.adjust(accountId, 'tokens', { amount: -50, reason: 'goodwill back' });
      assert.equal(adjusted.amount, 950);
      const refill = await billing.balances.setAutoRefill(accountId, 'tokens', {
        threshold: 100,
        amount: 500,
        usd_charge: 500,
      });
      assert.deepEqual([refill.refill_threshold, refill.refill_amount, refill.refill_usd_amount], [100, 500, 500]);
      assert.deepEqual(await billing.balances.retrieve(accountId, 'tokens'), refill);
    });

    test('balances.setLimits: past a limit, a BillingError whose details say which and when it resets', async () => {
      const a = await billing.accounts.create({ name: 'Limited' });
      await billing.balances.create(a.account_id, 'tokens', { amount: 100 });
      const limited = await billing.balances.setLimits(a.account_id, 'tokens', { daily: 5 });
      assert.deepEqual(limited.limits, { daily: 5, monthly: null });
      await billing.events.ingest(a.account_id, [{ type: 'x', cost_override: { amount: 5, denomination: 'tokens' } }]);
      const err = await refusal(
        billing.events.ingest(a.account_id, [{ type: 'x', cost_override: { amount: 1, denomination: 'tokens' } }]),
      );
      assert.deepEqual([err.status, err.type], [402, 'spend_limit_reached']);
      const details = err.details as { window: string; limit: number; spend: number; resets_at: string };
      assert.deepEqual([details.window, details.limit, details.spend], ['day', 5, 5]);
      assert.ok(Date.parse(details.resets_at) > 0);
      const b = await billing.balances.retrieve(a.account_id, 'tokens');
      assert.deepEqual(
        [b.spend, b.limits],
        [
          { day: 5, month: 5 },
          { daily: 5, monthly: null },
        ],
      );
    });

    test('grants: create, list per balance and per company, retrieve, update, void', async () => {
      const a = await billing.accounts.create({ name: 'Grace' });
      await billing.balances.create(a.account_id, 'tokens', { amount: 100 });
      const expiresAt = new Date(
        Date.parse((await h.request('GET', '/v1/test_clock', { auth: co.auth })).body.data.now),
      );
      expiresAt.setUTCDate(expiresAt.getUTCDate() + 7);
      const promo = await billing.grants.create(a.account_id, 'tokens', {
        amount: 50,
        priority: 10,
        expires_at: expiresAt.toISOString(),
        name: 'Welcome',
      });
      assert.deepEqual(
        [promo.amount, promo.remaining, promo.status, promo.source, promo.name],
        [50, 50, 'active', 'grant', 'Welcome'],
      );
      const listed = [];
      for await (const g of billing.grants.listOfBalance(a.account_id, 'tokens', { limit: 1 })) listed.push(g);
      assert.deepEqual(
        listed.map((g) => [g.source, g.remaining]),
        [
          ['grant', 50],
          ['initial', 100],
        ],
        'drawing order: priority 10 before 50, one page at a time',
      );
      const soon = await billing.grants.list({ account_id: a.account_id, expires_before: '2100-01-01T00:00:00Z' });
      assert.deepEqual(
        soon.data.map((g) => g.grant_id),
        [promo.grant_id],
      );
      assert.deepEqual(await billing.grants.retrieve(promo.grant_id), promo);
      const paid = await billing.grants.create(a.account_id, 'tokens', {
        amount: 7,
        category: 'paid',
        cost_basis: '2',
      });
      const onlyPaid = await billing.grants.list({ account_id: a.account_id, category: 'paid' });
      assert.deepEqual(
        onlyPaid.data.map((g) => [g.grant_id, g.cost_basis]),
        [[paid.grant_id, '2']],
      );
      const changed = await billing.grants.update(promo.grant_id, { priority: 60, name: null });
      assert.deepEqual([changed.priority, changed.name], [60, null]);
      const voided = await billing.grants.void(promo.grant_id, { reason: 'withdrawn' });
      assert.equal(voided.status, 'voided');
      assert.equal((await billing.balances.retrieve(a.account_id, 'tokens')).amount, 107);
      await assert.rejects(billing.grants.update(promo.grant_id, { priority: 1 }), (err: unknown) => {
        assert.ok(err instanceof BillingError);
        assert.deepEqual([err.status, err.code], [409, 'grant_voided']);
        return true;
      });
    });

    test('prices: set (unit and graduated) and list', async () => {
      const price = await billing.prices.set('llm_call', { denomination: 'tokens', unit_amount: '0.5' });
      assert.deepEqual([price.type, price.denomination, price.unit_amount], ['llm_call', 'tokens', '0.5']);
      const tiers = [
        { up_to: 10, unit_amount: '1' },
        { up_to: null, unit_amount: '0.5' },
      ];
      const graduated = await billing.prices.set('storage', { denomination: 'tokens', model: 'graduated', tiers });
      assert.equal(graduated.model, 'graduated');
      assert.deepEqual(
        graduated.tiers?.map((t) => [t.up_to, t.unit_amount]),
        [
          [10, '1'],
          [null, '0.5'],
        ],
      );
      const page = await billing.prices.list();
      assert.deepEqual(
        page.data.map((p) => [p.type, p.model]),
        [
          ['llm_call', 'unit'],
          ['storage', 'graduated'],
        ],
      );
    });

    test('prices: the one in force, and every earlier one through the versions list', async () => {
      await billing.prices.set('versioned', { denomination: 'tokens', unit_amount: '1' });
      await billing.prices.set('versioned', { denomination: 'tokens', unit_amount: '2' });
      const now = await billing.prices.set('versioned', {
        denomination: 'tokens',
        model: 'package',
        package_size: 10,
        package_amount: '3',
      });
      assert.deepEqual(await billing.prices.retrieve('versioned'), now);
      assert.equal(now.version, 3);
      const versions: [number, string | null][] = [];
      for await (const v of billing.prices.versions('versioned', { limit: 1 }))
        versions.push([v.version, v.unit_amount]);
      assert.deepEqual(versions, [
        [2, '2'],
        [1, '1'],
      ]);
      await assert.rejects(billing.prices.retrieve('never-priced'), (err: unknown) => {
        assert.ok(err instanceof BillingError);
        assert.equal(err.status, 404);
        assert.equal(err.code, 'not_found');
        return true;
      });
    });

    test('check: what an ingest would cost and whether the account can afford it, written nowhere', async () => {
      const before = await billing.balances.retrieve(accountId, 'tokens');
      const answer = await billing.check(accountId, [
        { type: 'llm_call', quantity: 41 },
        { type: 'storage', quantity: 12 },
      ]);
      assert.equal(answer.allowed, true);
      assert.deepEqual(
        answer.events.map((e) => [e.index, e.cost.amount, e.cost.denomination]),
        [
          [0, 21, 'tokens'],
          [1, 11, 'tokens'],
        ],
        '41 × 0.5 rounded up; 10 × 1 + 2 × 0.5 on the graduated price',
      );
      assert.deepEqual(answer.balances, [
        { denomination: 'tokens', available: before.available, available_after: before.available - 32 },
      ]);
      const tooMuch = await billing.check(accountId, [
        { type: 'export', cost_override: { amount: before.available + 1, denomination: 'tokens' } },
      ]);
      assert.equal(tooMuch.allowed, false);
      assert.deepEqual(await billing.balances.retrieve(accountId, 'tokens'), before, 'nothing was written');
      const unpriced = await refusal(billing.check(accountId, [{ type: 'unpriced' }]));
      assert.deepEqual([unpriced.status, unpriced.code], [400, 'no_price_for_event_type']);
    });

    test('events: ingest, retrieve, settle, list; transactions and usage read them back', async () => {
      const yesterday = Math.floor(h.server.clock.now() / HOUR) * HOUR - 24 * HOUR;
      const answer = await billing.events.ingest(accountId, [
        { type: 'llm_call', quantity: 41, timestamp: iso(yesterday + 60_000) },
        { type: 'export', cost_override: { amount: 10, denomination: 'tokens' }, timestamp: iso(yesterday + 120_000) },
        {
          id: 'job-7',
          type: 'gpu',
          state: 'pending',
          cost_override: { amount: 100, denomination: 'tokens' },
          timestamp: iso(yesterday + 180_000),
        },
      ]);
      assert.equal(answer.events_submitted, 3);
      assert.equal(answer.event_ids[2], 'job-7');
      const balance = await billing.balances.retrieve(accountId, 'tokens');
      assert.deepEqual([balance.amount, balance.pending, balance.available], [950 - 21 - 10, 100, 950 - 31 - 100]);

      const held = await billing.events.retrieve('job-7');
      assert.deepEqual([held.state, held.cost], ['pending', { amount: 100, denomination: 'tokens' }]);
      const settled = await billing.events.settle('job-7', {
        state: 'complete',
        cost_override: { amount: 80, denomination: 'tokens' },
      });
      assert.deepEqual([settled.state, settled.cost.amount], ['complete', 80]);

      const listed: BillingEvent[] = [];
      for await (const e of billing.events.list({ account_id: accountId, limit: 2 })) listed.push(e);
      assert.deepEqual(
        listed.map((e) => e.event_id),
        [...answer.event_ids].reverse(),
        'newest timestamp first, across two pages',
      );

      const txs: Transaction[] = [];
      for await (const t of billing.transactions.list(accountId, { denomination: 'tokens' })) txs.push(t);
      assert.deepEqual(
        txs.map((t) => [t.kind, t.amount]),
        [
          ['usage', -80],
          ['usage', -10],
          ['usage', -21],
          ['adjustment', -50],
          ['grant', 1000],
        ],
      );
      assert.equal(txs[0]!.balance_after, 950 - 111);

      const window = { from: iso(yesterday), to: iso(yesterday + HOUR), window: 'all' };
      const company = await billing.usage.query({ ...window, group_by: 'type' });
      assert.deepEqual(
        company.data.map((g) => [g.type, g.events, g.quantity, g.cost]),
        [
          ['export', 1, '1', 10],
          ['gpu', 1, '1', 80],
          ['llm_call', 1, '41', 21],
        ],
      );
      const mine = await billing.usage.query({ ...window, account_id: accountId, type: 'llm_call' });
      assert.deepEqual(
        mine.data.map((g) => [g.type, g.denomination, g.cost]),
        [['llm_call', 'tokens', 21]],
      );
      const none = await refusal(billing.usage.query({ ...window, account_id: 'a_missing' }).then((p) => p));
      assert.deepEqual([none.status, none.code], [404, 'not_found'], 'with account_id: the account route');
    });

    test('a list of several pages: the promise is the first page, for await walks every item once', async () => {
      const made: string[] = [];
      for (let i = 0; i < 5; i++) made.push((await billing.accounts.create({ name: `page-${i}` })).account_id);
      const first = await billing.accounts.list({ limit: 2, q: 'page-' });
      assert.equal(first.data.length, 2);
      assert.equal(first.has_more, true);
      assert.equal(typeof first.next_cursor, 'string');
      const seen: string[] = [];
      for await (const a of billing.accounts.list({ limit: 2, q: 'page-' })) seen.push(a.account_id);
      assert.deepEqual(seen, [...made].reverse(), 'newest first, three pages, each account once');
    });

    test('a 400 and a 402 are BillingErrors with their codes, the field at fault and the request id', async () => {
      const bad = await refusal(billing.events.ingest(accountId, [{ type: 'unpriced', quantity: 1 }]));
      assert.ok(bad instanceof Error);
      assert.deepEqual(
        [bad.status, bad.type, bad.code, bad.param],
        [400, 'invalid_request', 'no_price_for_event_type', 'events[0]'],
      );
      assert.match(bad.message, /price/);
      assert.ok(bad.requestId, 'the request-id of the answer');

      await billing.balances.adjust(accountId, 'tokens', { amount: -10_000, reason: 'into debt' });
      const broke = await refusal(
        billing.events.ingest(accountId, [{ type: 'llm_call', quantity: 1 }], { gateOnBalance: true }),
      );
      assert.deepEqual([broke.status, broke.type, broke.code], [402, 'insufficient_balance', 'insufficient_balance']);
      const after = await billing.balances.retrieve(accountId, 'tokens');
      assert.equal(after.amount, 839 - 10_000, 'the refused request recorded nothing');
      await billing.balances.adjust(accountId, 'tokens', { amount: 10_000, reason: 'out of debt' });

      const missing = await refusal(billing.accounts.retrieve('a_does_not_exist'));
      assert.deepEqual([missing.status, missing.code], [404, 'not_found']);
    });

    test('webhooks: create, list, verify a real delivery (refused changed, re-keyed or late), delete', async () => {
      const hook = await billing.webhooks.create({ type: 'balance_change', url: rx.url });
      assert.match(hook.webhook_id, /^wh_/);
      assert.match(hook.secret, /^whsec_/);
      const listed = await billing.webhooks.list();
      assert.deepEqual(
        listed.data.map((w) => [w.webhook_id, w.type, w.url]),
        [[hook.webhook_id, 'balance_change', rx.url]],
      );
      assert.equal('secret' in listed.data[0]!, false, 'no secret in the list');

      await billing.balances.adjust(accountId, 'tokens', { amount: 7, reason: 'notify me' });
      await runJobs(h, co.auth); // the test clock delivers what is due (the harness runs no background workers)
      const delivery = await until('the balance_change delivery arrives', () =>
        rx.requests.find((r) => r.json?.account_id === accountId && r.json?.type === 'balance_change'),
      );
      const payload = billing.webhooks.verify(delivery.body, delivery.headers, hook.secret);
      assert.deepEqual(
        [payload.type, payload.account_id, payload.account_denomination, payload.company_id],
        ['balance_change', accountId, 'tokens', billing.companyId],
      );
      assert.equal(payload.callback_id, delivery.headers['webhook-id']);
      assert.equal(
        billing.webhooks.verify(
          new TextEncoder().encode(delivery.body),
          new Headers(delivery.headers as any),
          hook.secret,
        ).callback_id,
        payload.callback_id,
        'bytes and fetch Headers work too',
      );

      const changed = delivery.body.replace(
        /"account_balance":(-?\d+)/,
        (_, n) => `"account_balance":${Number(n) + 1}`,
      );
      assert.notEqual(changed, delivery.body);
      assert.throws(() => billing.webhooks.verify(changed, delivery.headers, hook.secret), WebhookVerificationError);
      const other = `whsec_${btoa('another secret, 24 bytes')}`;
      assert.throws(() => billing.webhooks.verify(delivery.body, delivery.headers, other), WebhookVerificationError);
      // Signed with the right secret, but ten minutes ago: refused for its age alone.
      const staleAt = new Date(Date.now() - 10 * 60_000);
      const stale = {
        ...delivery.headers,
        'webhook-timestamp': String(Math.floor(staleAt.getTime() / 1000)),
        'webhook-signature': new Webhook(hook.secret).sign(
          String(delivery.headers['webhook-id']),
          staleAt,
          delivery.body,
        ),
      };
      assert.throws(() => billing.webhooks.verify(delivery.body, stale, hook.secret), /too old/);

      assert.deepEqual(await billing.webhooks.delete(hook.webhook_id), { webhooks_deleted: hook.webhook_id });
      assert.deepEqual((await billing.webhooks.list()).data, []);
    });
  });
}
