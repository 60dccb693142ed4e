/**
 * Starts the real server (real HTTP on an ephemeral port) on a fresh database of either
 * dialect, and offers a small client plus the ledger audit that every scenario ends with.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/config.js';
import { startServer, type Server } from '../../src/server.js';
import { PostgresStore } from '../../src/store/postgres.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/types.js';
import type { ProcessorFactory } from '../../src/processors/types.js';
import { auditGrants } from '../../src/operations/grants.js';
import { DATABASE_URL, TEST_SECRET_KEY, type Dialect } from './stores.js';
import { until } from './wait.js';
import { freshPgDatabase } from './pg-databases.js';

// The dialects are defined once, in stores.ts; the HTTP and scenario tests know them by this name.
export { DIALECTS as HTTP_DIALECTS, type Dialect } from './stores.js';
/** The PostgreSQL the tests use (TEST_DATABASE_URL, or the local server). */
export const PG_URL = DATABASE_URL;

/**
 * A store on a new database: SQLite, a file in its own directory; PostgreSQL, a database of its own, already
 * migrated (pg-databases.ts), whose URL is `pgUrl`.
 */
export async function freshStore(
  dialect: Dialect,
): Promise<{ store: Store; pgUrl: string | undefined; drop(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'billing-test-'));
    const store = new SqliteStore(join(dir, 'billing.sqlite'));
    return {
      store,
      pgUrl: undefined,
      drop: async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const db = await freshPgDatabase();
  const store = await PostgresStore.open({ connectionString: db.url, poolSize: 6 });
  return {
    store,
    pgUrl: db.url,
    drop: async () => {
      await store.close();
      await db.drop();
    },
  };
}

export interface Harness {
  server: Server;
  store: Store;
  /** The PostgreSQL database of the store (undefined on SQLite). */
  pgUrl: string | undefined;
  url: string;
  request(method: string, path: string, opts?: RequestOpts): Promise<Reply>;
  audit(): Promise<void>;
  close(): Promise<void>;
}

export interface RequestOpts {
  auth?: [string, string];
  body?: unknown;
  /** Raw body text (sent as is). */
  raw?: string;
  headers?: Record<string, string>;
}

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export async function startHarness(
  dialect: Dialect,
  env: Record<string, string> = {},
  passwordAttemptsPerMinute = 10_000,
  processors?: ProcessorFactory,
  /** The store the server is given, around the real one (a test that watches each commit). */
  wrapStore?: (store: Store) => Store,
): Promise<Harness> {
  const { store, pgUrl, drop } = await freshStore(dialect);
  const config: Config = {
    ...loadConfig({
      PORT: '0',
      BILLING_TEST_CLOCK: '1',
      BILLING_WORKERS: '0',
      BILLING_WEBHOOK_ALLOW_PRIVATE: '1',
      LOG_LEVEL: 'fatal',
      BILLING_SECRET_KEY: TEST_SECRET_KEY,
      // Test files sign up many users from one address; the limit's own tests set it.
      BILLING_SIGNUP_LIMIT_PER_MINUTE: '0',
      ...env,
    }),
    databaseUrl: pgUrl ?? 'sqlite::memory:',
  };
  const server = await startServer(config, {
    store: wrapStore ? wrapStore(store) : store,
    passwordAttemptsPerMinute,
    ...(processors ? { processors } : {}),
  });
  const url = server.url;
  async function request(method: string, path: string, opts: RequestOpts = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.auth) headers.authorization = `Basic ${Buffer.from(`${opts.auth[0]}:${opts.auth[1]}`).toString('base64')}`;
    let body: string | undefined;
    if (opts.raw !== undefined) body = opts.raw;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
    const res = await fetch(url + path, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  }
  return {
    server,
    store,
    pgUrl,
    url,
    request,
    async audit() {
      assert.deepEqual(
        await store.read(async (tx) => [...(await tx.transactions.auditLedger()), ...(await auditGrants(tx))]),
        [],
        'ledger audit',
      );
    },
    async close() {
      await server.close();
      await drop();
    },
  };
}

let emailCounter = 0;

