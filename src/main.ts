/**
 * `node dist/main.js` (production; `npm start` execs it, and `billing serve`): serve the API, its docs
 * and the workers until SIGINT/SIGTERM, then drain within BILLING_SHUTDOWN_TIMEOUT_MS.
 * A bad environment or an unreachable database ends the process with plain lines (exit 1), never a
 * stack trace; a bug still shows its stack.
 */
import { ConfigError, loadConfig } from './config.js';
import { DbConnectError, connectStore } from './db-connect.js';
import type { SecretBox } from './lib/secret-box.js';
import { secretBoxFor } from './secret-keys.js';
import { startServer } from './server.js';

/** Errors of the listening socket that are the operator's to fix (port taken, no permission). */
const LISTEN_ERRORS: Record<string, string> = {
  EADDRINUSE: 'is already in use',
  EACCES: 'needs privileges this process does not have',
  EADDRNOTAVAIL: 'names an address this machine does not have',
};

function exitWith(lines: string[]): never {
  for (const line of lines) console.error(line);
  process.exit(1);
}

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  exitWith(['billing engine: configuration error', ...err.problems.map((p) => `  ${p}`)]);
}

// The keys of secrets at rest, before the database is touched: a missing key on PostgreSQL is a
// configuration error, and a SQLite file database gets its key file on first start.
let secrets: SecretBox;
try {
  secrets = secretBoxFor(config, { log: (line) => console.error(`billing engine: ${line}`) });
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  exitWith(['billing engine: configuration error', ...err.problems.map((p) => `  ${p}`)]);
}

let store: Awaited<ReturnType<typeof connectStore>>;
try {
  store = await connectStore(config, { log: (line) => console.error(`billing engine: ${line}`) });
} catch (err) {
  if (!(err instanceof DbConnectError)) throw err;
  exitWith([`billing engine: ${err.message}`]);
}

let server: Awaited<ReturnType<typeof startServer>>;
try {
  server = await startServer(config, { store, secrets });
} catch (err) {
  if (err instanceof ConfigError) {
    await store.close();
    exitWith(['billing engine: configuration error', ...err.problems.map((p) => `  ${p}`)]);
  }
  const problem = LISTEN_ERRORS[(err as { code?: string }).code ?? ''];
  if (!problem) throw err;
  await store.close();
  exitWith([`billing engine: ${config.host}:${config.port} ${problem} (set HOST and PORT)`]);
}
console.log(
  `billing engine listening on ${server.url} (${server.store.dialect}${config.testClock ? ', test clock' : ''})`,
);

// SIGTERM/SIGINT: drain (see Server.close), then exit 0; a drain that outlasts
// BILLING_SHUTDOWN_TIMEOUT_MS is cut short (exit 1): nothing half-applied is left, since every
// request is one transaction, and the claims of interrupted workers lapse.
let closing = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (closing) return;
    closing = true;
    const startedMs = Date.now();
    console.error(`billing engine: ${signal} received; draining (at most ${config.shutdownTimeoutMs} ms)`);
    setTimeout(() => {
      console.error(
        `billing engine: shutdown did not finish within BILLING_SHUTDOWN_TIMEOUT_MS (${config.shutdownTimeoutMs} ms);` +
          ' exiting anyway',
      );
      process.exit(1);
    }, config.shutdownTimeoutMs);
    server
      .close()
      .then(() => store.close())
      .then(
        () => {
          console.error(`billing engine: stopped cleanly in ${Date.now() - startedMs} ms`);
          process.exit(0);
        },
        (err: unknown) => {
          console.error(err);
          process.exit(1);
        },
      );
  });
}
