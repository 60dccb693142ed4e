/**
 * Composition: config → store → clock → operations → HTTP + workers. main.ts runs it; tests
 * and the benchmark start the same server in-process or as a child.
 */
import { ConfigError, type Config } from './config.js';
import { SecretBoxError, type SecretBox } from './lib/secret-box.js';
import { describeReseal, resealSecrets } from './operations/secrets.js';
import { secretBoxFor } from './secret-keys.js';
import { buildApp, registeredRoutes, type App } from './http/app.js';
import { type Job, JobRunner, alertJob, coreJobs, grantJob, overrideJob } from './jobs/runner.js';
import { webhookJobs } from './jobs/webhooks.js';
import { TestClock, systemClock, type Clock } from './lib/clock.js';
import { composeDeps } from './compose.js';
import type { EmailLog } from './email/index.js';
import type { Deps } from './operations/deps.js';
import type { IngestResult } from './ledger/ingest.js';
import type { Outcome } from './domain/outcome.js';
import { GroupCommits } from './ingest/group-commits.js';
import { Listener } from './http/listener.js';
import { Metrics } from './http/metrics.js';
import { Readiness } from './http/readiness.js';
import { PostgresStore } from './store/postgres.js';
import { openStore } from './store/open.js';
import { processorFactory } from './processors/index.js';
import type { ProcessorFactory } from './processors/types.js';
import type { Store } from './store/types.js';
import { chargeJob } from './jobs/charges.js';
import { chargeActionJob } from './jobs/charge-actions.js';
import { planJob } from './jobs/plans.js';
import { refillJob } from './jobs/refills.js';
import { retentionJobs } from './jobs/retention.js';

export interface Server {
  app: App;
  /** Every route registered (method and URL pattern), for the OpenAPI completeness check. */
  routes: { method: string; url: string }[];
  url: string;
  store: Store;
  clock: Clock;
  jobs: JobRunner;
  metrics: Metrics;
  /**
   * Graceful stop: not ready, no new connections, requests in flight answered (with Connection:
   * close), idle connections closed at once, workers finish the batch they claimed, the group
   * commits drain, then the writer thread and the store close. main.ts bounds it in time.
   */
  close(): Promise<void>;
}

export interface ServerOptions {
  /** An already-open store (tests); otherwise opened from config.databaseUrl. */
  store?: Store;
  /** Payment processors (tests point Stripe at a local fake); default: sandbox and the real Stripe API. */
  processors?: ProcessorFactory;
  passwordAttemptsPerMinute?: number;
  /** The box of the secrets at rest; default: from BILLING_SECRET_KEY or the key file (secret-keys.ts). */
  secrets?: SecretBox;
  /** Where start-up lines go (a generated key file); default: standard error. */
  log?: (line: string) => void;
  /**
   * The port, already open and answering as a starting server (main.ts opens it before the database
   * is migrated); it is handed to the app once ready. Default: a new one, opened once the app is ready.
   */
  listener?: Listener;
}

/** The HTTP server of the process, not yet listening (main.ts opens it before the database is migrated). */
export function listenerFor(config: Config): Listener {
  return new Listener({
    connectionMs: config.httpConnectionTimeoutMs,
    headersMs: config.httpHeadersTimeoutMs,
    requestMs: config.httpRequestTimeoutMs,
    keepAliveMs: config.httpKeepAliveTimeoutMs,
    maxConnections: config.httpMaxConnections,
  });
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
  let app: App | undefined;
  // Without SMTP_URL, emails are written to the app log (warn) instead of being sent.
  const deps = await depsOf(config, store, clock, opts, (fields, msg) => app?.log.warn(fields, msg));
  const metrics = new Metrics(
    (nowMs) =>
      store.read(async (tx) => ({
        outbox: await tx.outbox.outboxBacklog(nowMs),
        webhook_deliveries: await tx.webhooks.webhookDeliveryBacklog(nowMs),
      })),
    () => clock.now(),
    (err) => app?.log.warn({ err }, 'metrics: the queue backlog could not be read'),
  );
  const countIngested = (outcomes: Outcome<IngestResult>[]) => {
    let n = 0;
    for (const o of outcomes) if (o.ok) n += o.value.eventIds.length;
    metrics.eventsIngested.inc(n);
  };
  const commits = await GroupCommits.start(deps, {
    pgPoolSize: config.pgPoolSize,
    instrument: (w) => ({
      ingest: metrics.timeGroups('ingest', (r) => r.events.length, w.ingest, countIngested),
      settle: metrics.timeGroups('settle', () => 1, w.settle),
    }),
  });
  // SQLite is a local file: reachable while the process runs. PostgreSQL: one `SELECT 1`.
  const readiness = new Readiness(
    store instanceof PostgresStore ? () => store.pool.query('SELECT 1').then(() => undefined) : async () => {},
  );
  const jobs = new JobRunner(deps, jobsOf(config, deps, metrics), (job, err) =>
    app?.log.error({ err, job }, 'job failed'),
  );
  app = await buildApp({
    ...appOptionsOf(config, opts),
    deps,
    events: commits,
    balances: commits,
    entitlements: commits,
    metrics,
    readiness,
    ...(testClock ? { testClock: { clock: testClock, runDue: (nowMs: number) => jobs.runDue(nowMs) } } : {}),
  });
  await app.ready();
  const listener = opts.listener ?? listenerFor(config);
  listener.serve(app);
  if (!opts.listener) await listener.listen(config.host, config.port);
  // PORT=0 (a port the kernel picks) without BILLING_PUBLIC_URL: the links the server makes (emails, portal
  // sessions) name the port it listens on, known only now.
  if (!config.publicUrlSet && config.port === 0) deps.identity.publicUrl = listener.url.replace(/\/$/, '');
  if (config.workers) jobs.start(config.workerIntervalMs);
  const server = app;
  return {
    app,
    routes: registeredRoutes(app),
    store,
    clock,
    jobs,
    metrics,
    url: listener.url,
    async close() {
      readiness.closing();
      // The listener stops accepting and resolves once every connection has ended; then the app's
      // plugins close.
      await Promise.all([jobs.stop(), listener.close().then(() => server.close())]);
      await commits.close();
      if (!opts.store) await store.close();
    },
  };
}

