// Guarantee: `npm test` without a reachable PostgreSQL stops at once with one paragraph saying how to start
// one or how to run without it (exit 1), and `TEST_DIALECTS=sqlite` (npm run test:sqlite) needs none.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { childEnv } from '../support/child-env.js';

const run = promisify(execFile);

/** A port on which nothing listens: one the OS just handed out and that was closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function check(env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  return run(process.execPath, ['--import', 'tsx', 'test/support/check-postgres.ts'], {
    env: childEnv(env),
  }).then(
    (r) => ({ code: 0, stderr: r.stderr }),
    (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
  );
}

describe('the check before npm test', () => {
  test('PostgreSQL unreachable: exit 1 with one paragraph naming the way out', async () => {
    const url = `postgres://postgres:secret@127.0.0.1:${await closedPort()}/test`;
    const r = await check({ TEST_DATABASE_URL: url });
    assert.equal(r.code, 1);
    const paragraph = r.stderr.trim();
    assert.ok(!paragraph.includes('\n'), `one paragraph: ${r.stderr}`);
    assert.match(paragraph, /cannot reach it/);
    assert.match(paragraph, /npm run test:sqlite/);
    assert.match(paragraph, /TEST_DATABASE_URL/);
    assert.doesNotMatch(paragraph, /secret/, 'no password in the message');
    assert.doesNotMatch(paragraph, / {4}at /, 'no stack trace');
  });

  test('TEST_DIALECTS=sqlite needs no PostgreSQL', async () => {
    const url = `postgres://postgres@127.0.0.1:${await closedPort()}/test`;
    const r = await check({ TEST_DATABASE_URL: url, TEST_DIALECTS: 'sqlite' });
    assert.deepEqual(r, { code: 0, stderr: '' });
  });
});
