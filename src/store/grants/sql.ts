/**
 * Credit grants: the lots codec (a balance's live grants in its row), the row mapper and the SQL
 * both databases share (mixed into SqlTx, sql-base.ts).
 */
import type { Page } from '../common.js';
import { json, jsonOrNull, num, numOrNull, strOrNull, type SqlRow } from '../sql-core.js';
import { SqlCore } from '../sql-core.js';
import type {
  Allocation,
  GrantCategory,
  GrantFilter,
  Grant,
  GrantRow,
  GrantSource,
  GrantStatus,
  GrantsTx,
} from './types.js';

/** `expiry_order` of a grant that never expires (migration 14). */
export const NEVER_EXPIRES = Number.MAX_SAFE_INTEGER;

/** A lot as stored: see encodeLots. `remaining` is null in the lot the balance's amount gives it. */
type EncodedLot = [
  string,
  number,
  number | null,
  number,
  number,
  GrantCategory,
  GrantSource,
  number,
  number | null,
  number | null,
  0 | 1,
  0 | 1,
];

/**
 * The lot whose `remaining` the stored form leaves out, or -1: the first open grant with unheld units
 * (lots are kept in drawing order: the grant the next event draws from), when the balance's amount
 * gives its remaining exactly (amount − the others' remaining; no debt). A group of events that all
 * draw from that grant changes only the balance's amount, and the row's grants text stays as it is:
 * PostgreSQL writes and logs a balance row about twice as wide otherwise, on every group commit.
 */
export function derivedLot(lots: readonly Grant[], amount: number | undefined): number {
  if (amount === undefined) return -1;
  let head = -1;
  let others = 0;
  for (let i = 0; i < lots.length; i++) {
    const g = lots[i]!;
    if (head === -1 && g.opened && !g.closed && g.remaining > g.held) head = i;
    else others += g.remaining;
  }
  return head !== -1 && amount - others === lots[head]!.remaining ? head : -1;
}

/**
 * A balance's live grants as stored in `balances.grants`: a JSON array of arrays, in the order
 * [grant_id, amount, remaining, held, priority, category, source, effective_at, expires_at,
 * voided_at, opened, closed] (migration 14 writes the same layout). Given the balance's amount,
 * the drawing head's `remaining` is written as null: decodeStoredLots gives it back from the amount.
 */
export function encodeLots(lots: readonly Grant[], amount?: number): string {
  // Written once per balance per group commit: built as text, about three times faster than
  // JSON.stringify of the same arrays. Ids and codes are plain ([\w.:-]); any other id is escaped.
  const derived = derivedLot(lots, amount);
  let s = '[';
  for (let i = 0; i < lots.length; i++) {
    const g = lots[i]!;
    const id = PLAIN_ID.test(g.grantId) ? g.grantId : JSON.stringify(g.grantId).slice(1, -1);
    s +=
      `${i === 0 ? '' : ','}["${id}",${g.amount},${i === derived ? null : g.remaining},${g.held},${g.priority},` +
      `"${g.category}","${g.source}",${g.effectiveAtMs},${g.expiresAtMs},${g.voidedAtMs},${g.opened ? 1 : 0},` +
      `${g.closed ? 1 : 0}]`;
  }
  return `${s}]`;
}

const PLAIN_ID = /^[\w.:-]+$/;

/** A balance row's lots as decoded, and the lot its text stores without a remaining (-1: none). */
export interface DecodedLots {
  lots: Grant[];
  head: number;
}

/**
 * The lots of a balance row's `grants` text; `amount`, the row's, gives the lot stored without its
 * remaining, whose place `head` tells (-1: none).
 */
export function decodeStoredLots(text: unknown, amount: number): DecodedLots {
  if (text === null || text === undefined || text === '[]') return { lots: [], head: -1 };
  let others = 0;
  let head = -1;
  const lots = (JSON.parse(String(text)) as EncodedLot[]).map((e, i) => {
    const lot: Grant = {
      grantId: e[0],
      amount: e[1],
      remaining: e[2] ?? 0,
      held: e[3],
      priority: e[4],
      category: e[5],
      source: e[6],
      effectiveAtMs: e[7],
      expiresAtMs: e[8],
      voidedAtMs: e[9],
      opened: e[10] === 1,
      closed: e[11] === 1,
    };
    if (e[2] === null) head = i;
    else others += lot.remaining;
    return lot;
  });
  if (head !== -1) lots[head]!.remaining = amount - others;
  return { lots, head };
}

