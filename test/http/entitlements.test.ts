// Guarantees (contract "Features and entitlements"), over HTTP on SQLite and PostgreSQL:
// - features of each kind are created, read, listed and changed; a kind never changes (409); one in use by a plan or
//   an override is not deleted (409);
// - an account on a plan has the plan's features (a config feature with the plan's value); an override grants or
//   takes away a feature, with its own value, and ends exactly at its expires_at with no job run (the read sees the
//   plan's answer), its end notified once by the job; a plan's list replaced applies to accounts already on it at
//   once, notified once per feature changed;
// - a metered feature's check follows the balance (insufficient_balance) and a spend limit (spend_limit_reached)
//   and answers the balance; with gate_on_balance an event of a metered feature the account is not entitled to is
//   refused whole (403 not_entitled naming the index), without it nothing is refused;
// - an unknown feature is 404 `feature`, an unknown account 404 `account_id`; bad input 400 naming the field;
//   another company sees nothing; the ledger audit is clean after every test;
// - checks read together (the server's group read) are answered each as it would be alone.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { balanceEffects } from '../../src/compose.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { checkEntitlementGroup } from '../../src/operations/features.js';
import { assertError, HTTP_DIALECTS, signUpCompany, startHarness, type Harness } from '../support/harness.js';
import { createWebhook, notificationsOf, runJobs } from '../support/webhooks.js';

type Auth = [string, string];
const HOUR = 3_600_000;

