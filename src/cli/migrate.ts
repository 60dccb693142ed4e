/** `billing migrate`: opens the store, which applies every pending migration, then exits. */
import { describeDatabase } from '../db-connect.js';
import { MIGRATE_USAGE } from './usage.js';
import { type Io, EXIT_OK, parseCommand, withStore } from './common.js';

const MIGRATE_HELP = `Usage: ${MIGRATE_USAGE}

Applies the schema migrations to the database named by DATABASE_URL, then exits. The server does
the same at start; run this first to migrate once before starting several servers, or to check
that the database is reachable. Several processes may migrate at once (PostgreSQL: an advisory lock).`;

export async function migrateCommand(args: string[], io: Io): Promise<number> {
  if (parseCommand(args, {}, MIGRATE_USAGE).help) {
    io.out(MIGRATE_HELP);
    return EXIT_OK;
  }
  return withStore(io, async ({ config, store }) => {
    io.out(`database schema up to date: ${describeDatabase(config.databaseUrl)} (${store.dialect})`);
    return EXIT_OK;
  });
}
