/**
 * Usage read back (contract "Usage"): which windows a query asks for, and how hourly rollup rows
 * add up into them. Pure: the rows come from the store's rollup (per company, account,
 * denomination, type and UTC hour: event count, exact quantity sum, integer cost sum).
 *
 * Decisions (also in the OpenAPI document):
 * - `from` and `to` must fall on whole UTC hours, the resolution of the rollup, so that every
 *   answer is exact (Stripe's meter summaries ask the same of their window boundaries).
 * - Windows are UTC calendar periods (hour, day, month) cut to `[from, to)`, or one window
 *   (`all`); at most USAGE_WINDOWS_MAX of them.
 * - Groups are ordered by window start, then type, denomination, account id (code-unit order).
 */
import {
  DECIMAL_ZERO,
  addDecimal,
  decimalFromNumber,
  formatDecimal,
  parseDecimal,
  type Decimal,
} from '../lib/decimal.js';
import { failure, type Outcome } from './outcome.js';
import { HOUR_MS, dayStart, monthStart, nextMonthStart, parseRfc3339 } from './time.js';

export const USAGE_WINDOWS = ['hour', 'day', 'month', 'all'] as const;
export type UsageWindow = (typeof USAGE_WINDOWS)[number];
export const USAGE_GROUP_KEYS = ['type', 'denomination', 'account_id'] as const;
/** Most windows one usage request may span. */
export const USAGE_WINDOWS_MAX = 1000;
/** Most hourly rollup rows one usage answer may add up (a company grouped by account over a long period). */
export const USAGE_ROWS_MAX = 200_000;

export interface UsageQueryInput {
  from: string;
  to: string;
  window?: string;
  group_by?: string;
}

export interface UsageQuery {
  fromMs: number;
  toMs: number;
  window: UsageWindow;
  groupBy: { type: boolean; denomination: boolean; accountId: boolean };
}

/**
 * Checks a usage query. `earliestMs`: the oldest instant the rollups still hold (their retention);
 * a `from` before it cannot be answered exactly.
 */
export function parseUsageQuery(input: UsageQueryInput, earliestMs: number): Outcome<UsageQuery> {
  const fromMs = parseRfc3339(input.from);
  if (fromMs === null) return failure('invalid_timestamp', 'from must be an RFC 3339 date-time', 'from');
  const toMs = parseRfc3339(input.to);
  if (toMs === null) return failure('invalid_timestamp', 'to must be an RFC 3339 date-time', 'to');
  if (fromMs >= toMs) return failure('from_must_be_before_to', 'from must be before to', 'from');
  for (const [name, ms] of [
    ['from', fromMs],
    ['to', toMs],
  ] as const) {
    if (ms % HOUR_MS !== 0)
      return failure('time_not_on_the_hour', `${name} must be a whole UTC hour (usage is kept per hour)`, name);
  }
  const window = (input.window ?? 'day') as UsageWindow;
  if (!USAGE_WINDOWS.includes(window))
    return failure('unknown_window', `window must be one of ${USAGE_WINDOWS.join(', ')}`, 'window');
  const keys = (input.group_by ?? 'type,denomination').split(',').map((k) => k.trim());
  for (const k of keys) {
    if (!(USAGE_GROUP_KEYS as readonly string[]).includes(k))
      return failure(
        'unknown_group_by',
        `group_by takes a comma-separated subset of ${USAGE_GROUP_KEYS.join(', ')}`,
        'group_by',
      );
  }
  if (new Set(keys).size !== keys.length) return failure('unknown_group_by', 'group_by names a key twice', 'group_by');
  if (fromMs < earliestMs) {
    return failure(
      'usage_retention_exceeded',
      `usage is kept for queries from ${new Date(earliestMs).toISOString()} on; from is older`,
      'from',
    );
  }
  const q: UsageQuery = {
    fromMs,
    toMs,
    window,
    groupBy: {
      type: keys.includes('type'),
      denomination: keys.includes('denomination'),
      accountId: keys.includes('account_id'),
    },
  };
  if (windowsOf(q, USAGE_WINDOWS_MAX + 1).length > USAGE_WINDOWS_MAX) {
    return failure(
      'too_many_windows',
      `at most ${USAGE_WINDOWS_MAX} windows per request: narrow from/to or choose a longer window`,
      'window',
    );
  }
  return { ok: true, value: q };
}