/**
 * Whether `after`, on a balance of `amount`, is stored as the same text as `before`, whose text
 * left out the remaining of lot `head` (decodeStoredLots): the same lots field by field, but for
 * the remaining of that lot, which both leave out. The same answer as comparing encodeLots' text,
 * without building it: most group commits keep every balance's text (storedLotsOf).
 */
export function storesSame(before: readonly Grant[], head: number, after: readonly Grant[], amount: number): boolean {
  if (before.length !== after.length) return false;
  for (let i = 0; i < after.length; i++) {
    const a = after[i]!;
    const b = before[i]!;
    if (a === b) continue;
    if (
      a.grantId !== b.grantId ||
      (i !== head && a.remaining !== b.remaining) ||
      a.held !== b.held ||
      a.amount !== b.amount ||
      a.priority !== b.priority ||
      a.category !== b.category ||
      a.source !== b.source ||
      a.effectiveAtMs !== b.effectiveAtMs ||
      a.expiresAtMs !== b.expiresAtMs ||
      a.voidedAtMs !== b.voidedAtMs ||
      a.opened !== b.opened ||
      a.closed !== b.closed
    )
      return false;
  }
  return derivedLot(after, amount) === head;
}

/**
 * Allocations as stored (`transactions.drawn_from`, `events.held_from`): `[[grant_id, amount], …]`;
 * given `whole` (a transaction's units), an allocation of all of them from one grant is stored as the
 * grant's id alone. Most usage transactions draw from one grant: the id is shorter, and the same for
 * every event of a group on one balance (on PostgreSQL, sent once for the group).
 */
export function encodeAllocations(a: readonly Allocation[] | null, whole?: number): string | null {
  if (a === null) return null;
  if (a.length === 1 && a[0]!.amount === whole && PLAIN_ID.test(a[0]!.grantId)) return a[0]!.grantId;
  // One per transaction row on the ingest path: built as text (ids are plain, as in encodeLots).
  let s = '[';
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const id = PLAIN_ID.test(x.grantId) ? x.grantId : JSON.stringify(x.grantId).slice(1, -1);
    s += `${i === 0 ? '' : ','}["${id}",${x.amount}]`;
  }
  return `${s}]`;
}

/** What encodeAllocations stored; `whole`, the same as it was given. */
export function decodeAllocations(text: unknown, whole?: number): Allocation[] | null {
  if (text === null || text === undefined) return null;
  const t = String(text);
  if (!t.startsWith('[')) {
    if (whole === undefined) throw new Error(`allocations "${t}" stored without their units`);
    return [{ grantId: t, amount: whole }];
  }
  return (JSON.parse(t) as [string, number][]).map(([grantId, amount]) => ({ grantId, amount }));
}

export const toGrant = (r: SqlRow): GrantRow => ({
  grantId: String(r.grant_id),
  companyId: String(r.company_id),
  accountId: String(r.account_id),
  denomination: String(r.denomination),
  amount: num(r.amount),
  remaining: num(r.remaining),
  held: num(r.held),
  priority: num(r.priority),
  category: String(r.category) as GrantCategory,
  costBasis: strOrNull(r.cost_basis),
  name: strOrNull(r.name),
  metadata: jsonOrNull(r.metadata),
  source: String(r.source) as GrantSource,
  effectiveAtMs: num(r.effective_at),
  expiresAtMs: numOrNull(r.expires_at),
  createdAtMs: num(r.created_at),
  voidedAtMs: numOrNull(r.voided_at),
});

/**
 * The SQL condition of each status at an instant (one `?`: now, as often as `?` appears). A live
 * grant's row keeps `remaining` ≥ 1 until it is finished (then the final figure), so `remaining = 0`
 * is "used up" exactly; the precedence is the domain's: voided > expired > scheduled > depleted > active.
 */
const STATUS_SQL: Record<GrantStatus, string> = {
  voided: 'voided_at IS NOT NULL',
  expired: 'voided_at IS NULL AND expiry_order <= ?',
  scheduled: 'voided_at IS NULL AND expiry_order > ? AND effective_at > ?',
  depleted: 'voided_at IS NULL AND expiry_order > ? AND effective_at <= ? AND remaining = 0',
  active: 'voided_at IS NULL AND expiry_order > ? AND effective_at <= ? AND remaining > 0',
};

