/**
 * What every bench entry point (`run.ts`, `growth.ts`) shares: a log with its tag, the
 * resources to release on the way out (also on Ctrl-C), the choice of databases, the machine's
 * state at start, and the exit codes.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DbChoice, DbKind } from './options.js';
import { postgresReachable } from './postgres.js';
import type { RunMeta } from './report.js';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const EXIT_LEDGER_OR_RUN_FAILED = 1;
export const EXIT_USAGE = 2;
export const EXIT_INTERRUPTED = 130;
/** A one-minute load average above this at start means something else is running: say so. */
const BUSY_MACHINE_LOAD = 0.5;

/**
 * The server runs as production runs it: compiled JavaScript (`npm run build` → dist/), not
 * through tsx, whose loader and in-memory transforms would add tens of MB of RSS to every
 * server thread. Builds it when the entry is under dist/ (a second or two).
 */
export function buildServer(entry: string, log: (message: string) => void): void {
  if (!entry.startsWith('dist/')) return;
  log('building the server (tsc -p tsconfig.build.json)');
  execFileSync(resolve(REPO_ROOT, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.build.json'], {
    cwd: REPO_ROOT,
    stdio: 'inherit',
  });
}

export interface Entry {
  log(message: string): void;
  /** Registers a release to run on the way out; returns it, run at most once. */
  onCleanup(release: () => Promise<void> | void): () => Promise<void>;
  cleanUpEverything(): Promise<void>;
  /**
   * Runs `main`, releasing everything registered on its way out, on an error and on
   * SIGINT/SIGTERM, and exits with its code.
   */
  run(main: () => Promise<number>): void;
}

export function benchEntry(tag: string): Entry {
  const log = (message: string): void => {
    process.stderr.write(`[${tag}] ${message}\n`);
  };
  const cleanups = new Set<() => Promise<void> | void>();
  const onCleanup = (release: () => Promise<void> | void): (() => Promise<void>) => {
    const once = async (): Promise<void> => {
      if (!cleanups.delete(once)) return;
      await release();
    };
    cleanups.add(once);
    return once;
  };
  const cleanUpEverything = async (): Promise<void> => {
    for (const release of [...cleanups].reverse()) {
      try {
        await release();
      } catch (error) {
        log(`cleanup failed: ${String(error)}`);
      }
    }
  };
  const run = (main: () => Promise<number>): void => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => {
        log(`${signal}: stopping servers and dropping bench databases`);
        void cleanUpEverything().finally(() => process.exit(EXIT_INTERRUPTED));
      });
    }
    main().then(
      async (code) => {
        await cleanUpEverything();
        process.exit(code);
      },
      async (error: unknown) => {
        log(`error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        await cleanUpEverything();
        process.exit(EXIT_LEDGER_OR_RUN_FAILED);
      },
    );
  };
  return { log, onCleanup, cleanUpEverything, run };
}

/** Where and when a run ran, for the head of its JSON. */
export function runMeta(startedAt: Date, dataDirFilesystem: string, loadAverageAtStart: number): RunMeta {
  return {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    serverCommit: gitCommit(),
    dataDirFilesystem,
    loadAverageAtStart,
  };
}

/** The commit measured, `+changes` when the work tree differs from it. */
function gitCommit(): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    }).trim();
    return dirty === '' ? commit : `${commit}+changes`;
  } catch {
    return 'unknown';
  }
}

/** The filesystem type under `dir` (fsync costs differ: a tmpfs makes durable commits free). */
export function filesystemOf(dir: string): string {
  try {
    const real = realpathSync(dir);
    let best = { mount: '', type: 'unknown' };
    for (const line of readFileSync('/proc/mounts', 'utf8').split('\n')) {
      const [, mount, type] = line.split(' ');
      if (mount === undefined || type === undefined) continue;
      const inside = real === mount || real.startsWith(mount.endsWith('/') ? mount : `${mount}/`);
      if (inside && mount.length >= best.mount.length) best = { mount, type };
    }
    return `${best.type} (${best.mount})`;
  } catch {
    return 'unknown';
  }
}

/** The databases to run: PostgreSQL too when it answers (or when asked for, and then it must). */
export async function chooseDatabases(
  options: { db: DbChoice | undefined; postgresAdminUrl: string },
  log: (m: string) => void,
): Promise<DbKind[]> {
  if (options.db === 'sqlite') return ['sqlite'];
  const reachable = await postgresReachable(options.postgresAdminUrl);
  if (options.db === undefined && !reachable) {
    log(`PostgreSQL is not reachable at ${options.postgresAdminUrl}: SQLite only`);
    return ['sqlite'];
  }
  if (!reachable) throw new Error(`--db ${options.db}: PostgreSQL is not reachable at ${options.postgresAdminUrl}`);
  return options.db === 'postgres' ? ['postgres'] : ['sqlite', 'postgres'];
}

/** The one-minute load average at start, with a warning when the machine is busy. */
export function loadAtStart(log: (m: string) => void): number {
  const load = loadavg()[0] ?? 0;
  if (load > BUSY_MACHINE_LOAD) {
    log(`the machine is busy (load average ${load.toFixed(2)}): figures will be noisy; see the "other CPU" column`);
  }
  return load;
}
