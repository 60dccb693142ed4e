/**
 * Events and the ledger: row mappers, the column lists of the batch inserts, and the SQL both
 * databases share (mixed into SqlTx, sql-base.ts). Batch inserts, event locks and (on PostgreSQL)
 * the one-statement `writeLedger` differ by dialect: sqlite/tx.ts, postgres/tx.ts.
 */
import type { BalanceDelta, BalanceKey, BalanceRow } from '../accounts/types.js';
import type { AuditViolation, Page } from '../common.js';
import { addDecimal, formatDecimal, parseDecimal, type Decimal } from '../../lib/decimal.js';
import { json, jsonOrNull, num, numOrNull, strOrNull, type SqlBase, type SqlRow } from '../sql-core.js';
import type {
  EventFilter,
  EventKey,
  EventRow,
  EventStateValue,
  EventsTx,
  PriceRow,
  TransactionRow,
  UsageFilter,
  UsageRow,
} from './types.js';

export const toPrice = (r: SqlRow): PriceRow => ({
  companyId: String(r.company_id),
  type: String(r.type),
  denomination: String(r.denomination),
  unitAmount: String(r.unit_amount),
  updatedAtMs: num(r.updated_at),
});
export const toEvent = (r: SqlRow): EventRow => ({
  eventId: String(r.event_id),
  companyId: String(r.company_id),
  accountId: String(r.account_id),
  clientSupplied: Boolean(r.client_supplied),
  type: String(r.type),
  quantity: num(r.quantity),
  costAmount: num(r.cost_amount),
  denomination: String(r.denomination),
  metadata: jsonOrNull(r.metadata),
  state: String(r.state) as EventStateValue,
  contentHash: strOrNull(r.content_hash),
  occurredAtMs: num(r.occurred_at),
  createdAtMs: num(r.created_at),
  updatedAtMs: num(r.updated_at),
  expiresAtMs: numOrNull(r.expires_at),
});
export const toTransaction = (r: SqlRow): TransactionRow => ({
  transactionId: String(r.transaction_id),
  accountId: String(r.account_id),
  denomination: String(r.denomination),
  amount: num(r.amount),
  balanceAfter: num(r.balance_after),
  kind: String(r.kind) as TransactionRow['kind'],
  eventId: strOrNull(r.event_id),
  reason: strOrNull(r.reason),
  createdAtMs: num(r.created_at),
});

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
 * denomination, type), exactly, in key order (the order their row locks are taken).
 */
export function companyUsage(rows: UsageRow[]): UsageRow[] {
  const sums = new Map<string, UsageRow & { exact: Decimal }>();
  for (const r of rows) {
    const key = `${r.companyId}\u0000${r.hourMs}\u0000${r.denomination}\u0000${r.type}`;
    const q = parseDecimal(r.quantity);
    if (q === null) throw new Error(`usage: quantity ${r.quantity} is not a decimal`);
    const s = sums.get(key);
    if (s) {
      s.events += r.events;
      s.cost += r.cost;
      s.exact = addDecimal(s.exact, q);
    } else sums.set(key, { ...r, accountId: null, exact: q });
  }
  return [...sums.values()]
    .map(({ exact, ...r }) => ({ ...r, quantity: formatDecimal(exact) }))
    .sort((a, b) =>
      compareKeys([a.companyId, a.hourMs, a.denomination, a.type], [b.companyId, b.hourMs, b.denomination, b.type]),
    );
}

function compareKeys(a: (string | number)[], b: (string | number)[]): number {
  for (let i = 0; i < a.length; i++) {
    if (a[i]! < b[i]!) return -1;
    if (a[i]! > b[i]!) return 1;
  }
  return 0;
}

/** Each event once, in the order first named. */
export function distinctEventKeys(keys: EventKey[]): EventKey[] {
  return [...new Map(keys.map((k) => [`${k.companyId}\u0000${k.eventId}`, k])).values()];
}

export const EVENT_COLUMNS =
  'company_id, event_id, account_id, client_supplied, type, quantity, cost_amount, denomination, metadata, ' +
  'state, content_hash, occurred_at, created_at, updated_at, expires_at';
