/**
 * Servers as child processes (`node dist/main.js` as production runs it, from support/built.ts's build), each on
 * a fixed port so that it can be killed with SIGKILL and started again on the same port and the same database.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { SERVER_ENTRY, nodeArgs } from '../../cli/support.js';
import { TEST_SECRET_KEY } from '../../support/stores.js';
import { childEnv } from '../../support/child-env.js';

/**
 * Ports below the kernel's ephemeral range (32768–60999 on Linux), where no `listen(0)` of another test and no
 * outgoing connection's local port can land while a server is down between a kill and its restart.
 */
const PORT_LOW = 20_000;
const PORT_HIGH = 32_767;

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** A port free now, outside the ephemeral range, kept by the server across restarts. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = PORT_LOW + Math.floor(Math.random() * (PORT_HIGH - PORT_LOW + 1));
    if (await bindable(port)) return port;
  }
}

const IN_USE = /already in use/;

export interface ChildServer {
  url: string;
  port: number;
  /** How many times this server was started (1 after start()). */
  starts: number;
  pid(): number | undefined;
  running(): boolean;
  /** SIGKILL, and wait until the process is gone. */
  kill9(): Promise<void>;
  /** SIGTERM (graceful), and wait until the process is gone. */
  stop(): Promise<void>;
  /** Starts it again on the same port and database; resolves once it listens. */
  restart(): Promise<void>;
  /** What the process wrote to stderr (all starts). */
  stderr(): string;
}

const START_TIMEOUT_MS = 180_000;

/**
 * Starts `src/main.ts` on `databaseUrl` with the test defaults (test clock, private webhook URLs allowed,
 * quiet log, background workers off unless `env` turns them on).
 */
export async function startChildServer(databaseUrl: string, env: Record<string, string> = {}): Promise<ChildServer> {
  let port = await freePort();
  let child: ChildProcess | undefined;
  let stderr = '';
  const fullEnv = (): NodeJS.ProcessEnv =>
    childEnv({
      DATABASE_URL: databaseUrl,
      HOST: '127.0.0.1',
      PORT: String(port),
      BILLING_TEST_CLOCK: '1',
      BILLING_WORKERS: '0',
      BILLING_WEBHOOK_ALLOW_PRIVATE: '1',
      BILLING_API_KEY_CACHE_MS: '0',
      BILLING_SECRET_KEY: TEST_SECRET_KEY,
      LOG_LEVEL: 'fatal',
      ...env,
    });
  async function launch(): Promise<void> {
    const c = spawn(process.execPath, await nodeArgs(SERVER_ENTRY), {
      env: fullEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = c;
    c.stderr!.on('data', (d) => {
      stderr += d;
    });
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => {
        c.kill('SIGKILL');
        reject(new Error(`server did not start in ${START_TIMEOUT_MS} ms: ${stderr}`));
      }, START_TIMEOUT_MS);
      c.stdout!.on('data', (d) => {
        out += d;
        if (/listening on http/.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      });
      c.on('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`server exited (${code ?? signal}) before listening: ${stderr}`));
      });
    });
    server.starts++;
  }
  /**
   * Starts again on the same port. Another process (a test's server picking its own port) may hold it for a
   * moment: that is waited out, never taken as the server failing.
   */
  async function relaunch(): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      const before = stderr.length;
      try {
        return await launch();
      } catch (err) {
        if (!IN_USE.test(stderr.slice(before)) || Date.now() > deadline) throw err;
        while (!(await bindable(port)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
  async function end(signal: NodeJS.Signals): Promise<void> {
    const c = child;
    if (c === undefined || c.exitCode !== null || c.signalCode !== null) return;
    const gone = once(c, 'exit');
    c.kill(signal);
    await gone;
  }
  const server: ChildServer = {
    url: `http://127.0.0.1:${port}`,
    port,
    starts: 0,
    pid: () => child?.pid,
    running: () => child !== undefined && child.exitCode === null && child.signalCode === null,
    kill9: () => end('SIGKILL'),
    stop: () => end('SIGTERM'),
    restart: relaunch,
    stderr: () => stderr,
  };
  // The first start takes another free port when the one picked was taken in between.
  for (let attempt = 1; ; attempt++) {
    const before = stderr.length;
    try {
      await launch();
      break;
    } catch (err) {
      if (!IN_USE.test(stderr.slice(before)) || attempt === 5) throw err;
      port = await freePort();
    }
  }
  server.url = `http://127.0.0.1:${port}`;
  server.port = port;
  return server;
}
