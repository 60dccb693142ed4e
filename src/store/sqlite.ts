/**
 * The embedded default: better-sqlite3 in WAL mode with synchronous=FULL (a commit is on disk
 * before anyone is told it happened). One connection writes, behind an async mutex, each write
 * transaction begun IMMEDIATE so it holds the write lock from its first statement; a second
 * connection serves reads of committed data. The SQL SQLite runs differently is in sqlite/.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { MIGRATIONS } from './migrations/index.js';
import { SqliteExec } from './sqlite/exec.js';
import { sqliteTx } from './sqlite/tx.js';
import type { ReadTx, Store, Tx } from './types.js';
import { addDecimal, formatDecimal, parseDecimal } from '../lib/decimal.js';

/** Serialises the single writer: transactions never interleave on the one connection. */
class Mutex {
  #tail: Promise<void> = Promise.resolve();
  #waiting = 0;
  /** Callers queued for the lock and not yet holding it. */
  get waiting(): number {
    return this.#waiting;
  }
  lock(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((r) => (release = r));
    this.#waiting++;
    const ready = this.#tail.then(() => {
      this.#waiting--;
      return release;
    });
    this.#tail = this.#tail.then(() => next);
    return ready;
  }
}

export class SqliteStore implements Store {
  readonly dialect = 'sqlite' as const;
  readonly #writer: SqliteExec;
  readonly #reader: SqliteExec;
  readonly #mutex = new Mutex();

  /** `reader: false`: no read connection (the ingest writer thread only writes). */
  constructor(
    readonly filename: string,
    opts: { reader?: boolean } = {},
  ) {
    const memory = filename === ':memory:';
    if (!memory) mkdirSync(dirname(filename), { recursive: true });
    const w = new Database(filename);
    configure(w);
    this.#writer = new SqliteExec(w);
    migrate(w);
    if (memory || opts.reader === false) this.#reader = this.#writer;
    else {
      const r = new Database(filename, { readonly: true });
      r.pragma('busy_timeout = 5000');
      r.pragma('temp_store = MEMORY');
      r.pragma(`cache_size = -${READER_CACHE_KIB}`);
      this.#reader = new SqliteExec(r);
    }
  }

  async write<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    const release = await this.#mutex.lock();
    const conn = this.#writer.conn;
    try {
      conn.exec('BEGIN IMMEDIATE');
      try {
        const result = await fn(sqliteTx(this.#writer));
        conn.exec('COMMIT');
        return result;
      } catch (err) {
        if (conn.inTransaction) conn.exec('ROLLBACK');
        throw err;
      }
    } finally {
      release();
    }
  }

  /**
   * The writer lock itself, no transaction opened: for a writer on another connection of this
   * process (the ingest thread), so that the two never contend inside SQLite. Resolves to the
   * function that releases it.
   */
  lockWriter(): Promise<() => void> {
    return this.#mutex.lock();
  }

  /** Writers of this process waiting for the lock (the ingest thread yields to them). */
  get writersWaiting(): number {
    return this.#mutex.waiting;
  }

  async read<T>(fn: (tx: ReadTx) => Promise<T>): Promise<T> {
    return fn(sqliteTx(this.#reader));
  }

  async close(): Promise<void> {
    const release = await this.#mutex.lock();
    try {
      if (this.#reader !== this.#writer) this.#reader.conn.close();
      this.#writer.conn.close();
    } finally {
      release();
    }
  }
}

/**
 * Page cache per connection, in KiB. Writers touch the tail of each table and the hot balances'
 * pages; reads of long histories go to the reader. The operating system caches the file too:
 * these stay small so that the server's resident memory does (three connections: the main
 * writer, the reader, the ingest thread's writer).
 */
const WRITER_CACHE_KIB = 16 * 1024;
const READER_CACHE_KIB = 32 * 1024;

function configure(db: Database.Database): void {
  // The usage rollup's exact quantity sums (decimal strings; SQLite has no exact decimal type).
  db.function('decimal_add', { deterministic: true }, (a: unknown, b: unknown) => {
    const x = parseDecimal(String(a));
    const y = parseDecimal(String(b));
    if (x === null || y === null) throw new Error(`decimal_add: ${String(a)} + ${String(b)} is not exact decimal`);
    return formatDecimal(addDecimal(x, y));
  });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  // UPDATE … RETURNING spills to temp storage; in memory it is ~6× cheaper (performance notes).
  db.pragma('temp_store = MEMORY');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  db.pragma(`cache_size = -${WRITER_CACHE_KIB}`);
}

function migrate(db: Database.Database): void {
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, ' +
      'applied_at BIGINT NOT NULL)',
  );
  const applied = new Set(
    db
      .prepare<[], { id: number }>('SELECT id FROM schema_migrations')
      .all()
      .map((r) => r.id),
  );
  for (const m of MIGRATIONS) {
    if (applied.has(m.id)) continue;
    db.transaction(() => {
      db.exec(m.sqlite);
      db.prepare('INSERT INTO schema_migrations (id, name, applied_at) VALUES (?, ?, ?)').run(m.id, m.name, Date.now());
    }).immediate();
  }
}