/** Appends an event row's parameters, in EVENT_COLUMNS order, to `p` (multi-row INSERTs). */
export function pushEventParams(e: EventRow, bool: (b: boolean) => unknown, p: unknown[]): void {
  p.push(
    e.companyId,
    e.eventId,
    e.accountId,
    bool(e.clientSupplied),
    e.type,
    e.quantity,
    e.costAmount,
    e.denomination,
    json(e.metadata),
    e.state,
    e.contentHash,
    e.occurredAtMs,
    e.createdAtMs,
    e.updatedAtMs,
    e.expiresAtMs,
  );
}
export const TRANSACTION_COLUMNS =
  'transaction_id, account_id, denomination, amount, balance_after, kind, event_id, reason, created_at';
/** Appends a transaction row's parameters, in TRANSACTION_COLUMNS order, to `p`. */
export function pushTransactionParams(t: TransactionRow, p: unknown[]): void {
  p.push(
    t.transactionId,
    t.accountId,
    t.denomination,
    t.amount,
    t.balanceAfter,
    t.kind,
    t.eventId,
    t.reason,
    t.createdAtMs,
  );
}

/** Terms of one UNION ALL (SQLite allows 500 in a compound SELECT). */
const UNION_TERMS_MAX = 200;

/**
 * What the ledger's SQL calls of other aggregates (mixed in before it): the balance deltas
 * (AccountsTx) and the money-movement audit (ChargesReadTx). Methods, not properties, so that a
 * dialect can still override them as methods.
 */
interface EventsNeed {
  applyBalanceDeltas(deltas: BalanceDelta[]): Promise<BalanceRow[]>;
  auditMoneyMovement(): Promise<AuditViolation[]>;
}

