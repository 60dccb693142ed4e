/**
 * What every aggregate's shared SQL (`<aggregate>/sql.ts`) builds on: how a statement reaches the
 * database, the value conversions of row mappers, keyset paging, and the hooks where a dialect
 * differs (the Dialect: booleans, list parameters, page order, row locks). Statements are plain SQL that
 * SQLite and PostgreSQL both run (`?` placeholders; the PostgreSQL executor numbers them).
 */
import type { Page, PageResult } from './common.js';

export type SqlRow = Record<string, unknown>;

/** How a statement reaches the database. */
export interface SqlExec {
  all(sql: string, params?: unknown[]): Promise<SqlRow[]>;
  /** Returns the number of rows changed. */
  run(sql: string, params?: unknown[]): Promise<number>;
}

export const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));
export const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));
export const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
export const jsonOrNull = (v: unknown): Record<string, unknown> | null =>
  v === null || v === undefined ? null : (JSON.parse(String(v)) as Record<string, unknown>);
export const json = (v: Record<string, unknown> | null): string | null => (v === null ? null : JSON.stringify(v));

/** `?, ?, …`: n placeholders, for `IN (…)` and multi-row VALUES. */
export const placeholders = (n: number): string => Array(n).fill('?').join(', ');

/**
 * A function that makes the row object of a statement's raw row (an array of its values) with one object literal,
 * its keys the column names (JSON-quoted): every row of the statement has one shape, with fast properties. Objects
 * filled key by key in a loop (better-sqlite3's, pg's) fall back to dictionary properties past a few dozen columns
 * (the balances row has more), and every read of a field is then a hash lookup. Duplicate names keep the last value,
 * as assigning in order did. Used by both databases' executors (sqlite/exec.ts, postgres/exec.ts).
 */
export function rowFactory(columns: readonly string[]): (values: unknown[]) => SqlRow {
  const fields = columns.map((c, j) => `${JSON.stringify(c)}: v[${j}]`).join(', ');
  return new Function('v', `return { ${fields} };`) as (values: unknown[]) => SqlRow;
}

/**
 * What differs between the databases in the SQL the aggregates share: how a boolean is stored, how
 * a list parameter is written, the order of a keyset page, and the row-lock clauses. One object per
 * database (sqlite/dialect.ts, postgres/dialect.ts), passed to every aggregate's SQL.
 */
export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /** How the database stores a boolean. */
  bool(b: boolean): unknown;
  /**
   * `column IN (?, ?, …)` with one parameter per value (SQLite plans `IN (?)` as `= ?`);
   * PostgreSQL's is `column = ANY(?)` with one array parameter, so that the statement's text
   * (and its prepared plan) does not vary with the list's length. Keyset pages use it for their
   * leading key too: see postgres/dialect.ts.
   */
  inList(column: string, values: readonly string[]): [sql: string, params: unknown[]];
  /** The ORDER BY of a keyset page, newest first (PostgreSQL's names the leading key too). */
  seqOrder(leadingColumn: string): string;
  /** PostgreSQL: `FOR UPDATE SKIP LOCKED` in a claim's subquery; SQLite needs nothing. */
  skipLocked: string;
  /** PostgreSQL: `FOR UPDATE` on a single-row read that is about to be settled; SQLite needs nothing. */
  forUpdate: string;
  /** A row's physical address, for deleting a bounded batch: SQLite's rowid, PostgreSQL's ctid. */
  rowId: string;
  /**
   * The account search condition (searchAccounts): `name` or `email` contains the lowered query
   * (two parameters), `account_id` starts with it (its length in characters, then the query), or a
   * top-level string value of `metadata` equals it exactly (the query).
   */
  accountSearch: string;
}

/**
 * The base of every aggregate's SQL (`<aggregate>/sql.ts`): the connection, the dialect, and the
 * helpers statements share (one row, keyset paging). The dialect's clauses are reached through
 * these protected helpers, so that an aggregate's SQL reads the same on both databases.
 */
export abstract class SqlCore {
  constructor(
    protected readonly db: SqlExec,
    protected readonly dialect: Dialect,
  ) {}

  protected bool(b: boolean): unknown {
    return this.dialect.bool(b);
  }
  protected inList(column: string, values: readonly string[]): [sql: string, params: unknown[]] {
    return this.dialect.inList(column, values);
  }
  protected seqOrder(leadingColumn: string): string {
    return this.dialect.seqOrder(leadingColumn);
  }
  protected skipLocked(): string {
    return this.dialect.skipLocked;
  }
  protected forUpdate(): string {
    return this.dialect.forUpdate;
  }
  protected rowId(): string {
    return this.dialect.rowId;
  }
  protected accountSearch(): string {
    return this.dialect.accountSearch;
  }

  protected async one(sql: string, params: unknown[]): Promise<SqlRow | undefined> {
    return (await this.db.all(sql, params))[0];
  }

  /** The `seq` of the row a cursor names, if it is one of the list's (`where`); else undefined. */
  protected async cursorSeq(
    table: string,
    idColumn: string,
    id: string,
    where: string,
    params: unknown[],
  ): Promise<unknown> {
    return (await this.one(`SELECT seq FROM ${table} WHERE ${idColumn} = ? AND ${where}`, [id, ...params]))?.seq;
  }

  /**
   * Keyset paging on an ever-growing `seq`, newest first, of the rows whose `keys` columns equal
   * the values given (and `extra`, a constant condition); undefined when the cursor is unknown.
   * An index on (key columns…, seq) serves it without a sort. `npm run bench:growth` shows the
   * plans on a million-transaction account.
   */
  protected async pageBySeq<T>(
    table: string,
    idColumn: string,
    keys: [column: string, value: string][],
    page: Page,
    map: (r: SqlRow) => T,
    extra = '',
  ): Promise<PageResult<T> | undefined> {
    const [[leading, leadingValue], ...rest] = keys as [[string, string], ...[string, string][]];
    const [leadingSql, params] = this.inList(leading, [leadingValue]);
    const where = [leadingSql, ...rest.map(([c]) => `${c} = ?`)].join(' AND ') + extra;
    params.push(...rest.map(([, v]) => v));
    let cursorClause = '';
    if (page.startingAfter !== undefined) {
      const seq = await this.cursorSeq(table, idColumn, page.startingAfter, where, params);
      if (seq === undefined) return undefined;
      cursorClause = ' AND seq < ?';
      params.push(seq);
    }
    const rows = await this.db.all(
      `SELECT * FROM ${table} WHERE ${where}${cursorClause} ORDER BY ${this.seqOrder(leading)} LIMIT ?`,
      [...params, page.limit + 1],
    );
    return { rows: rows.slice(0, page.limit).map(map), hasMore: rows.length > page.limit };
  }
}
