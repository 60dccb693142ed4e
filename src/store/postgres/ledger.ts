/**
 * The ledger's port on PostgreSQL: balances locked `FOR UPDATE` in the order given (sorted by the
 * ledger), batches written with one statement each (arrays unnested server-side), and a posting
 * written as ONE statement (postgres/statements.ts writeLedgerStatement).
 */
import { toBalance, toBalanceAfter, writtenLots } from '../balances/sql.js';
import type { BalanceDelta, BalanceKey } from '../balances/types.js';
import { toEvent } from '../events/sql.js';
import { toLease } from '../leases/sql.js';
import type { EventChange, EventRow } from '../events/types.js';
import { GRANT_COLUMNS, grantParams } from '../grants/sql.js';
import type { GrantRow } from '../grants/types.js';
import { LedgerSql } from '../ledger/sql.js';
import type { TransactionRow } from '../transactions/types.js';
import type { UsageRow } from '../usage/types.js';
import { POSTGRES } from './dialect.js';
import type { PgExec } from './exec.js';
import type { TxReadAhead } from './read-ahead.js';
import {
  addUsageStatements,
  applyBalanceDeltasSql,
  balanceDeltaParams,
  insertEventsStatement,
  insertTransactionsStatement,
  summedDeltas,
  USAGE_COMPANY_SHARDS,
  writeLedgerStatement,
} from './statements.js';

/** The company-rollup shard of one statement (statements.ts). */
const usageShard = (): number => Math.floor(Math.random() * USAGE_COMPANY_SHARDS);

export class PgLedger extends LedgerSql {
  declare protected readonly db: PgExec;
  constructor(
    db: PgExec,
    private readonly ahead: TxReadAhead,
  ) {
    super(db, POSTGRES);
  }

