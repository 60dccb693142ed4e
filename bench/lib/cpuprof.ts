/**
 * `npm run bench -- --cpu-prof`: the engine's servers run with Node's CPU profiler, each process writing
 * `CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile` into a directory of its own when it exits, one file per
 * thread (the SQLite writer thread is given the profiler's flags by the server). Beside them, `phases.json` holds the
 * window of every phase measured against that process, on the clock of the profiles' timestamps, so that
 * `npm run bench:profile` can cut a profile to one phase.
 *
 * The clock: V8 stamps a profile's `startTime`, `endTime` and samples (`timeDeltas`) in microseconds of its
 * monotonic clock, CLOCK_MONOTONIC on Linux, which is also what `process.hrtime.bigint()` reads in every
 * process of the machine; checked by a child profiling itself while the parent noted hrtime (see README).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** The directory, under a run's log directory, holding one directory of profiles per server process. */
export const PROFILES_DIR_NAME = 'cpu-prof';
export const PHASES_FILE = 'phases.json';
/**
 * A profiled server is given this long after SIGTERM before SIGKILL (which would lose its profiles): its own
 * drain may take BILLING_SHUTDOWN_TIMEOUT_MS (10 s by default), then the profiles are written.
 */
export const PROFILED_STOP_GRACE_MS = 60_000;
/** How long to wait, after a profiled server exited, for its profile files to be complete. */
const PROFILE_WAIT_MS = 5_000;
const PROFILE_POLL_MS = 100;

export const CLOCK_NOTE =
  'CLOCK_MONOTONIC in µs: process.hrtime.bigint() / 1000 in the bench, the clock of the .cpuprofile startTime, ' +
  'endTime and timeDeltas';

/** Now, on the clock of the profiles' timestamps (µs). */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** The offset from `performance.now()` (ms) to `monotonicUs()`: both read the same monotonic clock. */
export function performanceToMonotonicUs(performanceMs: number): number {
  return monotonicUs() - (performance.now() - performanceMs) * 1000;
}

/** The arguments for `node` that make a server write its profiles into `dir`. */
export function cpuProfNodeArgs(dir: string): string[] {
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`];
}

/** One measured phase as one server process saw it. */
export interface PhaseWindow {
  scenario: string;
  phase: string;
  /** The window `srv CPU` covers (its /proc samplers started and stopped), µs on CLOCK_NOTE's clock. */
  startUs: number;
  endUs: number;
  /** From the first request sent to the last answer received (inside the window above). */
  loadStartUs: number;
  loadEndUs: number;
  /** 2xx answers from this server process. */
  requests: number;
  /** Events in those requests (requests × events per request); undefined when requests carry mixed sizes. */
  events: number | undefined;
  eventsPerRequest: number;
  /** utime+stime of this process (all its threads, and what it forked) over the window, from /proc, in µs. */
  processCpuUs: number;
  /** The phase over every server: their count, 2xx answers and events acknowledged. */
  servers: number;
  phaseRequests: number;
  phaseEvents: number;
}

/** `phases.json`, beside one server process's profiles. */
export interface PhasesFile {
  clock: string;
  server: { label: string; pid: number; db: string };
  phases: PhaseWindow[];
}

export function readPhases(dir: string): PhasesFile | undefined {
  const file = join(dir, PHASES_FILE);
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as PhasesFile;
}

/** Appends a phase to `dir/phases.json` (written after every phase, so that a failed run keeps what it had). */
export function recordPhase(dir: string, server: PhasesFile['server'], window: PhaseWindow): void {
  const file = readPhases(dir) ?? { clock: CLOCK_NOTE, server, phases: [] };
  file.phases.push(window);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, PHASES_FILE), `${JSON.stringify(file, null, 2)}\n`);
}

/**
 * The phase `name` names: a phase's name (`events-1`), scenario/phase (`holds/settle`), or a scenario of one
 * phase (`entitlements-1`).
 */
export function findPhase(phases: readonly PhaseWindow[], name: string): PhaseWindow | undefined {
  let hits = phases.filter((p) => p.phase === name || `${p.scenario}/${p.phase}` === name);
  if (hits.length === 0) hits = phases.filter((p) => p.scenario === name);
  if (hits.length > 1) {
    const names = hits.map((p) => `${p.scenario}/${p.phase}`).join(', ');
    throw new Error(`--phase ${name} names several phases (${names}): use scenario/phase`);
  }
  return hits[0];
}

/** What Node names a profile file: `CPU.20250101.120000.<pid>.<thread id>.<seq>.cpuprofile`. */
export function profileFileInfo(name: string): { pid: number; threadId: number; seq: number } | undefined {
  const match = /^CPU\.\d+\.\d+\.(\d+)\.(\d+)\.(\d+)\.cpuprofile$/.exec(name);
  if (match === null) return undefined;
  return { pid: Number(match[1]), threadId: Number(match[2]), seq: Number(match[3]) };
}

/** The profile files of `dir`, main thread first, then by thread id. */
export function profileFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .flatMap((name) => {
      const info = profileFileInfo(name);
      return info === undefined ? [] : [{ name, info }];
    })
    .sort((a, b) => a.info.pid - b.info.pid || a.info.threadId - b.info.threadId || a.info.seq - b.info.seq)
    .map((f) => join(dir, f.name));
}

/**
 * After a profiled server exited: its main thread's profile (written as the process exits), and every other
 * file of that pid, once their sizes have stopped changing; at most PROFILE_WAIT_MS.
 */
export async function awaitProfiles(dir: string, pid: number): Promise<string[]> {
  const deadline = Date.now() + PROFILE_WAIT_MS;
  let sizes = '';
  for (;;) {
    const files = profileFiles(dir).filter((f) => profileFileInfo(basename(f))?.pid === pid);
    const now = files.map((f) => `${f}:${statSync(f).size}`).join(',');
    const main = files.some((f) => profileFileInfo(basename(f))?.threadId === 0);
    if ((main && now === sizes) || Date.now() > deadline) return files;
    sizes = now;
    await sleep(PROFILE_POLL_MS);
  }
}