/** The start of the window holding instant `ms` (within [from, to)). */
export function windowStartOf(q: UsageQuery, ms: number): number {
  switch (q.window) {
    case 'hour':
      return Math.floor(ms / HOUR_MS) * HOUR_MS;
    case 'day':
      return Math.max(dayStart(ms), q.fromMs);
    case 'month':
      return Math.max(monthStart(ms), q.fromMs);
    case 'all':
      return q.fromMs;
  }
}

/** The end of the window starting at `startMs`: the next period boundary, cut to `to`. */
export function windowEndOf(q: UsageQuery, startMs: number): number {
  switch (q.window) {
    case 'hour':
      return Math.min(startMs + HOUR_MS, q.toMs);
    case 'day':
      return Math.min(dayStart(startMs) + 24 * HOUR_MS, q.toMs);
    case 'month':
      return Math.min(nextMonthStart(startMs), q.toMs);
    case 'all':
      return q.toMs;
  }
}

/** The query's windows in order, at most `max` of them. */
export function windowsOf(q: UsageQuery, max = USAGE_WINDOWS_MAX): { startMs: number; endMs: number }[] {
  const out: { startMs: number; endMs: number }[] = [];
  for (let start = q.fromMs; start < q.toMs && out.length < max; ) {
    const end = windowEndOf(q, start);
    out.push({ startMs: start, endMs: end });
    start = end;
  }
  return out;
}

/**
 * Usage of one account, denomination and type in one UTC hour: complete events, the exact decimal
 * sum of their quantities, the sum of their costs. As a posting writes it, an addition to the
 * rollup (usageOf); as read, the rollup row (the company-wide rollup has no account: `accountId` null).
 */
export interface UsageRow {
  companyId: string;
  accountId: string | null;
  denomination: string;
  type: string;
  hourMs: number;
  events: number;
  /** The exact decimal sum of the events' quantities. */
  quantity: string;
  cost: number;
}

/** One rollup row as a query groups it: the complete events of one group in one UTC hour. */
export type UsageHour = Omit<UsageRow, 'companyId'>;

export interface UsageGroup {
  windowStartMs: number;
  windowEndMs: number;
  type?: string;
  denomination?: string;
  accountId?: string;
  events: number;
  quantity: string;
  cost: number;
}

interface Sum {
  group: Omit<UsageGroup, 'events' | 'quantity' | 'cost'>;
  events: number;
  quantity: Decimal;
  cost: bigint;
}

/**
 * Adds hourly rows (any order, any hours) into the query's windows and groups, exactly: counts
 * and costs as integers, quantities as decimals. Rows outside [from, to) are ignored. Returns
 * the groups with usage, ordered by window start, then type, denomination, account id.
 */
export function aggregateUsage(rows: Iterable<UsageHour>, q: UsageQuery): Outcome<UsageGroup[]> {
  const sums = new Map<string, Sum>();
  for (const r of rows) {
    if (r.hourMs < q.fromMs || r.hourMs >= q.toMs) continue;
    const start = windowStartOf(q, r.hourMs);
    const group: Sum['group'] = { windowStartMs: start, windowEndMs: windowEndOf(q, start) };
    if (q.groupBy.type) group.type = r.type;
    if (q.groupBy.denomination) group.denomination = r.denomination;
    if (q.groupBy.accountId) group.accountId = r.accountId ?? '';
    const key = `${start}\u0000${group.type ?? ''}\u0000${group.denomination ?? ''}\u0000${group.accountId ?? ''}`;
    let s = sums.get(key);
    if (!s) {
      s = { group, events: 0, quantity: DECIMAL_ZERO, cost: 0n };
      sums.set(key, s);
    }
    const quantity = parseDecimal(r.quantity);
    if (quantity === null) throw new Error(`usage rollup: quantity ${r.quantity} is not a decimal`);
    s.events += r.events;
    s.quantity = addDecimal(s.quantity, quantity);
    s.cost += BigInt(r.cost);
  }
  const out: UsageGroup[] = [];
  for (const s of sums.values()) {
    if (s.cost > BigInt(Number.MAX_SAFE_INTEGER) || !Number.isSafeInteger(s.events)) {
      return failure(
        'usage_sum_out_of_range',
        'a sum exceeds the exact integer range: ask for shorter windows',
        'window',
      );
    }
    out.push({ ...s.group, events: s.events, quantity: formatDecimal(s.quantity), cost: Number(s.cost) });
  }
  out.sort(compareGroups);
  return { ok: true, value: out };
}

