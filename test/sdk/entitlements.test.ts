// Guarantee: the TypeScript client's features and entitlements (sdk/typescript, `billing.features`,
// `billing.entitlements`) do what their routes do on the real server, on SQLite and PostgreSQL, with the types the
// compiler checks: features set (each kind), listed (every page with `for await`), retrieved, renamed and deleted
// round-trip on the wire's field names, a kind change and a feature in use are 409 BillingErrors; an account on a plan
// with features is entitled through the client, an override off makes it `not_entitled` and removed makes it
// `entitled` again, each change sending an `entitlements_change` delivery that, verified, `isEntitlementsWebhook`
// tells apart (with `account_id`, or `plan_id` when the plan's list is replaced); a metered feature's check with a
// quantity answers the typed balance and follows the balance and a spend limit, and the ingest gate is a 403
// `not_entitled` BillingError naming the event; an unknown feature is a 404 with `param: 'feature'`, an unknown
// account a 404 with `param: 'account_id'`, and another company sees none of it.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import {
  Billing,
  BillingError,
  type BillingErrorType,
  type Entitlement,
  type EntitlementCheck,
  type EntitlementsWebhookPayload,
  type Feature,
  type FeatureDeleted,
  type FeatureOverrideParams,
  type FeatureSetParams,
  isAlertWebhook,
  isEntitlementsWebhook,
  type WebhookPayload,
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
function _entitlementTypes(billing: Billing, check: EntitlementCheck, payload: WebhookPayload): void {
  const reason: 'entitled' | 'not_entitled' | 'insufficient_balance' | 'spend_limit_reached' = check.reason;
  const source: 'plan' | 'override' | null = check.source;
  const kind: 'boolean' | 'config' | 'metered' = check.kind;
  const access: boolean = check.has_access;
  const ends: string | null = check.expires_at;
  const afterUse: number | undefined = check.balance?.available_after;
  void [reason, source, kind, access, ends, afterUse];
  // @ts-expect-error balance is there only for a metered feature with a price
  void check.balance.available;
  // @ts-expect-error a config value is any JSON: unknown until the caller checks it
  const seats: number = check.value;
  void seats;

  const body: FeatureSetParams = { kind: 'metered', name: 'GPT-4', event_type: 'gpt4_tokens' };
  const set: Promise<Feature> = billing.features.set('gpt4', body, { idempotencyKey: 'feature-1' });
  const one: Promise<Feature> = billing.features.retrieve('gpt4');
  const first: Promise<{ data: Feature[]; has_more: boolean; next_cursor: string | null }> = billing.features.list();
  const every: AsyncIterable<Feature> = billing.features.list({ limit: 10 });
  const deleted: Promise<FeatureDeleted> = billing.features.delete('gpt4');
  const deletedKey: Promise<string> = deleted.then((d) => d.features_deleted);
  void [set, one, first, every, deletedKey];
  // @ts-expect-error kind is boolean, config or metered
  billing.features.set('x', { kind: 'flag' });
  // @ts-expect-error kind is required
  billing.features.set('x', { name: 'X' });
  // @ts-expect-error an unknown field of the body
  billing.features.set('x', { kind: 'config', value: { max_seats: 5 } });

  const listed: Promise<Entitlement[]> = billing.entitlements.list('a_x');
  const checked: Promise<EntitlementCheck> = billing.entitlements.check('a_x', 'gpt4', { quantity: 2.5 });
  const plain: Promise<EntitlementCheck> = billing.entitlements.check('a_x', 'sso');
  const override: FeatureOverrideParams = { enabled: true, value: { max_seats: 50 }, expires_at: null };
  const on: Promise<Entitlement> = billing.entitlements.setOverride('a_x', 'seats', override);
  const off: Promise<Entitlement> = billing.entitlements.setOverride('a_x', 'sso', { enabled: false });
  const removed: Promise<Entitlement> = billing.entitlements.removeOverride('a_x', 'sso', { idempotencyKey: 'r-1' });
  void [listed, checked, plain, on, off, removed];
  // @ts-expect-error the list is not paged: no limit
  billing.entitlements.list('a_x', { limit: 1 });
  // @ts-expect-error the feature's key is required
  billing.entitlements.check('a_x');
  // @ts-expect-error quantity is a number
  billing.entitlements.check('a_x', 'gpt4', { quantity: '2' });
  // @ts-expect-error enabled is required
  billing.entitlements.setOverride('a_x', 'sso', { value: 1 });
  // @ts-expect-error an unknown field of the body
  billing.entitlements.setOverride('a_x', 'sso', { enabled: true, until: '2026-12-01T00:00:00Z' });

  // A plan's features go through the typed client underneath (no plans resource).
  void billing.api.PUT('/v1/plans/{plan_id}/features', {
    params: { path: { plan_id: 'p_x' } },
    body: { features: [{ feature: 'sso' }, { feature: 'seats', value: { max_seats: 5 } }] },
  });
  void billing.webhooks.create({ type: 'entitlements_change', url: 'https://example.com/hooks' });
  const forbidden: BillingErrorType = 'not_entitled';
  void forbidden;

  if (isEntitlementsWebhook(payload)) {
    const e: EntitlementsWebhookPayload = payload;
    const feature: string = e.feature;
    const about: string | undefined = e.account_id ?? e.plan_id;
    void [feature, about];
    // @ts-expect-error an entitlements_change carries no balance
    const balance: number = e.account_balance;
    void balance;
  } else {
    const balance: number = payload.account_balance;
    const account: string = payload.account_id;
    void [balance, account];
  }
  if (payload.type === 'entitlements_change') {
    // @ts-expect-error narrowed by its type alone: no account_id for sure (a plan's change has plan_id)
    const account: string = payload.account_id;
    void account;
  }
}

