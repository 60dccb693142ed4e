// Guarantee: an Idempotency-Key replays the first response and never applies a request twice;
// the OpenAPI document lists exactly the routes the server has, and /docs serves the reference.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import {
  HTTP_DIALECTS,
  assertError,
  createAccountWithBalance,
  signUpCompany,
  startHarness,
  type Harness,
} from '../support/harness.js';
import { isConsoleRoute } from '../../src/http/console.js';

for (const dialect of HTTP_DIALECTS) {
  describe(`idempotency (${dialect})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(dialect);
    });
    after(async () => h.close());
    afterEach(async () => h.audit());

    test('same key and body replays the first response once applied; different body is 409', async () => {
      const co = await signUpCompany(h);
      const acc = await createAccountWithBalance(h, co, 'tokens', 100);
      const send = (amount: number, key = 'adj-1') =>
        h.request('POST', `/v1/accounts/${acc}/balance/tokens/adjustments`, {
          auth: co.auth,
          body: { amount },
          headers: { 'idempotency-key': key },
        });
      const first = await send(5);
      assert.equal(first.status, 200, first.text);
      assert.equal(first.headers.get('idempotent-replayed'), null);
      const again = await send(5);
      assert.equal(again.status, 200);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(again.body, first.body);
      assertError(await send(6), 409, 'conflict');
      const events = { type: 'x', cost_override: { amount: 3, denomination: 'tokens' } };
      const e1 = await h.request('POST', `/v1/accounts/${acc}/events`, {
        auth: co.auth,
        body: [events],
        headers: { 'idempotency-key': 'ev-1' },
      });
      const e2 = await h.request('POST', `/v1/accounts/${acc}/events`, {
        auth: co.auth,
        body: [events],
        headers: { 'idempotency-key': 'ev-1' },
      });
      assert.deepEqual(e2.body, e1.body, 'the generated event ids are replayed too');
      const b = await h.request('GET', `/v1/accounts/${acc}/balance/tokens`, { auth: co.auth });
      assert.equal(b.body.data.amount, 102, 'applied once each');
    });

    test(
      'keys are scoped to the company; errors are replayed ' + 'too; concurrent same-key requests apply once',
      async () => {
        const co = await signUpCompany(h);
        const other = await signUpCompany(h, 'Other');
        const acc = await createAccountWithBalance(h, co, 'tokens', 100);
        const otherAcc = await createAccountWithBalance(h, other, 'tokens', 100);
        const a = await h.request('POST', `/v1/accounts/${acc}/balance/tokens/adjustments`, {
          auth: co.auth,
          body: { amount: 1 },
          headers: { 'idempotency-key': 'shared' },
        });
        const b = await h.request('POST', `/v1/accounts/${otherAcc}/balance/tokens/adjustments`, {
          auth: other.auth,
          body: { amount: 1 },
          headers: { 'idempotency-key': 'shared' },
        });
        assert.equal(a.status, 200);
        assert.equal(b.status, 200, 'another company may use the same key');
        const miss1 = await h.request('POST', '/v1/accounts/a_missing/balance/tokens/adjustments', {
          auth: co.auth,
          body: { amount: 1 },
          headers: { 'idempotency-key': 'miss' },
        });
        const miss2 = await h.request('POST', '/v1/accounts/a_missing/balance/tokens/adjustments', {
          auth: co.auth,
          body: { amount: 1 },
          headers: { 'idempotency-key': 'miss' },
        });
        assertError(miss1, 404);
        assert.equal(miss2.headers.get('idempotent-replayed'), 'true');
        const racers = await Promise.all(
          Array.from({ length: 8 }, () =>
            h.request('POST', `/v1/accounts/${acc}/balance/tokens/adjustments`, {
              auth: co.auth,
              body: { amount: 10 },
              headers: { 'idempotency-key': 'race' },
            }),
          ),
        );
        for (const r of racers) assert.ok(r.status === 200 || r.status === 409, r.text);
        const bal = await h.request('GET', `/v1/accounts/${acc}/balance/tokens`, { auth: co.auth });
        assert.equal(bal.body.data.amount, 111, 'the raced adjustment applied exactly once');
      },
    );
  });
}

describe('OpenAPI document and reference', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('sqlite');
  });
  after(async () => h.close());

  test('/openapi.json is OpenAPI 3.1 and lists exactly the routes the server serves', async () => {
    const doc = await h.request('GET', '/openapi.json');
    assert.equal(doc.status, 200);
    assert.equal(doc.body.openapi, '3.1.0');
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(doc.body.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(item))
        if (['get', 'post', 'put', 'patch', 'delete'].includes(method))
          documented.add(`${method.toUpperCase()} ${path}`);
    }
    const served = new Set<string>();
    const tree = h.server.app.printRoutes({ commonPrefix: false, includeHooks: false });
    void tree;
    for (const r of routesOf(h)) served.add(r);
    assert.deepEqual([...documented].sort(), [...served].sort());
    for (const route of [
      'POST /v1/accounts/{account_id}/events',
      'PUT /v1/events/{event_id}',
      'POST /v1/users',
      'GET /v1/test_clock',
      'GET /healthz',
    ]) {
      assert.ok(documented.has(route), `${route} documented`);
    }
    const events = doc.body.paths['/v1/accounts/{account_id}/events'].post;
    assert.ok(events.requestBody, 'request body schema is in the document');
    assert.ok(events.responses['200'] && events.responses['402'], 'responses are in the document');
    assert.ok(doc.body.components.securitySchemes.companyKey);
  });

  test('/docs serves the interactive reference', async () => {
    const r = await h.request('GET', '/docs/');
    assert.equal(r.status, 200);
    assert.match(r.text, /<html/i);
  });

  test('without BILLING_TEST_CLOCK the test clock paths do not exist', async () => {
    const plain = await startHarness('sqlite', { BILLING_TEST_CLOCK: '0' });
    try {
      const co = await signUpCompany(plain);
      assertError(await plain.request('GET', '/v1/test_clock', { auth: co.auth }), 404);
      assertError(await plain.request('POST', '/v1/test_clock/advance', { auth: co.auth, body: { seconds: 1 } }), 404);
      const doc = await plain.request('GET', '/openapi.json');
      assert.equal(doc.body.paths['/v1/test_clock'], undefined);
    } finally {
      await plain.close();
    }
  });
});

/** Every route the server registered, outside the docs UI's and the console's own routes, as "METHOD /path/{param}". */
function routesOf(h: Harness): string[] {
  const out: string[] = [];
  for (const r of (h.server as unknown as { routes: { method: string; url: string }[] }).routes) {
    // The reference, the console's pages, the portal's, the sandbox's authorize page and Stripe's way back
    // (/stripe/return, /stripe/authenticate) are pages for a browser.
    const page = ['/sandbox/', '/portal/', '/stripe/'].some((prefix) => r.url.startsWith(prefix));
    if (r.url.startsWith('/docs') || page || isConsoleRoute(r.url) || r.method === 'HEAD') continue;
    out.push(`${r.method} ${r.url.replace(/:([A-Za-z_]+)/g, '{$1}')}`);
  }
  return out;
}
