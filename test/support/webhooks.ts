/**
 * Webhook test helpers: a local receiver that records every request (and how many attempts of
 * one webhook-id were ever in flight at once), signature checks with the independent
 * `standardwebhooks` package, and servers started on a database another server used before.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { loadConfig, type Config } from '../../src/config.js';
import { startServer, type Server } from '../../src/server.js';
import { PostgresStore } from '../../src/store/postgres.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/types.js';
import { PG_URL, type Dialect, type Harness } from './harness.js';
import { TEST_SECRET_KEY } from './stores.js';
import { type PgDatabase, freshPgDatabase } from './pg-databases.js';

export interface Received {
  id: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
  status: number;
  /** When it arrived (wall clock): a signature is judged as of its arrival. */
  receivedAtMs: number;
}

export interface Receiver {
  url: string;
  requests: Received[];
  /** Requests answered 2xx, by webhook-id. */
  delivered(): Map<string, Received[]>;
  connections(): number;
  /** Most attempts of one webhook-id that were ever being answered at the same time. */
  maxOverlap(): number;
  close(): Promise<void>;
}

/**
 * `respond(req, n)` chooses the status (n = how many requests of this webhook-id came before);
 * `delayMs` holds each answer back, so overlapping attempts would show.
 */
export async function startReceiver(
  opts: { respond?: (r: { id: string; json: any }, n: number) => number; delayMs?: number } = {},
): Promise<Receiver> {
  const requests: Received[] = [];
  const seen = new Map<string, number>();
  const inFlight = new Map<string, number>();
  let overlap = 0;
  let connections = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const id = String(req.headers['webhook-id'] ?? '');
      const n = seen.get(id) ?? 0;
      seen.set(id, n + 1);
      const now = (inFlight.get(id) ?? 0) + 1;
      inFlight.set(id, now);
      overlap = Math.max(overlap, now);
      let json: any = null;
      try {
        json = JSON.parse(body);
      } catch {
        json = null;
      }
      const status = opts.respond ? opts.respond({ id, json }, n) : 200;
      const receivedAtMs = Date.now();
      const answer = () => {
        inFlight.set(id, (inFlight.get(id) ?? 1) - 1);
        requests.push({ id, headers: req.headers, body, json, status, receivedAtMs });
        res
          .writeHead(status, { 'content-type': 'text/plain' })
          .end(status >= 200 && status < 300 ? 'ok' : `status ${status}`);
      };
      if (opts.delayMs) setTimeout(answer, opts.delayMs);
      else answer();
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    requests,
    delivered() {
      const m = new Map<string, Received[]>();
      for (const r of requests) if (r.status >= 200 && r.status < 300) m.set(r.id, [...(m.get(r.id) ?? []), r]);
      return m;
    },
    connections: () => connections,
    maxOverlap: () => overlap,
    close: () =>
      new Promise((resolve) => {
        // Stop accepting first, then drop open (keep-alive) connections.
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The standardwebhooks package's tolerance for a message's timestamp, in seconds. */
const TIMESTAMP_TOLERANCE_S = 5 * 60;

/**
 * Verifies a received request with the standardwebhooks package as of its arrival; returns the payload.
 * `verify` judges the timestamp against the clock now, so a test that checks its deliveries at its end (a
 * long reliability run) would see fresh ones as stale: the timestamp is checked against the arrival here,
 * and the signature is the package's own `sign` of the same id, timestamp and body.
 */
export function verifySignature(secret: string, r: Received): any {
  const id = String(r.headers['webhook-id']);
  const timestamp = Number(r.headers['webhook-timestamp']);
  assert.ok(
    Math.abs(r.receivedAtMs / 1000 - timestamp) <= TIMESTAMP_TOLERANCE_S,
    `webhook-timestamp ${timestamp} is more than ${TIMESTAMP_TOLERANCE_S} s from its arrival`,
  );
  const expected = new Webhook(secret).sign(id, new Date(timestamp * 1000), r.body);
  const given = String(r.headers['webhook-signature']).split(' ');
  assert.ok(given.includes(expected), `webhook-signature ${given.join(' ')} is not ${expected}`);
  return JSON.parse(r.body);
}

export async function createWebhook(
  h: Pick<Harness, 'request'>,
  auth: [string, string],
  body: Record<string, unknown>,
): Promise<{ webhook_id: string; secret: string }> {
  const r = await h.request('POST', '/v1/webhooks', { auth, body });
  assert.equal(r.status, 200, r.text);
  return r.body.data;
}

/**
 * The notifications written for one subscription, oldest first, as their payloads with the
 * balance's denomination under `denomination` (the outbox's old spelling, kept by the scenarios).
 */
export async function notificationsOf(
  h: Pick<Harness, 'request'>,
  auth: [string, string],
  webhookId: string,
): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  let after = '';
  for (;;) {
    const r = await h.request('GET', `/v1/webhooks/${webhookId}/deliveries?limit=100${after}`, { auth });
    assert.equal(r.status, 200, r.text);
    for (const d of r.body.data) out.push(d.payload);
    if (!r.body.has_more) break;
    after = `&starting_after=${r.body.next_cursor}`;
  }
  return out.reverse();
}

/** Runs every job due now (the test clock does not move). */
export async function runJobs(h: Pick<Harness, 'request'>, auth: [string, string], seconds = 0): Promise<void> {
  const r = await h.request('POST', '/v1/test_clock/advance', { auth, body: { seconds } });
  assert.equal(r.status, 200, r.text);
}

/** One database that several stores (servers) can open, one after another or side by side. */
export interface SharedDatabase {
  open(poolSize?: number): Promise<Store>;
  drop(): Promise<void>;
}

export function sharedDatabase(dialect: Dialect): SharedDatabase {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'billing-wh-'));
    const file = join(dir, 'billing.sqlite');
    return { open: async () => new SqliteStore(file), drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  // A database of its own, already migrated (pg-databases.ts), made at the first open.
  let db: Promise<PgDatabase> | undefined;
  return {
    open: async (poolSize = 6) => {
      db ??= freshPgDatabase();
      return PostgresStore.open({ connectionString: (await db).url, poolSize });
    },
    async drop() {
      await (await db)?.drop();
    },
  };
}

export interface TestServer extends Pick<Harness, 'request'> {
  server: Server;
  store: Store;
  close(): Promise<void>;
}

/** A real server on `store` (closed with it), with the harness defaults unless `env` says otherwise. */
export async function serverOn(store: Store, env: Record<string, string> = {}): Promise<TestServer> {
  const config: Config = {
    ...loadConfig({
      PORT: '0',
      BILLING_TEST_CLOCK: '1',
      BILLING_WORKERS: '0',
      BILLING_WEBHOOK_ALLOW_PRIVATE: '1',
      LOG_LEVEL: 'fatal',
      BILLING_SECRET_KEY: TEST_SECRET_KEY,
      BILLING_SIGNUP_LIMIT_PER_MINUTE: '0',
      ...env,
    }),
    databaseUrl: store.dialect === 'sqlite' ? 'sqlite::memory:' : PG_URL,
  };
  const server = await startServer(config, { store, passwordAttemptsPerMinute: 10_000 });
  return {
    server,
    store,
    async request(method, path, opts = {}) {
      const headers: Record<string, string> = { ...(opts.headers ?? {}) };
      if (opts.auth)
        headers.authorization = `Basic ${Buffer.from(`${opts.auth[0]}:${opts.auth[1]}`).toString('base64')}`;
      const body = opts.raw ?? (opts.body !== undefined ? JSON.stringify(opts.body) : undefined);
      if (body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
      const res = await fetch(server.url + path, { method, headers, ...(body !== undefined ? { body } : {}) });
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      return { status: res.status, headers: res.headers, body: parsed, text };
    },
    async close() {
      await server.close();
      await store.close();
    },
  };
}

/** The harness helpers (signUpCompany, createAccountWithBalance) only use `request`. */
export const asHarness = (s: TestServer): Harness => s as unknown as Harness;

/** Company c_1 (with its owner) and its balance_change subscription wh_1, through the Tx methods. */
export async function seedWebhookSubscription(store: Store): Promise<void> {
  await store.write(async (tx) => {
    const user = await tx.identity.insertUser({
      name: 'U',
      email: 'u@example.com',
      passwordHash: 'x',
      dateOfBirth: null,
      emailVerified: false,
      createdAtMs: 0,
    });
    await tx.identity.insertCompany({
      companyId: 'c_1',
      name: 'C',
      ownerUserId: user.id,
      processor: 'sandbox',
      processorApiKey: null,
      createdAtMs: 0,
    });
    await tx.webhooks.insertWebhookSubscription({
      webhookId: 'wh_1',
      companyId: 'c_1',
      type: 'balance_change',
      url: 'https://example.com/',
      threshold: null,
      secret: 'whsec_AAAA',
      createdAtMs: 0,
      deletedAtMs: null,
      disabledAtMs: null,
      disabledReason: null,
    });
  });
}
