/**
 * The store's side of the ledger's port (src/ledger/port.ts): every write that changes a balance's
 * figures or grants, the events whose holds those figures count and the usage rollups written with
 * them, and the reads a view of a balance needs. The SQL both databases share is here; where a dialect
 * is faster another way (batch statements, PostgreSQL's one-statement posting) or locks rows,
 * sqlite/ledger.ts and postgres/ledger.ts override it.
 */
import type { LedgerPort } from '../../ledger/port.js';
import { toBalance } from '../balances/sql.js';
import type { BalanceDelta, BalanceKey, BalanceRow } from '../balances/types.js';
import { toEvent } from '../events/sql.js';
import type { EventChange, EventRow } from '../events/types.js';
import { encodeAllocations, NEVER_EXPIRES } from '../grants/sql.js';
import type { GrantRow, GrantUpdate } from '../grants/types.js';
import { toLease } from '../leases/sql.js';
import type { LeaseChange, LeaseRow } from '../leases/types.js';
import { SqlCore } from '../sql-core.js';
import type { TransactionRow } from '../transactions/types.js';
import type { UsageRow } from '../usage/types.js';

export abstract class LedgerSql extends SqlCore implements LedgerPort {
  /** The dialect's: SQLite reads by account (its primary key's prefix); PostgreSQL joins the keys. */
  abstract readBalances(keys: BalanceKey[]): Promise<BalanceRow[]>;
  /** The dialect's: PostgreSQL locks `FOR UPDATE` in the order given; SQLite's writer holds the only lock. */
  abstract lockBalances(keys: BalanceKey[]): Promise<BalanceRow[]>;
  /**
   * `amount = amount + Δ, pending = pending + Δ` (and the grants, where a delta gives them) for each
   * locked balance; returns each changed balance once, as after every delta.
   */
  abstract applyBalanceDeltas(deltas: BalanceDelta[]): Promise<BalanceRow[]>;
  /** The dialect's: multi-row INSERTs in order (SQLite), one `unnest` statement (PostgreSQL). */
  abstract insertEvents(rows: EventRow[]): Promise<void>;
  /** The dialect's: one statement for many rows (grantParams gives a row's). */
  abstract insertGrants(rows: GrantRow[]): Promise<void>;
  /** The dialect's: multi-row INSERTs in order (SQLite), one `unnest` statement (PostgreSQL): `seq` keeps the order. */
  abstract insertTransactions(rows: TransactionRow[]): Promise<void>;
  /** The dialect's: one multi-row upsert per rollup table (exact decimal sums either way). */
  abstract addUsage(rows: UsageRow[]): Promise<void>;

  async listBalancesOfAccounts(accountIds: string[]) {
    if (accountIds.length === 0) return [];
    const [inIds, params] = this.inList('account_id', accountIds);
    return (await this.db.all(`SELECT * FROM balances WHERE ${inIds} ORDER BY account_id, denomination`, params)).map(
      toBalance,
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

  async findExpiredLeases(nowMs: number, limit: number, only?: BalanceKey[]) {
    if (only === undefined)
      return (
        await this.db.all(
          "SELECT * FROM leases WHERE status = 'open' AND expires_at <= ? ORDER BY expires_at LIMIT ?",
          [nowMs, limit],
        )
      ).map(toLease);
    const out: LeaseRow[] = [];
    for (const k of only) {
      const rows = await this.db.all(
        "SELECT * FROM leases WHERE status = 'open' AND expires_at <= ? AND account_id = ? AND denomination = ? " +
          'ORDER BY expires_at LIMIT ?',
        [nowMs, k.accountId, k.denomination, limit],
      );
      out.push(...rows.map(toLease));
    }
    return out.sort((a, b) => a.expiresAtMs - b.expiresAtMs).slice(0, limit);
  }

  async insertLease(l: LeaseRow) {
    await this.db.run(
      'INSERT INTO leases (lease_id, company_id, account_id, denomination, client_id, amount, used, released, ' +
        'status, held_from, expires_at, created_at, closed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [
        l.leaseId,
        l.companyId,
        l.accountId,
        l.denomination,
        l.clientId,
        l.amount,
        l.used,
        l.released,
        l.status,
        encodeAllocations(l.heldFrom),
        l.expiresAtMs,
        l.createdAtMs,
        l.closedAtMs,
      ],
    );
  }

  async updateLeases(changes: LeaseChange[]) {
    for (const c of changes)
      await this.db.run(
        'UPDATE leases SET used = ?, released = ?, status = ?, held_from = ?, closed_at = ? WHERE lease_id = ?',
        [c.used, c.released, c.status, encodeAllocations(c.heldFrom), c.closedAtMs, c.leaseId],
      );
  }

  async updateEvents(changes: EventChange[]) {
    for (const c of changes) {
      await this.db.run(
        'UPDATE events SET state = ?, cost_amount = ?, price_model = ?, updated_at = ?, expires_at = NULL ' +
          'WHERE company_id = ? AND event_id = ?',
        [c.state, c.costAmount, c.priceModel, c.updatedAtMs, c.companyId, c.eventId],
      );
    }
  }

  async findBalancesWithGrantsDue(nowMs: number, limit: number) {
    const rows = await this.db.all(
      `SELECT account_id, denomination FROM balances WHERE grants_due_at <= ?
       ORDER BY grants_due_at LIMIT ?${this.skipLocked()}`,
      [nowMs, limit],
    );
    return rows.map((r) => ({ accountId: String(r.account_id), denomination: String(r.denomination) }));
  }

  async updateGrants(rows: GrantUpdate[]) {
    for (const g of rows)
      await this.db.run(
        'UPDATE grants SET remaining = ?, held = ?, priority = ?, expires_at = ?, expiry_order = ?, voided_at = ? ' +
          'WHERE grant_id = ?',
        [g.remaining, g.held, g.priority, g.expiresAtMs, g.expiresAtMs ?? NEVER_EXPIRES, g.voidedAtMs, g.grantId],
      );
  }

  /** The four steps in order (SQLite); PostgreSQL writes them in one statement (postgres/ledger.ts). */
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
}
