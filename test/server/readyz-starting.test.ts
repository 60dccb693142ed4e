// Guarantee: the port opens before the database is reached and migrated. Meanwhile /healthz answers 200,
// /readyz 503 `not_ready` saying what the start waits for, and every other request 503 with Retry-After,
// all in the error envelope; once migrated the same port serves the app (/readyz 200). A SIGTERM during
// the start closes the port and exits 0. PostgreSQL is held back two ways: nothing listens yet at the
// port DATABASE_URL names (a proxy opens there later), or another connection holds the migration lock.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { type Server, type Socket, connect, createServer } from 'node:net';
import { type TestContext, describe, test } from 'node:test';
import pg from 'pg';
import { freshDatabase } from '../cli/support.js';
import { until } from '../support/wait.js';
import { type Child, startChild } from './support.js';

/** The advisory lock PostgresStore takes while it migrates (MIGRATION_LOCK_ID in src/store/postgres.ts). */
const MIGRATION_LOCK_ID = 727_001;

type Envelope = { error: { type: string; code: string; message: string } };

/** What a starting server answers, asserted in full. */
async function assertStarting(url: string, phase: string): Promise<void> {
  const health = await fetch(`${url}/healthz`);
  assert.equal(health.status, 200);
  assert.deepEqual(await health.json(), { status: 'ok' });

  const ready = await fetch(`${url}/readyz`);
  assert.equal(ready.status, 503);
  assert.match(ready.headers.get('content-type') ?? '', /^application\/json/);
  assert.ok(ready.headers.get('request-id'));
  const body = (await ready.json()) as Envelope;
  assert.equal(body.error.type, 'service_unavailable');
  assert.equal(body.error.code, 'not_ready');
  assert.equal(body.error.message, `starting: ${phase}`);

  const other = await fetch(`${url}/v1/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Early', email: 'early@example.com', password: 'correct horse battery' }),
  });
  assert.equal(other.status, 503);
  assert.equal(other.headers.get('retry-after'), '1');
  const otherBody = (await other.json()) as Envelope;
  assert.equal(otherBody.error.type, 'service_unavailable');
  assert.equal(otherBody.error.code, 'not_ready');
  assert.match(otherBody.error.message, new RegExp(`starting \\(${phase}\\)`));
}

/** Resolves once the server's `url` listens ready, and /readyz answers 200 there. */
async function assertBecomesReady(child: Child, url: string): Promise<void> {
  await until('the server listens ready', () => /listening on /.test(child.stdout()));
  assert.ok(child.stdout().includes(`listening on ${url} `), child.stdout());
  const res = await fetch(`${url}/readyz`);
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { status: 'ready' });
}

/** A connection that holds the migration lock, and whether the server's migration waits on it. */
async function holdMigrationLock(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => {});
  await client.connect();
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
  return {
    async waitedOn(): Promise<boolean> {
      // In this test's database only: a server migrating another database (a test running beside this one)
      // waits on a lock of the same id there.
      const r = await client.query(
        "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND NOT granted " +
          'AND database = (SELECT oid FROM pg_database WHERE datname = current_database())',
        [MIGRATION_LOCK_ID],
      );
      return r.rowCount === 1;
    },
    async release(): Promise<void> {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]);
    },
    end: () => client.end().catch(() => {}),
  };
}

async function stopCleanly(child: Child): Promise<void> {
  child.proc.kill('SIGTERM');
  assert.equal(await child.exited, 0, child.stderr());
  assert.match(child.stderr(), /stopped cleanly/);
}

/** Undoes in reverse order what a test set up (the child before its database). */
function cleanups(t: TestContext): (fn: () => unknown) => void {
  const stack: (() => unknown)[] = [];
  t.after(async () => {
    for (const fn of stack.reverse()) await fn();
  });
  return (fn) => stack.push(fn);
}

describe('a starting server (postgres)', () => {
  /** A fresh database whose migration lock the test holds, and a server started on it, waiting for the lock. */
  async function startedOnHeldLock(t: TestContext) {
    const after = cleanups(t);
    const db = await freshDatabase('postgres');
    after(() => db.drop());
    const lock = await holdMigrationLock(db.url);
    after(() => lock.end());
    const child = await startChild({ DATABASE_URL: db.url }, { until: 'starting' });
    after(() => child.proc.kill('SIGKILL'));
    await until('the migration waits for the lock', () => lock.waitedOn());
    return { after, db, lock, child };
  }

  test('while migrations wait: /healthz 200, /readyz and the rest 503; then the same port serves', async (t) => {
    const { lock, child } = await startedOnHeldLock(t);
    await assertStarting(child.url, 'running migrations');
    await lock.release();
    await assertBecomesReady(child, child.url);
    await stopCleanly(child);
  });

  test('while PostgreSQL cannot be reached: "waiting for the database", until it can', async (t) => {
    const after = cleanups(t);
    const db = await freshDatabase('postgres');
    after(() => db.drop());
    // A free port, with nothing listening there until the proxy opens.
    const probe = createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    const url = new URL(db.url);
    url.host = `127.0.0.1:${port}`;
    const child = await startChild(
      { DATABASE_URL: url.toString(), BILLING_DB_CONNECT_TIMEOUT_MS: '600000' },
      { until: 'starting' },
    );
    after(() => child.proc.kill('SIGKILL'));

    await until('a connection attempt failed', () => /not reachable/.test(child.stderr()));
    await assertStarting(child.url, 'waiting for the database');
    const proxy = await forward(port, new URL(db.url));
    after(() => proxy.close());
    await assertBecomesReady(child, child.url);
    await stopCleanly(child);
  });

  test('SIGTERM while migrations wait: the port closes, exit 0; the next start migrates', async (t) => {
    const { after, db, lock, child } = await startedOnHeldLock(t);
    child.proc.kill('SIGTERM');
    assert.equal(await child.exited, 0, child.stderr());
    assert.match(child.stderr(), /SIGTERM received while starting \(running migrations\)/);
    assert.match(child.stderr(), /stopped cleanly before the start finished/);
    await assert.rejects(fetch(`${child.url}/healthz`));

    await lock.release();
    const again = await startChild({ DATABASE_URL: db.url });
    after(() => again.proc.kill('SIGKILL'));
    assert.equal((await fetch(`${again.url}/readyz`)).status, 200);
    await stopCleanly(again);
  });
});

/** Forwards 127.0.0.1:`port` to `target`'s host and port. */
async function forward(port: number, target: URL): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return {
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