for (const dialect of HTTP_DIALECTS) {
  describe(`features and entitlements (${dialect})`, () => {
    let h: Harness;
    let co: { companyId: string; auth: Auth };
    let hook: string;
    let planId: string;
    before(async () => {
      h = await startHarness(dialect);
      co = await signUpCompany(h);
      hook = (await createWebhook(h, co.auth, { type: 'entitlements_change', url: 'https://example.com/e' }))
        .webhook_id;
      for (const [key, body] of [
        ['sso', { kind: 'boolean', name: 'SSO' }],
        ['seats', { kind: 'config' }],
        ['gpt4', { kind: 'metered', event_type: 'gpt4_tokens' }],
        ['beta', { kind: 'boolean' }],
      ] as const) {
        const r = await call('PUT', `/v1/features/${key}`, body);
        assert.equal(r.status, 200, r.text);
      }
      const p = await call('POST', `/v1/companies/${co.companyId}/plan`, {
        name: 'Pro',
        charge_amount: 0,
        balances: [{ denomination: 'tokens', amount: '1000', overage_charge_amount: 0 }],
        features: [{ feature: 'sso' }, { feature: 'seats', value: { max_seats: 5 } }, { feature: 'gpt4' }],
      });
      assert.equal(p.status, 200, p.text);
      planId = p.body.data.plan_id;
      assert.deepEqual(p.body.data.features, [
        { feature: 'sso', value: null },
        { feature: 'seats', value: { max_seats: 5 } },
        { feature: 'gpt4', value: null },
      ]);
    });
    after(async () => h.close());
    afterEach(async () => h.audit());

    function call(method: string, path: string, body?: unknown, auth: Auth = co.auth) {
      return h.request(method, path, body === undefined ? { auth } : { auth, body });
    }
    async function now(): Promise<number> {
      return Date.parse((await call('GET', '/v1/test_clock')).body.data.now);
    }
    function jump(toMs: number): void {
      assert.ok((h.server.clock as unknown as { advanceTo(ms: number): boolean }).advanceTo(toMs));
    }
    async function account(plan: boolean): Promise<string> {
      const r = await call('POST', `/v1/companies/${co.companyId}/accounts`, {
        name: 'Ann',
        ...(plan ? { plan_id: planId } : {}),
      });
      assert.equal(r.status, 200, r.text);
      return r.body.data.account_id;
    }
    async function check(acc: string, key: string, query = '') {
      const r = await call('GET', `/v1/accounts/${acc}/entitlements/${key}${query}`);
      assert.equal(r.status, 200, r.text);
      return r.body.data;
    }
    async function list(acc: string) {
      const r = await call('GET', `/v1/accounts/${acc}/entitlements`);
      assert.equal(r.status, 200, r.text);
      return Object.fromEntries(r.body.data.map((e: { feature: string }) => [e.feature, e]));
    }
    const notes = async () => notificationsOf(h, co.auth, hook);

    test('features: each kind, read, list, changed; the kind never changes; one in use is not deleted', async () => {
      const g = await call('GET', '/v1/features/gpt4');
      assert.equal(g.status, 200, g.text);
      assert.equal(g.body.data.kind, 'metered');
      assert.equal(g.body.data.event_type, 'gpt4_tokens');
      const l = await call('GET', '/v1/features?limit=2');
      assert.deepEqual(
        l.body.data.map((f: { key: string }) => f.key),
        ['beta', 'gpt4'],
      );
      assert.equal(l.body.has_more, true);
      const renamed = await call('PUT', '/v1/features/beta', { kind: 'boolean', name: 'Beta programme' });
      assert.equal(renamed.status, 200, renamed.text);
      assert.equal(renamed.body.data.name, 'Beta programme');
      const kind = await call('PUT', '/v1/features/beta', { kind: 'config' });
      assertError(kind, 409, 'conflict');
      assert.equal(kind.body.error.code, 'feature_kind_cannot_change');
      const inUse = await call('DELETE', '/v1/features/sso');
      assertError(inUse, 409, 'conflict');
      assert.equal(inUse.body.error.code, 'feature_in_use');
      assert.equal((await call('PUT', '/v1/features/temp', { kind: 'boolean' })).status, 200);
      const del = await call('DELETE', '/v1/features/temp');
      assert.equal(del.status, 200, del.text);
      assert.deepEqual(del.body, { features_deleted: 'temp' });
      assertError(await call('GET', '/v1/features/temp'), 404, 'not_found');
    });

    test('an account on the plan has its features; overrides grant, take away and end at expires_at', async () => {
      const acc = await account(true);
      let e = await list(acc);
      assert.deepEqual(e.sso, {
        feature: 'sso',
        kind: 'boolean',
        has_access: true,
        value: null,
        source: 'plan',
        expires_at: null,
      });
      assert.deepEqual(e.seats.value, { max_seats: 5 });
      assert.equal(e.beta.has_access, false);
      assert.equal(e.beta.source, null);
      assert.equal((await check(acc, 'sso')).reason, 'entitled');
      assert.equal((await check(acc, 'beta')).reason, 'not_entitled');

      const before = (await notes()).length;
      const t0 = await now();
      const off = await call('PUT', `/v1/accounts/${acc}/features/sso`, { enabled: false });
      assert.equal(off.status, 200, off.text);
      assert.equal(off.body.data.has_access, false);
      assert.equal(off.body.data.source, 'override');
      const seats = await call('PUT', `/v1/accounts/${acc}/features/seats`, {
        enabled: true,
        value: { max_seats: 50 },
        expires_at: new Date(t0 + HOUR).toISOString(),
      });
      assert.equal(seats.status, 200, seats.text);
      assert.deepEqual(seats.body.data.value, { max_seats: 50 });
      const beta = await call('PUT', `/v1/accounts/${acc}/features/beta`, { enabled: true });
      assert.equal(beta.status, 200, beta.text);
      e = await list(acc);
      assert.equal(e.sso.has_access, false);
      assert.equal(e.beta.has_access, true);
      assert.equal(e.seats.expires_at, new Date(t0 + HOUR).toISOString());
      let n = (await notes()).slice(before);
      assert.deepEqual(
        n.map((x) => [x.type, x.account_id, x.feature]),
        [
          ['entitlements_change', acc, 'sso'],
          ['entitlements_change', acc, 'seats'],
          ['entitlements_change', acc, 'beta'],
        ],
      );

      // At expires_at exactly, with no job run: the plan's value again.
      jump(t0 + HOUR);
      e = await list(acc);
      assert.deepEqual(e.seats.value, { max_seats: 5 });
      assert.equal(e.seats.source, 'plan');
      assert.equal((await notes()).length, before + 3, 'nothing written by a read');
      await runJobs(h, co.auth);
      await runJobs(h, co.auth);
      n = (await notes()).slice(before + 3);
      assert.deepEqual(
        n.map((x) => [x.account_id, x.feature]),
        [[acc, 'seats']],
        'the end notified once',
      );

      const removed = await call('DELETE', `/v1/accounts/${acc}/features/sso`);
      assert.equal(removed.status, 200, removed.text);
      assert.equal(removed.body.data.has_access, true);
      assert.equal(removed.body.data.source, 'plan');
      assertError(await call('DELETE', `/v1/accounts/${acc}/features/sso`), 404, 'not_found');
    });

    test("a plan's list replaced applies to accounts on it at once, notified once per feature changed", async () => {
      const acc = await account(true);
      const plan = await call('POST', `/v1/companies/${co.companyId}/plan`, {
        name: 'Team',
        charge_amount: 0,
        balances: [{ denomination: 'credits', amount: '10', overage_charge_amount: 0 }],
        features: [{ feature: 'sso' }, { feature: 'seats', value: 3 }],
      });
      const other = plan.body.data.plan_id;
      const before = (await notes()).length;
      const r = await call('PUT', `/v1/plans/${planId}/features`, {
        features: [{ feature: 'sso' }, { feature: 'seats', value: { max_seats: 10 } }, { feature: 'beta' }],
      });
      assert.equal(r.status, 200, r.text);
      const e = await list(acc);
      assert.deepEqual(e.seats.value, { max_seats: 10 });
      assert.equal(e.beta.has_access, true);
      assert.equal(e.gpt4.has_access, false);
      const n = (await notes()).slice(before);
      assert.deepEqual(n.map((x) => [x.plan_id, x.feature]).sort(), [
        [planId, 'beta'],
        [planId, 'gpt4'],
        [planId, 'seats'],
      ]);
      // Put back as it was for the other tests; the other plan is untouched.
      await call('PUT', `/v1/plans/${planId}/features`, {
        features: [{ feature: 'sso' }, { feature: 'seats', value: { max_seats: 5 } }, { feature: 'gpt4' }],
      });
      assert.deepEqual((await call('GET', `/v1/plans/${other}`)).body.data.features, [
        { feature: 'sso', value: null },
        { feature: 'seats', value: 3 },
      ]);
    });

    test('a metered feature follows the balance and a spend limit; the ingest gate refuses the rest', async () => {
      await call('PUT', '/v1/prices/gpt4_tokens', { denomination: 'tokens', unit_amount: '1' });
      const acc = await account(true);
      let c = await check(acc, 'gpt4', '?quantity=100');
      assert.equal(c.has_access, true);
      assert.equal(c.reason, 'entitled');
      assert.deepEqual(c.balance, { denomination: 'tokens', available: 1000, available_after: 900 });
      c = await check(acc, 'gpt4', '?quantity=1001');
      assert.equal(c.has_access, false);
      assert.equal(c.reason, 'insufficient_balance');
      assert.equal((await check(acc, 'gpt4')).balance.available_after, 999, 'quantity 1 by default');
      await call('PUT', `/v1/accounts/${acc}/balance/tokens/limits`, { daily: 50 });
      c = await check(acc, 'gpt4', '?quantity=60');
      assert.equal(c.reason, 'spend_limit_reached');
      assert.equal(c.has_access, false);

      const plain = await account(false);
      await call('POST', `/v1/accounts/${plain}/balance/tokens`, { amount: 100 });
      c = await check(plain, 'gpt4', '?quantity=1');
      assert.equal(c.reason, 'not_entitled');
      const gated = await call('POST', `/v1/accounts/${plain}/events`, {
        gate_on_balance: true,
        events: [{ type: 'other' }, { type: 'gpt4_tokens', quantity: 1 }],
      });
      assertError(gated, 403, 'not_entitled');
      assert.equal(gated.body.error.param, 'events[1]');
      const bal = await call('GET', `/v1/accounts/${plain}/balance/tokens`);
      assert.equal(bal.body.data.amount, 100, 'nothing recorded');
      const ungated = await call('POST', `/v1/accounts/${plain}/events`, {
        events: [{ type: 'gpt4_tokens', quantity: 1 }],
      });
      assert.equal(ungated.status, 200, ungated.text);
      const entitledGated = await call('POST', `/v1/accounts/${acc}/events`, {
        gate_on_balance: true,
        events: [{ type: 'gpt4_tokens', quantity: 10 }],
      });
      assert.equal(entitledGated.status, 200, entitledGated.text);
      await call('PUT', `/v1/accounts/${plain}/features/gpt4`, { enabled: true });
      const now = await call('POST', `/v1/accounts/${plain}/events`, {
        gate_on_balance: true,
        events: [{ type: 'gpt4_tokens', quantity: 1 }],
      });
      assert.equal(now.status, 200, `an override entitles at once: ${now.text}`);
    });

    test('checks read together are answered each as it is alone; over HTTP, at once, the same', async () => {
      await call('PUT', '/v1/prices/gpt4_tokens', { denomination: 'tokens', unit_amount: '1' });
      const acc = await account(true);
      const off = await account(true);
      await call('PUT', `/v1/accounts/${off}/features/sso`, { enabled: false });
      const plain = await account(false);
      await call('POST', `/v1/accounts/${plain}/balance/tokens`, { amount: 5 });
      const other = await signUpCompany(h);
      const theirs = (await call('POST', `/v1/companies/${other.companyId}/accounts`, { name: 'X' }, other.auth)).body
        .data.account_id as string;
      const asks: [string, string, number][] = [
        [acc, 'sso', 1],
        [acc, 'seats', 1],
        [acc, 'beta', 1],
        [acc, 'gpt4', 100],
        [acc, 'gpt4', 1001],
        [off, 'sso', 1],
        [off, 'gpt4', 3],
        [plain, 'gpt4', 3],
        [plain, 'sso', 1],
        [acc, 'nope', 1],
        ['a_missing', 'sso', 1],
        [theirs, 'sso', 1],
        [acc, 'sso', 1],
      ];
      const req = ([accountId, key, quantity]: [string, string, number]) => ({
        companyId: co.companyId,
        accountId,
        key,
        quantity,
      });
      const nowMs = await now();
      const ledger = new Ledger(balanceEffects());
      const usage = { eventMaxAgeMs: 30 * 24 * HOUR };
      const read = (reqs: ReturnType<typeof req>[]) =>
        h.store.read((tx) => checkEntitlementGroup(ledger, usage, tx, nowMs, reqs));
      const together = await read(asks.map(req));
      const alone: Awaited<ReturnType<typeof read>> = [];
      for (const a of asks) alone.push((await read([req(a)]))[0]!);
      assert.deepEqual(together, alone);
      const answer = (i: number) => {
        const o = together[i]!;
        return o.ok ? [o.value.hasAccess, o.value.reason, o.value.balance?.availableAfter] : [o.reason, o.param];
      };
      assert.deepEqual(answer(0), [true, 'entitled', undefined]);
      assert.deepEqual(answer(3), [true, 'entitled', 900]);
      assert.deepEqual(answer(4), [false, 'insufficient_balance', -1]);
      assert.deepEqual(answer(5), [false, 'not_entitled', undefined]);
      assert.deepEqual(answer(6), [true, 'entitled', 997]);
      assert.deepEqual(answer(7), [false, 'not_entitled', 2]);
      assert.deepEqual(answer(9), ['not_found', 'feature']);
      assert.deepEqual(answer(10), ['not_found', 'account_id']);
      assert.deepEqual(answer(11), ['not_found', 'account_id']);

      const http = await Promise.all(
        asks.map(([a, key, q]) => call('GET', `/v1/accounts/${a}/entitlements/${key}?quantity=${q}`)),
      );
      http.forEach((r, i) => {
        const o = alone[i]!;
        if (!o.ok) {
          assert.equal(r.status, 404, r.text);
          assert.equal(r.body.error.param, o.param);
          return;
        }
        assert.equal(r.status, 200, r.text);
        assert.deepEqual([r.body.data.has_access, r.body.data.reason], [o.value.hasAccess, o.value.reason]);
        assert.equal(r.body.data.balance?.available_after, o.value.balance?.availableAfter);
      });
    });

    test('404s told apart, bad input 400 naming the field, isolation', async () => {
      const acc = await account(true);
      const noFeature = await call('GET', `/v1/accounts/${acc}/entitlements/nope`);
      assertError(noFeature, 404, 'not_found');
      assert.equal(noFeature.body.error.param, 'feature');
      const noAccount = await call('GET', '/v1/accounts/a_missing/entitlements/nope');
      assertError(noAccount, 404, 'not_found');
      assert.equal(noAccount.body.error.param, 'account_id');

      const bad: [string, string, unknown, string][] = [
        ['PUT', '/v1/features/x1', { kind: 'flag' }, 'kind'],
        ['PUT', '/v1/features/x2', { kind: 'metered' }, 'event_type'],
        ['PUT', '/v1/features/x3', { kind: 'boolean', event_type: 't' }, 'event_type'],
        ['PUT', '/v1/features/bad%20key', { kind: 'boolean' }, 'key'],
        ['PUT', `/v1/accounts/${acc}/features/seats`, { enabled: true, value: 'x'.repeat(5000) }, 'value'],
        ['PUT', `/v1/accounts/${acc}/features/sso`, { enabled: true, value: 1 }, 'value'],
        [
          'PUT',
          `/v1/accounts/${acc}/features/sso`,
          { enabled: true, expires_at: '2000-01-01T00:00:00Z' },
          'expires_at',
        ],
        ['PUT', `/v1/plans/${planId}/features`, { features: [{ feature: 'nope' }] }, 'features[0].feature'],
        [
          'PUT',
          `/v1/plans/${planId}/features`,
          { features: [{ feature: 'sso' }, { feature: 'sso' }] },
          'features[1].feature',
        ],
        ['PUT', `/v1/plans/${planId}/features`, { features: [{ feature: 'sso', value: true }] }, 'features[0].value'],
        ['GET', `/v1/accounts/${acc}/entitlements/gpt4?quantity=-1`, undefined, 'quantity'],
        ['GET', `/v1/accounts/${acc}/entitlements/gpt4?quantity=abc`, undefined, 'quantity'],
      ];
      for (const [method, path, body, param] of bad) {
        const r = await call(method, path, body);
        assertError(r, 400, 'invalid_request');
        assert.equal(r.body.error.param, param, `${method} ${path}: ${r.text}`);
      }
      const p = await call('POST', `/v1/companies/${co.companyId}/plan`, {
        name: 'X',
        charge_amount: 0,
        balances: [{ denomination: 'tokens', amount: '1', overage_charge_amount: 0 }],
        features: [{ feature: 'nope' }],
      });
      assertError(p, 400, 'invalid_request');
      assert.equal(p.body.error.param, 'features[0].feature');
      assert.equal((await list(acc)).sso.has_access, true, 'nothing changed');

      const other = await signUpCompany(h, 'Other');
      assertError(await call('GET', '/v1/features/sso', undefined, other.auth), 404, 'not_found');
      assertError(await call('GET', `/v1/accounts/${acc}/entitlements`, undefined, other.auth), 404, 'not_found');
      assertError(
        await call('PUT', `/v1/accounts/${acc}/features/sso`, { enabled: false }, other.auth),
        404,
        'not_found',
      );
      assertError(await call('PUT', `/v1/plans/${planId}/features`, { features: [] }, other.auth), 404, 'not_found');
      assert.equal((await call('GET', '/v1/features', undefined, other.auth)).body.data.length, 0);
    });
  });
}
