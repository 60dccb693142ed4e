/**
 * `billing backup FILE`: an online copy of the SQLite database (SQLite's backup API through
 * better-sqlite3's `db.backup()`), consistent even while servers write; the copy is checked before
 * it is reported. PostgreSQL has its own tools: this says to use pg_dump and exits 1.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { loadConfig } from '../config.js';
import { BACKUP_USAGE } from './usage.js';
import { type Io, CliError, EXIT_ERROR, EXIT_OK, parseCommand } from './common.js';

const BACKUP_HELP = `Usage: ${BACKUP_USAGE}

Copies the SQLite database named by DATABASE_URL to FILE (a new file; never overwritten), online:
servers may keep running and writing. Restore by stopping the server and putting FILE in place of the
database file (and removing its -wal and -shm files). On PostgreSQL, use pg_dump instead.`;

const BUSY_TIMEOUT_MS = 5_000;

export async function backupCommand(args: string[], io: Io): Promise<number> {
  const p = parseCommand(args, {}, BACKUP_USAGE, { min: 1, max: 1 });
  if (p.help) {
    io.out(BACKUP_HELP);
    return EXIT_OK;
  }
  const target = p.positionals[0]!;
  const config = loadConfig(io.env);
  if (!config.databaseUrl.startsWith('sqlite:')) {
    io.err('billing: backup copies SQLite databases; this one is PostgreSQL: use pg_dump, for example');
    io.err('  pg_dump --format=custom --file=billing.dump "$DATABASE_URL"');
    return EXIT_ERROR;
  }
  const source = config.databaseUrl.slice('sqlite:'.length);
  if (source === ':memory:')
    throw new CliError('the database is in memory (sqlite::memory:): there is nothing to back up');
  if (!existsSync(source)) throw new CliError(`no SQLite database at ${source}`);
  if (existsSync(target)) throw new CliError(`${target} already exists: a backup never overwrites a file`);
  if (!existsSync(dirname(target)) || !statSync(dirname(target)).isDirectory())
    throw new CliError(`the directory of ${target} does not exist`);
  const db = new Database(source, { fileMustExist: true });
  let pages: number;
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    pages = (await db.backup(target)).totalPages;
  } finally {
    db.close();
  }
  const copy = new Database(target, { readonly: true, fileMustExist: true });
  try {
    const check = copy.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new CliError(`the copy at ${target} fails SQLite's quick_check: ${String(check)}`);
  } finally {
    copy.close();
  }
  io.out(`backed up ${source} to ${target} (${pages} pages, ${statSync(target).size} bytes)`);
  return EXIT_OK;
}
