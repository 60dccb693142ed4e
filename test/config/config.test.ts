// Guarantee: a bad environment is reported in plain words, every problem at once, before anything
// starts: the server (src/main.ts) and the CLI exit 1 with one line per problem and no stack trace;
// a SQLite directory other than ./data is never created behind the operator's back; an unreachable
// database or a port in use is one plain line too. Good settings keep their types and defaults.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, test } from 'node:test';
import { CONFIG_VARIABLES, ConfigError, loadConfig } from '../../src/config.js';
import { TEST_SECRET_KEY } from '../support/stores.js';
import { SERVER_ENTRY, STACK_LINE, billing, runNode } from '../cli/support.js';

function problemsOf(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.problems;
  }
  return [];
}

describe('loadConfig', () => {
  test('defaults', () => {
    assert.deepEqual(loadConfig({}), {
      host: '127.0.0.1',
      port: 8080,
      databaseUrl: 'sqlite:./data/billing.sqlite',
      testClock: false,
      webhookAllowPrivate: false,
      apiKeyCacheMs: 5_000,
      workerIntervalMs: 1_000,
      workers: true,
      logLevel: 'warn',
      pgPoolSize: 8,
      pgPreparedStatements: true,
      outboxRetentionDays: 7,
      webhookLogRetentionDays: 30,
      signup: 'open',
      dbConnectTimeoutMs: 30_000,
      idempotencyLeaseMs: 30_000,
      rateLimitRequestsPerSecond: 25_000,
      rateLimitEventsPerSecond: 250_000,
      secretKey: null,
      nodeEnv: '',
      eventMaxAgeDays: 35,
      usageRetentionDays: 400,
      publicUrl: 'http://127.0.0.1:8080',
      publicUrlSet: false,
      sessionIdleMinutes: 720,
      signupLimitPerMinute: 20,
      trustProxy: false,
      smtpUrl: null,
      smtpFrom: 'Billing <no-reply@localhost>',
      shutdownTimeoutMs: 10_000,
      httpConnectionTimeoutMs: 60_000,
      httpHeadersTimeoutMs: 20_000,
      httpRequestTimeoutMs: 60_000,
      httpKeepAliveTimeoutMs: 72_000,
      httpMaxConnections: 10_000,
      metricsToken: null,
      chargeActionTimeoutMinutes: 1440,
    });
    assert.ok(CONFIG_VARIABLES.includes('BILLING_SIGNUP'));
  });

  test('good values are typed; empty means the default', () => {
    const c = loadConfig({
      HOST: '0.0.0.0',
      PORT: '0',
      DATABASE_URL: 'postgresql://billing:pw@db:5432/billing',
      BILLING_WORKERS: 'false',
      BILLING_TEST_CLOCK: 'true',
      LOG_LEVEL: 'silent',
      BILLING_SIGNUP: 'closed',
      BILLING_DB_CONNECT_TIMEOUT_MS: '0',
      BILLING_PG_POOL_SIZE: '',
    });
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.port, 0);
    assert.equal(c.workers, false);
    assert.equal(c.testClock, true);
    assert.equal(c.logLevel, 'silent');
    assert.equal(c.signup, 'closed');
    assert.equal(c.dbConnectTimeoutMs, 0);
    assert.equal(c.pgPoolSize, 8);
    assert.equal(loadConfig({ PORT: '65535' }).port, 65535);
    assert.equal(loadConfig({ BILLING_CHARGE_ACTION_TIMEOUT_MINUTES: '60' }).chargeActionTimeoutMinutes, 60);
    assert.equal(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).databaseUrl, 'sqlite::memory:');
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace'])
      assert.equal(loadConfig({ LOG_LEVEL: level }).logLevel, level);
  });

  test('each bad value is named with what it must be and what it was', () => {
    const cases: [NodeJS.ProcessEnv, string][] = [
      [{ PORT: 'abc' }, 'PORT must be an integer from 0 to 65535, got "abc"'],
      [{ PORT: '65536' }, 'PORT must be an integer from 0 to 65535, got "65536"'],
      [{ PORT: '80.5' }, 'PORT must be an integer from 0 to 65535, got "80.5"'],
      [{ PORT: ' 80' }, 'PORT must be an integer from 0 to 65535, got " 80"'],
      [{ BILLING_WORKERS: 'yes' }, 'BILLING_WORKERS must be 1 or 0 (or true or false), got "yes"'],
      [{ LOG_LEVEL: 'bogus' }, 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "bogus"'],
      [{ BILLING_SIGNUP: 'invite' }, 'BILLING_SIGNUP must be open or closed, got "invite"'],
      [
        { BILLING_CHARGE_ACTION_TIMEOUT_MINUTES: '4' },
        'BILLING_CHARGE_ACTION_TIMEOUT_MINUTES must be an integer from 5 to 43200, got "4"',
      ],
      [
        { BILLING_DB_CONNECT_TIMEOUT_MS: '-1' },
        'BILLING_DB_CONNECT_TIMEOUT_MS must be an integer from 0 to 600000, got "-1"',
      ],
      [
        { DATABASE_URL: 'mysql://root:hunter2@db/billing' },
        'DATABASE_URL must be sqlite:<file>, sqlite::memory:, postgres://… or postgresql://…, ' +
          'got "mysql://root:***@db/billing"',
      ],
      [
        { DATABASE_URL: 'sqlite:' },
        'DATABASE_URL must be sqlite:<file>, sqlite::memory:, postgres://… or postgresql://…, got "sqlite:"',
      ],
      [
        { DATABASE_URL: 'sqlite:/nonexistent/dir/x.sqlite' },
        'DATABASE_URL names a SQLite file in a directory that does not exist: /nonexistent/dir (create it first)',
      ],
      [{ DATABASE_URL: 'postgres://u:pw@/billing' }, 'DATABASE_URL is not a valid URL: "postgres://u:***@/billing"'],
    ];
    for (const [env, message] of cases) assert.deepEqual(problemsOf(env), [message], JSON.stringify(env));
  });

  test('every problem is reported at once, in one ConfigError', () => {
    const problems = problemsOf({
      PORT: 'abc',
      DATABASE_URL: 'sqlite:/nonexistent/dir/x.sqlite',
      BILLING_WORKERS: 'maybe',
      LOG_LEVEL: 'bogus',
      BILLING_PG_POOL_SIZE: '0',
    });
    assert.equal(problems.length, 5);
    assert.deepEqual(
      problems.map((p) => p.split(' ')[0]),
      ['PORT', 'BILLING_WORKERS', 'LOG_LEVEL', 'BILLING_PG_POOL_SIZE', 'DATABASE_URL'],
    );
    assert.ok(!existsSync('/nonexistent/dir'));
  });

  test('the default ./data directory need not exist (the server creates it); any other must', () => {
    assert.deepEqual(problemsOf({ DATABASE_URL: 'sqlite:./data/billing.sqlite' }), []);
    assert.deepEqual(problemsOf({ DATABASE_URL: 'sqlite:data/other.sqlite' }), []);
    assert.match(problemsOf({ DATABASE_URL: 'sqlite:./no-such-dir-7f3a/x.sqlite' })[0]!, /does not exist/);
    assert.match(problemsOf({ DATABASE_URL: 'sqlite:./src' })[0]!, /is a directory/);
  });
});