  /**
   * The balances locked, in the order given; with each row, its company's live webhook subscriptions, kept for the
   * notifications of this transaction (read-ahead.ts): one round trip for both.
   */
  async lockBalances(keys: BalanceKey[]) {
    if (keys.length === 0) return [];
    const rows = await this.#balancesOf(
      keys,
      `, (SELECT json_agg(json_build_array(w.webhook_id, w.type, w.threshold::text) ORDER BY w.seq)
           FROM webhook_subscriptions w
          WHERE w.company_id = b.company_id AND w.deleted_at IS NULL AND w.disabled_at IS NULL) AS webhook_targets`,
      ' FOR UPDATE OF b',
    );
    for (const r of rows) this.ahead.keepTargets(String(r.company_id), r.webhook_targets);
    return rows.map(toBalance);
  }
  async readBalances(keys: BalanceKey[]) {
    if (keys.length === 0) return [];
    return (await this.#balancesOf(keys, '', '')).map(toBalance);
  }
  /** The rows of the balances of `keys`, in key order, with `extra` columns and a `lock` clause. */
  #balancesOf(keys: BalanceKey[], extra: string, lock: string) {
    return this.db.all(
      `SELECT b.*${extra} FROM balances b JOIN unnest(?::text[], ?::text[]) AS k(account_id, denomination)
         ON b.account_id = k.account_id AND b.denomination = k.denomination
       ORDER BY b.account_id, b.denomination${lock}`,
      [keys.map((k) => k.accountId), keys.map((k) => k.denomination)],
    );
  }
  async applyBalanceDeltas(input: BalanceDelta[]) {
    if (input.length === 0) return [];
    const deltas = summedDeltas(input);
    const written = writtenLots(deltas);
    return (await this.db.all(applyBalanceDeltasSql(deltas), balanceDeltaParams(deltas, written))).map(
      toBalanceAfter(written),
    );
  }

  async insertEvents(rows: EventRow[]) {
    if (rows.length === 0) return;
    await this.db.run(...insertEventsStatement(rows));
  }
  /** In a write, the holds found are locked, skipping those another transaction holds; a read locks nothing. */
  override async findExpiredHolds(nowMs: number, limit: number, only?: BalanceKey[]) {
    const lock = this.db.inTransaction;
    if (only === undefined) {
      return (
        await this.db.all(
          "SELECT * FROM events WHERE state = 'pending' AND expires_at <= ? " +
            `ORDER BY expires_at LIMIT ?${lock ? ' FOR UPDATE SKIP LOCKED' : ''}`,
          [nowMs, limit],
        )
      ).map(toEvent);
    }
    if (only.length === 0) return [];
    return (
      await this.db.all(
        `SELECT e.* FROM events e JOIN unnest(?::text[], ?::text[]) AS k(account_id, denomination)
         ON e.account_id = k.account_id AND e.denomination = k.denomination
       WHERE e.state = 'pending' AND e.expires_at <= ? ORDER BY e.expires_at LIMIT ?` +
          (lock ? ' FOR UPDATE OF e SKIP LOCKED' : ''),
        [only.map((k) => k.accountId), only.map((k) => k.denomination), nowMs, limit],
      )
    ).map(toEvent);
  }
  /** One statement for every balance asked about. */
  override async findExpiredLeases(nowMs: number, limit: number, only?: BalanceKey[]) {
    if (only === undefined) return super.findExpiredLeases(nowMs, limit);
    if (only.length === 0) return [];
    return (
      await this.db.all(
        `SELECT l.* FROM leases l JOIN unnest(?::text[], ?::text[]) AS k(account_id, denomination)
         ON l.account_id = k.account_id AND l.denomination = k.denomination
       WHERE l.status = 'open' AND l.expires_at <= ? ORDER BY l.expires_at LIMIT ?`,
        [only.map((k) => k.accountId), only.map((k) => k.denomination), nowMs, limit],
      )
    ).map(toLease);
  }
  /** One statement for the group (each event at most once, as settles and cancellations pass them). */
  override async updateEvents(changes: EventChange[]) {
    if (changes.length === 0) return;
    await this.db.run(
      `UPDATE events e SET state = c.state, cost_amount = c.cost_amount, price_model = c.price_model, ` +
        `updated_at = c.updated_at, expires_at = NULL
         FROM unnest(?::text[], ?::text[], ?::text[], ?::bigint[], ?::text[], ?::bigint[]) AS c(company_id, ` +
        `event_id, state, cost_amount, price_model, updated_at)
       WHERE e.company_id = c.company_id AND e.event_id = c.event_id`,
      [
        changes.map((c) => c.companyId),
        changes.map((c) => c.eventId),
        changes.map((c) => c.state),
        changes.map((c) => c.costAmount),
        changes.map((c) => c.priceModel),
        changes.map((c) => c.updatedAtMs),
      ],
    );
  }

  /** One statement for all rows (unnest of one array per column): initial grants of many new accounts at once. */
  async insertGrants(rows: GrantRow[]) {
    if (rows.length === 0) return;
    const params = rows.map(grantParams);
    await this.db.run(
      `INSERT INTO grants (${GRANT_COLUMNS}) SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ` +
        '?::bigint[], ?::bigint[], ?::bigint[], ?::integer[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ' +
        '?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[])',
      GRANT_COLUMNS.split(', ').map((_, c) => params.map((p) => p[c])),
    );
  }

  async insertTransactions(rows: TransactionRow[]) {
    if (rows.length === 0) return;
    await this.db.run(...insertTransactionsStatement(rows));
  }
  /**
   * The ingest path's write as ONE statement: the events, the balance deltas and the ledger rows
   * in data-modifying CTEs, each of which PostgreSQL runs exactly once and to completion,
   * referenced or not. Two round trips fewer per group than three statements, and one
   * statement's overhead instead of three (bench/pg-rows.ts: `write-ledger` against `both-separately`).
   */
  override async writeLedger(
    events: EventRow[],
    deltas: BalanceDelta[],
    transactions: TransactionRow[],
    usage: UsageRow[] = [],
  ) {
    if (events.length === 0 && transactions.length === 0 && usage.length === 0) return this.applyBalanceDeltas(deltas);
    const summed = summedDeltas(deltas);
    const written = writtenLots(summed);
    return (await this.db.all(...writeLedgerStatement(events, summed, transactions, usage, usageShard(), written))).map(
      toBalanceAfter(written),
    );
  }

  async addUsage(rows: UsageRow[]) {
    if (rows.length === 0) return;
    for (const statement of addUsageStatements(rows, usageShard())) await this.db.run(...statement);
  }
}
