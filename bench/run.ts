/**
 * `npm run bench`: starts the real server as a child process on SQLite, then on PostgreSQL,
 * drives it with autocannon, reports throughput, latency, CPU and memory next to Fastify
 * baselines measured in the same run, and checks the ledger to the unit after each database.
 * Figures are reported, never asserted; the exit status is non-zero only when the ledger is
 * off (or a server could not be run). See bench/README.md.
 */
import {
  benchEntry,
  chooseDatabases,
  EXIT_LEDGER_OR_RUN_FAILED,
  EXIT_USAGE,
  filesystemOf,
  loadAtStart,
  REPO_ROOT,
  runMeta,
  buildServer,
} from './lib/entry.js';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createTenant } from './lib/api.js';
import { serverPgPoolSize } from './lib/engine.js';
import { eventBatches, type EventBatch } from './lib/bodies.js';
import { startChild, type ChildServer } from './lib/children.js';
import {
  awaitProfiles,
  cpuProfNodeArgs,
  PROFILED_STOP_GRACE_MS,
  PROFILES_DIR_NAME,
  profileFileInfo,
} from './lib/cpuprof.js';
import { describeGrants } from './lib/grants.js';
import { Ledger } from './lib/ledger.js';
import { postgresProcesses } from './lib/procstats.js';
import { runLoad, type LoadSpec, type Shot } from './lib/load.js';
import {
  connectionsFor,
  parseOptions,
  POOL_ACCOUNTS,
  USAGE,
  type BenchOptions,
  type DbKind,
  type ScenarioName,
} from './lib/options.js';
import { createBenchDatabase } from './lib/postgres.js';
import {
  applyRatios,
  BASELINE_SCENARIO,
  formatLeases,
  formatLedger,
  formatPaced,
  formatProblems,
  formatRoundRatios,
  formatTable,
  HELLO_PHASE,
  noDbPhaseName,
  runLabel,
  writeJson,
  type RunMeta,
  type DbRun,
} from './lib/report.js';
import {
  eventsPath,
  measurePhase,
  runScenario,
  warmUp,
  type PhaseResult,
  type ScenarioContext,
} from './lib/scenarios.js';
import {
  formatStoreOnlyLedger,
  runStoreOnly,
  STORE_ONLY_SIZES,
  storeLanes,
  type StoreBaseline,
  type StoreOnlyFigures,
} from './lib/storeonly.js';

const RESULTS_DIR = join(REPO_ROOT, 'bench', 'results');
const HELLO_ENTRY = 'bench/baselines/hello.ts';
const VALIDATE_ENTRY = 'bench/baselines/validate.ts';
const STORE_ONLY_ENTRY = 'bench/baselines/store.ts';
const PLAIN_SQL_ENTRY = 'bench/baselines/plain-sql.ts';
/** Path and credentials the no-database route is sent: the same bytes as the real requests. */
const BASELINE_ACCOUNT = 'a_baseline00000000000000';
const BASELINE_CREDENTIALS = 'c_baseline0000000000000000:sk_baseline_0000000000000000000000000000';
const BASELINE_AUTHORIZATION = `Basic ${Buffer.from(BASELINE_CREDENTIALS).toString('base64')}`;
const SERVER_LOG_LEVEL = 'warn';
/** SQLite has a single writer: its server runs as one process, whatever `--processes` says. */
const SQLITE_PROCESSES = 1;

/** Event counts per request each scenario is compared against in the no-database baseline. */
const BASELINE_SIZES: Readonly<Record<ScenarioName, readonly number[]>> = {
  'events-1': [1],
  'events-100': [100],
  'events-1000': [1000],
  holds: [1],
  accounts: [1],
  'check-1': [],
  'read-1': [],
  'entitlements-1': [1],
  leases: [],
};

const { log, onCleanup, cleanUpEverything, run } = benchEntry('bench');

