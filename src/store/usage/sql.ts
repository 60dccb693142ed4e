/**
 * Usage: the row mapper, the company rollup of a group's rows, and the SQL both databases share
 * (mixed into SqlTx, sql-base.ts). The rollup upserts and (on SQLite) retention's deletes differ
 * by dialect: sqlite/tx.ts, postgres/tx.ts and postgres/statements.ts.
 */
import { addDecimal, formatDecimal, parseDecimal, type Decimal } from '../../lib/decimal.js';
import { SqlCore, num, strOrNull, type SqlRow } from '../sql-core.js';
import type { UsageFilter, UsageRow, UsageTx } from './types.js';

export const toUsage = (r: SqlRow): UsageRow => ({
  companyId: String(r.company_id),
  accountId: strOrNull(r.account_id),
  denomination: String(r.denomination),
  type: String(r.type),
  hourMs: num(r.hour),
  events: num(r.events),
  quantity: String(r.quantity),
  cost: num(r.cost),
});

/**
 * The company-wide rollup rows of a group's per-account usage: summed per (company, hour,
 * denomination, type), exactly, in key order (the order their row locks are taken). Rows are built
 * field by field, not by spreading the account rows: on the server's hot path the spreads cost
 * more than the sums.
 */
export function companyUsage(rows: UsageRow[]): UsageRow[] {
  const sums = new Map<string, { row: UsageRow; exact: Decimal }>();
  for (const r of rows) {
    const key = `${r.companyId}\u0000${r.hourMs}\u0000${r.denomination}\u0000${r.type}`;
    const q = parseDecimal(r.quantity);
    if (q === null) throw new Error(`usage: quantity ${r.quantity} is not a decimal`);
    const s = sums.get(key);
    if (s) {
      s.row.events += r.events;
      s.row.cost += r.cost;
      s.exact = addDecimal(s.exact, q);
    } else {
      const { companyId, denomination, type, hourMs, events, cost } = r;
      sums.set(key, {
        row: { companyId, accountId: null, denomination, type, hourMs, events, quantity: '', cost },
        exact: q,
      });
    }
  }
  const out: UsageRow[] = [];
  for (const { row, exact } of sums.values()) {
    row.quantity = formatDecimal(exact);
    out.push(row);
  }
  return out.sort(compareRollupKeys);
}

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function compareRollupKeys(a: UsageRow, b: UsageRow): number {
  return (
    compareText(a.companyId, b.companyId) ||
    a.hourMs - b.hourMs ||
    compareText(a.denomination, b.denomination) ||
    compareText(a.type, b.type)
  );
}

export class UsageSql extends SqlCore implements UsageTx {
  async listUsage(filter: UsageFilter, limit: number) {
    const where = ['hour >= ?', 'hour < ?'];
    const params: unknown[] = [filter.fromMs, filter.toMs];
    let table = 'usage_company_hours';
    let columns = 'company_id, NULL AS account_id';
    if (filter.accountId !== undefined) {
      table = 'usage_hours';
      columns = 'company_id, account_id';
      where.unshift('account_id = ?');
      params.unshift(filter.accountId);
    } else {
      where.unshift('company_id = ?');
      params.unshift(filter.companyId);
      if (filter.byAccount) {
        table = 'usage_hours';
        columns = 'company_id, account_id';
      }
    }
    for (const [column, values] of [
      ['type', filter.types],
      ['denomination', filter.denominations],
    ] as const) {
      if (values === undefined) continue;
      const [sql, p] = this.inList(column, values);
      where.push(sql);
      params.push(...p);
    }
    const rows = await this.db.all(
      // As text: PostgreSQL's NUMERIC must not pass through a JavaScript number.
      `SELECT ${columns}, hour, denomination, type, events, CAST(quantity AS TEXT) AS quantity, cost FROM ${table} ` +
        `WHERE ${where.join(' AND ')} LIMIT ?`,
      [...params, limit],
    );
    return rows.map(toUsage);
  }
  async deleteUsageBefore(hourMs: number, limit: number) {
    let deleted = 0;
    for (const table of ['usage_hours', 'usage_company_hours']) {
      if (deleted >= limit) break;
      deleted += await this.db.run(
        `DELETE FROM ${table} WHERE ${this.rowId()} IN (SELECT ${this.rowId()} FROM ${table} WHERE hour < ? ` +
          `LIMIT ?${this.skipLocked()})`,
        [hourMs, limit - deleted],
      );
    }
    return deleted;
  }
}