for (const dialect of HTTP_DIALECTS) {
  describe(`the TypeScript client's features and entitlements against the real server (${dialect})`, () => {
    let h: Harness;
    let rx: Receiver;
    let billing: Billing;
    let co: Awaited<ReturnType<typeof signUpCompany>>;
    let planId: string;
    before(async () => {
      h = await startHarness(dialect);
      rx = await startReceiver();
      co = await signUpCompany(h);
      billing = new Billing({ baseUrl: h.url, companyId: co.companyId, apiKey: co.apiKey });
      await billing.features.set('sso', { kind: 'boolean', name: 'SSO' });
      await billing.features.set('seats', { kind: 'config' });
      await billing.features.set('gpt4', { kind: 'metered', event_type: 'gpt4_tokens' });
      await billing.features.set('beta', { kind: 'boolean' });
      const plan = await billing.api.POST('/v1/companies/{company_id}/plan', {
        params: { path: { company_id: co.companyId } },
        body: {
          name: 'Pro',
          charge_amount: 0,
          balances: [{ denomination: 'tokens', amount: '1000', overage_charge_amount: 0 }],
          features: [{ feature: 'sso' }, { feature: 'seats', value: { max_seats: 5 } }, { feature: 'gpt4' }],
        },
      });
      assert.ok(plan.data, JSON.stringify(plan.error));
      planId = plan.data.data.plan_id;
      assert.deepEqual(plan.data.data.features, [
        { feature: 'sso', value: null },
        { feature: 'seats', value: { max_seats: 5 } },
        { feature: 'gpt4', value: null },
      ]);
    });
    after(async () => {
      await h.close();
      await rx.close();
    });
    afterEach(async () => h.audit());

    /** A new account, on the plan or on none. */
    async function account(onPlan: boolean): Promise<string> {
      const a = await billing.accounts.create({ name: 'Entitled', ...(onPlan ? { plan_id: planId } : {}) });
      return a.account_id;
    }

    test('features: set (each kind), retrieve, list (every page), rename, delete; 409s', async () => {
      const own = await signUpCompany(h, 'Features');
      const b = new Billing({ baseUrl: h.url, companyId: own.companyId, apiKey: own.apiKey });
      const metered = await b.features.set('gpt4', { kind: 'metered', name: 'GPT-4', event_type: 'gpt4_tokens' });
      assert.deepEqual(
        [metered.key, metered.kind, metered.name, metered.event_type],
        ['gpt4', 'metered', 'GPT-4', 'gpt4_tokens'],
      );
      assert.ok(Date.parse(metered.created_at) > 0);
      assert.equal(metered.updated_at, metered.created_at);
      const seats = await b.features.set('seats', { kind: 'config' });
      assert.deepEqual([seats.kind, seats.name, seats.event_type], ['config', null, null]);
      const sso = await b.features.set('sso', { kind: 'boolean', name: 'SSO' }, { idempotencyKey: 'feature-sso' });
      assert.deepEqual(await b.features.retrieve('sso'), sso);
      assert.deepEqual(await b.features.retrieve('gpt4'), metered);

      const first = await b.features.list({ limit: 2 });
      assert.deepEqual(
        first.data.map((f) => f.key),
        ['gpt4', 'seats'],
        'by key',
      );
      assert.deepEqual([first.has_more, first.next_cursor], [true, 'seats']);
      const listed = await all(b.features.list({ limit: 1 }));
      assert.deepEqual(listed, [metered, seats, sso], 'three pages of one, each feature once, as set');

      const renamed = await b.features.set('sso', { kind: 'boolean', name: 'Single sign-on' });
      assert.deepEqual([renamed.name, renamed.created_at], ['Single sign-on', sso.created_at]);
      const kind = await refusal(b.features.set('sso', { kind: 'config' }));
      assert.deepEqual([kind.status, kind.type, kind.code], [409, 'conflict', 'feature_kind_cannot_change']);
      const noType = await refusal(b.features.set('x', { kind: 'metered' }));
      assert.deepEqual([noType.status, noType.type, noType.param], [400, 'invalid_request', 'event_type']);

      assert.deepEqual(await b.features.delete('seats'), { features_deleted: 'seats' });
      const gone = await refusal(b.features.retrieve('seats'));
      assert.deepEqual([gone.status, gone.type, gone.code, gone.param], [404, 'not_found', 'not_found', 'feature']);
      assert.equal((await refusal(b.features.delete('seats'))).status, 404, 'a new call (a new key) on a deleted one');
      assert.deepEqual(
        (await all(b.features.list())).map((f) => f.key),
        ['gpt4', 'sso'],
      );
      // The plan of the company in `before` names sso: it is not deleted.
      const inUse = await refusal(billing.features.delete('sso'));
      assert.deepEqual([inUse.status, inUse.type, inUse.code], [409, 'conflict', 'feature_in_use']);
      assert.equal((await billing.features.retrieve('sso')).name, 'SSO');
      assert.throws(() => b.features.retrieve(''), TypeError, 'an empty key is refused before any request');
    });

    test('an account on the plan: entitled; an override off → not_entitled; removed → entitled again', async () => {
      const hook = await billing.webhooks.create({ type: 'entitlements_change', url: rx.url });
      const acc = await account(true);
      const listed = await billing.entitlements.list(acc);
      assert.deepEqual(
        listed.map((e) => [e.feature, e.kind, e.has_access, e.source]),
        [
          ['beta', 'boolean', false, null],
          ['gpt4', 'metered', true, 'plan'],
          ['seats', 'config', true, 'plan'],
          ['sso', 'boolean', true, 'plan'],
        ],
        'every feature of the company, by key',
      );
      assert.deepEqual(listed.find((e) => e.feature === 'seats')?.value, { max_seats: 5 });
      assert.deepEqual(await billing.entitlements.check(acc, 'sso'), {
        feature: 'sso',
        kind: 'boolean',
        has_access: true,
        value: null,
        source: 'plan',
        expires_at: null,
        reason: 'entitled',
      });
      assert.equal((await billing.entitlements.check(acc, 'beta')).reason, 'not_entitled');

      const off = await billing.entitlements.setOverride(acc, 'sso', { enabled: false });
      assert.deepEqual(off, {
        feature: 'sso',
        kind: 'boolean',
        has_access: false,
        value: null,
        source: 'override',
        expires_at: null,
      });
      const denied = await billing.entitlements.check(acc, 'sso');
      assert.deepEqual([denied.has_access, denied.reason, denied.source], [false, 'not_entitled', 'override']);

      const until1h = new Date(h.server.clock.now() + 3_600_000).toISOString();
      const seats = await billing.entitlements.setOverride(acc, 'seats', {
        enabled: true,
        value: { max_seats: 50 },
        expires_at: until1h,
      });
      assert.deepEqual([seats.value, seats.source, seats.expires_at], [{ max_seats: 50 }, 'override', until1h]);
      const valueOnBoolean = await refusal(billing.entitlements.setOverride(acc, 'sso', { enabled: true, value: 1 }));
      assert.deepEqual([valueOnBoolean.status, valueOnBoolean.param], [400, 'value']);

      const removed = await billing.entitlements.removeOverride(acc, 'sso');
      assert.deepEqual([removed.has_access, removed.source], [true, 'plan']);
      const again = await billing.entitlements.check(acc, 'sso');
      assert.deepEqual([again.has_access, again.reason, again.source], [true, 'entitled', 'plan']);
      const none = await refusal(billing.entitlements.removeOverride(acc, 'sso'));
      assert.deepEqual([none.status, none.type], [404, 'not_found'], 'no override left');

      // Replacing the plan's list (through billing.api): at once for the account, one notification per change.
      const replaced = await billing.api.PUT('/v1/plans/{plan_id}/features', {
        params: { path: { plan_id: planId } },
        body: { features: [{ feature: 'sso' }, { feature: 'seats', value: { max_seats: 5 } }, { feature: 'beta' }] },
      });
      assert.ok(replaced.data, JSON.stringify(replaced.error));
      assert.equal((await billing.entitlements.check(acc, 'beta')).reason, 'entitled');
      const gpt4 = (await billing.entitlements.list(acc)).find((e) => e.feature === 'gpt4');
      assert.deepEqual([gpt4?.has_access, gpt4?.source], [false, null], 'gpt4 taken away');
      await billing.api.PUT('/v1/plans/{plan_id}/features', {
        params: { path: { plan_id: planId } },
        body: { features: [{ feature: 'sso' }, { feature: 'seats', value: { max_seats: 5 } }, { feature: 'gpt4' }] },
      });

      await runJobs(h, co.auth); // the test clock delivers what is due (the harness runs no background workers)
      const deliveries = await until('the entitlements_change deliveries arrive', () => {
        const mine = rx.requests.filter(
          (r) => r.json?.type === 'entitlements_change' && (r.json.account_id === acc || r.json.plan_id === planId),
        );
        return mine.length >= 7 ? mine : undefined;
      });
      const payloads = deliveries.map((d) => billing.webhooks.verify(d.body, d.headers, hook.secret));
      const changes: EntitlementsWebhookPayload[] = payloads.filter(isEntitlementsWebhook);
      assert.equal(changes.length, payloads.length, 'each told apart by isEntitlementsWebhook');
      assert.ok(!payloads.some(isAlertWebhook));
      assert.deepEqual(
        changes
          .filter((p) => p.account_id !== undefined)
          .map((p) => [p.account_id, p.plan_id, p.feature])
          .sort(),
        [
          [acc, undefined, 'seats'],
          [acc, undefined, 'sso'],
          [acc, undefined, 'sso'],
        ],
        'the override set off, the seats override, the override removed',
      );
      assert.deepEqual(
        changes
          .filter((p) => p.plan_id !== undefined)
          .map((p) => [p.plan_id, p.account_id, p.feature])
          .sort(),
        [
          [planId, undefined, 'beta'],
          [planId, undefined, 'beta'],
          [planId, undefined, 'gpt4'],
          [planId, undefined, 'gpt4'],
        ],
        'beta in and gpt4 out, then back: none for the unchanged sso and seats',
      );
      for (const p of changes) {
        assert.deepEqual([p.type, p.company_id, typeof p.callback_id], ['entitlements_change', co.companyId, 'string']);
        assert.equal(p.account_balance, undefined, 'no balance');
      }
      await billing.webhooks.delete(hook.webhook_id);
    });

    test('a metered feature: the check of a quantity answers the typed balance; the ingest gate', async () => {
      await billing.prices.set('gpt4_tokens', { denomination: 'tokens', unit_amount: '1' });
      const acc = await account(true);
      const c = await billing.entitlements.check(acc, 'gpt4', { quantity: 100 });
      assert.deepEqual(
        [c.feature, c.kind, c.has_access, c.reason, c.source],
        ['gpt4', 'metered', true, 'entitled', 'plan'],
      );
      assert.deepEqual(c.balance, { denomination: 'tokens', available: 1000, available_after: 900 });
      const balance: { denomination: string; available: number; available_after: number } | undefined = c.balance;
      assert.equal(balance?.available_after, 900);
      assert.equal((await billing.entitlements.check(acc, 'gpt4')).balance?.available_after, 999, 'quantity 1');
      const much = await billing.entitlements.check(acc, 'gpt4', { quantity: 1001 });
      assert.deepEqual([much.has_access, much.reason], [false, 'insufficient_balance']);
      assert.equal(much.balance?.available, 1000);

      await billing.events.ingest(acc, [{ type: 'gpt4_tokens', quantity: 10 }], { gateOnBalance: true });
      assert.deepEqual((await billing.entitlements.check(acc, 'gpt4', { quantity: 5 })).balance, {
        denomination: 'tokens',
        available: 990,
        available_after: 985,
      });
      await billing.balances.setLimits(acc, 'tokens', { daily: 50 });
      const limited = await billing.entitlements.check(acc, 'gpt4', { quantity: 60 });
      assert.deepEqual([limited.has_access, limited.reason], [false, 'spend_limit_reached']);
      const bad = await refusal(billing.entitlements.check(acc, 'gpt4', { quantity: -1 }));
      assert.deepEqual([bad.status, bad.type, bad.param], [400, 'invalid_request', 'quantity']);

      const plain = await account(false);
      await billing.balances.create(plain, 'tokens', { amount: 100 });
      const no = await billing.entitlements.check(plain, 'gpt4', { quantity: 1 });
      assert.deepEqual([no.has_access, no.reason, no.source], [false, 'not_entitled', null]);
      const gated = await refusal(
        billing.events.ingest(plain, [{ type: 'other' }, { type: 'gpt4_tokens', quantity: 1 }], {
          gateOnBalance: true,
        }),
      );
      assert.deepEqual(
        [gated.status, gated.type, gated.code, gated.param],
        [403, 'not_entitled', 'not_entitled', 'events[1]'],
      );
      assert.match(gated.message, /gpt4/);
      assert.equal((await billing.balances.retrieve(plain, 'tokens')).amount, 100, 'nothing recorded');
      await billing.entitlements.setOverride(plain, 'gpt4', { enabled: true });
      const yes = await billing.entitlements.check(plain, 'gpt4', { quantity: 1 });
      assert.deepEqual([yes.has_access, yes.reason, yes.source], [true, 'entitled', 'override']);
      await billing.events.ingest(plain, [{ type: 'gpt4_tokens', quantity: 1 }], { gateOnBalance: true });
      assert.equal((await billing.balances.retrieve(plain, 'tokens')).amount, 99, 'an override entitles at once');
    });

    test("404s told apart: an unknown feature `param: 'feature'`, an unknown account `account_id`", async () => {
      const acc = await account(true);
      const noFeature = await refusal(billing.entitlements.check(acc, 'nope'));
      assert.deepEqual(
        [noFeature.status, noFeature.type, noFeature.code, noFeature.param],
        [404, 'not_found', 'not_found', 'feature'],
      );
      assert.ok(noFeature.requestId, 'the request-id of the answer');
      const noAccount = await refusal(billing.entitlements.check('a_missing', 'sso'));
      assert.deepEqual(
        [noAccount.status, noAccount.type, noAccount.code, noAccount.param],
        [404, 'not_found', 'not_found', 'account_id'],
      );
      assert.equal((await refusal(billing.entitlements.check('a_missing', 'nope'))).param, 'account_id');
      assert.equal((await refusal(billing.entitlements.list('a_missing'))).status, 404);
      assert.equal((await refusal(billing.features.retrieve('nope'))).param, 'feature');
      const overrideOfNone = await refusal(billing.entitlements.setOverride(acc, 'nope', { enabled: true }));
      assert.equal(overrideOfNone.status, 404);
      assert.throws(() => billing.entitlements.check(acc, ''), TypeError, 'an empty key is refused before any request');
      assert.throws(() => billing.entitlements.list(''), TypeError);

      const other = await signUpCompany(h, 'Other');
      const them = new Billing({ baseUrl: h.url, companyId: other.companyId, apiKey: other.apiKey });
      const calls: (() => Promise<unknown>)[] = [
        () => them.features.retrieve('sso'),
        () => them.entitlements.list(acc),
        () => them.entitlements.check(acc, 'sso'),
        () => them.entitlements.setOverride(acc, 'sso', { enabled: false }),
        () => them.entitlements.removeOverride(acc, 'sso'),
      ];
      for (const call of calls) {
        const err = await refusal(call());
        assert.deepEqual([err.status, err.type], [404, 'not_found']);
      }
      assert.deepEqual((await them.features.list()).data, []);
      assert.equal((await billing.entitlements.check(acc, 'sso')).reason, 'entitled', 'unchanged');
    });
  });
}
