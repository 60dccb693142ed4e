// Guarantee: without SMTP_URL the server (the real entry point, as a child process) writes each email's
// recipient, subject and links to its log, so that a developer can follow them; passwords, API keys, session ids
// and CSRF tokens never appear in that log, through sign-up, log-in, a password reset and log-out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { SERVER_ENTRY, nodeArgs } from '../cli/support.js';
import { childEnv } from '../support/child-env.js';

test('the development email sender logs links, never a secret', async (t) => {
  const child = spawn(process.execPath, await nodeArgs(SERVER_ENTRY), {
    env: childEnv({ DATABASE_URL: 'sqlite::memory:', PORT: '0', BILLING_WORKERS: '0', LOG_LEVEL: 'info' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => child.kill('SIGKILL'));
  let log = '';
  const waiters: (() => void)[] = [];
  const collect = (d: Buffer) => {
    log += d.toString();
    for (const w of waiters.splice(0)) w();
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  /** Waits until the log matches `re` (or the child ends); returns the match. */
  const waitFor = async (re: RegExp): Promise<RegExpExecArray> => {
    for (;;) {
      const m = re.exec(log);
      if (m) return m;
      if (child.exitCode !== null) assert.fail(`the server ended: ${log}`);
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  const url = (await waitFor(/listening on (http:\/\/[^\s]+)/))[1]!;
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(url + path, {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { res, body: (await res.json()) as any };
  };

  const email = 'dev@example.com';
  const password = 'first secret passphrase';
  const newPassword = 'second secret passphrase';
  assert.equal((await call('POST', '/v1/users', { name: 'Dev', email, password })).res.status, 200);
  const basic = `Basic ${Buffer.from(`${email}:${password}`).toString('base64')}`;
  const company = await call('POST', '/v1/companies', { name: 'Dev Co' }, { authorization: basic });
  assert.equal(company.res.status, 200);
  const apiKey: string = company.body.data.api_key;
  const login = await call('POST', '/v1/sessions', { email, password });
  assert.equal(login.res.status, 201);
  const sessionId = login.res.headers.getSetCookie()[0]!.split(';')[0]!.split('=')[1]!;
  const csrf: string = login.body.data.csrf_token;
  await call('POST', '/v1/sessions', { email, password: 'a wrong password guess' });

  const verify = await waitFor(/\/verify-email\?token=([A-Za-z0-9_-]+)/);
  assert.equal((await call('POST', '/v1/email_verifications', { token: verify[1] })).res.status, 200);
  assert.equal((await call('POST', '/v1/password_resets', { email })).res.status, 202);
  const reset = await waitFor(/\/reset-password\?token=([A-Za-z0-9_-]+)/);
  const done = await call('POST', '/v1/password_resets/complete', { token: reset[1], password: newPassword });
  assert.equal(done.res.status, 200);
  const again = await call('POST', '/v1/sessions', { email, password: newPassword });
  const cookie = again.res.headers.getSetCookie()[0]!.split(';')[0]!;
  const out = await call('DELETE', '/v1/sessions/current', undefined, {
    cookie,
    'x-csrf-token': again.body.data.csrf_token,
  });
  assert.equal(out.res.status, 200);

  assert.match(log, /Verify your email address/);
  assert.match(log, /Reset your password/);
  for (const secret of [password, newPassword, 'a wrong password guess', apiKey, sessionId, csrf, cookie]) {
    assert.ok(!log.includes(secret), `the log holds a secret: ${secret}`);
  }
});
