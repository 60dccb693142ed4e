/**
 * PostgreSQL, for scale: several stateless server processes share one database. Batches are
 * written with one statement each (arrays unnested server-side), never one round trip per
 * event. Balances are locked `FOR UPDATE` in sorted key order so concurrent writers queue
 * instead of deadlocking; serialization failures and deadlocks are retried, never turned into
 * business errors. The SQL PostgreSQL runs differently is in postgres/.
 */
import pg from 'pg';
import { MIGRATIONS } from './migrations/index.js';
import { PgExec, isStalePlan } from './postgres/exec.js';
import { pgTx } from './postgres/tx.js';
import { CommitOutcomeUnknownError } from './common.js';
import type { ReadTx, Store, Tx } from './types.js';

// bench/pg-rows.ts measures the ingest path's statements on a connection of its own (through bench/lib/engine.ts).
export { query } from './postgres/exec.js';
export { insertEventsStatement, insertTransactionsStatement, writeLedgerStatement } from './postgres/statements.js';

/** BIGINT columns hold amounts within the exact integer range: read them as numbers. */
const INT8_OID = 20;
const NUMERIC_OID = 1700;
export const pgTypeParsers = {
  getTypeParser(oid: number, format?: string) {
    if (oid === INT8_OID || oid === NUMERIC_OID) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

/** Errors worth running the whole transaction again for. */
// 23505 (unique violation) too: operations check before they insert, so a second run sees the
// row the concurrent transaction committed and answers as for any existing row.
const RETRYABLE = new Set(['40001', '40P01', '23505']);
const WRITE_ATTEMPTS_MAX = 8;
const isSqlState = (code: unknown): boolean => typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
const MIGRATION_LOCK_ID = 727_001;

export interface PostgresOptions {
  connectionString: string;
  /** Use (and create) this schema instead of `public`: lets test runs never collide. */
  schema?: string;
  poolSize?: number;
  /**
   * Named prepared statements (default true). Turn off behind a pooler in transaction mode that
   * does not track them (PgBouncer before 1.21, or without `max_prepared_statements`).
   */
  preparedStatements?: boolean;
}

export class PostgresStore implements Store {
  readonly dialect = 'postgres' as const;
  readonly pool: pg.Pool;

  readonly #prepare: boolean;

  private constructor(pool: pg.Pool, prepare: boolean) {
    this.pool = pool;
    this.#prepare = prepare;
  }

  static async open(opts: PostgresOptions): Promise<PostgresStore> {
    if (opts.schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(opts.schema))
      throw new Error('invalid schema name');
    if (opts.schema !== undefined) {
      const admin = new pg.Client({ connectionString: opts.connectionString });
      await admin.connect();
      try {
        await admin.query(`CREATE SCHEMA IF NOT EXISTS ${opts.schema}`);
      } finally {
        await admin.end();
      }
    }
    const pool = new pg.Pool({
      connectionString: opts.connectionString,
      max: opts.poolSize ?? 8,
      types: pgTypeParsers,
      // Prepared statements keep their parse but are planned for each execution's values: a
      // generic plan cannot see how many elements an array parameter holds, and for
      // `JOIN unnest($1, $2)` over a 10,000-row table it chose a hash join over a full scan
      // where a custom plan looks up each key by index (bench, 10,000 accounts: 6.3k → 3.1k req/s).
      options: [
        ...(opts.schema !== undefined ? [`-c search_path=${opts.schema}`] : []),
        '-c plan_cache_mode=force_custom_plan',
      ].join(' '),
    });
    pool.on('error', () => {
      // An idle client lost its connection; the pool replaces it. Nothing to do here.
    });
    const store = new PostgresStore(pool, opts.preparedStatements ?? true);
    await store.migrate();
    return store;
  }

  private async migrate(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, ' +
          'applied_at BIGINT NOT NULL)',
      );
      const applied = new Set(
        (await client.query<{ id: number }>('SELECT id FROM schema_migrations')).rows.map((r) => r.id),
      );
      for (const m of MIGRATIONS) {
        if (applied.has(m.id)) continue;
        await client.query('BEGIN');
        try {
          await client.query(m.postgres);
          await client.query('INSERT INTO schema_migrations (id, name, applied_at) VALUES ($1, $2, $3)', [
            m.id,
            m.name,
            Date.now(),
          ]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw err;
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined);
      client.release();
    }
  }

  async write<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.pool.connect();
      let broken = false;
      try {
        await client.query('BEGIN');
        const result = await fn(pgTx(new PgExec(client, true, this.#prepare)));
        try {
          await client.query('COMMIT');
        } catch (err) {
          // An error the server answered (it has a SQLSTATE) means the transaction rolled back;
          // a lost connection leaves it unknown whether COMMIT happened: never retried.
          if (isSqlState((err as { code?: unknown }).code)) throw err;
          broken = true;
          throw new CommitOutcomeUnknownError('the connection was lost during COMMIT', { cause: err });
        }
        return result;
      } catch (err) {
        if (err instanceof CommitOutcomeUnknownError) throw err;
        try {
          await client.query('ROLLBACK');
        } catch {
          broken = true;
        }
        const code = (err as { code?: string }).code;
        if (((code !== undefined && RETRYABLE.has(code)) || isStalePlan(err)) && attempt < WRITE_ATTEMPTS_MAX) continue;
        throw err;
      } finally {
        client.release(broken);
      }
    }
  }

  async read<T>(fn: (tx: ReadTx) => Promise<T>): Promise<T> {
    return fn(pgTx(new PgExec(this.pool, false, this.#prepare)));
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
