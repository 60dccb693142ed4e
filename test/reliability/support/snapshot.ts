/**
 * A snapshot of everything the database holds (every table but the Idempotency-Key records, which a refused
 * request may legitimately leave, and the migration list), through one connection of its own kept open: equal
 * snapshots, nothing changed. An API key's `last_used_at` is left out too: a refused request that authenticated
 * with a key did use it (the write is at most once a minute, in the background).
 */
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { TestDatabase } from '../../cli/support.js';

const SKIPPED = new Set(['idempotency_keys', 'schema_migrations', 'sqlite_sequence']);

export interface Snapshotter {
  /** Table name → row count and a hash of its rows (order-independent). */
  snap(): Promise<Record<string, string>>;
  close(): Promise<void>;
}

/** The columns a refused request may legitimately change, by table. */
const VOLATILE: Record<string, string> = { api_keys: 'last_used_at' };

const digest = (table: string, rows: Record<string, unknown>[]): string =>
  `${rows.length}:${createHash('sha256')
    .update(
      rows
        .map((r) => (VOLATILE[table] === undefined ? r : { ...r, [VOLATILE[table]]: undefined }))
        .map((r) => JSON.stringify(r, (_, v) => (typeof v === 'bigint' ? String(v) : v)))
        .sort()
        .join('\n'),
    )
    .digest('hex')
    .slice(0, 16)}`;

export async function snapshotter(db: TestDatabase): Promise<Snapshotter> {
  if (db.dialect === 'sqlite') {
    const conn = new Database(db.url.slice('sqlite:'.length), { readonly: true });
    const tables = (conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[])
      .map((r) => r.name)
      .filter((n) => !SKIPPED.has(n));
    return {
      async snap() {
        return Object.fromEntries(
          tables.map((t) => [t, digest(t, conn.prepare(`SELECT * FROM ${t}`).all() as Record<string, unknown>[])]),
        );
      },
      async close() {
        conn.close();
      },
    };
  }
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const tables = (await client.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).rows
    .map((r) => String(r.tablename))
    .filter((n) => !SKIPPED.has(n));
  return {
    async snap() {
      const out: Record<string, string> = {};
      for (const t of tables) out[t] = digest(t, (await client.query(`SELECT * FROM ${t}`)).rows);
      return out;
    },
    close: () => client.end(),
  };
}
