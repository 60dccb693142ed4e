/**
 * Seeding for the growth bench: accounts, balances and a stored history of events and their
 * ledger transactions written straight into the server's tables with set-based SQL (HTTP would
 * take hours for ten million events). The rows have the shapes the server writes
 * (src/store/sql-base.ts `pushEventParams`, `pushTransactionParams`; src/operations/ledger.ts),
 * so it reads them like its own:
 *
 * - ids are a prefix and base-62 characters, here computed in SQL from an ordinal (`idSql`):
 *   unique, varied by a per-run salt, and starting with two characters spread over the whole
 *   alphabet. The server's own ids start with their creation time (src/lib/ids.ts), so what
 *   it writes during the measurement goes to the right edge of the id indexes, past the
 *   seeded history, as it would after years of traffic;
 * - an account gets a `tokens` balance and a `grant` transaction of INITIAL_GRANT
 *   ("initial grant"), as `POST /v1/accounts/{id}/balance/tokens {amount}` writes them;
 * - a stored event is a complete event of type EVENT_TYPE with a cost override (quantity 1,
 *   no metadata, no client id), and its `usage` transaction of −cost whose `balance_after`
 *   chains from the balance's amount before it; the balance is lowered by what its seeded
 *   events cost. The ledger stays exact: amount = the sum of the transactions, each
 *   balance_after = the previous one + amount.
 *
 * Costs are a formula of the account and the event's rank on it, so the cumulative cost of an
 * account's first k events has a closed form (no window function over millions of rows) and the
 * bench can tell, for any account, how much its seeded history took (`seededCost`).
 *
 * The same SQL runs on SQLite and PostgreSQL; only the row source differs (generate_series, or
 * a recursive CTE on SQLite). Literals are our own integers and ids, inlined.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { pgTypeParsers } from '../../src/store/postgres.js';
import { DENOMINATION, EVENT_TYPE, INITIAL_GRANT } from './options.js';
import type { DbKind } from './options.js';
import { bigAt } from './growth-options.js';

export const ID_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Knuth's multiplicative constant: odd, so x ↦ x·K mod 2^32 is a bijection. */
const BIJECTION_MULTIPLIER = 2_654_435_761;
const TWO_POW_32 = 4_294_967_296;
/** Park–Miller multiplier, and 62^5: the ten derived characters. */
const DERIVE_MULTIPLIER = 48_271;
const BASE62_POW5 = 916_132_832;
/** Usage transaction ordinals start here, above every grant transaction (account) ordinal. */
const USAGE_TRANSACTION_ORDINAL_OFFSET = 1_000_000_000;
/** Cost of the big account's events: BIG_ACCOUNT_BASE_COST, +1 on every other one. */
const BIG_ACCOUNT_BASE_COST = 5;
/** Spread accounts' event costs: 1 + (index mod COST_SPREAD), +1 on every other event of the account. */
const COST_SPREAD = 17;