/** A user, a company of theirs and its API key, through the public API. */
export async function signUpCompany(
  h: Harness,
  name = 'Acme',
): Promise<{
  email: string;
  password: string;
  userId: number;
  companyId: string;
  apiKey: string;
  auth: [string, string];
}> {
  const email = `user${++emailCounter}-${randomBytes(3).toString('hex')}@example.com`;
  const password = 'correct horse battery';
  const u = await h.request('POST', '/v1/users', { body: { name: 'Ada Lovelace', email, password } });
  assert.equal(u.status, 200, u.text);
  const c = await h.request('POST', '/v1/companies', { auth: [email, password], body: { name } });
  assert.equal(c.status, 200, c.text);
  return {
    email,
    password,
    userId: u.body.id,
    companyId: c.body.data.company_id,
    apiKey: c.body.data.api_key,
    auth: [c.body.data.company_id, c.body.data.api_key],
  };
}

/**
 * A company on Stripe (with the fake's key), registered by a user whose first company is on the sandbox: its id and
 * API key as Basic credentials.
 */
export async function signUpStripeCompany(
  h: Harness,
  processorApiKey: string,
): Promise<{ companyId: string; auth: [string, string] }> {
  const user = await signUpCompany(h, 'Sandbox first');
  const c = await h.request('POST', '/v1/companies', {
    auth: [user.email, user.password],
    body: { name: 'On Stripe', processor: 'stripe', processor_api_key: processorApiKey },
  });
  assert.equal(c.status, 200, c.text);
  return { companyId: c.body.data.company_id, auth: [c.body.data.company_id, c.body.data.api_key] };
}

export async function createAccountWithBalance(
  h: Harness,
  co: { companyId: string; auth: [string, string] },
  denomination = 'tokens',
  amount = 1000,
): Promise<string> {
  const a = await h.request('POST', `/v1/companies/${co.companyId}/accounts`, { auth: co.auth, body: { name: 'Bob' } });
  assert.equal(a.status, 200, a.text);
  const b = await h.request('POST', `/v1/accounts/${a.body.data.account_id}/balance/${denomination}`, {
    auth: co.auth,
    body: { amount },
  });
  assert.equal(b.status, 200, b.text);
  return a.body.data.account_id;
}

export function assertError(reply: Reply, status: number, type?: string): void {
  assert.equal(reply.status, status, reply.text);
  assert.equal(typeof reply.body?.error?.message, 'string', `error body: ${reply.text}`);
  assert.equal(typeof reply.body?.error?.type, 'string', `error body: ${reply.text}`);
  if (type !== undefined) assert.equal(reply.body.error.type, type, reply.text);
}

export interface BalanceHold {
  /** Runs a statement meanwhile, on another connection, in the test store's schema. */
  sql(text: string): Promise<pg.QueryResult>;
  /** Waits until a request (a transaction of the server's) is blocked on the held rows. */
  blocked(): Promise<void>;
  /** Lets the waiting requests go on. */
  release(): Promise<void>;
  /** Closes both connections (releasing the rows if still held). */
  end(): Promise<void>;
}

/**
 * Holds the account's balance rows (PostgreSQL, FOR UPDATE) from a connection of the test's to the harness's
 * database: a request that writes them waits inside its transaction, still running, until `release()`.
 */
export async function holdBalancesOf(h: Harness, accountId: string): Promise<BalanceHold> {
  if (h.pgUrl === undefined) throw new Error('holdBalancesOf needs a PostgreSQL harness');
  const locker = new pg.Client({ connectionString: h.pgUrl });
  const other = new pg.Client({ connectionString: h.pgUrl });
  await locker.connect();
  await other.connect();
  const hit = await locker.query('SELECT 1 FROM balances WHERE account_id = $1', [accountId]);
  if (!hit.rowCount) throw new Error(`no balance of ${accountId} in ${h.pgUrl}`);
  await locker.query('BEGIN');
  await locker.query('SELECT 1 FROM balances WHERE account_id = $1 FOR UPDATE', [accountId]);
  const lockerPid = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  return {
    sql: (text) => other.query(text),
    blocked: async () => {
      await until(`a transaction waits on the balance rows of ${accountId}`, async () => {
        const waiting = await other.query('SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [
          lockerPid,
        ]);
        return (waiting.rowCount ?? 0) > 0;
      });
    },
    release: async () => {
      await locker.query('COMMIT');
    },
    end: async () => {
      await locker.end();
      await other.end();
    },
  };
}

/** Waits until a request has claimed its Idempotency-Key. */
export async function claimed(h: Harness, scope: string, key: string): Promise<void> {
  await until(`a request claims the Idempotency-Key ${key}`, () =>
    h.store.read((tx) => tx.idempotency.findIdempotency(scope, key)),
  );
}
