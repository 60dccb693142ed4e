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

/** In an earlier schema: a user owning companies `companyIds` (sandbox), each with one account `a_<company id>`. */
export async function oldCompanies(db: TestDatabase, companyIds: readonly string[], atMs: number): Promise<void> {
  const yes = db.dialect === 'sqlite' ? 1 : true;
  await db.sql('INSERT INTO users (name, email, password_hash, email_verified, created_at) VALUES (?, ?, ?, ?, ?)', [
    'Ada',
    'ada@example.test',
    'x',
    yes,
    atMs,
  ]);
  const [user] = await db.sql('SELECT id FROM users');
  for (const c of companyIds) {
    await db.sql(
      'INSERT INTO companies (company_id, name, owner_user_id, processor, created_at) VALUES (?, ?, ?, ?, ?)',
      [c, c, user!.id, 'sandbox', atMs],
    );
    await db.sql('INSERT INTO accounts (account_id, company_id, name, created_at) VALUES (?, ?, ?, ?)', [
      `a_${c}`,
      c,
      'Bob',
      atMs,
    ]);
  }
}
