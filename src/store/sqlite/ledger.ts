/**
 * The ledger's port on SQLite: the IMMEDIATE transaction already holds SQLite's single write lock,
 * so locking is reading; the posting's rows go in by multi-row INSERTs on prepared statements, run
 * synchronously (the hot path's statements).
 */
import { balanceKey } from '../../lib/keys.js';
import { columnsAfter, toBalance, toBalanceAfter, writtenLots } from '../balances/sql.js';
import type { BalanceDelta, BalanceKey, BalanceRow } from '../balances/types.js';
import { EVENT_COLUMNS, pushEventParams } from '../events/sql.js';
import type { EventRow } from '../events/types.js';
import { GRANT_COLUMNS, grantParams } from '../grants/sql.js';
import type { GrantRow } from '../grants/types.js';
import { LedgerSql } from '../ledger/sql.js';
import { placeholders, type SqlRow } from '../sql-core.js';
import { pushTransactionParams, TRANSACTION_COLUMNS } from '../transactions/sql.js';
import type { TransactionRow } from '../transactions/types.js';
import { companyUsage } from '../usage/sql.js';
import type { UsageRow } from '../usage/types.js';
import { SQLITE } from './dialect.js';
import type { SqliteExec } from './exec.js';

/**
 * Rows per multi-row INSERT: one statement call binds this many rows (18 × 64 < SQLite's 32,766
 * parameters).
 */
const INSERT_CHUNK_ROWS = 64;
/** Keys per `IN (…)` lookup. */
const IN_CHUNK = 500;

/**
 * The UPDATE of one delta: the figures, with the grants and the spend windows where the delta writes them (four
 * constant strings, so that the statement cache finds each by a string whose hash is computed once).
 */
const DELTA_UPDATES = [false, true].map((grants) =>
  [false, true].map(
    (spend) =>
      'UPDATE balances SET amount = amount + ?, pending = pending + ?' +
      (grants ? ', grants = ?, grants_due_at = ?' : '') +
      (spend ? ', spend_day_start = ?, spend_day = ?, spend_month_start = ?, spend_month = ?' : '') +
      ' WHERE account_id = ? AND denomination = ?',
  ),
);
const deltaUpdate = (grants: boolean, spend: boolean): string => DELTA_UPDATES[grants ? 1 : 0]![spend ? 1 : 0]!;

export class SqliteLedger extends LedgerSql {
  declare protected readonly db: SqliteExec;
  constructor(db: SqliteExec) {
    super(db, SQLITE);
  }