export interface SqlRunner {
  readonly dialect: DbKind;
  /** A statement without result rows; returns the rows it changed. */
  run(sql: string, params?: unknown[]): Promise<number>;
  all<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/** `?` placeholders numbered for PostgreSQL, like the server's executor does. */
export function numbered(sql: string): string {
  let i = 0;
  return sql.replace(/\?/g, () => `$${++i}`);
}

/** A session for seeding and inspection: commits need not wait for the WAL flush, sorts and hashes get memory. */
export async function openPostgresRunner(url: string): Promise<SqlRunner> {
  const client = new pg.Client({ connectionString: url, types: pgTypeParsers });
  await client.connect();
  await client.query("SET synchronous_commit = off; SET work_mem = '256MB'; SET maintenance_work_mem = '512MB'");
  return {
    dialect: 'postgres',
    run: async (sql, params) => (await client.query(numbered(sql), params)).rowCount ?? 0,
    all: async <T>(sql: string, params?: unknown[]) => (await client.query(numbered(sql), params)).rows as T[],
    close: async () => {
      await client.end();
    },
  };
}

/**
 * `seed`: the only connection (the server is stopped), durability off and a large page cache
 * for bulk writes. `read`: a read-only connection next to the running server (WAL mode).
 */
export function openSqliteRunner(file: string, mode: 'seed' | 'read'): SqlRunner {
  const db = new Database(file, { readonly: mode === 'read' });
  db.pragma('busy_timeout = 5000');
  db.pragma('temp_store = MEMORY');
  if (mode === 'seed') {
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -3145728'); // 3 GiB, allocated as used: random index inserts stay in memory
    db.pragma('foreign_keys = ON');
  }
  return {
    dialect: 'sqlite',
    run: async (sql, params) => db.prepare(sql).run(...(params ?? [])).changes,
    all: async <T>(sql: string, params?: unknown[]) => {
      const statement = db.prepare(sql);
      if (!statement.reader) {
        statement.run(...(params ?? []));
        return [] as T[];
      }
      return statement.all(...(params ?? [])) as T[];
    },
    close: async () => {
      db.close();
    },
  };
}

/** Base-62 digit `i` (least significant first) of the integer SQL expression `h`. */
function digitSql(h: string, i: number): string {
  const shifted = i === 0 ? `(${h})` : `((${h}) / ${62 ** i})`;
  return `substr('${ID_ALPHABET}', CAST(${shifted} % 62 AS INTEGER) + 1, 1)`;
}

/** `width` lower-case hex digits of the non-negative integer SQL expression `h` (below 16^width). */
function hexSql(dialect: DbKind, h: string, width: number): string {
  return dialect === 'postgres' ? `lpad(to_hex(${h}), ${width}, '0')` : `printf('%0${width}x', ${h})`;
}

/**
 * SQL for `<prefix>_` + 16 base-62 characters, unique per `ordinal` (an integer SQL expression,
 * 0 … 3·10^9): two characters spread over the whole alphabet (where the id sits in an index),
 * eight hex digits of a bijection of the ordinal on 32 bits (uniqueness), six more derived hex
 * digits. Hex digits are base-62 characters too; this is ten times cheaper than sixteen
 * base-62 digits (PostgreSQL: ~0.6 µs an id instead of ~5).
 */
export function idSql(dialect: DbKind, prefix: string, ordinal: string, salt: number): string {
  const h1 = `((${ordinal}) * ${BIJECTION_MULTIPLIER} + ${salt}) % ${TWO_POW_32}`;
  const h2 = `((${h1}) * ${DERIVE_MULTIPLIER}) % ${BASE62_POW5}`;
  return `'${prefix}_' || ${digitSql(h2, 0)} || ${digitSql(h2, 1)} || ${hexSql(dialect, h1, 8)} || ${hexSql(dialect, `(${h2}) / 3844 % 16777216`, 6)}`;
}

/** The same id computed in JavaScript (spot checks). */
export function idOf(prefix: string, ordinal: number, salt: number): string {
  const h1 = (BigInt(ordinal) * BigInt(BIJECTION_MULTIPLIER) + BigInt(salt)) % BigInt(TWO_POW_32);
  const h2 = (h1 * BigInt(DERIVE_MULTIPLIER)) % BigInt(BASE62_POW5);
  const digit = (i: number): string => ID_ALPHABET[Number((h2 / 62n ** BigInt(i)) % 62n)] as string;
  const hex = (v: bigint, width: number): string => v.toString(16).padStart(width, '0');
  return `${prefix}_${digit(0)}${digit(1)}${hex(h1, 8)}${hex((h2 / 3844n) % 16777216n, 6)}`;
}

/** Rows j = from … to (inclusive) as `g(j)`, in ascending order. */
function seriesSql(dialect: DbKind, from: number, to: number): string {
  if (dialect === 'postgres') return `generate_series(${from}::bigint, ${to}::bigint) AS g(j)`;
  return `(WITH RECURSIVE s(j) AS (SELECT ${from} UNION ALL SELECT j + 1 FROM s WHERE j < ${to}) SELECT j FROM s) AS g`;
}

function quoted(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** One seeding statement (or maintenance) and how long it took. */
export interface SeedTiming {
  level: string;
  what: string;
  rows: number;
  seconds: number;
}

/** One event level as seeded: `spread` events over the first `population` spread accounts, `big` on the big account. */
interface EventStep {
  spread: number;
  population: number;
  big: number;
}

export interface SeedSalts {
  account: number;
  event: number;
  transaction: number;
}

export function randomSalts(): SeedSalts {
  const salt = (): number => Math.floor(Math.random() * TWO_POW_32);
  return { account: salt(), event: salt(), transaction: salt() };
}

/**
 * The seeded state of one database and the statements that grow it. Account ordinal 0 is the
 * "big" account (the list endpoints' subject, never in the load); ordinals 1 … N are the spread
 * accounts, spread index n = ordinal − 1. Inserted in ordinal order, so `seq` follows ordinals.
 */
export class Seeder {
  /** Spread accounts seeded (ordinals 1 … spreadAccounts). */
  spreadAccounts = 0;
  /** Events seeded so far (the ordinal of the next event id). */
  seededEvents = 0;
  bigAccountId: string | undefined;
  private bigCreated = false;
  private readonly eventSteps: EventStep[] = [];
  readonly timings: SeedTiming[] = [];

  constructor(
    private readonly companyId: string,
    private readonly salts: SeedSalts,
    private readonly chunkRows: number,
    private readonly bigAccountTransactions: number,
    private readonly log: (message: string) => void,
  ) {}

  private accountIdSql(db: SqlRunner, ordinal: string): string {
    return idSql(db.dialect, 'a', ordinal, this.salts.account);
  }

  private async timed(level: string, what: string, rows: number, work: () => Promise<unknown>): Promise<void> {
    const started = performance.now();
    await work();
    const seconds = (performance.now() - started) / 1000;
    this.timings.push({ level, what, rows, seconds });
    const rate = rows > 0 && seconds > 0 ? `, ${Math.round(rows / seconds).toLocaleString('en-US')} rows/s` : '';
    this.log(`seed ${level}: ${what}: ${rows.toLocaleString('en-US')} rows in ${seconds.toFixed(1)} s${rate}`);
  }

  /**
   * Runs `chunk` over [0, total) in chunks of `chunkRows`, each chunk one transaction on `db`;
   * logs progress. Returns when the last chunk has committed.
   */
  private async inChunks(
    db: SqlRunner,
    level: string,
    what: string,
    from: number,
    to: number,
    chunk: (start: number, end: number) => Promise<void>,
  ): Promise<void> {
    const started = performance.now();
    for (let start = from; start <= to; start += this.chunkRows) {
      const end = Math.min(to, start + this.chunkRows - 1);
      await db.run('BEGIN');
      await chunk(start, end);
      await db.run('COMMIT');
      const done = end - from + 1;
      const seconds = (performance.now() - started) / 1000;
      this.log(
        `seed ${level}: ${what}: ${done.toLocaleString('en-US')} of ${(to - from + 1).toLocaleString('en-US')} rows in ` +
          `${seconds.toFixed(1)} s, ${Math.round(done / seconds).toLocaleString('en-US')} rows/s`,
      );
    }
  }

  /**
   * Two streams of chunks: on two connections at once when there are two (PostgreSQL: one
   * backend per core), else one after the other.
   */
  private async streams(
    runners: readonly SqlRunner[],
    first: (db: SqlRunner) => Promise<void>,
    second: (db: SqlRunner) => Promise<void>,
  ): Promise<void> {
    const [a, b] = runners;
    if (a === undefined) throw new Error('no connection to seed with');
    if (b === undefined) {
      await first(a);
      await second(a);
    } else {
      await Promise.all([first(a), second(b)]);
    }
  }

  /**
   * Grows the spread accounts to `target`, each with a funded `tokens` balance (and the big
   * account on the first call). `runners`: one or two connections to the same database.
   */
  async seedAccounts(runners: readonly SqlRunner[], target: number, level: string): Promise<void> {
    const from = this.bigCreated ? this.spreadAccounts + 1 : 0;
    const to = target; // ordinals, inclusive
    if (to < from) return;
    const db = runners[0] as SqlRunner;
    const now = Date.now();
    const company = quoted(this.companyId);
    const account = this.accountIdSql(db, 'g.j');
    await this.timed(level, 'accounts + balances + grants', to - from + 1, () =>
      this.streams(
        runners,
        (conn) =>
          this.inChunks(conn, level, 'accounts + balances', from, to, async (start, end) => {
            const series = seriesSql(db.dialect, start, end);
            await conn.run(
              `INSERT INTO accounts (account_id, company_id, name, email, metadata, processor_id, plan_id, created_at)
               SELECT ${account}, ${company}, NULL, NULL, NULL, NULL, NULL, ${now} FROM ${series} ORDER BY g.j`,
            );
            await conn.run(
              `INSERT INTO balances (account_id, denomination, company_id, amount, pending, created_at)
               SELECT ${account}, '${DENOMINATION}', ${company}, ${INITIAL_GRANT}, 0, ${now} FROM ${series} ORDER BY g.j`,
            );
          }),
        (conn) =>
          this.inChunks(conn, level, 'grant transactions', from, to, async (start, end) => {
            await conn.run(
              `INSERT INTO transactions (transaction_id, account_id, denomination, amount, balance_after, kind, event_id, reason, created_at)
               SELECT ${idSql(db.dialect, 'tx', 'g.j', this.salts.transaction)}, ${account}, '${DENOMINATION}', ${INITIAL_GRANT},
                      ${INITIAL_GRANT}, 'grant', NULL, 'initial grant', ${now}
               FROM ${seriesSql(db.dialect, start, end)} ORDER BY g.j`,
            );
          }),
      ),
    );
    if (!this.bigCreated) {
      const [big] = await db.all<{ account_id: string }>(`SELECT ${this.accountIdSql(db, '0')} AS account_id`);
      this.bigAccountId = big?.account_id;
      this.bigCreated = true;
    }
    this.spreadAccounts = target;
  }

  /**
   * Grows the stored events to `target`: events and their usage transactions, interleaved
   * between the spread accounts (round robin) and, at the first level that can hold them, the
   * big account's; then every balance is lowered by what its new events cost.
   */
  async seedEvents(runners: readonly SqlRunner[], target: number, level: string): Promise<void> {
    const total = target - this.seededEvents;
    if (total <= 0) return;
    const db = runners[0] as SqlRunner;
    const big = bigAt(
      this.bigAccountTransactions,
      this.eventSteps.some((s) => s.big > 0),
      total,
    );
    const spread = total - big;
    const population = this.spreadAccounts;
    if (spread > 0 && population === 0) throw new Error('events need accounts to be spread over');
    if (this.bigAccountId === undefined) throw new Error('the big account is created with the first accounts');
    const first = this.seededEvents;
    const now = Date.now();
    const company = quoted(this.companyId);
    const bigId = quoted(this.bigAccountId);
    const p = Math.max(1, population);
    const falseSql = db.dialect === 'postgres' ? 'FALSE' : '0';

    // Row j of this level: big when ⌊(j+1)·B/T⌋ moves; kb = its rank among the big rows; s = rank among the spread rows.
    const rowsSql = (from: number, to: number): string => `
      SELECT j, big,
        CASE WHEN big = 1 THEN ${bigId} ELSE ${this.accountIdSql(db, `1 + s % ${p}`)} END AS account_id,
        CASE WHEN big = 1 THEN ${BIG_ACCOUNT_BASE_COST} + kb % 2
             ELSE 1 + (s % ${p}) % ${COST_SPREAD} + (s / ${p}) % 2 END AS cost,
        CASE WHEN big = 1 THEN ${BIG_ACCOUNT_BASE_COST} * (kb + 1) + (kb + 1) / 2
             ELSE (1 + (s % ${p}) % ${COST_SPREAD}) * (s / ${p} + 1) + (s / ${p} + 1) / 2 END AS cumulative
      FROM (SELECT g.j AS j, ((g.j + 1) * ${big}) / ${total} - (g.j * ${big}) / ${total} AS big,
                   (g.j * ${big}) / ${total} AS kb, g.j - (g.j * ${big}) / ${total} AS s
            FROM ${seriesSql(db.dialect, from, to)}) AS x`;

    // Usage transactions chain from the balance amounts before this level: balances are lowered after the last chunk.
    await this.timed(level, 'events + usage transactions', total, () =>
      this.streams(
        runners,
        (conn) =>
          this.inChunks(conn, level, 'events', 0, total - 1, async (start, end) => {
            await conn.run(
              `INSERT INTO events (company_id, event_id, account_id, client_supplied, type, quantity, cost_amount, denomination,
                                   metadata, state, content_hash, created_at, updated_at, expires_at)
               SELECT ${company}, ${idSql(db.dialect, 'ev', `${first} + r.j`, this.salts.event)}, r.account_id, ${falseSql},
                      '${EVENT_TYPE}', 1.0, r.cost, '${DENOMINATION}', NULL, 'complete', NULL, ${now}, ${now}, NULL
               FROM (${rowsSql(start, end)}) AS r ORDER BY r.j`,
            );
          }),
        (conn) =>
          this.inChunks(conn, level, 'usage transactions', 0, total - 1, async (start, end) => {
            await conn.run(
              `INSERT INTO transactions (transaction_id, account_id, denomination, amount, balance_after, kind, event_id, reason, created_at)
               SELECT ${idSql(db.dialect, 'tx', `${USAGE_TRANSACTION_ORDINAL_OFFSET + first} + r.j`, this.salts.transaction)},
                      r.account_id, '${DENOMINATION}', -r.cost, b.amount - r.cumulative, 'usage',
                      ${idSql(db.dialect, 'ev', `${first} + r.j`, this.salts.event)}, NULL, ${now}
               FROM (${rowsSql(start, end)}) AS r
               JOIN balances b ON b.account_id = r.account_id AND b.denomination = '${DENOMINATION}'
               ORDER BY r.j`,
            );
          }),
      ),
    );

    const touched = Math.min(spread, population);
    const q = Math.floor(spread / p);
    const r = spread % p;
    await this.timed(level, 'balances lowered by the seeded costs', touched + (big > 0 ? 1 : 0), async () => {
      await db.run('BEGIN');
      if (touched > 0) {
        const k = `(${q} + CASE WHEN g.j < ${r} THEN 1 ELSE 0 END)`;
        await db.run(
          `UPDATE balances SET amount = balances.amount - u.total
           FROM (SELECT ${this.accountIdSql(db, '1 + g.j')} AS account_id, (1 + g.j % ${COST_SPREAD}) * ${k} + ${k} / 2 AS total
                 FROM ${seriesSql(db.dialect, 0, touched - 1)}) AS u
           WHERE balances.account_id = u.account_id AND balances.denomination = '${DENOMINATION}'`,
        );
      }
      if (big > 0) {
        await db.run(
          `UPDATE balances SET amount = amount - ${bigCost(big)} WHERE account_id = ${bigId} AND denomination = '${DENOMINATION}'`,
        );
      }
      await db.run('COMMIT');
    });
    this.eventSteps.push({ spread, population, big });
    this.seededEvents = target;
  }

  /**
   * After a seeding step: what the database would have done by itself over the time the history
   * took to build (`rowsInDatabase`: accounts + events it now holds, for the rates).
   */
  async settle(db: SqlRunner, level: string, rowsInDatabase: number): Promise<void> {
    if (db.dialect === 'postgres') {
      // autovacuum may be off on a bench server; in production it would have analyzed and vacuumed these tables.
      await this.timed(level, 'VACUUM (ANALYZE)', rowsInDatabase, () =>
        db.run('VACUUM (ANALYZE) accounts, balances, events, transactions'),
      );
    } else {
      await this.timed(level, 'WAL checkpoint (TRUNCATE)', rowsInDatabase, () =>
        db.all('PRAGMA wal_checkpoint(TRUNCATE)'),
      );
    }
  }

  /** Units the seeded history took from spread account `index` (0-based). */
  seededCost(index: number): number {
    let total = 0;
    for (const step of this.eventSteps) {
      if (index >= step.population) continue;
      const k = Math.floor(step.spread / step.population) + (index < step.spread % step.population ? 1 : 0);
      total += (1 + (index % COST_SPREAD)) * k + Math.floor(k / 2);
    }
    return total;
  }

  /** Units the seeded history took from the big account. */
  bigSeededCost(): number {
    return this.eventSteps.reduce((sum, s) => sum + bigCost(s.big), 0);
  }

  /** Usage transactions seeded on the big account. */
  bigSeededTransactions(): number {
    return this.eventSteps.reduce((sum, s) => sum + s.big, 0);
  }
}

/** Cost of the big account's first `count` events. */
function bigCost(count: number): number {
  return BIG_ACCOUNT_BASE_COST * count + Math.floor(count / 2);
}
