// Guarantees, on SQLite and PostgreSQL: a log-in sets an HttpOnly SameSite=Lax cookie; the
// cookie acts as the user on user routes and, with Billing-Company, as a company the user owns (another's is
// 404, none is 401); a state change without the session's X-CSRF-Token is 403 and changes nothing; a logged-out
// or idle-expired session is 401 everywhere; an Authorization header is never cookie-authenticated.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  HTTP_DIALECTS,
  assertError,
  signUpCompany,
  startHarness,
  type Harness,
  type Reply,
  type RequestOpts,
} from '../support/harness.js';

type Co = Awaited<ReturnType<typeof signUpCompany>>;

function sessionCookie(reply: Reply): string {
  const set = reply.headers.getSetCookie().find((c) => c.startsWith('billing_session='));
  assert.ok(set, `no session cookie in ${JSON.stringify(reply.headers.getSetCookie())}`);
  return set.split(';')[0]!.slice('billing_session='.length);
}

for (const dialect of HTTP_DIALECTS) {
  describe(`sessions (${dialect})`, () => {
    let h: Harness;
    let co: Co;
    let other: Co;

    before(async () => {
      h = await startHarness(dialect);
      co = await signUpCompany(h, 'Acme');
      other = await signUpCompany(h, 'Other');
    });
    after(async () => {
      await h.close();
    });

    async function logIn(who: Co): Promise<{ cookie: string; csrf: string; reply: Reply }> {
      const reply = await h.request('POST', '/v1/sessions', { body: { email: who.email, password: who.password } });
      assert.equal(reply.status, 201, reply.text);
      return { cookie: sessionCookie(reply), csrf: reply.body.data.csrf_token, reply };
    }
    /** A request with the session cookie (and the CSRF token and company when given). */
    const as = (s: { cookie: string; csrf?: string }, company?: string, opts: RequestOpts = {}): RequestOpts => ({
      ...opts,
      headers: {
        cookie: `billing_session=${s.cookie}`,
        ...(s.csrf !== undefined ? { 'x-csrf-token': s.csrf } : {}),
        ...(company !== undefined ? { 'billing-company': company } : {}),
        ...(opts.headers ?? {}),
      },
    });

    test('log in: 201 with the user, a CSRF token, the end of the session; HttpOnly SameSite=Lax cookie', async () => {
      const { reply, csrf } = await logIn(co);
      assert.equal(reply.body.data.user.id, co.userId);
      assert.equal(reply.body.data.user.email, co.email);
      assert.equal(typeof csrf, 'string');
      assert.ok(csrf.length >= 32);
      const clock = await h.request('GET', '/v1/test_clock', { auth: co.auth });
      const idleEnd = Date.parse(clock.body.data.now) + 720 * 60_000;
      assert.equal(Date.parse(reply.body.data.expires_at), idleEnd);
      const set = reply.headers.getSetCookie().find((c) => c.startsWith('billing_session='))!;
      assert.match(set, /; HttpOnly/i);
      assert.match(set, /; SameSite=Lax/i);
      assert.match(set, /; Path=\//i);
      assert.doesNotMatch(set, /; Secure/i, 'plain http without BILLING_PUBLIC_URL https');
      const me = await h.request('GET', '/v1/sessions/current', as({ cookie: sessionCookie(reply) }));
      assert.equal(me.status, 200, me.text);
      assert.equal(me.body.data.user.id, co.userId);
      assert.equal(me.body.data.csrf_token, csrf);
      assert.deepEqual(
        me.body.data.companies.map((c: { company_id: string; name: string; processor: string }) => [
          c.company_id,
          c.name,
          c.processor,
        ]),
        [[co.companyId, 'Acme', 'sandbox']],
      );
    });

    test('log in ignores Idempotency-Key: each log-in is a new session with its cookie', async () => {
      const body = { email: co.email, password: co.password };
      const headers = { 'idempotency-key': 'login-1' };
      const first = await h.request('POST', '/v1/sessions', { body, headers });
      const second = await h.request('POST', '/v1/sessions', { body, headers });
      assert.equal(second.status, 201, second.text);
      assert.equal(second.headers.get('idempotent-replayed'), null);
      assert.notEqual(sessionCookie(first), sessionCookie(second));
      assert.notEqual(first.body.data.csrf_token, second.body.data.csrf_token);
    });

    test('wrong password or unknown email: 401 without a Basic challenge; no cookie', async () => {
      for (const body of [
        { email: co.email, password: 'wrong password' },
        { email: 'nobody@example.com', password: co.password },
      ]) {
        const r = await h.request('POST', '/v1/sessions', { body });
        assertError(r, 401, 'authentication_required');
        assert.equal(r.headers.get('www-authenticate'), null);
        assert.deepEqual(r.headers.getSetCookie(), []);
      }
    });

    test('the cookie acts as the company named by Billing-Company; none: 401 naming it; not owned: 404', async () => {
      const s = await logIn(co);
      const created = await h.request(
        'POST',
        `/v1/companies/${co.companyId}/accounts`,
        as(s, co.companyId, { body: { name: 'Via session' } }),
      );
      assert.equal(created.status, 200, created.text);
      const read = await h.request('GET', `/v1/accounts/${created.body.data.account_id}`, as(s, co.companyId));
      assert.equal(read.status, 200, read.text);
      assert.equal(read.body.data.name, 'Via session');

      const missing = await h.request('GET', `/v1/accounts/${created.body.data.account_id}`, as(s));
      assertError(missing, 401, 'authentication_required');
      assert.match(missing.body.error.message, /Billing-Company/);
      assert.equal(missing.headers.get('www-authenticate'), null);

      for (const company of [other.companyId, 'c_doesnotexist', 'not-a-company']) {
        const r = await h.request('GET', '/v1/accounts', as(s, company));
        assertError(r, 404, 'not_found');
      }
      // The other company's account is invisible through our own company too.
      const theirs = await h.request('POST', `/v1/companies/${other.companyId}/accounts`, {
        auth: other.auth,
        body: { name: 'Theirs' },
      });
      const peek = await h.request('GET', `/v1/accounts/${theirs.body.data.account_id}`, as(s, co.companyId));
      assertError(peek, 404, 'not_found');
    });

    test('a state change without the CSRF token (or with a wrong one) is 403 and changes nothing', async () => {
      const s = await logIn(co);
      const before = await h.request('GET', '/v1/accounts?limit=100', as(s, co.companyId));
      assert.equal(before.status, 200, before.text);
      for (const csrf of [undefined, 'forged', `${s.csrf}x`]) {
        const r = await h.request(
          'POST',
          `/v1/companies/${co.companyId}/accounts`,
          as({ cookie: s.cookie, ...(csrf !== undefined ? { csrf } : {}) }, co.companyId, { body: { name: 'Forged' } }),
        );
        assertError(r, 403, 'forbidden');
        assert.equal(r.body.error.code, 'csrf_token_invalid');
      }
      const key = await h.request('POST', `/v1/companies/${co.companyId}/api_keys`, as({ cookie: s.cookie }));
      assertError(key, 403, 'forbidden');
      const logout = await h.request('DELETE', '/v1/sessions/current', as({ cookie: s.cookie }));
      assertError(logout, 403, 'forbidden');
      const afterwards = await h.request('GET', '/v1/accounts?limit=100', as(s, co.companyId));
      assert.deepEqual(afterwards.body, before.body);
      const keys = await h.request('GET', `/v1/companies/${co.companyId}/api_keys`, { auth: co.auth });
      assert.equal(keys.body.data.length, 1);
      assert.equal((await h.request('GET', '/v1/sessions/current', as(s))).status, 200, 'still logged in');
    });

    test('on user routes the cookie acts as the user: GET /v1/companies, users, new companies and keys', async () => {
      const s = await logIn(co);
      const mine = await h.request('GET', '/v1/companies', as(s));
      assert.equal(mine.status, 200, mine.text);
      assert.deepEqual(
        mine.body.data.map((c: { company_id: string }) => c.company_id),
        [co.companyId],
      );
      const basic = await h.request('GET', '/v1/companies', { auth: [other.email, other.password] });
      assert.deepEqual(
        basic.body.data.map((c: { company_id: string }) => c.company_id),
        [other.companyId],
      );
      assertError(await h.request('GET', '/v1/companies', { auth: co.auth }), 401, 'authentication_required');
      assertError(await h.request('GET', '/v1/companies'), 401, 'authentication_required');

      assert.equal((await h.request('GET', `/v1/users/${co.userId}`, as(s))).status, 200);
      assertError(await h.request('GET', `/v1/users/${other.userId}`, as(s)), 404, 'not_found');
      const keys = await h.request('GET', `/v1/companies/${co.companyId}/api_keys`, as(s));
      assert.equal(keys.status, 200, keys.text);
      assertError(await h.request('GET', `/v1/companies/${other.companyId}/api_keys`, as(s)), 404, 'not_found');

      const second = await h.request('POST', '/v1/companies', as(s, undefined, { body: { name: 'Second' } }));
      assert.equal(second.status, 200, second.text);
      const now = await h.request('GET', '/v1/companies', as(s));
      assert.deepEqual(
        now.body.data.map((c: { name: string }) => c.name),
        ['Acme', 'Second'],
      );
    });

    test('an Authorization header is never cookie-authenticated and needs no CSRF token', async () => {
      const s = await logIn(co);
      const r = await h.request('POST', `/v1/companies/${other.companyId}/accounts`, {
        auth: other.auth,
        body: { name: 'Key wins' },
        headers: { cookie: `billing_session=${s.cookie}`, 'billing-company': co.companyId },
      });
      assert.equal(r.status, 200, r.text);
      const wrong = await h.request('GET', '/v1/accounts', {
        auth: [co.companyId, 'sk_wrong'],
        headers: { cookie: `billing_session=${s.cookie}`, 'billing-company': co.companyId },
      });
      assertError(wrong, 401, 'authentication_required');
      assertError(
        await h.request('GET', '/v1/sessions/current', { auth: [co.email, co.password] }),
        401,
        'authentication_required',
      );
    });

    test('log out revokes the session: its cookie is 401 everywhere, the cookie is cleared', async () => {
      const s = await logIn(co);
      const still = await logIn(co);
      const out = await h.request('DELETE', '/v1/sessions/current', as(s));
      assert.equal(out.status, 200, out.text);
      assert.deepEqual(out.body, { data: { revoked: true } });
      const cleared = out.headers.getSetCookie().find((c) => c.startsWith('billing_session='));
      assert.ok(cleared);
      assert.match(cleared, /Expires=Thu, 01 Jan 1970|Max-Age=0/i);
      for (const [method, path, company] of [
        ['GET', '/v1/sessions/current', undefined],
        ['GET', '/v1/companies', undefined],
        ['GET', '/v1/accounts', co.companyId],
        ['DELETE', '/v1/sessions/current', undefined],
      ] as const) {
        const r = await h.request(method, path, as(s, company));
        assertError(r, 401, 'authentication_required');
        assert.equal(r.headers.get('www-authenticate'), null);
      }
      assert.equal((await h.request('GET', '/v1/sessions/current', as(still))).status, 200, 'other sessions live on');
      assertError(await h.request('GET', '/v1/sessions/current', as({ cookie: 'garbage' })), 401);
      assertError(await h.request('GET', '/v1/sessions/current'), 401, 'authentication_required');
    });

    test('a session ends after BILLING_SESSION_IDLE_MINUTES without requests; each request extends it', async () => {
      const s = await logIn(co);
      const idle = await logIn(co);
      const advance = (seconds: number) =>
        h.request('POST', '/v1/test_clock/advance', { auth: co.auth, body: { seconds } });
      assert.equal((await advance(11 * 3600)).status, 200);
      const seen = await h.request('GET', '/v1/sessions/current', as(s));
      assert.equal(seen.status, 200, seen.text);
      const clock = await h.request('GET', '/v1/test_clock', { auth: co.auth });
      assert.equal(Date.parse(seen.body.data.expires_at), Date.parse(clock.body.data.now) + 720 * 60_000);
      assert.equal((await advance(2 * 3600)).status, 200);
      assert.equal((await h.request('GET', '/v1/sessions/current', as(s))).status, 200, 'seen 2 hours ago');
      assertError(await h.request('GET', '/v1/sessions/current', as(idle)), 401, 'authentication_required');
    });
  });
}
