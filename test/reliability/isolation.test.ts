// Guarantee: for every route of /openapi.json, company B's credentials on company A's ids get exactly the answer a
// missing id gets (same status, same body but for the id), A's data is unchanged by all of it, and every kind of
// authentication failure gets the same status and body (the time each takes is reported, not asserted).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CLI_DIALECTS, freshDatabase } from '../cli/support.js';
import { startReceiver } from '../support/webhooks.js';
import { report, seed } from './support/config.js';
import { type Answer, assertEnvelope, percentiles, send } from './support/http.js';
import { judge } from './support/judge.js';
import { fill, operationsOf, sampleOf } from './support/schema.js';
import { startChildServer } from './support/server.js';
import { type Company, account, signUp } from './support/setup.js';

/** The same id with its last character changed: the same shape, no such record. */
function missing(id: string): string {
  const last = id.at(-1)!;
  const swap = last === '7' ? '8' : '7';
  return /^\d+$/.test(id) ? String(Number(id) + 1_000_000) : id.slice(0, -1) + swap;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
function normalized(a: Answer, ids: string[]): string {
  let text = a.text;
  for (const id of ids) text = text.replace(new RegExp(escapeRe(id), 'g'), '<id>');
  return `${a.status} ${text}`;
}

/** Bodies that reach each route's lookup (a random schema-valid body for the rest). */
const BODIES: Record<string, unknown> = {
  'PATCH /v1/users/{user_id}': { name: 'Eve' },
  'PUT /v1/accounts/{account_id}': { name: 'Eve' },
  'POST /v1/accounts/{account_id}/balance/{denomination}': { amount: 5 },
  'POST /v1/accounts/{account_id}/balance/{denomination}/adjustments': { amount: 5 },
  'POST /v1/accounts/{account_id}/events': [{ type: 'x', cost_override: { amount: 1, denomination: 'tokens' } }],
  'POST /v1/events': { account_id: '{account_id}', events: [{ type: 'x' }] },
  'PUT /v1/events/{event_id}': { state: 'cancelled' },
  'POST /v1/accounts/{account_id}/card': { token: 'tok_visa' },
  'PUT /v1/accounts/{account_id}/balance/{denomination}/autorefill': { threshold: 10, amount: 100, usd_charge: 100 },
  'PUT /v1/accounts/{account_id}/balance/{denomination}/auto_refill': { threshold: 10, amount: 100, usd_charge: 100 },
  'PUT /v1/accounts/{account_id}/auto_refill': { denomination: 'tokens', threshold: 10, amount: 100, usd_charge: 100 },
  'POST /v1/accounts/{account_id}/modifymidmonth': { denomination: 'tokens', amount: 10, usd_charge: 10 },
  'POST /v1/companies/{company_id}/accounts': { name: 'Eve' },
  'POST /v1/companies/{company_id}/api_keys': {},
  'POST /v1/webhooks/deliveries/{callback_id}/retry': {},
  'POST /v1/accounts/{account_id}/balance/{denomination}/grants': { amount: 5 },
  'PATCH /v1/grants/{grant_id}': { priority: 5 },
  'POST /v1/grants/{grant_id}/void': {},
  'POST /v1/accounts/{account_id}/alerts': { denomination: 'tokens', metric: 'available', threshold: 1 },
  'PUT /v1/features/{key}': { kind: 'boolean' },
  'PUT /v1/accounts/{account_id}/features/{key}': { enabled: true },
  'PUT /v1/plans/{plan_id}/features': { features: [] },
  'PUT /v1/topup_offers/{offer_id}': { denomination: 'tokens', amount: 1, usd_charge: 1, name: 'Eve' },
  'POST /v1/accounts/{account_id}/leases': { denomination: 'tokens', amount: 1 },
};

async function aView(url: string, a: Company, ids: Record<string, string>): Promise<string> {
  const paths = [
    `/v1/accounts/${ids.account_id}`,
    `/v1/accounts/${ids.account_id}/balance/tokens`,
    `/v1/accounts/${ids.account_id}/transactions`,
    `/v1/accounts/${ids.account_id}/events`,
    `/v1/events/${ids.event_id}`,
    `/v1/accounts/${ids.account_id}/charges`,
    `/v1/accounts/${ids.account_id}/balance/tokens/grants`,
    `/v1/grants/${ids.grant_id}`,
    '/v1/grants',
    `/v1/webhooks`,
    `/v1/webhooks/${ids.webhook_id}/deliveries`,
    `/v1/prices`,
    `/v1/companies/${a.companyId}/plans`,
    `/v1/companies/${a.companyId}/api_keys`,
    `/v1/users/${a.userId}`,
    '/v1/accounts',
    `/v1/accounts/${ids.account_id}/leases`,
  ];
  const out: string[] = [];
  for (const path of paths) {
    const r = await send(url, { method: 'GET', path, auth: a.auth });
    assert.equal(r.status, 200, `${path}: ${r.text}`);
    out.push(`${path} ${r.text}`);
  }
  return out.join('\n');
}

for (const dialect of CLI_DIALECTS) {
  describe(`isolation across every route of /openapi.json (${dialect})`, () => {
    test("B's credentials on A's ids answer exactly as a missing id, and change nothing of A's", async (t) => {
      const db = await freshDatabase(dialect);
      const server = await startChildServer(db.url);
      const rx = await startReceiver();
      try {
        const url = server.url;
        const a = await signUp(url, 'A');
        const b = await signUp(url, 'B');
        const ids: Record<string, string> = { denomination: 'tokens', type: 'api' };
        const hook = await send(url, {
          method: 'POST',
          path: '/v1/webhooks',
          auth: a.auth,
          body: { type: 'balance_change', url: rx.url },
        });
        assert.equal(hook.status, 200, hook.text);
        ids.webhook_id = hook.json.data.webhook_id;
        ids.account_id = await account(url, a, 'tokens', 1000);
        const price = await send(url, {
          method: 'PUT',
          path: '/v1/prices/api',
          auth: a.auth,
          body: { denomination: 'tokens', unit_amount: 2 },
        });
        assert.equal(price.status, 200, price.text);
        const ev = await send(url, {
          method: 'POST',
          path: `/v1/accounts/${ids.account_id}/events`,
          auth: a.auth,
          body: [{ id: 'a-hold', type: 'api', state: 'pending' }],
        });
        assert.equal(ev.status, 200, ev.text);
        ids.event_id = 'a-hold';
        const plan = await send(url, {
          method: 'POST',
          path: `/v1/companies/${a.companyId}/plans`,
          auth: a.auth,
          body: {
            name: 'Pro',
            charge_amount: 1000,
            balances: [{ denomination: 'tokens', amount: 100, overage_charge_amount: 1 }],
          },
        });
        assert.equal(plan.status, 200, plan.text);
        ids.plan_id = plan.json.data.plan_id;
        const keys = await send(url, { method: 'GET', path: `/v1/companies/${a.companyId}/api_keys`, auth: a.auth });
        ids.key_id = keys.json.data[0].key_id;
        const deliveries = await send(url, {
          method: 'GET',
          path: `/v1/webhooks/${ids.webhook_id}/deliveries`,
          auth: a.auth,
        });
        ids.callback_id = deliveries.json.data[0].callback_id;
        const grant = await send(url, {
          method: 'POST',
          path: `/v1/accounts/${ids.account_id}/balance/tokens/grants`,
          auth: a.auth,
          body: { amount: 50, priority: 10, name: 'promo' },
        });
        assert.equal(grant.status, 201, grant.text);
        ids.grant_id = grant.json.data.grant_id;
        const alert = await send(url, {
          method: 'POST',
          path: `/v1/accounts/${ids.account_id}/alerts`,
          auth: a.auth,
          body: { denomination: 'tokens', metric: 'available', threshold: 10 },
        });
        assert.equal(alert.status, 201, alert.text);
        ids.alert_id = alert.json.data.alert_id;
        // A succeeded charge (a refill), for its receipt.
        for (const r of [
          { method: 'POST', path: `/v1/accounts/${ids.account_id}/card`, body: { token: 'tok_visa' } },
          {
            method: 'PUT',
            path: `/v1/accounts/${ids.account_id}/balance/tokens/autorefill`,
            body: { threshold: 5000, amount: 100, usd_charge: 100 },
          },
          {
            method: 'POST',
            path: `/v1/accounts/${ids.account_id}/events`,
            body: [{ type: 'x', cost_override: { amount: 1, denomination: 'tokens' } }],
          },
          { method: 'POST', path: '/v1/test_clock/advance', body: { seconds: 0 } },
        ]) {
          const done = await send(url, { ...r, auth: a.auth });
          assert.equal(done.status, 200, done.text);
        }
        const charged = await send(url, {
          method: 'GET',
          path: `/v1/accounts/${ids.account_id}/charges`,
          auth: a.auth,
        });
        const paid = charged.json.data.find((c: { status: string }) => c.status === 'succeeded');
        assert.ok(paid, charged.text);
        ids.charge_id = paid.charge_id;
        const portal = await send(url, {
          method: 'POST',
          path: `/v1/accounts/${ids.account_id}/portal_sessions`,
          auth: a.auth,
          body: {},
        });
        assert.equal(portal.status, 201, portal.text);
        ids.session_id = portal.json.data.session_id;
        const feature = await send(url, {
          method: 'PUT',
          path: '/v1/features/sso',
          auth: a.auth,
          body: { kind: 'boolean' },
        });
        assert.equal(feature.status, 200, feature.text);
        ids.key = 'sso';
        const offer = await send(url, {
          method: 'PUT',
          path: '/v1/topup_offers/pack',
          auth: a.auth,
          body: { denomination: 'tokens', amount: 10, usd_charge: 100, name: 'Pack' },
        });
        assert.equal(offer.status, 200, offer.text);
        ids.offer_id = 'pack';
        const lease = await send(url, {
          method: 'POST',
          path: `/v1/accounts/${ids.account_id}/leases`,
          auth: a.auth,
          body: { denomination: 'tokens', amount: 5 },
        });
        assert.equal(lease.status, 201, lease.text);
        ids.lease_id = lease.json.data.lease_id;
        ids.company_id = a.companyId;
        ids.user_id = String(a.userId);
        for (const [k, v] of Object.entries(ids)) assert.ok(v, `A's ${k}`);

        const before = await aView(url, a, ids);
        const doc = (await send(url, { method: 'GET', path: '/openapi.json' })).json;
        const s = seed(16_301);
        const differ: string[] = [];
        const leaks: string[] = [];
        let compared = 0;
        const secretIds = [
          'account_id',
          'event_id',
          'plan_id',
          'key_id',
          'webhook_id',
          'callback_id',
          'company_id',
          'grant_id',
          'alert_id',
          'charge_id',
          'session_id',
          'lease_id',
        ];
        for (const op of operationsOf(doc)) {
          // Names a company chooses itself (a denomination, an event type, a feature key, a credit pack's id) are not
          // ids: B has its own.
          const own = ['denomination', 'type', 'key', 'offer_id'];
          const named = op.pathParams.filter((p) => !own.includes(p));
          const byQuery = op.queryParams.includes('account_id');
          if (named.length === 0 && !byQuery) continue;
          const name = `${op.method} ${op.path}`;
          const other: Record<string, string> = { ...ids };
          for (const p of named) other[p] = missing(ids[p]!);
          if (byQuery) other.account_id = missing(ids.account_id!);
          const build = (values: Record<string, string>) => {
            let body = name in BODIES ? BODIES[name] : op.body ? sampleOf(op.body, s) : undefined;
            if (body !== undefined) body = JSON.parse(fill(JSON.stringify(body), values).replace(/%7B|%7D/g, ''));
            const path = fill(op.path, values) + (byQuery ? `?account_id=${values.account_id}` : '');
            return { method: op.method, path, auth: b.auth, ...(body !== undefined ? { body } : {}) };
          };
          // A's ids filled into a body template: "{account_id}" → the id.
          const withIds = (values: Record<string, string>) => {
            const r = build(values);
            if (r.body !== undefined)
              r.body = JSON.parse(JSON.stringify(r.body).replace(/\{(\w+)\}/g, (_, k: string) => values[k] ?? k));
            return r;
          };
          const onA = await send(url, withIds(ids));
          const onMissing = await send(url, withIds(other));
          compared++;
          const names = [...named, ...(byQuery ? ['account_id'] : [])];
          const idList = [...names.map((p) => ids[p]!), ...names.map((p) => other[p]!)];
          if (normalized(onA, idList) !== normalized(onMissing, idList))
            differ.push(
              `${name}\n  A's id:  ${onA.status} ${onA.text}\n  missing: ${onMissing.status} ${onMissing.text}`,
            );
          if (onA.status < 400) leaks.push(`${name}: ${onA.status} ${onA.text.slice(0, 200)}`);
          else assertEnvelope(onA, name);
          for (const k of secretIds)
            if (!names.includes(k) && onA.text.includes(ids[k]!)) leaks.push(`${name}: answer names A's ${k}`);
        }
        assert.deepEqual(differ, [], "A's ids answered otherwise than missing ids");
        assert.deepEqual(leaks, [], "B's requests on A's ids succeeded or named A's records");
        assert.equal(await aView(url, a, ids), before, "A's data unchanged");
        assert.deepEqual(await judge(db), [], 'ledger audit');
        report(t, `isolation-${dialect}`, { routes_compared: compared, differ: differ.length, leaks: leaks.length });
      } finally {
        await rx.close();
        await server.kill9();
        await db.drop();
      }
    });

    test('every authentication failure gets the same status and body; their times are reported', async (t) => {
      const db = await freshDatabase(dialect);
      const server = await startChildServer(db.url);
      try {
        const url = server.url;
        const a = await signUp(url, 'A');
        const b = await signUp(url, 'B');
        const made = await send(url, {
          method: 'POST',
          path: `/v1/companies/${a.companyId}/api_keys`,
          auth: a.auth,
        });
        assert.equal(made.status, 200, made.text);
        const revoked = made.json.data.api_key as string;
        const del = await send(url, {
          method: 'DELETE',
          path: `/v1/companies/${a.companyId}/api_keys/${made.json.data.key_id}`,
          auth: a.auth,
        });
        assert.equal(del.status, 200, del.text);
        const acc = await account(url, a, 'tokens', 10);
        const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
        const keyVariants: Record<string, Record<string, string>> = {
          'no Authorization': {},
          'not Basic': { authorization: `Bearer ${a.apiKey}` },
          'Basic without a colon': { authorization: `Basic ${Buffer.from('nocolon').toString('base64')}` },
          'Basic not base64': { authorization: 'Basic !!!' },
          'unknown company': { authorization: basic(missing(a.companyId), a.apiKey) },
          'wrong key': { authorization: basic(a.companyId, `${a.apiKey.slice(0, -2)}zz`) },
          "B's key on A": { authorization: basic(a.companyId, b.apiKey) },
          'revoked key': { authorization: basic(a.companyId, revoked) },
          'empty key': { authorization: basic(a.companyId, '') },
        };
        const passwordVariants: Record<string, Record<string, string>> = {
          'unknown e-mail': { authorization: basic('nobody@example.com', a.password) },
          'wrong password': { authorization: basic(a.email, 'not the password') },
          "B's password on A's e-mail": { authorization: basic(a.email, b.password) },
        };
        const REPEAT = 10;
        const times = new Map<string, number[]>();
        const check = async (
          routes: { method: string; path: string; body?: unknown }[],
          variants: Record<string, Record<string, string>>,
          repeat: number,
        ) => {
          for (const route of routes) {
            const bodies = new Map<string, string>();
            for (const [name, headers] of Object.entries(variants)) {
              const mine = times.get(name) ?? [];
              times.set(name, mine);
              for (let i = 0; i < repeat; i++) {
                const r = await send(url, { ...route, headers });
                mine.push(r.ms);
                assert.equal(r.status, 401, `${route.method} ${route.path}, ${name}: ${r.text}`);
                assertEnvelope(r, `${route.path}, ${name}`);
                bodies.set(name, r.text);
              }
            }
            assert.equal(
              new Set(bodies.values()).size,
              1,
              `${route.method} ${route.path}: one body for every failure: ` +
                JSON.stringify(Object.fromEntries(bodies)),
            );
          }
        };
        await check(
          [
            { method: 'GET', path: '/v1/accounts' },
            { method: 'GET', path: `/v1/accounts/${acc}/balance/tokens` },
            { method: 'POST', path: `/v1/accounts/${acc}/events`, body: [{ type: 'x' }] },
          ],
          keyVariants,
          REPEAT,
        );
        await check([{ method: 'POST', path: '/v1/companies', body: { name: 'X' } }], passwordVariants, 2);
        // Routes that take a password or an API key: API-key failures must never meet the password limit.
        await t.test(
          'API-key failures on a route that also takes passwords: 401 alike, never the password limit',
          async () => {
            await check([{ method: 'GET', path: `/v1/companies/${a.companyId}/api_keys` }], keyVariants, REPEAT);
          },
        );
        t.diagnostic('times (ms) per failure kind, reported, not asserted:');
        report(
          t,
          `auth-failures-${dialect}`,
          Object.fromEntries([...times].map(([name, ms]) => [name, percentiles(ms)])),
        );
      } finally {
        await server.kill9();
        await db.drop();
      }
    });
  });
}