/** One round of a run: the baselines, then every database (`--rounds` runs several). */
interface Round {
  /** Hello-world, no-db validation and store-only rows, as in the table. */
  baselines: PhaseResult[];
  /** What each store-only child reported (transactions/s, lanes, its own ledger check). */
  storeOnly: StoreOnlyFigures[];
  runs: DbRun[];
}

/** What `npm run bench` writes to bench/results/<timestamp>.json. */
interface BenchReport {
  meta: RunMeta;
  options: BenchOptions;
  /** What every balance of the run held (`--grants`, `--grant-units`): read it before comparing two runs. */
  grants: { perBalance: number; extraGrantUnits: number; description: string };
  /** One per `--rounds` (one by default), in the order they ran; each row's ratios from its own round's baselines. */
  rounds: Round[];
  /** `--cpu-prof`: the directory holding one directory of profiles (and phases.json) per server process. */
  cpuProfiles: string | undefined;
  failures: string[];
}

async function startTracked(options: Parameters<typeof startChild>[0]): Promise<ChildServer> {
  const child = await startChild(options);
  const release = onCleanup(() => child.stop());
  return { ...child, stop: release };
}

/** Requests answered 2xx and the events they carried; nothing is recorded anywhere. */
function countingSpec(
  server: ChildServer,
  connections: number,
  durationS: number,
  batches: readonly EventBatch[] | undefined,
  counter: { ok: number; events: number },
): LoadSpec<number> {
  let sent = 0;
  const shot = (i: number): Shot<number> => {
    if (batches === undefined) return { method: 'GET', path: '/', tag: 0 };
    const batch = batches[i % batches.length] as EventBatch;
    return { method: 'POST', path: eventsPath(BASELINE_ACCOUNT), body: batch.body, tag: batch.costs.length };
  };
  return {
    baseUrl: server.baseUrl,
    authorization: BASELINE_AUTHORIZATION,
    connections,
    durationS,
    next: () => shot(sent++),
    // The same generator mode as the scenarios it is compared with.
    cycle: () => (batches === undefined ? [shot(0)] : batches.map((_, i) => shot(i))),
    onResponse: (events, status) => {
      if (status < 200 || status > 299) return;
      counter.ok++;
      counter.events += events;
    },
  };
}

async function measureBaseline(
  server: ChildServer,
  options: BenchOptions,
  phase: string,
  size: number | undefined,
): Promise<PhaseResult> {
  const batches = size === undefined ? undefined : eventBatches(size);
  const connections = connectionsFor(options, size ?? 1);
  if (options.warmupS > 0) {
    await runLoad(countingSpec(server, connections, options.warmupS, batches, { ok: 0, events: 0 }));
  }
  const counter = { ok: 0, events: 0 };
  const { result } = await measurePhase(
    { db: 'none', serverPids: [server.pid], databaseProcesses: undefined },
    { scenario: BASELINE_SCENARIO, phase, eventsPerRequest: size ?? 0, baselineEvents: undefined },
    [countingSpec(server, connections, options.durationS, batches, counter)],
    () => ({ events: counter.events, malformed: 0 }),
  );
  log(`baseline ${phase}: ${Math.round(result.requestsPerS)} req/s`);
  return result;
}

async function runBaselines(options: BenchOptions, logDir: string): Promise<PhaseResult[]> {
  const sizes = [...new Set(options.only.flatMap((name) => BASELINE_SIZES[name]))].sort((a, b) => a - b);
  const results: PhaseResult[] = [];
  if (sizes.includes(1)) {
    const hello = await startTracked({
      label: 'baseline-hello',
      cwd: REPO_ROOT,
      entry: HELLO_ENTRY,
      env: {},
      logDir,
      healthPath: '/healthz',
    });
    try {
      results.push(await measureBaseline(hello, options, HELLO_PHASE, undefined));
    } finally {
      await hello.stop();
    }
  }
  if (sizes.length > 0) {
    const validate = await startTracked({
      label: 'baseline-validate',
      cwd: REPO_ROOT,
      entry: VALIDATE_ENTRY,
      env: {},
      healthPath: '/healthz',
      logDir,
    });
    try {
      for (const size of sizes) results.push(await measureBaseline(validate, options, noDbPhaseName(size), size));
    } finally {
      await validate.stop();
    }
  }
  return results;
}

