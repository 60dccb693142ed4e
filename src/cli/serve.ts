/** `billing serve`: the server, exactly as `node dist/main.js` runs it (configured by the environment only). */
import { SERVE_USAGE } from './usage.js';
import { type Io, EXIT_OK, parseCommand } from './common.js';

const SERVE_HELP = `Usage: ${SERVE_USAGE}

Serves the API, its docs and the background workers until SIGINT or SIGTERM, like node dist/main.js.
Configured by the environment only (HOST, PORT, DATABASE_URL, …: see the README).`;

export async function serveCommand(args: string[], io: Io): Promise<number> {
  if (parseCommand(args, {}, SERVE_USAGE).help) {
    io.out(SERVE_HELP);
    return EXIT_OK;
  }
  // main.ts reads the environment, opens the store, listens and handles signals on import; it
  // ends the process itself on a configuration or database error.
  await import('../main.js');
  return EXIT_OK;
}