export function eventsSql<Base extends SqlBase<EventsNeed>>(base: Base) {
  abstract class EventsSql extends base implements EventsTx {
    async listPrices(companyId: string, page: Page) {
      const params: unknown[] = [companyId];
      let clause = '';
      if (page.startingAfter !== undefined) {
        if (
          !(await this.one('SELECT 1 AS x FROM prices WHERE company_id = ? AND type = ?', [
            companyId,
            page.startingAfter,
          ]))
        )
          return undefined;
        clause = ' AND type > ?';
        params.push(page.startingAfter);
      }
      const rows = await this.db.all(`SELECT * FROM prices WHERE company_id = ?${clause} ORDER BY type LIMIT ?`, [
        ...params,
        page.limit + 1,
      ]);
      return { rows: rows.slice(0, page.limit).map(toPrice), hasMore: rows.length > page.limit };
    }
    async findPrices(companyId: string, types: string[]) {
      if (types.length === 0) return [];
      const [inTypes, params] = this.inList('type', types);
      return (
        await this.db.all(`SELECT * FROM prices WHERE company_id = ? AND ${inTypes}`, [companyId, ...params])
      ).map(toPrice);
    }
    async findEvent(companyId: string, eventId: string) {
      const r = await this.one('SELECT * FROM events WHERE company_id = ? AND event_id = ?', [companyId, eventId]);
      return r && toEvent(r);
    }
    async findEventsByIds(companyId: string, eventIds: string[]) {
      if (eventIds.length === 0) return [];
      const [inIds, params] = this.inList('event_id', eventIds);
      return (await this.db.all(`SELECT * FROM events WHERE company_id = ? AND ${inIds}`, [companyId, ...params])).map(
        toEvent,
      );
    }
    async findExpiredHolds(nowMs: number, limit: number, only?: BalanceKey[]) {
      if (only === undefined) {
        return (
          await this.db.all(
            "SELECT * FROM events WHERE state = 'pending' AND expires_at <= ? ORDER BY expires_at LIMIT ?",
            [nowMs, limit],
          )
        ).map(toEvent);
      }
      // Each balance's oldest `limit`, then merged: oldest first across all of them, as documented.
      const out: EventRow[] = [];
      for (const k of only) {
        const rows = await this.db.all(
          "SELECT * FROM events WHERE account_id = ? AND denomination = ? AND state = 'pending' AND expires_at <= ? " +
            'ORDER BY expires_at LIMIT ?',
          [k.accountId, k.denomination, nowMs, limit],
        );
        out.push(...rows.map(toEvent));
      }
      return out.sort((a, b) => a.expiresAtMs! - b.expiresAtMs!).slice(0, limit);
    }
    async listTransactions(accountId: string, denomination: string | undefined, page: Page) {
      if (denomination !== undefined) {
        return this.pageBySeq(
          'transactions',
          'transaction_id',
          [
            ['account_id', accountId],
            ['denomination', denomination],
          ],
          page,
          toTransaction,
        );
      }
      // Every denomination: the newest `limit + 1` of each denomination's range of
      // transactions_balance, merged. (No index on the account alone: the ingest path keeps one
      // per-account index.)
      let cursorSeq: unknown;
      if (page.startingAfter !== undefined) {
        cursorSeq = await this.cursorSeq('transactions', 'transaction_id', page.startingAfter, 'account_id = ?', [
          accountId,
        ]);
        if (cursorSeq === undefined) return undefined;
      }
      // The account's denominations, by a loose index scan: one seek per denomination.
      const names = (
        await this.db.all(
          `WITH RECURSIVE d(denomination) AS (
         SELECT MIN(denomination) FROM transactions WHERE account_id = ?
         UNION ALL
         SELECT (SELECT MIN(t.denomination) FROM transactions t WHERE t.account_id = ? ` +
            `AND t.denomination > d.denomination) FROM d WHERE d.denomination IS NOT NULL
       ) SELECT denomination FROM d WHERE denomination IS NOT NULL`,
          [accountId, accountId],
        )
      ).map((r) => String(r.denomination));
      const rows: SqlRow[] = [];
      for (let i = 0; i < names.length; i += UNION_TERMS_MAX) {
        const chunk = names.slice(i, i + UNION_TERMS_MAX);
        const [accountSql, accountParams] = this.inList('account_id', [accountId]);
        const one =
          `SELECT * FROM (SELECT * FROM transactions WHERE ${accountSql} AND denomination = ?` +
          `${cursorSeq === undefined ? '' : ' AND seq < ?'} ORDER BY ${this.seqOrder('account_id')} LIMIT ?) t`;
        const params = chunk.flatMap((d) => {
          const keys = [...accountParams, d];
          return cursorSeq === undefined ? [...keys, page.limit + 1] : [...keys, cursorSeq, page.limit + 1];
        });
        rows.push(...(await this.db.all(chunk.map(() => one).join(' UNION ALL '), params)));
      }
      rows.sort((a, b) => Number(b.seq) - Number(a.seq));
      return { rows: rows.slice(0, page.limit).map(toTransaction), hasMore: rows.length > page.limit };
    }

    async auditLedger(): Promise<AuditViolation[]> {
      const out: AuditViolation[] = [];
      const sums = await this.db.all(
        `
      SELECT b.account_id, b.denomination, b.amount, COALESCE(t.total, 0) AS total
      FROM balances b LEFT JOIN (SELECT account_id, denomination, SUM(amount) AS total FROM transactions ` +
          `GROUP BY account_id, denomination) t
        ON t.account_id = b.account_id AND t.denomination = b.denomination
      WHERE b.amount <> COALESCE(t.total, 0)`,
      );
      for (const r of sums)
        out.push({
          accountId: String(r.account_id),
          denomination: String(r.denomination),
          problem: `amount ${r.amount} ≠ sum of transactions ${r.total}`,
        });
      const chain = await this.db.all(`
      SELECT account_id, denomination, transaction_id, amount, balance_after, prev FROM (
        SELECT account_id, denomination, transaction_id, amount, balance_after,
               LAG(balance_after, 1, 0) OVER (PARTITION BY account_id, denomination ORDER BY seq) AS prev
        FROM transactions) x
      WHERE prev + amount <> balance_after`);
      for (const r of chain)
        out.push({
          accountId: String(r.account_id),
          denomination: String(r.denomination),
          problem: `transaction ${r.transaction_id}: ${r.prev} + ${r.amount} ≠ balance_after ${r.balance_after}`,
        });
      const holds = await this.db.all(
        `
      SELECT b.account_id, b.denomination, b.pending, COALESCE(e.held, 0) AS held
      FROM balances b LEFT JOIN (SELECT account_id, denomination, SUM(cost_amount) AS held FROM events ` +
          `WHERE state = 'pending' GROUP BY account_id, denomination) e
        ON e.account_id = b.account_id AND e.denomination = b.denomination
      WHERE b.pending <> COALESCE(e.held, 0)`,
      );
      for (const r of holds)
        out.push({
          accountId: String(r.account_id),
          denomination: String(r.denomination),
          problem: `pending ${r.pending} ≠ held cost of pending events ${r.held}`,
        });
      const orphans = await this.db.all(`
      SELECT t.account_id, t.denomination, COUNT(*) AS n FROM transactions t
      LEFT JOIN balances b ON b.account_id = t.account_id AND b.denomination = t.denomination
      WHERE b.account_id IS NULL GROUP BY t.account_id, t.denomination`);
      for (const r of orphans)
        out.push({
          accountId: String(r.account_id),
          denomination: String(r.denomination),
          problem: `${r.n} transactions without a balance`,
        });
      out.push(...(await this.auditMoneyMovement()));
      return out;
    }

    async listEvents(companyId: string, filter: EventFilter, page: Page) {
      // One account's events through events_account_occurred (account ids are unique; the
      // operation has checked the account is the company's), the company's through
      // events_company_occurred: either way the index gives the order, newest first.
      const where: string[] = [];
      const params: unknown[] = [];
      if (filter.accountId !== undefined) {
        where.push('account_id = ?');
        params.push(filter.accountId);
      } else {
        where.push('company_id = ?');
        params.push(companyId);
      }
      for (const [column, value] of [
        ['type', filter.type],
        ['state', filter.state],
        ['denomination', filter.denomination],
      ] as const) {
        if (value === undefined) continue;
        where.push(`${column} = ?`);
        params.push(value);
      }
      if (filter.fromMs !== undefined) {
        where.push('occurred_at >= ?');
        params.push(filter.fromMs);
      }
      if (filter.toMs !== undefined) {
        where.push('occurred_at < ?');
        params.push(filter.toMs);
      }
      if (page.startingAfter !== undefined) {
        const at = await this.one(
          'SELECT occurred_at, seq, account_id FROM events WHERE company_id = ? AND event_id = ?',
          [companyId, page.startingAfter],
        );
        if (!at || (filter.accountId !== undefined && String(at.account_id) !== filter.accountId)) return undefined;
        where.push('(occurred_at < ? OR (occurred_at = ? AND seq < ?))');
        params.push(at.occurred_at, at.occurred_at, at.seq);
      }
      const rows = await this.db.all(
        `SELECT * FROM events WHERE ${where.join(' AND ')} ORDER BY occurred_at DESC, seq DESC LIMIT ?`,
        [...params, page.limit + 1],
      );
      return { rows: rows.slice(0, page.limit).map(toEvent), hasMore: rows.length > page.limit };
    }
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
    /** The dialect's: one multi-row upsert per rollup table (exact decimal sums either way). */
    abstract addUsage(rows: UsageRow[]): Promise<void>;

    async upsertPrice(p: PriceRow) {
      await this.db.run(
        `INSERT INTO prices (company_id, type, denomination, unit_amount, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (company_id, type) DO UPDATE SET denomination = excluded.denomination, ` +
          'unit_amount = excluded.unit_amount, updated_at = excluded.updated_at',
        [p.companyId, p.type, p.denomination, p.unitAmount, p.updatedAtMs],
      );
    }
    /** The dialect's: multi-row INSERTs in order (SQLite), one `unnest` statement (PostgreSQL). */
    abstract insertEvents(rows: EventRow[]): Promise<void>;
    abstract insertTransactions(rows: TransactionRow[]): Promise<void>;
    async writeLedger(
      events: EventRow[],
      deltas: BalanceDelta[],
      transactions: TransactionRow[],
      usage: UsageRow[] = [],
    ): Promise<BalanceRow[]> {
      await this.insertEvents(events);
      const after = await this.applyBalanceDeltas(deltas);
      await this.insertTransactions(transactions);
      await this.addUsage(usage);
      return after;
    }
    /** The dialect's: a primary-key probe each (SQLite), `FOR UPDATE` in key order (PostgreSQL). */
    abstract lockEvents(keys: EventKey[]): Promise<EventRow[]>;
    async updateEvents(
      changes: {
        companyId: string;
        eventId: string;
        state: EventStateValue;
        costAmount: number;
        updatedAtMs: number;
      }[],
    ) {
      for (const c of changes) {
        await this.db.run(
          'UPDATE events SET state = ?, cost_amount = ?, updated_at = ?, expires_at = NULL ' +
            'WHERE company_id = ? AND event_id = ?',
          [c.state, c.costAmount, c.updatedAtMs, c.companyId, c.eventId],
        );
      }
    }
  }
  return EventsSql;
}
