/**
 * `node dist/main.js` (production; `npm start` execs it, and `billing serve`): serve the API, its docs
 * and the workers until SIGINT/SIGTERM, then drain within BILLING_SHUTDOWN_TIMEOUT_MS. The port opens
 * before the database is reached and migrated, answering as a starting server (http/listener.ts).
 * A bad environment or an unreachable database ends the process with plain lines (exit 1), never a
 * stack trace; a bug still shows its stack.
 */
import { ConfigError, loadConfig } from './config.js';
import { DbConnectError, connectStore } from './db-connect.js';
import type { SecretBox } from './lib/secret-box.js';
import { secretBoxFor } from './secret-keys.js';
import { type Server, listenerFor, startServer } from './server.js';
import type { Store } from './store/types.js';

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

// The port opens now: while the database is reached and migrated, /healthz answers 200 and /readyz
// (and every other request) 503; the app takes the same port over once it is ready.
const listener = listenerFor(config);
try {
  await listener.listen(config.host, config.port);
} catch (err) {
  const problem = LISTEN_ERRORS[(err as { code?: string }).code ?? ''];
  if (!problem) throw err;
  exitWith([`billing engine: ${config.host}:${config.port} ${problem} (set HOST and PORT)`]);
}
console.log(`billing engine starting on ${listener.url} (/readyz answers 503 until the database is migrated)`);

let store: Store | undefined;
let server: Server | undefined;

// SIGTERM/SIGINT: drain (see Server.close), then exit 0; a drain that outlasts
// BILLING_SHUTDOWN_TIMEOUT_MS is cut short (exit 1): nothing half-applied is left, since every
// request is one transaction, and the claims of interrupted workers lapse. Before the app is ready
// (the database reached or migrated) the port closes and the process exits 0: a migration cut
// short is rolled back with its transaction, and runs again at the next start.
let closing = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (closing) return;
    closing = true;
    const startedMs = Date.now();
    setTimeout(() => {
      console.error(
        `billing engine: shutdown did not finish within BILLING_SHUTDOWN_TIMEOUT_MS (${config.shutdownTimeoutMs} ms);` +
          ' exiting anyway',
      );
      process.exit(1);
    }, config.shutdownTimeoutMs);
    const running = server;
    if (!running) {
      console.error(`billing engine: ${signal} received while starting (${listener.phase}); stopping`);
      void listener.close().then(() => {
        console.error(`billing engine: stopped cleanly before the start finished, in ${Date.now() - startedMs} ms`);
        process.exit(0);
      });
      return;
    }
    console.error(`billing engine: ${signal} received; draining (at most ${config.shutdownTimeoutMs} ms)`);
    running
      .close()
      .then(() => store?.close())
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

try {
  store = await connectStore(config, {
    log: (line) => console.error(`billing engine: ${line}`),
    phase: (phase) => {
      listener.phase = phase;
    },
  });
} catch (err) {
  if (!(err instanceof DbConnectError)) throw err;
  exitWith([`billing engine: ${err.message}`]);
}

// A signal during the start: the handler above is closing the port and ends the process.
if (!closing) {
  try {
    server = await startServer(config, { store, secrets, listener });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    await store.close();
    exitWith(['billing engine: configuration error', ...err.problems.map((p) => `  ${p}`)]);
  }
  if (!closing) {
    console.log(
      `billing engine listening on ${server.url} (${server.store.dialect}${config.testClock ? ', test clock' : ''})`,
    );
  }
}
