/**
 * Transactions: the row mapper, the column list of the batch insert (the ledger port's, ledger/sql.ts),
 * the listing and the ledger audit, one SQL for both databases.
 */
import type { ChargesReadTx } from '../charges/types.js';
import type { AuditViolation, Page } from '../common.js';
import { decodeAllocations, encodeAllocations } from '../grants/sql.js';
import { type Dialect, SqlCore, num, strOrNull, type SqlExec, type SqlRow } from '../sql-core.js';
import type { TransactionRow, TransactionsTx } from './types.js';

/** The units a transaction's `drawn_from` is stored against (encodeAllocations). */
export const drawnUnits = (amount: number): number => Math.abs(amount);

export const toTransaction = (r: SqlRow): TransactionRow => ({
  transactionId: String(r.transaction_id),
  accountId: String(r.account_id),
  denomination: String(r.denomination),
  amount: num(r.amount),
  balanceAfter: num(r.balance_after),
  kind: String(r.kind) as TransactionRow['kind'],
  eventId: strOrNull(r.event_id),
  reason: strOrNull(r.reason),
  grantId: strOrNull(r.grant_id),
  drawnFrom: decodeAllocations(r.drawn_from, drawnUnits(num(r.amount))),
  createdAtMs: num(r.created_at),
});

export const TRANSACTION_COLUMNS =
  'transaction_id, account_id, denomination, amount, balance_after, kind, event_id, reason, created_at, grant_id, ' +
  'drawn_from';
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
    t.grantId,
    encodeAllocations(t.drawnFrom, drawnUnits(t.amount)),
  );
}

/** Terms of one UNION ALL (SQLite allows 500 in a compound SELECT). */
const UNION_TERMS_MAX = 200;

export class TransactionsSql extends SqlCore implements TransactionsTx {
  constructor(
    db: SqlExec,
    dialect: Dialect,
    /** The money-movement audit, part of the ledger audit. */
    private readonly charges: Pick<ChargesReadTx, 'auditMoneyMovement'>,
  ) {
    super(db, dialect);
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
    SELECT b.account_id, b.denomination, b.pending, COALESCE(e.held, 0) + COALESCE(l.held, 0) AS held
    FROM balances b LEFT JOIN (SELECT account_id, denomination, SUM(cost_amount) AS held FROM events ` +
        `WHERE state = 'pending' GROUP BY account_id, denomination) e
      ON e.account_id = b.account_id AND e.denomination = b.denomination
    LEFT JOIN (SELECT account_id, denomination, SUM(amount - used - released) AS held FROM leases ` +
        `WHERE status = 'open' GROUP BY account_id, denomination) l
      ON l.account_id = b.account_id AND l.denomination = b.denomination
    WHERE b.pending <> COALESCE(e.held, 0) + COALESCE(l.held, 0)`,
    );
    for (const r of holds)
      out.push({
        accountId: String(r.account_id),
        denomination: String(r.denomination),
        problem: `pending ${r.pending} ≠ held cost of pending events and open leases ${r.held}`,
      });
    // A lease's used is exactly what the events that named it took from it: never more than its amount.
    const leases = await this.db.all(
      `SELECT account_id, denomination, lease_id, amount, used, released, status FROM leases ` +
        'WHERE used < 0 OR released < 0 OR used + released > amount ' +
        `OR (status <> 'open' AND used + released <> amount)`,
    );
    for (const r of leases)
      out.push({
        accountId: String(r.account_id),
        denomination: String(r.denomination),
        problem: `lease ${r.lease_id} (${r.status}): used ${r.used} + released ${r.released}, amount ${r.amount}`,
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
    out.push(...(await this.charges.auditMoneyMovement()));
    return out;
  }
}