const cmp = (a: string | undefined, b: string | undefined): number =>
  (a ?? '') < (b ?? '') ? -1 : (a ?? '') > (b ?? '') ? 1 : 0;

/** Window start, then type, denomination, account id. */
export function compareGroups(a: UsageGroupPosition, b: UsageGroupPosition): number {
  return (
    a.windowStartMs - b.windowStartMs ||
    cmp(a.type, b.type) ||
    cmp(a.denomination, b.denomination) ||
    cmp(a.accountId, b.accountId)
  );
}

/** Where a group stands in the order: what a page cursor remembers. */
export type UsageGroupPosition = Pick<UsageGroup, 'windowStartMs' | 'type' | 'denomination' | 'accountId'>;

/** The groups after `after` (exclusive), at most `limit`, and whether more follow. */
export function pageUsage(
  groups: UsageGroup[],
  after: UsageGroupPosition | undefined,
  limit: number,
): { rows: UsageGroup[]; hasMore: boolean } {
  const start = after === undefined ? 0 : groups.findIndex((g) => compareGroups(g, after) > 0);
  const from = start === -1 ? groups.length : start;
  return { rows: groups.slice(from, from + limit), hasMore: from + limit < groups.length };
}

/** An event as the rollup counts it. */
export interface CountedEvent {
  companyId: string;
  accountId: string;
  denomination: string;
  type: string;
  occurredAtMs: number;
  quantity: number;
  costAmount: number;
}

/**
 * The rollup additions of events that became complete (recorded complete, or settled to
 * complete at their final cost): one per (account, hour, denomination, type), quantities summed
 * exactly, in key order (the order the rollup's rows are locked in).
 */
export function usageOf(events: Iterable<CountedEvent>): UsageRow[] {
  // Whole quantities (the usual case) add as numbers while the sum stays exact; only fractions
  // (and sums past 2^53) go through the decimal code. A request's events mostly share one key: the
  // sum of the event before is compared field by field first, and the key text built on a change.
  type Sum = { row: UsageRow; whole: number; exact: Decimal };
  const sums = new Map<string, Sum>();
  let s: Sum | undefined;
  for (const e of events) {
    const hourMs = Math.floor(e.occurredAtMs / HOUR_MS) * HOUR_MS;
    if (
      s === undefined ||
      s.row.accountId !== e.accountId ||
      s.row.hourMs !== hourMs ||
      s.row.denomination !== e.denomination ||
      s.row.type !== e.type
    ) {
      const key = `${e.accountId}\u0000${hourMs}\u0000${e.denomination}\u0000${e.type}`;
      s = sums.get(key);
      if (!s) {
        const { companyId, accountId, denomination, type } = e;
        const row = { companyId, accountId, denomination, type, hourMs, events: 0, quantity: '', cost: 0 };
        s = { row, whole: 0, exact: DECIMAL_ZERO };
        sums.set(key, s);
      }
    }
    s.row.events += 1;
    s.row.cost += e.costAmount;
    if (Number.isSafeInteger(e.quantity) && e.quantity >= 0 && Number.isSafeInteger(s.whole + e.quantity)) {
      s.whole += e.quantity;
      continue;
    }
    const quantity = decimalFromNumber(e.quantity);
    if (quantity === null) throw new Error(`usage: quantity ${e.quantity} is not a finite number ≥ 0`);
    s.exact = addDecimal(s.exact, quantity);
  }
  const out = [...sums.values()].map((s) => ({
    ...s.row,
    quantity: formatDecimal(addDecimal(s.exact, { coef: BigInt(s.whole), scale: 0 })),
  }));
  return out.sort(
    (a, b) =>
      cmp(a.accountId ?? '', b.accountId ?? '') ||
      a.hourMs - b.hourMs ||
      cmp(a.denomination, b.denomination) ||
      cmp(a.type, b.type),
  );
}
