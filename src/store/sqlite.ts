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
import { EVENT_COLUMNS, SqlTx, TRANSACTION_COLUMNS, eventParams, toBalance, toEvent, transactionParams, type SqlExec, type SqlRow } from './sql-base.js';
import type { BalanceDelta, BalanceKey, BalanceRow, EventRow, ReadTx, Store, TransactionRow, Tx } from './types.js';

type Stmt = Database.Statement<unknown[], SqlRow>;

class SqliteExec implements SqlExec {
  readonly #cache = new Map<string, Stmt>();
  constructor(readonly conn: Database.Database) {}
  prepare(sql: string): Stmt {
    let s = this.#cache.get(sql);
    if (!s) {
      s = this.conn.prepare<unknown[], SqlRow>(sql);
      this.#cache.set(sql, s);
    }
    return s;
  }
  allSync(sql: string, params: unknown[] = []): SqlRow[] {
    const s = this.prepare(sql);
    return s.reader ? s.all(...params) : (s.run(...params), []);
  }
  runSync(sql: string, params: unknown[] = []): number {
    const s = this.prepare(sql);
    if (s.reader) {
      return s.all(...params).length;
    }
    return s.run(...params).changes;
  }
  async all(sql: string, params: unknown[] = []) {
    return this.allSync(sql, params);
  }
  async run(sql: string, params: unknown[] = []) {
    return this.runSync(sql, params);
  }
}

class SqliteTx extends SqlTx {
  declare protected readonly db: SqliteExec;
  protected bool(b: boolean) {
    return b ? 1 : 0;
  }
  async lockBalances(keys: BalanceKey[]) {
    // The IMMEDIATE transaction already holds SQLite's single write lock.
    const out: BalanceRow[] = [];
    for (const k of keys) {
      const r = this.db.allSync('SELECT * FROM balances WHERE account_id = ? AND denomination = ?', [k.accountId, k.denomination])[0];
      if (r) out.push(toBalance(r));
    }
    return out;
  }
  async applyBalanceDeltas(deltas: BalanceDelta[]) {
    const out: BalanceRow[] = [];
    for (const d of deltas) {
      const r = this.db.allSync(
        'UPDATE balances SET amount = amount + ?, pending = pending + ? WHERE account_id = ? AND denomination = ? RETURNING *',
        [d.amount, d.pending, d.accountId, d.denomination],
      )[0];
      if (r) out.push(toBalance(r));
    }
    return out;
  }
  async insertEvents(rows: EventRow[]) {
    const s = this.db.prepare(`INSERT INTO events (${EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    for (const e of rows) s.run(...eventParams(e, this.bool));
  }
  async insertTransactions(rows: TransactionRow[]) {
    const s = this.db.prepare(`INSERT INTO transactions (${TRANSACTION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    for (const t of rows) s.run(...transactionParams(t));
  }
  async lockEvent(companyId: string, eventId: string) {
    const r = this.db.allSync('SELECT * FROM events WHERE company_id = ? AND event_id = ?', [companyId, eventId])[0];
    return r && toEvent(r);
  }
}

/** Serialises the single writer: transactions never interleave on the one connection. */
class Mutex {
  #tail: Promise<void> = Promise.resolve();
  lock(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((r) => (release = r));
    const ready = this.#tail.then(() => release);
    this.#tail = this.#tail.then(() => next);
    return ready;
  }
}

export class SqliteStore implements Store {
  readonly dialect = 'sqlite' as const;
  readonly #writer: SqliteExec;
  readonly #reader: SqliteExec;
  readonly #mutex = new Mutex();

  constructor(readonly filename: string) {
    const memory = filename === ':memory:';
    if (!memory) mkdirSync(dirname(filename), { recursive: true });
    const w = new Database(filename);
    configure(w);
    this.#writer = new SqliteExec(w);
    migrate(w);
    if (memory) this.#reader = this.#writer;
    else {
      const r = new Database(filename, { readonly: true });
      r.pragma('busy_timeout = 5000');
      r.pragma('temp_store = MEMORY');
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

function configure(db: Database.Database): void {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  // UPDATE … RETURNING spills to temp storage; in memory it is ~6× cheaper (performance notes).
  db.pragma('temp_store = MEMORY');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  db.pragma('cache_size = -65536');
}

function migrate(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)');
  const applied = new Set(db.prepare<[], { id: number }>('SELECT id FROM schema_migrations').all().map((r) => r.id));
  for (const m of MIGRATIONS) {
    if (applied.has(m.id)) continue;
    db.transaction(() => {
      db.exec(m.sqlite);
      db.prepare('INSERT INTO schema_migrations (id, name, applied_at) VALUES (?, ?, ?)').run(m.id, m.name, Date.now());
    }).immediate();
  }
}
