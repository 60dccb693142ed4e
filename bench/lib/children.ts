/**
 * Servers under test run as child processes of the bench: the real server, and the baseline
 * Fastify servers. Output goes to a log file (reading pipes would cost the bench CPU that the
 * load generator needs); its tail is shown when a server fails to start.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { STARTUP_TIMEOUT_S } from './options.js';

const HEALTH_POLL_MS = 100;
const HEALTH_REQUEST_TIMEOUT_MS = 2_000;
const STOP_GRACE_MS = 10_000;
const LOG_TAIL_CHARS = 4_000;
export const LOOPBACK = '127.0.0.1';

export interface ChildServer {
  readonly label: string;
  readonly pid: number;
  readonly baseUrl: string;
  readonly logFile: string;
  /** Where its CPU profiles go (`--cpu-prof`), if it runs with them. */
  readonly profileDir?: string | undefined;
  /** SIGTERM, then SIGKILL after a grace period; resolves when the process has exited. */
  stop(): Promise<void>;
  /** How the process ended (`exited with code 0`, `exited with SIGKILL`) once it has; undefined while it runs. */
  exitNote(): string | undefined;
}

export interface StartOptions {
  label: string;
  /** Repository root: the working directory of the child. */
  cwd: string;
  /** Script to run with `node` (a .ts one with `--import tsx`), relative to cwd. */
  entry: string;
  env: Readonly<Record<string, string>>;
  logDir: string;
  /** What the start waits for: the engine's `/readyz` (default; 200 once migrated), a baseline's `/healthz`. */
  healthPath?: string;
  /** Arguments for `node` itself, before the entry (and before `--import tsx`): `--cpu-prof …`. */
  nodeArgs?: readonly string[];
  /** Recorded on the handle: where those arguments make it write its CPU profiles. */
  profileDir?: string;
  /** How long `stop` waits after SIGTERM before SIGKILL (default STOP_GRACE_MS). */
  stopGraceMs?: number;
}

/** A TCP port that was free a moment ago. */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, LOOPBACK, () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not find a free port'));
      });
    });
  });
}

export function logTail(file: string): string {
  try {
    const text = readFileSync(file, 'utf8');
    return text.length > LOG_TAIL_CHARS ? `…${text.slice(-LOG_TAIL_CHARS)}` : text;
  } catch {
    return '(no log)';
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export async function startChild(options: StartOptions): Promise<ChildServer> {
  const port = await freePort();
  const baseUrl = `http://${LOOPBACK}:${port}`;
  const logFile = join(options.logDir, `${options.label.replace(/[^\w.-]+/g, '_')}.log`);
  const logFd = openSync(logFile, 'a');
  const child = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), ...(options.entry.endsWith('.ts') ? ['--import', 'tsx'] : []), options.entry],
    {
      cwd: options.cwd,
      env: { ...process.env, ...options.env, HOST: LOOPBACK, PORT: String(port) },
      stdio: ['ignore', logFd, logFd],
    },
  );
  closeSync(logFd);
  if (child.pid === undefined) throw new Error(`${options.label}: could not spawn ${options.entry}`);
  const pid = child.pid;

  let exitNote: string | undefined;
  child.once('exit', (code, signal) => {
    exitNote = `exited with ${signal ?? `code ${code}`}`;
  });

  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), options.stopGraceMs ?? STOP_GRACE_MS);
    await exited(child);
    clearTimeout(timer);
  };

  const deadline = Date.now() + STARTUP_TIMEOUT_S * 1000;
  const healthUrl = `${baseUrl}${options.healthPath ?? '/readyz'}`;
  for (;;) {
    if (exitNote !== undefined) {
      throw new Error(`${options.label} ${exitNote} before answering ${healthUrl}. Log tail:\n${logTail(logFile)}`);
    }
    try {
      const res = await fetch(healthUrl, { signal: AbortSignal.timeout(HEALTH_REQUEST_TIMEOUT_MS) });
      await res.arrayBuffer();
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(
        `${options.label} did not answer ${healthUrl} within ${STARTUP_TIMEOUT_S} s. Log tail:\n${logTail(logFile)}`,
      );
    }
    await sleep(HEALTH_POLL_MS);
  }

  return {
    label: options.label,
    pid,
    baseUrl,
    logFile,
    profileDir: options.profileDir,
    stop,
    exitNote: () => exitNote,
  };
}
