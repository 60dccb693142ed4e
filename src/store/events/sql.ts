/**
 * Events: the row mapper, the column list of the batch insert, and the SQL both databases share
 * (mixed into SqlTx, sql-base.ts). Batch inserts and event locks differ by dialect: sqlite/tx.ts,
 * postgres/tx.ts.
 */
import type { BalanceKey } from '../balances/types.js';
import type { Page } from '../common.js';
import { decodeAllocations, encodeAllocations } from '../grants/sql.js';
import type { Allocation } from '../grants/types.js';
import { json, jsonOrNull, num, numOrNull, strOrNull, type SqlRow } from '../sql-core.js';
import { SqlCore } from '../sql-core.js';
import type { EventState } from '../../domain/holds.js';
import type { EventFilter, EventKey, EventRow, EventsTx } from './types.js';

export const toEvent = (r: SqlRow): EventRow => ({
  eventId: String(r.event_id),
  companyId: String(r.company_id),
  accountId: String(r.account_id),
  clientSupplied: Boolean(r.client_supplied),
  type: String(r.type),
  quantity: num(r.quantity),
  costAmount: num(r.cost_amount),
  denomination: String(r.denomination),
  priceModel: strOrNull(r.price_model) as EventRow['priceModel'],
  metadata: jsonOrNull(r.metadata),
  state: String(r.state) as EventState,
  contentHash: strOrNull(r.content_hash),
  occurredAtMs: num(r.occurred_at),
  createdAtMs: num(r.created_at),
  updatedAtMs: num(r.updated_at),
  expiresAtMs: numOrNull(r.expires_at),
  heldFrom: decodeAllocations(r.held_from),
  leaseId: strOrNull(r.lease_id),
});

/** Each event once, in the order first named. */
export function distinctEventKeys(keys: EventKey[]): EventKey[] {
  return [...new Map(keys.map((k) => [`${k.companyId}\u0000${k.eventId}`, k])).values()];
}

export const EVENT_COLUMNS =
  'company_id, event_id, account_id, client_supplied, type, quantity, cost_amount, denomination, metadata, ' +
  'state, content_hash, occurred_at, created_at, updated_at, expires_at, price_model, held_from, lease_id';
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
    e.priceModel,
    encodeAllocations(e.heldFrom),
    e.leaseId,
  );
}

export abstract class EventsSql extends SqlCore implements EventsTx {
  async listPendingHolds(keys: BalanceKey[]) {
    const out: { accountId: string; denomination: string; costAmount: number; heldFrom: Allocation[] | null }[] = [];
    for (const k of keys) {
      const rows = await this.db.all(
        "SELECT cost_amount, held_from FROM events WHERE account_id = ? AND denomination = ? AND state = 'pending'",
        [k.accountId, k.denomination],
      );
      for (const r of rows)
        out.push({ ...k, costAmount: num(r.cost_amount), heldFrom: decodeAllocations(r.held_from) });
      // Open leases hold like pending events (contract "Leases"): their remaining, per grant as drawn so far.
      const leases = await this.db.all(
        'SELECT amount - used - released AS held, held_from FROM leases WHERE account_id = ? AND denomination = ? ' +
          "AND status = 'open'",
        [k.accountId, k.denomination],
      );
      for (const r of leases) out.push({ ...k, costAmount: num(r.held), heldFrom: decodeAllocations(r.held_from) });
    }
    return out;
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
      // `occurred_at <= ?` bounds the index range; the OR alone would scan from the newest event.
      where.push('occurred_at <= ? AND (occurred_at < ? OR seq < ?)');
      params.push(at.occurred_at, at.occurred_at, at.seq);
    }
    const rows = await this.db.all(
      `SELECT * FROM events WHERE ${where.join(' AND ')} ORDER BY occurred_at DESC, seq DESC LIMIT ?`,
      [...params, page.limit + 1],
    );
    return { rows: rows.slice(0, page.limit).map(toEvent), hasMore: rows.length > page.limit };
  }

  /** The dialect's: a primary-key probe each (SQLite), `FOR UPDATE` in key order (PostgreSQL). */
  abstract lockEvents(keys: EventKey[]): Promise<EventRow[]>;
}
