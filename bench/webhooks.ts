/**
 * Webhook delivery throughput: notifications delivered per second to a local receiver.
 *
 *   npx tsx bench/webhooks.ts [--dialect sqlite|postgres] [--n 20000] [--concurrency 64] [--workers 1]
 *
 * Writes N pending notifications for one subscription, then runs the delivery worker(s) of
 * this process until all are delivered, and reports the rate. The receiver runs in a child
 * process (so it does not share this event loop), answers 200 at once and counts requests by
 * webhook-id, so the report also says whether each arrived exactly once. Reports, asserts nothing.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  closeDeliveryAgents,
  DAY_MS,
  EVENT_MAX_AGE_DAYS_DEFAULT,
  USAGE_RETENTION_DAYS_DEFAULT,
  balanceEffects,
  deliveryJob,
  EngineLedger,
  generateWebhookSecret,
  newId,
  notificationPayload,
  openStore,
  processorFactory,
  SecretBox,
  newSecretKeyText,
  parseSecretKeys,
  seedCompany,
  systemClock,
  type Deps,
  type Store,
  type WebhookDeliveryRow,
  DevelopmentEmailSender,
} from './lib/engine.js';
import { ADMIN_POSTGRES_URL } from './lib/options.js';
import { createBenchDatabase } from './lib/postgres.js';

const { values } = parseArgs({
  options: {
    dialect: { type: 'string', default: 'sqlite' },
    n: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '64' },
    workers: { type: 'string', default: '1' },
  },
});
const N = Number(values.n);
const CONCURRENCY = Number(values.concurrency);
const WORKERS = Number(values.workers);
/** Where a fresh database is created (and dropped at the end). */
const PG_ADMIN_URL = process.env.TEST_DATABASE_URL ?? ADMIN_POSTGRES_URL;

const RECEIVER = `
import http from 'node:http';
const seen = new Map();
const server = http.createServer((req, res) => {
  if (req.method === 'GET') {
    let dup = 0; for (const n of seen.values()) if (n > 1) dup++;
    res.end(JSON.stringify({ unique: seen.size, duplicates: dup }));
    return;
  }
  req.resume();
  req.on('end', () => {
    const id = req.headers['webhook-id'];
    seen.set(id, (seen.get(id) ?? 0) + 1);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
});
server.keepAliveTimeout = 30000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

async function startReceiver(): Promise<{
  url: string;
  stats(): Promise<{ unique: number; duplicates: number }>;
  stop(): void;
}> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', RECEIVER], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve) =>
    child.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim()))),
  );
  const base = `http://127.0.0.1:${port}`;
  return {
    url: `${base}/hooks`,
    stats: async () => (await fetch(base)).json() as Promise<{ unique: number; duplicates: number }>,
    stop: () => child.kill(),
  };
}

/** A fresh store: a SQLite file in a temporary directory, or a new PostgreSQL database. */
async function freshStore(): Promise<{ store: Store; drop(): Promise<void> }> {
  if (values.dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'bench-wh-'));
    const store = await openStore(`sqlite:${join(dir, 'billing.sqlite')}`);
    return {
      store,
      drop: async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const database = await createBenchDatabase(PG_ADMIN_URL);
  const store = await openStore(database.url, { pgPoolSize: 8 * WORKERS });
  return {
    store,
    async drop() {
      await store.close();
      await database.drop();
    },
  };
}

async function seed(store: Store, url: string): Promise<void> {
  const nowMs = Date.now();
  const companyId = await seedCompany(store, 'Bench', nowMs);
  const webhookId = newId('wh');
  await store.write(async (tx) => {
    await tx.webhooks.insertWebhookSubscription({
      webhookId,
      companyId,
      type: 'balance_change',
      url,
      threshold: null,
      secret: generateWebhookSecret(),
      createdAtMs: nowMs,
      deletedAtMs: null,
      disabledAtMs: null,
      disabledReason: null,
    });
  });
  for (let done = 0; done < N; done += 1000) {
    const rows: WebhookDeliveryRow[] = [];
    for (let i = done; i < Math.min(N, done + 1000); i++) {
      const callbackId = newId('cl');
      const payload = notificationPayload({
        companyId,
        callbackId,
        accountId: `a_${i}`,
        type: 'balance_change',
        accountBalance: i,
        denomination: 'tokens',
        createdAtMs: nowMs,
        extra: { available: i, pending: 0 },
      });
      rows.push({
        callbackId,
        webhookId,
        companyId,
        type: 'balance_change',
        payload,
        status: 'pending',
        attempts: 0,
        nextAttemptAtMs: nowMs,
        createdAtMs: nowMs,
        deliveredAtMs: null,
        lastError: null,
      });
    }
    await store.write((tx) => tx.webhooks.insertWebhookDeliveries(rows));
  }
}

const receiver = await startReceiver();
const { store, drop } = await freshStore();
try {
  await seed(store, receiver.url);
  const deps: Deps = {
    store,
    clock: systemClock,
    processors: processorFactory(),
    ledger: new EngineLedger(balanceEffects()),
    webhooks: { allowPrivate: true },
    usage: { eventMaxAgeMs: EVENT_MAX_AGE_DAYS_DEFAULT * DAY_MS, retentionMs: USAGE_RETENTION_DAYS_DEFAULT * DAY_MS },
    // The seeded secrets are plaintext rows (as from before encryption): opened as they are.
    secrets: new SecretBox(parseSecretKeys(newSecretKeyText())),
    identity: { publicUrl: 'http://127.0.0.1', sessionIdleMs: 3_600_000, email: new DevelopmentEmailSender(() => {}) },
  };
  // Several workers in one process stand in for the interval worker racing the test-clock advance, or more processes.
  const jobs = Array.from({ length: WORKERS }, () => deliveryJob(deps, { concurrency: CONCURRENCY }));
  const started = performance.now();
  let delivered = 0;
  await Promise.all(
    jobs.map(async (job) => {
      for (;;) {
        const did = await job.runOnce(Date.now());
        delivered += did;
        if (did === 0) return;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const stats = await receiver.stats();
  console.log(
    JSON.stringify({
      dialect: values.dialect,
      notifications: N,
      concurrency: CONCURRENCY,
      workers: WORKERS,
      seconds: Number(seconds.toFixed(2)),
      delivered_per_second: Math.round(N / seconds),
      received_unique: stats.unique,
      received_duplicates: stats.duplicates,
      handled: delivered,
    }),
  );
} finally {
  closeDeliveryAgents();
  receiver.stop();
  await drop();
}
