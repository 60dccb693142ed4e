/** A database of an earlier schema, for the tests of a migration that changes rows already there. */
import Database from 'better-sqlite3';
import pg from 'pg';
import type { TestDatabase } from '../cli/support.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';

/** The schema as it was before migration `id`, its migrations recorded as applied at `atMs`. */
export async function schemaBefore(db: TestDatabase, id: number, atMs: number): Promise<void> {
  const before = MIGRATIONS.filter((m) => m.id < id);
  const record =
    'CREATE TABLE schema_migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL);' +
    before.map((m) => `INSERT INTO schema_migrations VALUES (${m.id}, '${m.name}', ${atMs});`).join('');
  if (db.dialect === 'sqlite') {
    const sqlite = new Database(db.url.slice('sqlite:'.length));
    try {
      for (const m of before) sqlite.exec(m.sqlite);
      sqlite.exec(record);
    } finally {
      sqlite.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    for (const m of before) await client.query(m.postgres);
    await client.query(record);
  } finally {
    await client.end();
  }
}
