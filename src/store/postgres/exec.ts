/**
 * How a statement reaches PostgreSQL: `?` placeholders numbered, array parameters sent as array
 * literals, and statements prepared once per connection under a name.
 */
import pg from 'pg';
import { rowFactory, type SqlExec, type SqlRow } from '../sql-core.js';

const placeholderCache = new Map<string, string>();
function numbered(sql: string): string {
  let out = placeholderCache.get(sql);
  if (out === undefined) {
    let i = 0;
    out = sql.replace(/\?/g, () => `$${++i}`);
    placeholderCache.set(sql, out);
  }
  return out;
}

/**
 * Statements are prepared once per connection under a name (parse and plan once, then bind and
 * execute): for a 100-event group, parsing and planning its eight statements each time cost
 * about as much server CPU as inserting the rows. The statement texts are a fixed set (lists
 * are `= ANY(array)`, never a text that grows with the list), bounded here all the same.
 *
 * A prepared `SELECT *` fails once a migration (say, from a newer process during a rolling
 * deploy) changes its table's columns: "cached plan must not change result type". Then every
 * statement is named anew, so each connection prepares it again, and the query (or, inside a
 * transaction, the whole transaction) runs again.
 */
const PREPARED_MAX = 500;
const preparedNames = new Map<string, string>();
let generation = 0;

/**
 * A flat array parameter as PostgreSQL's array literal, or undefined when an element is not a
 * string, number, boolean or null (pg's own serialisation takes those). pg's serialisation runs
 * two regular expressions over every element: in a profile of 100-event ingest on PostgreSQL it
 * was a fifth of the server's CPU. Strings are always quoted, so no element can be read as
 * NULL, split at a comma or a brace, or lose its whitespace; inside quotes only `\` and `"`
 * are escaped, as the array input syntax requires.
 *
 * Built once per column of every batch write (a 100-event group sends a dozen arrays of 2,000
 * elements): an array of strings none of which needs escaping (ids, codes) is joined in one call,
 * a flat string about three times faster to build and to encode than one concatenated element by
 * element; integers beyond the small-integer range are written by integerText.
 */
export function pgArrayLiteral(values: readonly unknown[]): string | undefined {
  if (values.length > 0 && plainStrings(values)) return `{"${values.join('","')}"}`;
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const v = values[i];
    if (v === null || v === undefined) out += 'NULL';
    else if (typeof v === 'string') out += `"${v.includes('\\') || v.includes('"') ? v.replace(/[\\"]/g, '\\$&') : v}"`;
    else if (typeof v === 'number') out += integerText(v);
    else if (typeof v === 'bigint') out += String(v);
    else if (typeof v === 'boolean') out += v ? 't' : 'f';
    else return undefined;
  }
  return `${out}}`;
}

/** Whether every element is a string with nothing to escape inside quotes. */
function plainStrings(values: readonly unknown[]): boolean {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v !== 'string' || v.includes('"') || v.includes('\\')) return false;
  }
  return true;
}

const SMALL_INTEGER = 2 ** 30;

/**
 * `String(v)`, faster for integers beyond ±2^30 (balances, times in ms): V8 writes those as
 * doubles, about four times slower than as two small integers (the billions, then nine digits).
 */
export function integerText(v: number): string {
  if ((v < SMALL_INTEGER && v > -SMALL_INTEGER) || !Number.isSafeInteger(v)) return String(v);
  const magnitude = v < 0 ? -v : v;
  const high = Math.floor(magnitude / 1e9);
  return `${v < 0 ? '-' : ''}${high}${String(magnitude - high * 1e9).padStart(9, '0')}`;
}

function withArrayLiterals(params: unknown[]): unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < params.length; i++) {
    const p = params[i];
    if (!Array.isArray(p)) continue;
    const literal = pgArrayLiteral(p);
    if (literal === undefined) continue;
    out ??= params.slice();
    out[i] = literal;
  }
  return out ?? params;
}

/** The query pg runs for `sql` with `?` placeholders: numbered, arrays as literals, named when prepared. */
export function query(sql: string, rawParams: unknown[], prepare: boolean): pg.QueryArrayConfig {
  const text = numbered(sql);
  const params = withArrayLiterals(rawParams);
  // Rows as arrays, made objects by rowOf: pg's own row objects are filled key by key (see rowFactory).
  if (!prepare) return { text, values: params, rowMode: 'array' };
  let name = preparedNames.get(text);
  if (name === undefined && preparedNames.size < PREPARED_MAX) {
    name = `b${generation}_${preparedNames.size}`;
    preparedNames.set(text, name);
  }
  return name === undefined
    ? { text, values: params, rowMode: 'array' }
    : { name, text, values: params, rowMode: 'array' };
}

