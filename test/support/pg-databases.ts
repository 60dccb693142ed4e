/**
 * A fresh PostgreSQL database for a test server's store, already migrated: a copy of a template database that holds
 * the schema of the current migrations, made once (by the first test that needs it) and then copied by PostgreSQL
 * (`CREATE DATABASE … TEMPLATE`, some 40 ms) instead of running every migration again for each store (close to a
 * second of CPU, most of it PostgreSQL's, and under one advisory lock that every test process queues for). The
 * migrations themselves are still run from nothing by the store contract tests (their own schemas), the CLI's
 * `migrate`, and every child server started on a database of its own.
 */
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { PostgresStore } from '../../src/store/postgres.js';
import { DATABASE_URL } from './stores.js';

const TEMPLATE_PREFIX = 'billing_test_template_';
/** The template of the current migrations: named by their content, so that a changed migration makes a new one. */
const TEMPLATE = TEMPLATE_PREFIX + createHash('sha256').update(JSON.stringify(MIGRATIONS)).digest('hex').slice(0, 16);
/** SQLSTATE of a database that does not exist, and of one that does. */
const NO_SUCH_DATABASE = '3D000';
const DUPLICATE_DATABASE = '42P04';

export interface PgDatabase {
  /** The database's URL (DATABASE_URL with its name). */
  url: string;
  drop(): Promise<void>;
}

function urlOf(name: string): string {
  const url = new URL(DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: DATABASE_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

const codeOf = (err: unknown) => (err as { code?: string }).code;

/** Builds the template under another name and renames it (no process ever copies a half-migrated template). */
async function buildTemplate(): Promise<void> {
  const building = `${TEMPLATE_PREFIX}build_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${building}`));
  try {
    const store = await PostgresStore.open({ connectionString: urlOf(building), poolSize: 1 });
    await store.close();
    await admin(async (c) => {
      try {
        await c.query(`ALTER DATABASE ${building} RENAME TO ${TEMPLATE}`);
        // Copied, never used: a connection to it would make every copy fail meanwhile.
        await c.query(`ALTER DATABASE ${TEMPLATE} WITH ALLOW_CONNECTIONS false`);
      } catch (err) {
        if (codeOf(err) !== DUPLICATE_DATABASE) throw err; // another test process made it meanwhile
        return;
      }
      // Templates of earlier migrations (nobody copies them any more; one in use now is left for next time).
      const old = await c.query<{ name: string }>(
        'SELECT datname AS name FROM pg_database WHERE datname LIKE $1 AND datname <> $2',
        [`${TEMPLATE_PREFIX}%`, TEMPLATE],
      );
      for (const { name } of old.rows)
        if (!name.startsWith(`${TEMPLATE_PREFIX}build_`))
          await c.query(`DROP DATABASE IF EXISTS ${name}`).catch(() => {});
    });
  } finally {
    await admin((c) => c.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`));
  }
}

let template: Promise<void> | undefined;

function ensureTemplate(): Promise<void> {
  template ??= admin((c) => c.query('SELECT 1 FROM pg_database WHERE datname = $1', [TEMPLATE])).then((r) =>
    r.rowCount ? undefined : buildTemplate(),
  );
  template.catch(() => {
    template = undefined;
  });
  return template;
}

/** A new database with the schema of the current migrations (dropped with `drop()`, connections and all). */
export async function freshPgDatabase(): Promise<PgDatabase> {
  const name = `t_${randomBytes(8).toString('hex')}`;
  for (let attempt = 1; ; attempt++) {
    await ensureTemplate();
    try {
      await admin((c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE}`));
      break;
    } catch (err) {
      // Another run with other migrations removed this template: make it again, once.
      if (codeOf(err) !== NO_SUCH_DATABASE || attempt > 1) throw err;
      template = undefined;
    }
  }
  return {
    url: urlOf(name),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}