/**
 * The operations' dependencies (compose.ts), with the secrets at rest sealed: rows from before
 * encryption are sealed now, and a sealed row whose key is not configured stops the start.
 */
async function depsOf(config: Config, store: Store, clock: Clock, opts: ServerOptions, emailLog: EmailLog) {
  const log = opts.log ?? ((line: string) => console.error(`billing engine: ${line}`));
  try {
    const secrets = opts.secrets ?? secretBoxFor(config, { log });
    const deps = composeDeps(config, store, clock, opts.processors ?? processorFactory(), secrets, emailLog);
    const sealed = await resealSecrets(deps, 'plaintext');
    const written = sealed.kinds.reduce((n, k) => n + k.written, 0);
    if (written > 0) log(`sealed ${written} secrets stored in plaintext before (${describeReseal(sealed)})`);
    return deps;
  } catch (err) {
    if (!opts.store) await store.close();
    if (err instanceof SecretBoxError) throw new ConfigError([err.message]);
    throw err;
  }
}

/** The server's background jobs, in the order runDue runs them. */
function jobsOf(config: Config, deps: Deps, metrics: Metrics): Job[] {
  return [
    ...coreJobs(deps),
    // Money movement in this order: a test-clock advance sees every renewal charged and every refill applied.
    refillJob(deps),
    planJob(deps),
    chargeJob(deps, (reason, outcome) => metrics.charges.inc({ reason, outcome })),
    // Payments waiting for the customer at Stripe: read until they end, given up past the timeout.
    chargeActionJob(deps, { timeoutMs: config.chargeActionTimeoutMinutes * 60_000 }),
    grantJob(deps),
    alertJob(deps),
    overrideJob(deps),
    ...webhookJobs(deps),
    ...retentionJobs(deps, {
      outboxRetentionDays: config.outboxRetentionDays,
      webhookLogRetentionDays: config.webhookLogRetentionDays,
    }),
  ];
}

/** What the app takes from the configuration. */
function appOptionsOf(config: Config, opts: ServerOptions) {
  return {
    apiKeyCacheMs: config.apiKeyCacheMs,
    signupOpen: config.signup === 'open',
    signupLimitPerMinute: config.signupLimitPerMinute,
    trustProxy: config.trustProxy,
    logLevel: config.logLevel,
    idempotencyLeaseMs: config.idempotencyLeaseMs,
    publicUrl: config.publicUrlSet ? config.publicUrl : '/',
    rateLimits: {
      requestsPerSecond: config.rateLimitRequestsPerSecond,
      eventsPerSecond: config.rateLimitEventsPerSecond,
    },
    metricsToken: config.metricsToken,
    timeouts: {
      connectionMs: config.httpConnectionTimeoutMs,
      headersMs: config.httpHeadersTimeoutMs,
      requestMs: config.httpRequestTimeoutMs,
      keepAliveMs: config.httpKeepAliveTimeoutMs,
    },
    ...(opts.passwordAttemptsPerMinute !== undefined
      ? { passwordAttemptsPerMinute: opts.passwordAttemptsPerMinute }
      : {}),
  };
}
