/**
 * Composition: config → store → clock → operations → HTTP + workers. main.ts runs it; tests
 * and the benchmark start the same server in-process or as a child.
 */
import type { AddressInfo } from 'node:net';
import type { Config } from './config.js';
import { buildApp, registeredRoutes, type App } from './http/app.js';
import { JobRunner, coreJobs } from './jobs/runner.js';
import { webhookJobs } from './jobs/webhooks.js';
import { TestClock, systemClock, type Clock } from './lib/clock.js';
import { composeDeps } from './compose.js';
import { IngestBatcher, SettleBatcher, settleGroup, type SettleRequest } from './operations/events.js';
import { openStore } from './store/open.js';
import { processorFactory } from './processors/index.js';
import type { ProcessorFactory } from './processors/types.js';
import type { Store } from './store/types.js';
import { moneyJobs } from './jobs/money.js';
import { retentionJobs } from './jobs/retention.js';
import { SqliteIngestWorker } from './ingest-worker/client.js';
import { SqliteStore } from './store/sqlite.js';

export interface Server {
  app: App;
  /** Every route registered (method and URL pattern), for the OpenAPI completeness check. */
  routes: { method: string; url: string }[];
  url: string;
  store: Store;
  clock: Clock;
  jobs: JobRunner;
  close(): Promise<void>;
}

export interface ServerOptions {
  /** An already-open store (tests); otherwise opened from config.databaseUrl. */
  store?: Store;
  /** Payment processors (tests point Stripe at a local fake); default: sandbox and the real Stripe API. */
  processors?: ProcessorFactory;
  passwordAttemptsPerMinute?: number;
}

export async function startServer(config: Config, opts: ServerOptions = {}): Promise<Server> {
  const store =
    opts.store ??
    (await openStore(config.databaseUrl, {
      pgPoolSize: config.pgPoolSize,
      pgPreparedStatements: config.pgPreparedStatements,
    }));
  const testClock = config.testClock ? new TestClock() : null;
  const clock: Clock = testClock ?? systemClock;
  // Without SMTP_URL, emails are written to the app log (warn) instead of being sent.
  const deps = composeDeps(config, store, clock, opts.processors ?? processorFactory(), (fields, msg) =>
    app?.log.warn(fields, msg),
  );

  // SQLite has one writer: groups written on its own thread (a file database), two in flight so
  // that the thread starts the next the moment one commits. PostgreSQL: several groups at once,
  // row locks keep them apart.
  const ingestThread =
    store instanceof SqliteStore && store.filename !== ':memory:' ? await SqliteIngestWorker.start(store) : undefined;
  const groupsInFlight =
    store.dialect === 'sqlite' ? (ingestThread ? 2 : 1) : Math.max(1, Math.floor(config.pgPoolSize / 2));
  const ingest = new IngestBatcher(
    deps,
    groupsInFlight,
    ingestThread && ((nowMs, requests) => ingestThread.ingest(nowMs, requests)),
  );
  // Settles are group-committed the same way: on SQLite's writer thread, or on PostgreSQL several
  // groups at once, each locking its events and then their balances in sorted order.
  const settles = new SettleBatcher(
    deps,
    groupsInFlight,
    ingestThread
      ? (nowMs, requests) => ingestThread.settle(nowMs, requests)
      : (nowMs, requests) => store.write((tx) => settleGroup(deps.ledger.begin(tx, nowMs), requests)),
  );
  let app: App | undefined;
  const jobs = new JobRunner(
    deps,
    [
      ...coreJobs(deps),
      ...moneyJobs(deps),
      ...webhookJobs(deps),
      ...retentionJobs(deps, {
        outboxRetentionDays: config.outboxRetentionDays,
        webhookLogRetentionDays: config.webhookLogRetentionDays,
      }),
    ],
    (job, err) => app?.log.error({ err, job }, 'job failed'),
  );
  app = await buildApp({
    deps,
    ingest,
    settle: (req: SettleRequest) => settles.submit(req),
    apiKeyCacheMs: config.apiKeyCacheMs,
    signupOpen: config.signup === 'open',
    signupLimitPerMinute: config.signupLimitPerMinute,
    trustProxy: config.trustProxy,
    logLevel: config.logLevel,
    ...(opts.passwordAttemptsPerMinute !== undefined
      ? { passwordAttemptsPerMinute: opts.passwordAttemptsPerMinute }
      : {}),
    ...(testClock ? { testClock: { clock: testClock, runDue: (nowMs: number) => jobs.runDue(nowMs) } } : {}),
  });
  await app.ready();
  await app.listen({ host: config.host, port: config.port });
  if (config.workers) jobs.start(config.workerIntervalMs);
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const server = app;
  return {
    app,
    routes: registeredRoutes(app),
    store,
    clock,
    jobs,
    url: `http://${host}:${address.port}`,
    async close() {
      await jobs.stop();
      await server.close();
      await ingestThread?.close();
      if (!opts.store) await store.close();
    },
  };
}
