// Guarantees, on SQLite and PostgreSQL, with a real SMTP server on loopback: sign-up emails a
// verification link under BILLING_PUBLIC_URL; following it sets emailVerified, once; a password reset link sets
// a new password once, within the hour, and ends every session; an unknown email gets 202 and no message;
// expired, reused and unknown tokens are 400 naming `token`, a weak password 400 naming `password`.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { HTTP_DIALECTS, assertError, startHarness, type Harness } from '../support/harness.js';
import { linkToken, startSmtpReceiver, type SmtpReceiver } from '../support/smtp.js';

const PUBLIC_URL = 'https://billing.example.com';
const PASSWORD = 'correct horse battery';

for (const dialect of HTTP_DIALECTS) {
  describe(`email verification and password reset (${dialect})`, () => {
    let h: Harness;
    let smtp: SmtpReceiver;
    let admin: [string, string];

    before(async () => {
      smtp = await startSmtpReceiver();
      h = await startHarness(dialect, { SMTP_URL: smtp.url, BILLING_PUBLIC_URL: PUBLIC_URL });
      // A company's key moves the test clock.
      const u = await signUp();
      const c = await h.request('POST', '/v1/companies', { auth: [u.email, PASSWORD], body: { name: 'Clock' } });
      admin = [c.body.data.company_id, c.body.data.api_key];
    });
    after(async () => {
      await h.close();
      await smtp.close();
    });

    async function signUp(): Promise<{ id: number; email: string }> {
      const email = `u-${randomBytes(4).toString('hex')}@example.com`;
      const r = await h.request('POST', '/v1/users', { body: { name: 'Grace Hopper', email, password: PASSWORD } });
      assert.equal(r.status, 200, r.text);
      return { id: r.body.id, email };
    }
    const advance = (seconds: number) =>
      h.request('POST', '/v1/test_clock/advance', { auth: admin, body: { seconds } });
    const logIn = async (email: string, password: string) => {
      const r = await h.request('POST', '/v1/sessions', { body: { email, password } });
      return { status: r.status, cookie: r.headers.getSetCookie()[0] ?? '', body: r.body };
    };

    test('sign-up emails a verification link; following it verifies the address, once', async () => {
      const u = await signUp();
      const mail = await smtp.next(u.email);
      assert.equal(mail.subject, 'Verify your email address');
      assert.match(mail.from, /no-reply@localhost/);
      assert.ok(mail.text.includes(`${PUBLIC_URL}/verify-email?token=`), mail.text);
      assert.ok(!mail.text.includes(PASSWORD));
      const token = linkToken(mail, '/verify-email');
      const before = await h.request('GET', `/v1/users/${u.id}`, { auth: [u.email, PASSWORD] });
      assert.equal(before.body.emailVerified, false);
      const verified = await h.request('POST', '/v1/email_verifications', { body: { token } });
      assert.equal(verified.status, 200, verified.text);
      assert.equal(verified.body.data.id, u.id);
      assert.equal(verified.body.data.emailVerified, true);
      const afterwards = await h.request('GET', `/v1/users/${u.id}`, { auth: [u.email, PASSWORD] });
      assert.equal(afterwards.body.emailVerified, true);
      for (const t of [token, 'unknown', `${token.slice(0, -1)}A`]) {
        const again = await h.request('POST', '/v1/email_verifications', { body: { token: t } });
        assertError(again, 400, 'invalid_request');
        assert.equal(again.body.error.param, 'token');
      }
    });

    test('resend: a new link for the user (Basic or session); none once verified; another user 404', async () => {
      const u = await signUp();
      const other = await signUp();
      await smtp.next(u.email);
      await smtp.next(other.email);
      const resent = await h.request('POST', `/v1/users/${u.id}/email_verifications`, { auth: [u.email, PASSWORD] });
      assert.equal(resent.status, 202, resent.text);
      assert.deepEqual(resent.body, { data: { sent: true } });
      const token = linkToken(await smtp.next(u.email), '/verify-email');
      assertError(
        await h.request('POST', `/v1/users/${other.id}/email_verifications`, { auth: [u.email, PASSWORD] }),
        404,
        'not_found',
      );
      const s = await logIn(u.email, PASSWORD);
      const headers = { cookie: s.cookie.split(';')[0]!, 'x-csrf-token': s.body.data.csrf_token };
      const viaSession = await h.request('POST', `/v1/users/${u.id}/email_verifications`, { headers });
      assert.equal(viaSession.status, 202, viaSession.text);
      await smtp.next(u.email);
      assert.equal((await h.request('POST', '/v1/email_verifications', { body: { token } })).status, 200);
      const done = await h.request('POST', `/v1/users/${u.id}/email_verifications`, { headers });
      assert.deepEqual(done.body, { data: { sent: false } });
    });

    test('a verification link expires after 7 days', async () => {
      const u = await signUp();
      const token = linkToken(await smtp.next(u.email), '/verify-email');
      assert.equal((await advance(7 * 86_400)).status, 200);
      const late = await h.request('POST', '/v1/email_verifications', { body: { token } });
      assertError(late, 400, 'invalid_request');
      assert.equal(late.body.error.param, 'token');
    });

    test('password reset: 202 for any email, a link only to a user; it sets the password once, logs out', async () => {
      const u = await signUp();
      await smtp.next(u.email);
      const session = await logIn(u.email, PASSWORD);
      assert.equal(session.status, 201);
      assert.match(session.cookie, /; Secure/i, 'BILLING_PUBLIC_URL is https');
      const cookie = session.cookie.split(';')[0]!;

      const nobody = `nobody-${randomBytes(4).toString('hex')}@example.com`;
      for (const email of [nobody, u.email]) {
        const r = await h.request('POST', '/v1/password_resets', { body: { email } });
        assert.equal(r.status, 202, r.text);
        assert.deepEqual(r.body, { data: { sent: true } });
      }
      const mail = await smtp.next(u.email);
      assert.equal(mail.subject, 'Reset your password');
      assert.ok(mail.text.includes(`${PUBLIC_URL}/reset-password?token=`), mail.text);
      assert.deepEqual(
        smtp.messages.filter((m) => m.to.includes(nobody)),
        [],
      );
      const token = linkToken(mail, '/reset-password');

      const weak = await h.request('POST', '/v1/password_resets/complete', { body: { token, password: 'short' } });
      assertError(weak, 400, 'invalid_request');
      assert.equal(weak.body.error.param, 'password');
      const newPassword = 'a brand new passphrase';
      const done = await h.request('POST', '/v1/password_resets/complete', { body: { token, password: newPassword } });
      assert.equal(done.status, 200, done.text);
      assert.equal(done.body.data.id, u.id);

      assert.equal((await logIn(u.email, PASSWORD)).status, 401, 'the old password no longer works');
      assert.equal((await logIn(u.email, newPassword)).status, 201);
      assertError(
        await h.request('GET', '/v1/sessions/current', { headers: { cookie } }),
        401,
        'authentication_required',
      );
      const reused = await h.request('POST', '/v1/password_resets/complete', {
        body: { token, password: 'yet another passphrase' },
      });
      assertError(reused, 400, 'invalid_request');
      assert.equal(reused.body.error.param, 'token');
      assert.equal((await logIn(u.email, newPassword)).status, 201, 'a refused reuse changes nothing');
    });

    test('a reset link expires after 1 hour', async () => {
      const u = await signUp();
      await smtp.next(u.email);
      assert.equal((await h.request('POST', '/v1/password_resets', { body: { email: u.email } })).status, 202);
      const token = linkToken(await smtp.next(u.email), '/reset-password');
      assert.equal((await advance(3600)).status, 200);
      const late = await h.request('POST', '/v1/password_resets/complete', {
        body: { token, password: 'a brand new passphrase' },
      });
      assertError(late, 400, 'invalid_request');
      assert.equal(late.body.error.param, 'token');
      assert.equal((await logIn(u.email, PASSWORD)).status, 201, 'the password is unchanged');
    });

    test('sign-up errors: duplicate email 409, weak password 400', async () => {
      const u = await signUp();
      const dup = await h.request('POST', '/v1/users', {
        body: { name: 'Again', email: u.email.toUpperCase(), password: PASSWORD },
      });
      assertError(dup, 409, 'conflict');
      const weak = await h.request('POST', '/v1/users', {
        body: { name: 'Weak', email: `w-${u.email}`, password: 'short' },
      });
      assertError(weak, 400, 'invalid_request');
    });
  });
}
