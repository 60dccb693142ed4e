/**
 * The embedded default: better-sqlite3 in WAL mode with synchronous=FULL (a commit is on disk
 * before anyone is told it happened). One connection writes, behind an async mutex, each write
 * transaction begun IMMEDIATE so it holds the write lock from its first statement; a second
 * connection serves reads of committed data.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { MIGRATIONS } from './migrations.js';
import {
  EVENT_COLUMNS,
  SqlTx,
  distinctEventKeys,
  TRANSACTION_COLUMNS,
  balanceKeyOf,
  placeholders,
  pushEventParams,
  pushTransactionParams,
  toBalance,
  toEvent,
  type SqlExec,
  type SqlRow,
} from './sql-base.js';
import type {
  BalanceDelta,
  BalanceKey,
  BalanceRow,
  EventKey,
  EventRow,
  ReadTx,
  Store,
  TransactionRow,
  Tx,
} from './types.js';

type Stmt = Database.Statement<unknown[], SqlRow>;

interface Prepared {
  stmt: Stmt;
  /** Result column names of a statement that returns rows (it then runs in raw mode); else null. */
  columns: string[] | null;
}

class SqliteExec implements SqlExec {
  readonly #cache = new Map<string, Prepared>();
  constructor(readonly conn: Database.Database) {}
  #prepared(sql: string): Prepared {
    let p = this.#cache.get(sql);
    if (!p) {
      const stmt = this.conn.prepare<unknown[], SqlRow>(sql);
      // Rows come back as arrays and become objects here: better-sqlite3 builds each row object
      // through V8's C++ API, property by property, which cost about as much as the query itself
      // for 20-column rows (SELECT * of 35 balances: 148 µs as objects, 78 µs raw, 89 µs raw
      // plus this loop). The column names are read once: the schema changes only in the
      // migrations, which run when a store opens, before any statement is prepared.
      p = {
        stmt: stmt.reader ? stmt.raw(true) : stmt,
        columns: stmt.reader ? stmt.columns().map((c) => c.name) : null,
      };
      this.#cache.set(sql, p);
    }
    return p;
  }
  /** A statement that returns no rows, for the callers that bind it themselves. */
  prepare(sql: string): Stmt {
    const p = this.#prepared(sql);
    if (p.columns !== null) throw new Error('SqliteExec.prepare is for statements without a result; use allSync');
    return p.stmt;
  }
  allSync(sql: string, params: unknown[] = []): SqlRow[] {
    const { stmt, columns } = this.#prepared(sql);
    if (columns === null) {
      stmt.run(...params);
      return [];
    }
    const raw = stmt.all(...params) as unknown as unknown[][];
    const rows = new Array<SqlRow>(raw.length);
    for (let i = 0; i < raw.length; i++) {
      const values = raw[i]!;
      const row: SqlRow = {};
      for (let j = 0; j < columns.length; j++) row[columns[j]!] = values[j];
      rows[i] = row;
    }
    return rows;
  }
  runSync(sql: string, params: unknown[] = []): number {
    const { stmt, columns } = this.#prepared(sql);
    return columns === null ? stmt.run(...params).changes : stmt.all(...params).length;
  }
  async all(sql: string, params: unknown[] = []) {
    return this.allSync(sql, params);
  }
  async run(sql: string, params: unknown[] = []) {
    return this.runSync(sql, params);
  }
}

/** Rows per multi-row INSERT: one statement call binds this many rows (14 × 64 < SQLite's 32,766 parameters). */
const INSERT_CHUNK_ROWS = 64;
/** Keys per `IN (…)` lookup. */
const IN_CHUNK = 500;