/** Most row shapes whose factories are kept (a fixed set of statements makes a few dozen). */
const ROW_SHAPES_MAX = 500;
const rowFactories = new Map<string, (values: unknown[]) => SqlRow>();

/** The row objects of a result read as arrays: one factory per shape of row (its column names, in order). */
function rowsOf(result: pg.QueryArrayResult): SqlRow[] {
  const { fields, rows } = result;
  if (rows.length === 0) return [];
  let key = '';
  for (const f of fields) key += `${f.name}\u0000`;
  let make = rowFactories.get(key);
  if (make === undefined) {
    make = rowFactory(fields.map((f) => f.name));
    if (rowFactories.size < ROW_SHAPES_MAX) rowFactories.set(key, make);
  }
  const out: SqlRow[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) out[i] = make(rows[i]!);
  return out;
}

export function isStalePlan(err: unknown): boolean {
  return (
    (err as { code?: string }).code === '0A000' &&
    /cached plan must not change result type/.test(String((err as Error).message))
  );
}

/** Names every statement anew (see above); returns whether `err` called for it. */
function renameAfterStalePlan(err: unknown): boolean {
  if (!isStalePlan(err)) return false;
  generation++;
  preparedNames.clear();
  return true;
}

/** The members of pg's result (pg 8, lib/result.js) that `addFieldsOfArrayRows` sets in place of its own. */
interface ResultInternals {
  fields: pg.FieldDef[];
  _parsers: ((text: string) => unknown)[] | undefined;
  /** The client's type parsers (pg's client sets them on every query it is given, before it is sent). */
  _types: { getTypeParser(oid: number, format: string): (text: string) => unknown };
  addFields(fields: pg.FieldDef[]): void;
}

/**
 * pg's `addFields` for rows read as arrays: the columns and their parsers only. pg's own also builds a template row
 * object of the column names (a null-prototype object filled name by name, then copied), which only rows read as
 * objects use: timed in the in-process bench's group commits (bench/group-cpu.ts), 64 µs per result of 32–34
 * columns, two per group of 1-event requests; this one about 2 µs.
 */
function addFieldsOfArrayRows(this: ResultInternals, fields: pg.FieldDef[]): void {
  this.fields = fields;
  const parsers = new Array<(text: string) => unknown>(fields.length);
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    parsers[i] = this._types.getTypeParser(f.dataTypeID, f.format || 'text');
  }
  this._parsers = parsers;
}

/** pg's Query, whose result takes its columns by `addFieldsOfArrayRows` (every query here reads rows as arrays). */
class ArrayRowsQuery extends pg.Query {
  /** Set by us (a transaction's client) or by pg's pool (which then releases its client in it). */
  declare callback: ((err: Error | null, result: pg.QueryArrayResult) => void) | undefined;
  constructor(config: pg.QueryArrayConfig) {
    super(config);
    (this as unknown as { _result: ResultInternals })._result.addFields = addFieldsOfArrayRows;
  }
}

/** Sends `config` as an ArrayRowsQuery: through the pool (which answers with a promise) or a transaction's client. */
async function send(client: pg.Pool | pg.PoolClient, config: pg.QueryArrayConfig): Promise<pg.QueryArrayResult> {
  const q = new ArrayRowsQuery(config);
  try {
    if (client instanceof pg.Pool) return await (client.query(q) as unknown as Promise<pg.QueryArrayResult>);
    return await new Promise((resolve, reject) => {
      q.callback = (err, result) => (err ? reject(err) : resolve(result));
      client.query(q);
    });
  } catch (err) {
    // As pg's own promise does: a stack that leads back to the statement's caller, not to the socket's read.
    if (err instanceof Error) Error.captureStackTrace(err);
    throw err;
  }
}

export class PgExec implements SqlExec {
  constructor(
    private readonly client: pg.Pool | pg.PoolClient,
    /** Inside a write transaction (row locks are taken only there). */
    readonly inTransaction: boolean,
    private readonly prepare: boolean,
  ) {}
  async all(sql: string, params: unknown[] = []) {
    return rowsOf(await this.#query(sql, params));
  }
  async run(sql: string, params: unknown[] = []) {
    return (await this.#query(sql, params)).rowCount ?? 0;
  }
  async #query(sql: string, params: unknown[]): Promise<pg.QueryArrayResult> {
    try {
      return await send(this.client, query(sql, params, this.prepare));
    } catch (err) {
      // Outside a transaction the query alone runs again; inside, write() runs the transaction again.
      if (renameAfterStalePlan(err) && !this.inTransaction) return send(this.client, query(sql, params, this.prepare));
      throw err;
    }
  }
}
