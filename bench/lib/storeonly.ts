/**
 * The store-only baseline: the project's real store and ingest code with no HTTP, in its own
 * process (`bench/baselines/store.ts`), on a fresh database of the same kind as the server's.
 * It reports how many N-event transactions the store commits back to back: the ceiling the
 * server's events route is compared with (`vs store events/s`). On PostgreSQL, the plain-SQL
 * limit too (`bench/baselines/plain-sql.ts`: no engine, one balance update and N ledger rows per
 * transaction through the same driver; `vs plain SQL events/s`), run the same way.
 *
 * The child speaks one JSON object per line on stdout: `measuring` when the timed part starts,
 * `measured` when it ends, then the `result`. The bench samples the child's CPU and memory
 * (and PostgreSQL's) between the first two.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { logTail } from './children.js';
import type { LatencyFigures } from './latency.js';
import type { Finding } from './ledger.js';
import type { DbKind, ScenarioName } from './options.js';
import { MachineSampler, ProcessSampler, processForest, type MachineUsage, type ProcessUsage } from './procstats.js';
import { BASELINE_SCENARIO, plainSqlPhaseName, storeOnlyPhaseName } from './report.js';
import type { PhaseResult } from './scenarios.js';

/** Events per transaction of the store-only runs each scenario is compared with. */
export const STORE_ONLY_SIZES: Readonly<Record<ScenarioName, readonly number[]>> = {
  'events-1': [1],
  'events-100': [100],
  'events-1000': [],
  holds: [],
  accounts: [],
  'check-1': [],
  'read-1': [],
  'entitlements-1': [],
  leases: [],
};
/** SQLite: one writer, transactions strictly back to back. */
export const SQLITE_STORE_LANES = 1;
/**
 * Setup (migrations, seeding) and the ledger read-back get this long beyond warm-up and
 * duration before the child is killed.
 */
const STORE_ONLY_SLACK_S = 120;

/**
 * Transactions in flight at once: one on SQLite; on PostgreSQL as many as one server process
 * keeps in flight, the ingest batcher's concurrency (`src/server.ts`: half the pool, at least 1).
 */
export function storeLanes(db: DbKind, pgPoolSize: number): number {
  return db === 'sqlite' ? SQLITE_STORE_LANES : Math.max(1, Math.floor(pgPoolSize / 2));
}

/** Which baseline a child runs: the engine's store, or the plain-SQL limit (PostgreSQL only). */
export type StoreBaseline = 'store' | 'plain-sql';

/** What the child prints last. */
export interface StoreOnlyFigures {
  type: 'result';
  /** Absent: the store-only baseline. */
  baseline?: 'plain-sql';
  dialect: 'sqlite' | 'postgres';
  eventsPerTransaction: number;
  lanes: number;
  accounts: number;
  /** Grants each balance held (the initial one and `grants − 1` others, as the HTTP scenarios' balances). */
  grants: number;
  durationS: number;
  /** From the first transaction started to the last one finished, in seconds. */
  elapsedS: number;
  /** Committed transactions (each one request, all its events applied). */
  transactions: number;
  transactionsPerS: number;
  events: number;
  eventsPerS: number;
  /** Transactions whose request ingestGroup refused (none expected: every balance is funded). */
  refused: number;
  /** Transactions that threw (rolled back, or in doubt: the ledger check allows either). */
  errors: number;
  errorSamples: string[];
  /** Per transaction: from calling `store.write` to its promise settling. */
  latencyMs: LatencyFigures;
  /** Every balance read back after the run against what the committed transactions took. */
  ledger: { accountsChecked: number; findings: Finding[] };
}

export type StoreOnlyMessage = { type: 'measuring' } | { type: 'measured' } | StoreOnlyFigures;

/** The flags every baseline child takes (parseArgs options): the runner passes them to both (runStoreOnly). */
export const CHILD_FLAGS = {
  events: { type: 'string' },
  duration: { type: 'string' },
  warmup: { type: 'string' },
  lanes: { type: 'string' },
  accounts: { type: 'string' },
} as const;

/** What a child says on stdout: one JSON object per line. */
export function sendStoreOnlyMessage(message: StoreOnlyMessage): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