class SqliteTx extends SqlTx {
  declare protected readonly db: SqliteExec;
  protected bool(b: boolean) {
    return b ? 1 : 0;
  }
  async lockBalances(keys: BalanceKey[]) {
    // The IMMEDIATE transaction already holds SQLite's single write lock: reading is locking.
    // One query per 500 accounts (the primary key's prefix), not one per key.
    const wanted = new Set(keys.map((k) => balanceKeyOf(k.accountId, k.denomination)));
    const accounts = [...new Set(keys.map((k) => k.accountId))];
    const out: BalanceRow[] = [];
    for (let i = 0; i < accounts.length; i += IN_CHUNK) {
      const chunk = accounts.slice(i, i + IN_CHUNK);
      for (const r of this.db.allSync(
        `SELECT * FROM balances WHERE account_id IN (${placeholders(chunk.length)})`,
        chunk,
      )) {
        if (wanted.has(balanceKeyOf(String(r.account_id), String(r.denomination)))) out.push(toBalance(r));
      }
    }
    return out;
  }
  async applyBalanceDeltas(deltas: BalanceDelta[]) {
    if (deltas.length === 0) return [];
    // No RETURNING: SQLite collects the rows a RETURNING clause returns in a temporary table
    // first, which made each UPDATE about four times its own cost (35 balances: 214 µs with
    // RETURNING *, 49 µs without). This connection holds the write lock, so reading the rows
    // back afterwards sees exactly what the UPDATEs left.
    const s = this.db.prepare(
      'UPDATE balances SET amount = amount + ?, pending = pending + ? WHERE account_id = ? AND denomination = ?',
    );
    for (const d of deltas) s.run(d.amount, d.pending, d.accountId, d.denomination);
    return this.lockBalances(deltas);
  }
  override async findExpiredHolds(nowMs: number, limit: number, only?: BalanceKey[]) {
    // Ingest asks for every balance of its group; holds are rarely due (the sweeper cancels
    // them), so one probe of the expiry index usually answers for all of them.
    if (
      only !== undefined &&
      this.db.allSync("SELECT 1 AS x FROM events WHERE state = 'pending' AND expires_at <= ? LIMIT 1", [nowMs])
        .length === 0
    )
      return [];
    return super.findExpiredHolds(nowMs, limit, only);
  }
  async insertEvents(rows: EventRow[]) {
    this.#insertMany('events', EVENT_COLUMNS, 14, rows, (e, p) => pushEventParams(e, this.bool, p));
  }
  async insertTransactions(rows: TransactionRow[]) {
    this.#insertMany('transactions', TRANSACTION_COLUMNS, 9, rows, pushTransactionParams);
  }
  /**
   * Multi-row INSERTs in order (`seq` follows the rows' order, which balance_after chains rely
   * on), parameters pushed straight into one flat array per statement: the hot path's rows.
   */
  #insertMany<R>(table: string, columns: string, width: number, rows: R[], push: (row: R, params: unknown[]) => void) {
    const params: unknown[] = [];
    for (let i = 0; i < rows.length; i += INSERT_CHUNK_ROWS) {
      const end = Math.min(rows.length, i + INSERT_CHUNK_ROWS);
      params.length = 0;
      for (let j = i; j < end; j++) push(rows[j]!, params);
      this.db.prepare(insertSql(table, columns, width, end - i)).run(params);
    }
  }
  async lockEvents(keys: EventKey[]) {
    // The IMMEDIATE transaction already holds the write lock; a primary-key probe each.
    const out: EventRow[] = [];
    for (const k of distinctEventKeys(keys)) {
      const r = this.db.allSync('SELECT * FROM events WHERE company_id = ? AND event_id = ?', [
        k.companyId,
        k.eventId,
      ])[0];
      if (r) out.push(toEvent(r));
    }
    return out;
  }
}

const insertSqlCache = new Map<string, string>();
/** `INSERT INTO table (columns) VALUES (?, …), …` for `rows` rows, built once per shape. */
function insertSql(table: string, columns: string, width: number, rows: number): string {
  const key = `${table}\u0000${rows}`;
  let sql = insertSqlCache.get(key);
  if (sql === undefined) {
    sql = `INSERT INTO ${table} (${columns}) VALUES ${Array(rows)
      .fill(`(${placeholders(width)})`)
      .join(', ')}`;
    insertSqlCache.set(key, sql);
  }
  return sql;
}

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
        const result = await fn(new SqliteTx(this.#writer));
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
    return fn(new SqliteTx(this.#reader));
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
    'CREATE TABLE IF NOT EXISTS schema_migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)',
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