  async lockBalances(keys: BalanceKey[]) {
    return this.#readBalances(keys, toBalance, '*');
  }
  async readBalances(keys: BalanceKey[]) {
    return this.#readBalances(keys, toBalance, '*');
  }
  #readBalances(keys: BalanceKey[], toRow: (r: SqlRow) => BalanceRow, columns: string) {
    // The IMMEDIATE transaction already holds SQLite's single write lock: reading is locking.
    // One query per 500 accounts (the primary key's prefix), not one per key.
    const wanted = new Set(keys.map((k) => balanceKey(k.accountId, k.denomination)));
    const accounts = [...new Set(keys.map((k) => k.accountId))];
    const out: BalanceRow[] = [];
    for (let i = 0; i < accounts.length; i += IN_CHUNK) {
      const chunk = accounts.slice(i, i + IN_CHUNK);
      for (const r of this.db.allSync(
        `SELECT ${columns} FROM balances WHERE account_id IN (${placeholders(chunk.length)})`,
        chunk,
      )) {
        if (wanted.has(balanceKey(String(r.account_id), String(r.denomination)))) out.push(toRow(r));
      }
    }
    return out;
  }
  async applyBalanceDeltas(deltas: BalanceDelta[]) {
    if (deltas.length === 0) return [];
    // No RETURNING: SQLite collects the rows a RETURNING clause returns in a temporary table
    // first, which made each UPDATE about four times its own cost (35 balances: 214 µs with
    // RETURNING *, 49 µs without). This connection holds the write lock, so reading the rows
    // back afterwards sees exactly what the UPDATEs left, but for the grants text, which it knows.
    // Most deltas leave that text as it is (storedLotsOf): they change the two figures only.
    const written = writtenLots(deltas);
    for (const d of deltas) {
      const stored = written.get(balanceKey(d.accountId, d.denomination))?.stored;
      const params: unknown[] = [d.amount, d.pending];
      const grants = stored?.written === true;
      if (stored?.written) params.push(stored.text, d.grantsDueAtMs ?? null);
      if (d.spend !== undefined) params.push(d.spend.dayStartMs, d.spend.day, d.spend.monthStartMs, d.spend.month);
      params.push(d.accountId, d.denomination);
      this.db.prepare(deltaUpdate(grants, d.spend !== undefined)).run(...params);
    }
    return this.#readBalances(deltas, toBalanceAfter(written), columnsAfter(deltas));
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

  override async findExpiredLeases(nowMs: number, limit: number, only?: BalanceKey[]) {
    // As for holds: one probe of the open leases' expiry index usually answers for every balance of a group.
    if (
      only !== undefined &&
      this.db.allSync("SELECT 1 AS x FROM leases WHERE status = 'open' AND expires_at <= ? LIMIT 1", [nowMs]).length ===
        0
    )
      return [];
    return super.findExpiredLeases(nowMs, limit, only);
  }
  async insertEvents(rows: EventRow[]) {
    this.#insertMany('events', EVENT_COLUMNS, 18, rows, (e, p) => pushEventParams(e, SQLITE.bool, p));
  }
  async insertGrants(rows: GrantRow[]) {
    this.#insertMany('grants', GRANT_COLUMNS, 18, rows, (g, p) => p.push(...grantParams(g)));
  }
  async insertTransactions(rows: TransactionRow[]) {
    this.#insertMany('transactions', TRANSACTION_COLUMNS, 11, rows, pushTransactionParams);
  }

  /**
   * Both rollups by multi-row upserts; quantities add exactly through `decimal_add` (registered
   * on every connection, sqlite.ts). One writer: the company rollup needs no shards (shard 0).
   */
  async addUsage(rows: UsageRow[]) {
    if (rows.length === 0) return;
    const upsert =
      ' DO UPDATE SET events = events + excluded.events, quantity = decimal_add(quantity, excluded.quantity), ' +
      'cost = cost + excluded.cost';
    this.#insertMany(
      'usage_hours',
      'account_id, hour, denomination, type, company_id, events, quantity, cost',
      8,
      rows,
      (r, p) => p.push(r.accountId, r.hourMs, r.denomination, r.type, r.companyId, r.events, r.quantity, r.cost),
      ` ON CONFLICT (account_id, hour, denomination, type)${upsert}`,
    );
    this.#insertMany(
      'usage_company_hours',
      'company_id, hour, denomination, type, shard, events, quantity, cost',
      8,
      companyUsage(rows),
      (r, p) => p.push(r.companyId, r.hourMs, r.denomination, r.type, 0, r.events, r.quantity, r.cost),
      ` ON CONFLICT (company_id, hour, denomination, type, shard)${upsert}`,
    );
  }

  /**
   * Multi-row INSERTs in order (`seq` follows the rows' order, which balance_after chains rely
   * on), parameters pushed straight into one flat array per statement: the hot path's rows.
   */
  #insertMany<R>(
    table: string,
    columns: string,
    width: number,
    rows: R[],
    push: (row: R, params: unknown[]) => void,
    onConflict = '',
  ) {
    const params: unknown[] = [];
    for (let i = 0; i < rows.length; i += INSERT_CHUNK_ROWS) {
      const end = Math.min(rows.length, i + INSERT_CHUNK_ROWS);
      params.length = 0;
      for (let j = i; j < end; j++) push(rows[j]!, params);
      this.db.prepare(insertSql(table, columns, width, end - i, onConflict)).run(params);
    }
  }
}

const insertSqlCache = new Map<string, string>();
/** `INSERT INTO table (columns) VALUES (?, …), …` for `rows` rows, built once per shape. */
function insertSql(table: string, columns: string, width: number, rows: number, onConflict: string): string {
  const key = `${table}\u0000${rows}`;
  let sql = insertSqlCache.get(key);
  if (sql === undefined) {
    sql = `INSERT INTO ${table} (${columns}) VALUES ${Array(rows)
      .fill(`(${placeholders(width)})`)
      .join(', ')}${onConflict}`;
    insertSqlCache.set(key, sql);
  }
  return sql;
}
