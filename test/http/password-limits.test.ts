// Guarantees (contract "Identity, sign-up and keys", issue 16 defect 4), on SQLite and PostgreSQL: only FAILED
// password attempts count, per email and per client address (30 a minute by default), and at the limit the answer
// is 429 rate_limited with Retry-After even for the right password; successes never count; requests with a
// company's API key are never throttled by it; sign-ups are limited per client address
// (BILLING_SIGNUP_LIMIT_PER_MINUTE); the client address comes from X-Forwarded-For only with BILLING_TRUST_PROXY.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { HTTP_DIALECTS, assertError, signUpCompany, startHarness, type Harness } from '../support/harness.js';

/** The server's defaults: 30 failed password attempts a minute, 20 sign-ups a minute per address. */
const ATTEMPTS = 30;
const SIGNUPS = 20;
const from = (ip: string) => ({ 'x-forwarded-for': ip });
const newEmail = () => `u-${randomBytes(4).toString('hex')}@example.com`;

for (const dialect of HTTP_DIALECTS) {
  describe(`password and sign-up limits behind a trusted proxy (${dialect})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(
        dialect,
        { BILLING_TRUST_PROXY: '127.0.0.1', BILLING_SIGNUP_LIMIT_PER_MINUTE: String(SIGNUPS) },
        ATTEMPTS,
      );
    });
    after(async () => {
      await h.close();
    });

    test("bad sign-ups from one address do not lock out another address's sign-up; that one is limited", async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 30; i++) {
        const r = await h.request('POST', '/v1/users', {
          headers: from('203.0.113.1'),
          body: { name: 'Bad', email: newEmail(), password: 'short' },
        });
        statuses.push(r.status);
      }
      assert.deepEqual(statuses.slice(0, SIGNUPS), Array(SIGNUPS).fill(400));
      assert.deepEqual(statuses.slice(SIGNUPS), Array(30 - SIGNUPS).fill(429));
      const limited = await h.request('POST', '/v1/users', {
        headers: from('203.0.113.1'),
        body: { name: 'Bad', email: newEmail(), password: 'long enough password' },
      });
      assertError(limited, 429, 'rate_limited');
      assert.ok(Number(limited.headers.get('retry-after')) > 0);
      const legit = await h.request('POST', '/v1/users', {
        headers: from('198.51.100.7'),
        body: { name: 'Legit', email: newEmail(), password: 'long enough password' },
      });
      assert.equal(legit.status, 200, legit.text);
    });

    test("wrong passwords on company A's keys never throttle company B's API-key requests", async () => {
      const a = await signUpCompany(h, 'A');
      const b = await signUpCompany(h, 'B');
      for (let i = 0; i < ATTEMPTS + 5; i++) {
        const r = await h.request('GET', `/v1/companies/${a.companyId}/api_keys`, {
          auth: [a.email, `wrong-${i}`],
          headers: from('203.0.113.2'),
        });
        assert.ok(r.status === 401 || r.status === 429, r.text);
      }
      for (let i = 0; i < ATTEMPTS + 5; i++) {
        const r = await h.request('GET', `/v1/companies/${b.companyId}/api_keys`, {
          auth: b.auth,
          headers: from('203.0.113.2'),
        });
        assert.equal(r.status, 200, r.text);
      }
      const bOwner = await h.request('GET', `/v1/companies/${b.companyId}/api_keys`, {
        auth: [b.email, b.password],
        headers: from('198.51.100.8'),
      });
      assert.equal(bOwner.status, 200, bOwner.text);
    });

    test('a company key on a user-only route is 401 and is no password guess', async () => {
      const co = await signUpCompany(h);
      for (let i = 0; i < ATTEMPTS + 5; i++) {
        const r = await h.request('GET', '/v1/companies', { auth: co.auth, headers: from('203.0.113.5') });
        assertError(r, 401, 'authentication_required');
      }
      const owner = await h.request('GET', '/v1/companies', {
        auth: [co.email, co.password],
        headers: from('203.0.113.5'),
      });
      assert.equal(owner.status, 200, owner.text);
    });

    test('X-Forwarded-Proto https from the trusted proxy makes the session cookie Secure', async () => {
      const co = await signUpCompany(h);
      const body = { email: co.email, password: co.password };
      const tls = await h.request('POST', '/v1/sessions', { body, headers: { 'x-forwarded-proto': 'https' } });
      assert.equal(tls.status, 201, tls.text);
      assert.match(tls.headers.getSetCookie()[0]!, /; Secure/i);
      const plain = await h.request('POST', '/v1/sessions', { body });
      assert.doesNotMatch(plain.headers.getSetCookie()[0]!, /; Secure/i);
    });

    test('successful password requests never count', async () => {
      const co = await signUpCompany(h);
      for (let i = 0; i < ATTEMPTS + 10; i++) {
        const r = await h.request('GET', `/v1/users/${co.userId}`, {
          auth: [co.email, co.password],
          headers: from('203.0.113.3'),
        });
        assert.equal(r.status, 200, r.text);
      }
    });

    test('failures count per email and per address; at the limit 429 even for the right password', async () => {
      const victim = await signUpCompany(h);
      const bystander = await signUpCompany(h);
      for (let i = 0; i < ATTEMPTS; i++) {
        const r = await h.request('POST', '/v1/sessions', {
          headers: from(`192.0.2.${i + 1}`),
          body: { email: victim.email, password: `wrong-${i}` },
        });
        assertError(r, 401, 'authentication_required');
      }
      const right = await h.request('POST', '/v1/sessions', {
        headers: from('198.51.100.9'),
        body: { email: victim.email, password: victim.password },
      });
      assertError(right, 429, 'rate_limited');
      assert.ok(Number(right.headers.get('retry-after')) > 0);
      const basic = await h.request('GET', `/v1/users/${victim.userId}`, {
        auth: [victim.email, victim.password],
        headers: from('198.51.100.9'),
      });
      assertError(basic, 429, 'rate_limited');
      const other = await h.request('POST', '/v1/sessions', {
        headers: from('198.51.100.9'),
        body: { email: bystander.email, password: bystander.password },
      });
      assert.equal(other.status, 201, other.text);

      for (let i = 0; i < ATTEMPTS; i++) {
        await h.request('POST', '/v1/sessions', {
          headers: from('203.0.113.4'),
          body: { email: newEmail(), password: 'whatever password' },
        });
      }
      const sameAddress = await h.request('POST', '/v1/sessions', {
        headers: from('203.0.113.4'),
        body: { email: bystander.email, password: bystander.password },
      });
      assertError(sameAddress, 429, 'rate_limited');
    });
  });

  describe(`X-Forwarded-For without a trusted proxy (${dialect})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(dialect, {}, ATTEMPTS);
    });
    after(async () => {
      await h.close();
    });

    test('X-Forwarded-Proto is ignored: the session cookie is not Secure over plain http', async () => {
      const co = await signUpCompany(h);
      const r = await h.request('POST', '/v1/sessions', {
        body: { email: co.email, password: co.password },
        headers: { 'x-forwarded-proto': 'https', 'x-forwarded-for': '198.51.100.11' },
      });
      assert.equal(r.status, 201, r.text);
      assert.doesNotMatch(r.headers.getSetCookie()[0]!, /; Secure/i);
    });

    test('X-Forwarded-For is ignored: failures from claimed addresses count against the real one', async () => {
      const co = await signUpCompany(h);
      for (let i = 0; i < ATTEMPTS; i++) {
        await h.request('POST', '/v1/sessions', {
          headers: from(`192.0.2.${i + 1}`),
          body: { email: newEmail(), password: 'whatever password' },
        });
      }
      const r = await h.request('POST', '/v1/sessions', {
        headers: from('198.51.100.10'),
        body: { email: co.email, password: co.password },
      });
      assertError(r, 429, 'rate_limited');
    });
  });
}