function statusCondition(statuses: readonly GrantStatus[], nowMs: number): [string, unknown[]] {
  const parts: string[] = [];
  const params: unknown[] = [];
  for (const s of statuses) {
    const sql = STATUS_SQL[s];
    parts.push(`(${sql})`);
    for (let i = 0; i < sql.split('?').length - 1; i++) params.push(nowMs);
  }
  return [parts.length === 0 ? '1 = 0' : `(${parts.join(' OR ')})`, params];
}

export const GRANT_COLUMNS =
  'grant_id, company_id, account_id, denomination, amount, remaining, held, priority, category, cost_basis, name, ' +
  'metadata, source, effective_at, expires_at, expiry_order, created_at, voided_at';

/** A grant row's values, in GRANT_COLUMNS order. */
export function grantParams(g: GrantRow): unknown[] {
  return [
    g.grantId,
    g.companyId,
    g.accountId,
    g.denomination,
    g.amount,
    g.remaining,
    g.held,
    g.priority,
    g.category,
    g.costBasis,
    g.name,
    json(g.metadata),
    g.source,
    g.effectiveAtMs,
    g.expiresAtMs,
    g.expiresAtMs ?? NEVER_EXPIRES,
    g.createdAtMs,
    g.voidedAtMs,
  ];
}

/** The drawing order in SQL (domain/grants.ts compareDrawingOrder). */
const DRAWING_ORDER =
  "priority, expiry_order, CASE category WHEN 'promotional' THEN 0 ELSE 1 END, effective_at, grant_id";

export class GrantsSql extends SqlCore implements GrantsTx {
  async findGrant(companyId: string, grantId: string) {
    const r = await this.one('SELECT * FROM grants WHERE grant_id = ? AND company_id = ?', [grantId, companyId]);
    return r && toGrant(r);
  }

  async listGrantsOfBalance(accountId: string, denomination: string, statuses: readonly GrantStatus[], nowMs: number) {
    const [cond, params] = statusCondition(statuses, nowMs);
    const rows = await this.db.all(
      `SELECT * FROM grants WHERE account_id = ? AND denomination = ? AND ${cond} ORDER BY ${DRAWING_ORDER}`,
      [accountId, denomination, ...params],
    );
    return rows.map(toGrant);
  }

  async listGrants(companyId: string, filter: GrantFilter, page: Page) {
    const where = ['company_id = ?'];
    const params: unknown[] = [companyId];
    if (filter.accountId !== undefined) {
      where.push('account_id = ?');
      params.push(filter.accountId);
    }
    if (filter.denomination !== undefined) {
      where.push('denomination = ?');
      params.push(filter.denomination);
    }
    if (filter.category !== undefined) {
      where.push('category = ?');
      params.push(filter.category);
    }
    if (filter.expiresBeforeMs !== undefined) {
      where.push('expiry_order < ?');
      params.push(filter.expiresBeforeMs);
    }
    const [cond, statusParams] = statusCondition(filter.statuses, filter.nowMs);
    where.push(cond);
    params.push(...statusParams);
    if (page.startingAfter !== undefined) {
      const cursor = await this.one('SELECT expiry_order FROM grants WHERE grant_id = ? AND company_id = ?', [
        page.startingAfter,
        companyId,
      ]);
      if (!cursor) return undefined;
      // The first term bounds the index range (the OR alone would scan from the start of the company's grants).
      where.push('expiry_order >= ? AND (expiry_order > ? OR grant_id > ?)');
      params.push(num(cursor.expiry_order), num(cursor.expiry_order), page.startingAfter);
    }
    const rows = await this.db.all(
      `SELECT * FROM grants WHERE ${where.join(' AND ')} ORDER BY expiry_order, grant_id LIMIT ?`,
      [...params, page.limit + 1],
    );
    return { rows: rows.slice(0, page.limit).map(toGrant), hasMore: rows.length > page.limit };
  }

  async describeGrant(grantId: string, name: string | null, metadata: Record<string, unknown> | null) {
    await this.db.run('UPDATE grants SET name = ?, metadata = ? WHERE grant_id = ?', [name, json(metadata), grantId]);
  }
}
