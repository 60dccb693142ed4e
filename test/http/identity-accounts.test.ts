// Guarantee: sign-up, companies and API keys authenticate exactly who they should, companies
// never see each other's resources (404, same body as missing), and accounts/balances/transactions page correctly.
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

for (const dialect of HTTP_DIALECTS) {
  describe(`identity and accounts over HTTP (${dialect})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(dialect);
    });
    after(async () => h.close());
    afterEach(async () => h.audit());

    test('sign-up: record shape, names split, duplicate email 409, short password 400', async () => {
      const r = await h.request('POST', '/v1/users', {
        body: { name: 'Grace Brewster Hopper', email: `Grace.${dialect}@Example.com`, password: 'abcdefgh' },
      });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(Object.keys(r.body).sort(), [
        'createDate',
        'dateOfBirth',
        'email',
        'emailVerified',
        'firstName',
        'id',
        'lastName',
      ]);
      assert.equal(r.body.firstName, 'Grace');
      assert.equal(r.body.lastName, 'Brewster Hopper');
      assert.equal(r.body.dateOfBirth, null);
      assert.equal(r.body.emailVerified, false);
      assert.match(r.body.createDate, /^\d{4}-\d{2}-\d{2}$/);
      assertError(
        await h.request('POST', '/v1/users', {
          body: { name: 'G', email: `grace.${dialect}@example.com`, password: 'abcdefgh' },
        }),
        409,
        'conflict',
      );
      assertError(
        await h.request('POST', '/v1/users', {
          body: { name: 'G', email: `short.${dialect}@example.com`, password: 'abc' },
        }),
        400,
        'invalid_request',
      );
      const mono = await h.request('POST', '/v1/users', {
        body: { name: 'Plato', email: `plato.${dialect}@example.com`, password: 'abcdefgh' },
      });
      assert.equal(mono.body.lastName, '');
    });

    test('users: readable with own or company credentials, 404 for anyone else; PATCH wraps in data', async () => {
      const co = await signUpCompany(h);
      const stranger = await signUpCompany(h, 'Stranger');
      const own = await h.request('GET', `/v1/users/${co.userId}`, { auth: [co.email, co.password] });
      assert.equal(own.status, 200, own.text);
      assert.match(own.body.signUpDate, /^\d{4}-\d{2}-\d{2}$/);
      assert.equal(own.body.createDate, undefined);
      assert.equal((await h.request('GET', `/v1/users/${co.userId}`, { auth: co.auth })).status, 200);
      assertError(await h.request('GET', `/v1/users/${co.userId}`, { auth: stranger.auth }), 404, 'not_found');
      assertError(
        await h.request('GET', `/v1/users/${co.userId}`, { auth: [stranger.email, stranger.password] }),
        404,
        'not_found',
      );
      assertError(
        await h.request('GET', `/v1/users/${co.userId}`, { auth: [co.email, 'wrong password'] }),
        401,
        'authentication_required',
      );
      const p = await h.request('PATCH', `/v1/users/${co.userId}`, {
        auth: [co.email, co.password],
        body: { name: 'Ada King' },
      });
      assert.equal(p.status, 200, p.text);
      assert.equal(p.body.data.lastName, 'King');
      assertError(
        await h.request('PATCH', `/v1/users/${co.userId}`, {
          auth: [co.email, co.password],
          body: { email: stranger.email },
        }),
        409,
        'conflict',
      );
    });

    test(
      'API keys: 401 with WWW-Authenticate when missing or ' + 'wrong; create, list without secrets, revoke at once',
      async () => {
        const co = await signUpCompany(h);
        const none = await h.request('GET', '/v1/accounts');
        assertError(none, 401, 'authentication_required');
        assert.equal(none.headers.get('www-authenticate'), 'Basic realm="billing"');
        assertError(await h.request('GET', '/v1/accounts', { auth: [co.companyId, 'sk_wrong'] }), 401);
        assertError(
          await h.request('GET', '/v1/accounts', { auth: [co.email, co.password] }),
          401,
          'authentication_required',
        );
        const k = await h.request('POST', `/v1/companies/${co.companyId}/api_keys`, { auth: co.auth });
        assert.equal(k.status, 200, k.text);
        const second: [string, string] = [co.companyId, k.body.data.api_key];
        assert.equal((await h.request('GET', '/v1/accounts', { auth: second })).status, 200);
        const list = await h.request('GET', `/v1/companies/${co.companyId}/api_keys`, {
          auth: [co.email, co.password],
        });
        assert.equal(list.body.data.length, 2);
        assert.ok(!list.text.includes(k.body.data.api_key) && !list.text.includes(co.apiKey), 'no secret in listings');
        const del = await h.request('DELETE', `/v1/companies/${co.companyId}/api_keys/${k.body.data.key_id}`, {
          auth: co.auth,
        });
        assert.equal(del.status, 200, del.text);
        assertError(await h.request('GET', '/v1/accounts', { auth: second }), 401);
        assert.equal((await h.request('GET', '/v1/accounts', { auth: co.auth })).status, 200);
        const other = await signUpCompany(h, 'Other');
        assertError(await h.request('GET', `/v1/companies/${co.companyId}/api_keys`, { auth: other.auth }), 404);
        assertError(
          await h.request('POST', `/v1/companies/${co.companyId}/api_keys`, { auth: [other.email, other.password] }),
          404,
        );
        // A key of one company never authenticates another company id.
        assertError(await h.request('GET', '/v1/accounts', { auth: [co.companyId, other.apiKey] }), 401);
      },
    );

    test('companies: stripe needs a processor key; sandbox is the default', async () => {
      const co = await signUpCompany(h);
      assertError(
        await h.request('POST', '/v1/companies', {
          auth: [co.email, co.password],
          body: { name: 'S', processor: 'stripe' },
        }),
        400,
        'invalid_request',
      );
      const s = await h.request('POST', '/v1/companies', {
        auth: [co.email, co.password],
        body: { name: 'S', processor: 'stripe', processor_api_key: 'rk_test_123' },
      });
      assert.equal(s.status, 200, s.text);
      assert.equal(s.body.data.processor, 'stripe');
      assertError(await h.request('POST', '/v1/companies', { body: { name: 'S' } }), 401);
    });

    test('accounts: create with or without trailing slash, get, edit, list with cursor paging', async () => {
      const co = await signUpCompany(h);
      const a = await h.request('POST', `/v1/companies/${co.companyId}/accounts/`, {
        auth: co.auth,
        body: { name: 'N', email: 'n@example.com', metadata: { crm: 'x-1', nested: { deep: [1] } } },
      });
      assert.equal(a.status, 200, a.text);
      const acc = a.body.data;
      assert.match(acc.account_id, /^a_/);
      assert.deepEqual(acc.balances, []);
      assert.equal(acc.plan_id, null);
      assert.equal(
        (await h.request('POST', `/v1/companies/${co.companyId}/accounts`, { auth: co.auth })).status,
        200,
        'no body at all',
      );
      const put = await h.request('PUT', `/v1/accounts/${acc.account_id}`, {
        auth: co.auth,
        body: { name: 'M', processor_id: 'cus_1' },
      });
      assert.equal(put.body.data.name, 'M');
      assert.equal(put.body.data.email, 'n@example.com');
      assert.equal(put.body.data.processor_id, 'cus_1');
      const got = await h.request('GET', `/v1/accounts/${acc.account_id}`, { auth: co.auth });
      assert.deepEqual(got.body.data.metadata, { crm: 'x-1', nested: { deep: [1] } });
      for (let i = 0; i < 3; i++)
        await h.request('POST', `/v1/companies/${co.companyId}/accounts`, { auth: co.auth, body: {} });
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const q: string = cursor ? `&starting_after=${cursor}` : '';
        const page = await h.request('GET', `/v1/accounts?limit=2${q}`, { auth: co.auth });
        assert.equal(page.status, 200, page.text);
        seen.push(...page.body.data.map((x: { account_id: string }) => x.account_id));
        cursor = page.body.next_cursor;
        assert.equal(page.body.has_more, cursor !== null);
      } while (cursor);
      assert.equal(seen.length, 5);
      assert.equal(seen[seen.length - 1], acc.account_id, 'newest first');
      assertError(await h.request('GET', '/v1/accounts?starting_after=a_nope', { auth: co.auth }), 400);
      assertError(await h.request('GET', '/v1/accounts?limit=0', { auth: co.auth }), 400);
      assertError(await h.request('GET', '/v1/accounts?limit=101', { auth: co.auth }), 400);
    });

    test('cross-company: every account route answers 404 with the body of a missing account', async () => {
      const co = await signUpCompany(h);
      const other = await signUpCompany(h, 'Other');
      const acc = await createAccountWithBalance(h, co, 'tokens', 10);
      const probes: [string, string, unknown?][] = [
        ['GET', `/v1/accounts/${acc}`],
        ['PUT', `/v1/accounts/${acc}`, { name: 'x' }],
        ['GET', `/v1/accounts/${acc}/balance/tokens`],
        ['POST', `/v1/accounts/${acc}/balance/gold`, {}],
        ['POST', `/v1/accounts/${acc}/balance/tokens/adjustments`, { amount: 5 }],
        ['GET', `/v1/accounts/${acc}/transactions`],
      ];
      for (const [method, path, body] of probes) {
        const theirs = await h.request(method, path, { auth: other.auth, ...(body !== undefined ? { body } : {}) });
        const missing = await h.request(method, path.replace(acc, 'a_missing000000000'), {
          auth: other.auth,
          ...(body !== undefined ? { body } : {}),
        });
        assertError(theirs, 404, 'not_found');
        assert.equal(
          theirs.text.replace(acc, 'ID'),
          missing.text.replace('a_missing000000000', 'ID'),
          `${method} ${path}`,
        );
      }
      assertError(
        await h.request('POST', `/v1/companies/${co.companyId}/accounts`, { auth: other.auth, body: {} }),
        404,
      );
      const b = await h.request('GET', `/v1/accounts/${acc}/balance/tokens`, { auth: co.auth });
      assert.equal(b.body.data.amount, 10, 'nothing changed');
    });

    test('balances: create (409 twice), denomination rules, adjustments, transactions by denomination', async () => {
      const co = await signUpCompany(h);
      const acc = await createAccountWithBalance(h, co, 'tokens', 0);
      assertError(
        await h.request('POST', `/v1/accounts/${acc}/balance/tokens`, { auth: co.auth, body: {} }),
        409,
        'conflict',
      );
      assert.equal(
        (await h.request('POST', `/v1/accounts/${acc}/balance/Tokens`, { auth: co.auth })).status,
        200,
        'case-sensitive',
      );
      assert.equal(
        (await h.request('POST', `/v1/accounts/${acc}/balance/gpu.hours:A-1_b`, { auth: co.auth, body: { amount: 5 } }))
          .status,
        200,
      );
      assertError(await h.request('POST', `/v1/accounts/${acc}/balance/${'x'.repeat(65)}`, { auth: co.auth }), 400);
      assertError(await h.request('POST', `/v1/accounts/${acc}/balance/bad%20name`, { auth: co.auth }), 400);
      assertError(
        await h.request('POST', `/v1/accounts/${acc}/balance/neg`, { auth: co.auth, body: { amount: -1 } }),
        400,
      );
      const b = await h.request('GET', `/v1/accounts/${acc}/balance/tokens`, { auth: co.auth });
      assert.deepEqual(b.body.data, {
        account_id: acc,
        denomination: 'tokens',
        amount: 0,
        pending: 0,
        available: 0,
        refill_threshold: null,
        refill_amount: null,
        refill_usd_amount: null,
        refill_on_day: null,
        refill_monthly: false,
        next_refill_at: null,
        auto_refill_paused: false,
        consecutive_declines: 0,
        max_refills_per_month: null,
        next_expiry: null,
        spend: { day: 0, month: 0 },
        limits: { daily: null, monthly: null },
      });
      const up = await h.request('POST', `/v1/accounts/${acc}/balance/tokens/adjustments`, {
        auth: co.auth,
        body: { amount: 50, reason: 'goodwill' },
      });
      assert.equal(up.body.data.amount, 50);
      const down = await h.request('POST', `/v1/accounts/${acc}/balance/tokens/adjustments`, {
        auth: co.auth,
        body: { amount: -70 },
      });
      assert.equal(down.body.data.amount, -20);
      assertError(
        await h.request('POST', `/v1/accounts/${acc}/balance/tokens/adjustments`, {
          auth: co.auth,
          body: { amount: 0 },
        }),
        400,
      );
      assertError(
        await h.request('POST', `/v1/accounts/${acc}/balance/tokens/adjustments`, {
          auth: co.auth,
          body: { amount: 1.5 },
        }),
        400,
      );
      assertError(await h.request('GET', `/v1/accounts/${acc}/balance/gold`, { auth: co.auth }), 404);
      const tx = await h.request('GET', `/v1/accounts/${acc}/transactions?denomination=tokens`, { auth: co.auth });
      assert.deepEqual(
        tx.body.data.map((t: { kind: string; amount: number; reason?: string }) => [t.kind, t.amount, t.reason]),
        [
          ['adjustment', -70, undefined],
          ['adjustment', 50, 'goodwill'],
        ],
      );
      const all = await h.request('GET', `/v1/accounts/${acc}/transactions`, { auth: co.auth });
      assert.equal(all.body.data.length, 3, 'plus the grant on gpu.hours');
      const acct = await h.request('GET', `/v1/accounts/${acc}`, { auth: co.auth });
      assert.deepEqual(acct.body.data.balances.map((x: { denomination: string }) => x.denomination).sort(), [
        'Tokens',
        'gpu.hours:A-1_b',
        'tokens',
      ]);
    });

    test('password guessing is rate limited (429 with Retry-After)', async () => {
      const limited = await startHarness(dialect, {}, 3);
      try {
        const co = await signUpCompany(limited);
        let last: Awaited<ReturnType<typeof limited.request>> | undefined;
        for (let i = 0; i < 6; i++)
          last = await limited.request('GET', `/v1/users/${co.userId}`, { auth: [co.email, `guess-${i}`] });
        assertError(last!, 429, 'rate_limited');
        assert.ok(last!.headers.get('retry-after'));
      } finally {
        await limited.close();
      }
    });
  });
}