interface Storage {
  description: string;
  databaseUrl: string;
  /** The processes of an out-of-process database, for its CPU figures. */
  processes: (() => number[]) | undefined;
  release: () => Promise<void>;
}

async function prepareStorage(db: DbKind, options: BenchOptions, dataDir: string): Promise<Storage> {
  if (db === 'sqlite') {
    const file = join(dataDir, `bench-${randomBytes(4).toString('hex')}.sqlite`);
    const release = onCleanup(() => {
      for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${file}${suffix}`, { force: true });
    });
    return { description: file, databaseUrl: `sqlite:${file}`, processes: undefined, release };
  }
  const database = await createBenchDatabase(options.postgresAdminUrl);
  const release = onCleanup(() => database.drop());
  return {
    description: `PostgreSQL database ${database.name}`,
    databaseUrl: database.url,
    processes: () => postgresProcesses(database.name),
    release,
  };
}

/**
 * `processes` servers on one database, started together (PostgreSQL serialises their
 * migrations with an advisory lock); if one fails to start, the others are stopped.
 */
async function startServers(
  db: DbKind,
  processes: number,
  storage: Storage,
  options: BenchOptions,
  logDir: string,
  round: number,
): Promise<ChildServer[]> {
  // One key of secrets at rest for the run, shared by its processes (PostgreSQL requires one).
  const env = {
    DATABASE_URL: storage.databaseUrl,
    LOG_LEVEL: SERVER_LOG_LEVEL,
    BILLING_SECRET_KEY: `bench:${randomBytes(32).toString('base64')}`,
    ...options.serverEnv,
  };
  const starts = await Promise.allSettled(
    Array.from({ length: processes }, (_, i) => {
      const label = `server-${db}-${processes}p-${i + 1}${options.rounds > 1 ? `-r${round}` : ''}`;
      const profileDir = options.cpuProf ? join(logDir, PROFILES_DIR_NAME, label) : undefined;
      if (profileDir !== undefined) mkdirSync(profileDir, { recursive: true });
      return startTracked({
        label,
        cwd: REPO_ROOT,
        entry: options.serverEntry,
        env,
        logDir,
        ...(profileDir === undefined
          ? {}
          : { nodeArgs: cpuProfNodeArgs(profileDir), profileDir, stopGraceMs: PROFILED_STOP_GRACE_MS }),
      });
    }),
  );
  const servers = starts.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = starts.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed !== undefined) {
    await Promise.all(servers.map((server) => server.stop()));
    throw failed.reason;
  }
  return servers;
}

async function runDatabase(
  db: DbKind,
  processes: number,
  options: BenchOptions,
  dataDir: string,
  logDir: string,
  round: number,
): Promise<DbRun> {
  const label = runLabel(db, processes);
  const run: DbRun = { db, processes, label, storage: '', scenarios: [], ledger: undefined, error: undefined };
  let storage: Storage | undefined;
  let servers: ChildServer[] = [];
  try {
    storage = await prepareStorage(db, options, dataDir);
    run.storage = storage.description;
    log(`${label}: starting ${processes} × ${options.serverEntry} on ${storage.description}`);
    servers = await startServers(db, processes, storage, options, logDir, round);
    const first = servers[0] as ChildServer;
    const tenant = await createTenant(first.baseUrl);
    const ledger = new Ledger();
    const ctx: ScenarioContext = {
      db,
      servers,
      tenant,
      ledger,
      options,
      databaseProcesses: storage.processes,
      auditAccounts: [],
      setup: { accounts: 0, seconds: 0 },
      log: (message) => log(`${label}: ${message}`),
    };
    await warmUp(ctx);
    for (const name of options.only) {
      const result = await runScenario(ctx, name);
      run.scenarios.push(result);
      log(`${label}: ${name}: set up ${result.setupAccounts} funded accounts in ${result.setupS.toFixed(1)} s`);
      for (const p of result.phases) {
        log(
          `${label}: ${p.scenario} / ${p.phase}: ${Math.round(p.eventsPerS)} events/s, ` +
            `${Math.round(p.requestsPerS)} req/s, p99 ${p.latencyMs.p99.toFixed(1)} ms`,
        );
      }
    }
    log(`${label}: checking the ledger${processes > 1 ? ` (what all ${processes} servers acknowledged)` : ''}`);
    const checkStarted = performance.now();
    run.ledger = await ledger.check(tenant.api, ctx.auditAccounts);
    log(`${label}: ledger checked in ${((performance.now() - checkStarted) / 1000).toFixed(1)} s`);
  } catch (error) {
    run.error = error instanceof Error ? error.message : String(error);
    log(`${label}: FAILED: ${run.error}`);
    for (const server of servers) log(`${label}: server log: ${server.logFile}`);
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    for (const server of servers) await reportProfiles(server, label);
    await storage?.release();
  }
  return run;
}

/** A profiled server has exited: says where its profiles are (one per thread), or that they are missing. */
async function reportProfiles(server: ChildServer, label: string): Promise<void> {
  if (server.profileDir === undefined) return;
  const files = await awaitProfiles(server.profileDir, server.pid);
  const threads = files.map((f) => profileFileInfo(basename(f))?.threadId).join(', ');
  const exit = server.exitNote() ?? 'still running';
  if (files.length === 0) log(`${label}: ${server.label} ${exit}, and wrote no CPU profile in ${server.profileDir}`);
  else log(`${label}: ${server.label} ${exit}; CPU profiles of threads ${threads} in ${server.profileDir}`);
}

/**
 * The store-only baseline of each database, once per transaction size the chosen scenarios
 * are compared with, each in its own process on a fresh store (no server runs meanwhile); on
 * PostgreSQL then the plain-SQL limit of each size, on a fresh database too.
 */
async function runStoreBaselines(
  databases: readonly DbKind[],
  options: BenchOptions,
  dataDir: string,
  logDir: string,
): Promise<{ results: PhaseResult[]; figures: StoreOnlyFigures[]; failures: string[] }> {
  const sizes = [...new Set(options.only.flatMap((name) => STORE_ONLY_SIZES[name]))].sort((a, b) => a - b);
  const results: PhaseResult[] = [];
  const figures: StoreOnlyFigures[] = [];
  const failures: string[] = [];
  if (sizes.length === 0) return { results, figures, failures };
  // The pool size the servers will use (`BILLING_PG_POOL_SIZE`, else the server's default).
  const pgPoolSize = serverPgPoolSize({ ...process.env, ...options.serverEnv });
  for (const db of databases) {
    const baselines: StoreBaseline[] = db === 'postgres' ? ['store', 'plain-sql'] : ['store'];
    for (const baseline of baselines)
      for (const size of sizes) {
        const name = baseline === 'store' ? 'store-only' : 'plain SQL';
        const label = `${db} ${name}, ${size} event${size === 1 ? '' : 's'}/tx`;
        let storage: Storage | undefined;
        try {
          storage = await prepareStorage(db, options, dataDir);
          // The plain-SQL limit: as many connections as a server process's pool.
          const lanes = baseline === 'store' ? storeLanes(db, pgPoolSize) : pgPoolSize;
          log(`${label}: ${lanes} lane${lanes === 1 ? '' : 's'} on ${storage.description}`);
          const run = await runStoreOnly({
            baseline,
            db,
            databaseUrl: storage.databaseUrl,
            databaseProcesses: storage.processes,
            eventsPerTransaction: size,
            lanes,
            accounts: POOL_ACCOUNTS,
            grants: options.grants,
            grantUnits: options.grantUnits,
            pgPoolSize,
            durationS: options.durationS,
            warmupS: options.warmupS,
            cwd: REPO_ROOT,
            entry: baseline === 'store' ? STORE_ONLY_ENTRY : PLAIN_SQL_ENTRY,
            logDir,
            track: (stop) => onCleanup(stop),
          });
          results.push(run.result);
          figures.push(run.figures);
          log(
            `${label}: ${Math.round(run.figures.eventsPerS)} events/s, ` +
              `${Math.round(run.figures.transactionsPerS)} transactions/s` +
              (run.figures.ledger.findings.length === 0 ? ', ledger exact' : ''),
          );
          for (const f of run.figures.ledger.findings) {
            failures.push(`${label}: ledger off on account ${f.accountId} (${f.check}): ${f.message}`);
          }
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          log(`${label}: FAILED: ${message}`);
          failures.push(`${label}: run failed: ${message}`);
        } finally {
          await storage?.release();
        }
      }
  }
  return { results, figures, failures };
}

/** Server process counts to run `db` with: every `--processes` count on PostgreSQL, one on SQLite. */
function processCountsFor(db: DbKind, options: BenchOptions): readonly number[] {
  return db === 'sqlite' ? [SQLITE_PROCESSES] : options.processes;
}

/** Every phase a database run measured. */
function phasesOf(run: DbRun): PhaseResult[] {
  return run.scenarios.flatMap((s) => s.phases);
}

/** One round: the baselines (unless `--no-baselines`), every database, each phase's ratios from those baselines. */
async function runRound(
  databases: readonly DbKind[],
  options: BenchOptions,
  dataDir: string,
  workDir: string,
  round: number,
): Promise<{ round: Round; failures: string[] }> {
  const httpBaselines = options.baselines ? await runBaselines(options, workDir) : [];
  const store = options.baselines
    ? await runStoreBaselines(databases, options, dataDir, workDir)
    : { results: [], figures: [], failures: [] };
  const baselines = [...httpBaselines, ...store.results];
  const runs: DbRun[] = [];
  for (const db of databases) {
    for (const processes of processCountsFor(db, options)) {
      runs.push(await runDatabase(db, processes, options, dataDir, workDir, round));
    }
  }
  applyRatios(runs.flatMap(phasesOf), baselines);

  const failures: string[] = [...store.failures];
  for (const run of runs) {
    if (run.error !== undefined) failures.push(`${run.label}: run failed: ${run.error}`);
    for (const f of run.ledger?.findings ?? []) {
      failures.push(`${run.label}: ledger off on ${f.label} account ${f.accountId} (${f.check}): ${f.message}`);
    }
    for (const problem of phasesOf(run).flatMap((p) => p.leases?.exactness?.problems ?? []))
      failures.push(`${run.label}: leases not exact: ${problem}`);
  }
  return { round: { baselines, storeOnly: store.figures, runs }, failures };
}

/** A round's table, then its setup times, open-loop and lease figures, non-2xx answers and ledger checks. */
function formatRound(round: Round): string[] {
  const phases = round.runs.flatMap(phasesOf);
  const out: string[] = [formatTable([...round.baselines, ...phases]), ''];
  for (const run of round.runs) {
    for (const s of run.scenarios) {
      if (s.setupAccounts > 0) {
        out.push(
          `${run.label} ${s.scenario}: setup of ${s.setupAccounts} funded accounts took ${s.setupS.toFixed(1)} s`,
        );
      }
    }
  }
  const paced = formatPaced(phases);
  if (paced.length > 0) out.push('', 'Open-loop phases:', ...paced);
  const leases = formatLeases(phases);
  if (leases.length > 0) out.push('', 'Leases (decisions in the gateway, lib/leases.ts):', ...leases);
  const problems = formatProblems([...round.baselines, ...phases]);
  if (problems.length > 0) out.push('', 'Non-2xx answers and errors:', ...problems);
  out.push('', 'Ledger:', ...round.storeOnly.map(formatStoreOnlyLedger), ...round.runs.flatMap(formatLedger));
  return out;
}

async function main(): Promise<number> {
  let options: BenchOptions;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }

  buildServer(options.serverEntry, log);
  const startedAt = new Date();
  const databases = await chooseDatabases(options, log);
  const workDir = mkdtempSync(join(tmpdir(), 'billing-bench-'));
  const dataDir = options.dataDir ?? workDir;
  const filesystem = filesystemOf(dataDir);
  const loadAverage = loadAtStart(log);
  const grants = describeGrants(options.grants, options.grantUnits);
  log(
    `${options.durationS} s per phase; scenarios ${options.only.join(', ')}; databases ${databases.join(', ')}; ` +
      `data on ${filesystem}; logs in ${workDir}`,
  );
  if (options.cpuProf) {
    log(
      `CPU profiles: one directory per server process under ${join(workDir, PROFILES_DIR_NAME)} ` +
        '(the profiler costs the server some CPU: compare CPU figures with runs without --cpu-prof)',
    );
  }
  log(`balances: ${grants}`);
  if (databases.includes('sqlite') && options.processes.some((n) => n !== SQLITE_PROCESSES)) {
    log(
      `sqlite: one server process only (a single writer); --processes ${options.processes.join(',')} ` +
        'applies to PostgreSQL',
    );
  }

  const rounds: Round[] = [];
  const failures: string[] = [];
  const out: string[] = ['', `Balances: ${grants}`];
  for (let round = 1; round <= options.rounds; round++) {
    if (options.rounds > 1) log(`round ${round} of ${options.rounds}`);
    const done = await runRound(databases, options, dataDir, workDir, round);
    rounds.push(done.round);
    const tag = options.rounds > 1 ? `round ${round}: ` : '';
    failures.push(...done.failures.map((f) => `${tag}${f}`));
    if (options.rounds > 1) out.push('', `Round ${round} of ${options.rounds}:`);
    out.push('', ...formatRound(done.round));
  }
  if (options.rounds > 1) {
    out.push(
      '',
      `Over the ${options.rounds} rounds: the median of each figure, the rounds' range in brackets ` +
        '(each round against its own baselines):',
      formatRoundRatios(rounds.map((r) => [...r.baselines, ...r.runs.flatMap(phasesOf)])),
    );
  }

  const report: BenchReport = {
    meta: runMeta(startedAt, filesystem, loadAverage),
    options,
    grants: { perBalance: options.grants, extraGrantUnits: options.grantUnits, description: grants },
    rounds,
    cpuProfiles: options.cpuProf ? join(workDir, PROFILES_DIR_NAME) : undefined,
    failures,
  };
  const file = writeJson(RESULTS_DIR, report);
  out.push('', `JSON: ${file}`);
  if (report.cpuProfiles !== undefined) {
    out.push(
      `CPU profiles (and phases.json) per server process: ${report.cpuProfiles}`,
      `  read them with: npm run bench:profile -- ${report.cpuProfiles} --phase <phase>`,
    );
  }
  if (failures.length > 0) out.push('', 'FAILED:', ...failures.map((f) => `  ${f}`), `  (server logs in ${workDir})`);
  process.stdout.write(`${out.join('\n')}\n`);

  await cleanUpEverything();
  // The profiles live in the log directory: kept with it.
  if (failures.length === 0 && !options.cpuProf) rmSync(workDir, { recursive: true, force: true });
  return failures.length === 0 ? 0 : EXIT_LEDGER_OR_RUN_FAILED;
}

run(main);