/** Runs a baseline child's `main`: exit 0 when it is done, 1 with what failed (named `label`) on stderr. */
export function runBaselineChild(label: string, main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(
        `${label} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(1);
    },
  );
}

/**
 * A child's warm-up, then its timed run between `measuring` and `measured` (the bench samples CPU in between):
 * `drive` runs transactions into a tally until the deadline (performance.now()). Returns both tallies and the timed
 * run's length in seconds, to the end of its last transaction.
 */
export async function timedRun<T extends { lastEndedAt: number }>(
  drive: (deadline: number, t: T) => Promise<void>,
  tally: (timed: boolean) => T,
  warmupS: number,
  durationS: number,
): Promise<{ warm: T; timed: T; elapsedS: number }> {
  const warm = tally(false);
  if (warmupS > 0) await drive(performance.now() + warmupS * 1000, warm);
  sendStoreOnlyMessage({ type: 'measuring' });
  const timed = tally(true);
  const startedAt = performance.now();
  await drive(startedAt + durationS * 1000, timed);
  sendStoreOnlyMessage({ type: 'measured' });
  return { warm, timed, elapsedS: Math.max(1e-6, ((timed.lastEndedAt || performance.now()) - startedAt) / 1000) };
}

/** A line of the child's stdout, or undefined when it is not one of its messages. */
export function parseStoreOnlyMessage(line: string): StoreOnlyMessage | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return undefined;
  try {
    const message = JSON.parse(trimmed) as { type?: unknown };
    if (message.type === 'measuring' || message.type === 'measured' || message.type === 'result') {
      return message as StoreOnlyMessage;
    }
  } catch {
    // not ours
  }
  return undefined;
}

/** The store-only figures as a row of the report, next to the other baselines. */
export function storeOnlyPhase(
  db: DbKind,
  figures: StoreOnlyFigures,
  usage: ProcessUsage,
  databaseCpuPercent: number | undefined,
  machine: MachineUsage,
): PhaseResult {
  const accounted = usage.cpuPercent + (databaseCpuPercent ?? 0);
  return {
    db,
    servers: 0,
    scenario: BASELINE_SCENARIO,
    phase: baselinePhaseName(figures),
    connections: figures.lanes,
    eventsPerRequest: figures.eventsPerTransaction,
    baselineEvents: undefined,
    storeEvents: undefined,
    durationS: figures.durationS,
    elapsedS: figures.elapsedS,
    requests: figures.transactions,
    requestsPerS: figures.transactionsPerS,
    events: figures.events,
    eventsPerS: figures.eventsPerS,
    latencyMs: figures.latencyMs,
    non2xx: figures.refused,
    statusCodes: {},
    errors: figures.errors,
    timeouts: 0,
    unanswered: 0,
    malformedAnswers: 0,
    serverCpuPercent: usage.cpuPercent,
    serverCpuSeconds: usage.cpuSeconds,
    serverPeakRssMb: usage.peakRssBytes / (1024 * 1024),
    serverProcesses: usage.processes,
    generatorCpuPercent: 0,
    databaseCpuPercent,
    otherCpuPercent: Math.max(0, machine.busyPercent - accounted),
    stealCpuPercent: machine.stealPercent,
    errorSamples: figures.errorSamples,
    ratios: {},
  };
}

/** The row name of a store-only or plain-SQL child's figures. */
function baselinePhaseName(f: StoreOnlyFigures): string {
  return (f.baseline === 'plain-sql' ? plainSqlPhaseName : storeOnlyPhaseName)(f.eventsPerTransaction);
}

/** The store-only (or plain-SQL) child's own check: every balance against what its committed transactions took. */
export function formatStoreOnlyLedger(f: StoreOnlyFigures): string {
  const label = `${f.dialect} ${baselinePhaseName(f)}`;
  const verdict =
    f.ledger.findings.length === 0 ? 'ledger exact' : `LEDGER MISMATCH on ${f.ledger.findings.length} balances`;
  const checked = f.ledger.accountsChecked.toLocaleString('en-US');
  return `${label}: ${checked} balances checked, ${f.errors} transactions in doubt; ${verdict}`;
}

export interface StoreOnlyRun {
  /** The store-only child (`store`, the default) or the plain-SQL one; `entry` is its script. */
  baseline?: StoreBaseline;
  db: DbKind;
  databaseUrl: string;
  /** The PostgreSQL processes serving its database; undefined on SQLite. */
  databaseProcesses: (() => number[]) | undefined;
  eventsPerTransaction: number;
  lanes: number;
  accounts: number;
  /** `--grants` and `--grant-units`: the balances hold the grants the scenarios' balances hold. */
  grants: number;
  grantUnits: number;
  pgPoolSize: number;
  durationS: number;
  warmupS: number;
  /** Repository root, and the child's script relative to it. */
  cwd: string;
  entry: string;
  logDir: string;
  /** Registers a way to stop the child on Ctrl-C; returns its release, called once it has exited. */
  track(stop: () => void): () => Promise<void>;
}

/** Runs the store-only child once and returns its figures, and the row for the report. */
export async function runStoreOnly(run: StoreOnlyRun): Promise<{ result: PhaseResult; figures: StoreOnlyFigures }> {
  const baseline = run.baseline ?? 'store';
  const logFile = join(run.logDir, `${baseline}-${run.db}-${run.eventsPerTransaction}.log`);
  const logFd = openSync(logFile, 'a');
  // CHILD_FLAGS, which both children take; the store-only child also funds its balances with grants and opens a pool.
  const common = [
    ['--events', run.eventsPerTransaction],
    ['--duration', run.durationS],
    ['--warmup', run.warmupS],
    ['--lanes', run.lanes],
    ['--accounts', run.accounts],
  ];
  const own =
    baseline === 'plain-sql'
      ? []
      : [
          ['--grants', run.grants],
          ['--grant-units', run.grantUnits],
          ['--pg-pool-size', run.pgPoolSize],
        ];
  const args = [
    '--import',
    'tsx',
    run.entry,
    ...[...common, ...own].flatMap(([flag, value]) => [String(flag), String(value)]),
  ];
  const child = spawn(process.execPath, args, {
    cwd: run.cwd,
    env: { ...process.env, DATABASE_URL: run.databaseUrl },
    stdio: ['ignore', 'pipe', logFd],
  });
  closeSync(logFd);
  const { pid, stdout } = child;
  if (pid === undefined || stdout === null) throw new Error(`${baseline} ${run.db}: could not spawn ${run.entry}`);
  const release = run.track(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const backstop = setTimeout(() => child.kill('SIGKILL'), (run.warmupS + run.durationS + STORE_ONLY_SLACK_S) * 1000);

  const sampler = new ProcessSampler(() => processForest([pid]));
  const dbSampler = run.databaseProcesses === undefined ? undefined : new ProcessSampler(run.databaseProcesses);
  const machine = new MachineSampler();
  let state: 'setup' | 'measuring' | 'measured' = 'setup';
  let measured: { usage: ProcessUsage; dbUsage: ProcessUsage | undefined; machine: MachineUsage } | undefined;
  let figures: StoreOnlyFigures | undefined;
  const endMeasuring = (): void => {
    if (state !== 'measuring') return;
    state = 'measured';
    measured = { usage: sampler.stop(), dbUsage: dbSampler?.stop(), machine: machine.end() };
  };

  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  createInterface({ input: stdout }).on('line', (line) => {
    const message = parseStoreOnlyMessage(line);
    if (message?.type === 'measuring' && state === 'setup') {
      state = 'measuring';
      machine.begin();
      sampler.start();
      dbSampler?.start();
    } else if (message?.type === 'measured') {
      endMeasuring();
    } else if (message?.type === 'result') {
      figures = message;
    }
  });
  const { code, signal } = await closed;
  clearTimeout(backstop);
  endMeasuring();
  await release();
  if (figures === undefined || measured === undefined || code !== 0) {
    throw new Error(
      `${baseline} ${run.db}, ${run.eventsPerTransaction} events/tx: ${run.entry} ended with ` +
        `${signal ?? `code ${code}`} without a result. Log tail:\n${logTail(logFile)}`,
    );
  }
  const { usage, dbUsage } = measured;
  return { figures, result: storeOnlyPhase(run.db, figures, usage, dbUsage?.cpuPercent, measured.machine) };
}