const BAD_ENV = {
  PORT: 'abc',
  DATABASE_URL: 'sqlite:/nonexistent/dir/x.sqlite',
  BILLING_WORKERS: 'maybe',
  LOG_LEVEL: 'bogus',
};
const BAD_ENV_PROBLEMS = [
  '  PORT must be an integer from 0 to 65535, got "abc"',
  '  BILLING_WORKERS must be 1 or 0 (or true or false), got "maybe"',
  '  LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "bogus"',
  '  DATABASE_URL names a SQLite file in a directory that does not exist: /nonexistent/dir (create it first)',
];

describe('a bad environment at start', { concurrency: true }, () => {
  test('the server lists every problem, exits 1, no stack', async () => {
    const r = await runNode(SERVER_ENTRY, [], BAD_ENV);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, ['billing engine: configuration error', ...BAD_ENV_PROBLEMS, ''].join('\n'));
    assert.ok(!existsSync('/nonexistent/dir'));
  });

  test('the CLI lists every problem, exits 1, no stack', async () => {
    const r = await billing(['audit'], BAD_ENV);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, ['billing: configuration error', ...BAD_ENV_PROBLEMS, ''].join('\n'));
  });

  test('the server retries an unreachable PostgreSQL for BILLING_DB_CONNECT_TIMEOUT_MS, then says so', async () => {
    const r = await runNode(SERVER_ENTRY, [], {
      DATABASE_URL: 'postgres://billing:s3cret@127.0.0.1:1/billing',
      BILLING_DB_CONNECT_TIMEOUT_MS: '800',
      PORT: '0',
      BILLING_SECRET_KEY: TEST_SECRET_KEY, // PostgreSQL requires one (checked before connecting)
    });
    assert.equal(r.code, 1);
    const lines = r.stderr.trimEnd().split('\n');
    assert.ok(lines.length >= 2, r.stderr);
    for (const line of lines.slice(0, -1))
      assert.match(line, /^billing engine: database postgres:\/\/billing:\*\*\*@127\.0\.0\.1:1\/billing not reachable/);
    assert.match(
      lines.at(-1)!,
      /^billing engine: cannot reach the PostgreSQL database .* ECONNREFUSED 127\.0\.0\.1:1$/,
    );
    assert.ok(!r.stderr.includes('s3cret'));
    assert.doesNotMatch(r.stderr, STACK_LINE);
  });

  test('a port in use is one line, exit 1', async (t) => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    t.after(() => blocker.close());
    const port = (blocker.address() as { port: number }).port;
    const r = await runNode(SERVER_ENTRY, [], { DATABASE_URL: 'sqlite::memory:', PORT: String(port) });
    assert.equal(r.code, 1);
    assert.equal(r.stderr, `billing engine: 127.0.0.1:${port} is already in use (set HOST and PORT)\n`);
  });
});

describe('BILLING_PUBLIC_URL', () => {
  test('an http(s) URL (emailed links start with it); unset: http://HOST:PORT; anything else is reported', () => {
    const set = loadConfig({ BILLING_PUBLIC_URL: 'https://billing.example.com/' });
    assert.equal(set.publicUrl, 'https://billing.example.com');
    assert.equal(set.publicUrlSet, true);
    const unset = loadConfig({ HOST: '127.0.0.1', PORT: '9000' });
    assert.equal(unset.publicUrl, 'http://127.0.0.1:9000');
    assert.equal(unset.publicUrlSet, false);
    for (const bad of ['billing.example.com', '/billing'])
      assert.throws(
        () => loadConfig({ BILLING_PUBLIC_URL: bad }),
        (e: unknown) =>
          e instanceof ConfigError &&
          e.problems[0] ===
            `BILLING_PUBLIC_URL must be an http:// or https:// URL without query or fragment, got "${bad}"`,
      );
  });
});
