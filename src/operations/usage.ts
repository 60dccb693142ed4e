/**
 * Usage read back (contract "Usage"): event lists and usage by window. Both read committed data
 * written by the same transaction that recorded or settled the events, so an answered request is
 * visible at once, on every process sharing the database. Usage comes from the hourly rollups
 * (store: usage_hours, usage_company_hours), never from scanning events.
 */
import { fail } from '../domain/outcome.js';
import { parseRfc3339 } from '../domain/time.js';
import {
  aggregateUsage,
  pageUsage,
  parseUsageQuery,
  type UsageGroup,
  type UsageGroupPosition,
  type UsageQueryInput,
} from '../domain/usage.js';
import type { EventFilter, EventRow, EventStateValue, Page, PageResult } from '../store/types.js';
import { expireDueHoldsOfAccount } from './accounts.js';
import type { Deps } from './deps.js';
import { expireHolds } from './holds.js';

/** Most hourly rollup rows one usage answer may add up (a company grouped by account over a long period). */
export const USAGE_ROWS_MAX = 200_000;

export interface EventListInput {
  account_id?: string;
  type?: string;
  state?: EventStateValue;
  denomination?: string;
  from?: string;
  to?: string;
}

function instant(text: string | undefined, param: 'from' | 'to'): number | undefined {
  if (text === undefined) return undefined;
  const ms = parseRfc3339(text);
  if (ms === null) fail('invalid_timestamp', `${param} must be an RFC 3339 date-time`, param);
  return ms;
}

async function requireAccount(deps: Deps, companyId: string, accountId: string): Promise<void> {
  if (!(await deps.store.read((tx) => tx.findAccount(companyId, accountId))))
    fail('not_found', `no such account: ${accountId}`, 'account_id');
}

/**
 * Events newest first, of the company or of one account. Holds that expired are cancelled first
 * (as every read does), so a listed pending event is still holding.
 */
export async function listEvents(
  deps: Deps,
  companyId: string,
  input: EventListInput,
  page: Page,
): Promise<PageResult<EventRow>> {
  const filter: EventFilter = {};
  if (input.account_id !== undefined) {
    await requireAccount(deps, companyId, input.account_id);
    filter.accountId = input.account_id;
  }
  if (input.type !== undefined) filter.type = input.type;
  if (input.state !== undefined) filter.state = input.state;
  if (input.denomination !== undefined) filter.denomination = input.denomination;
  const fromMs = instant(input.from, 'from');
  const toMs = instant(input.to, 'to');
  if (fromMs !== undefined) filter.fromMs = fromMs;
  if (toMs !== undefined) filter.toMs = toMs;
  if (input.state === undefined || input.state === 'pending') {
    if (filter.accountId !== undefined) await expireDueHoldsOfAccount(deps, companyId, filter.accountId);
    else {
      const now = deps.clock.now();
      if ((await deps.store.read((tx) => tx.findExpiredHolds(now, 1))).length > 0)
        await deps.store.write((tx) => expireHolds(deps.ledger.begin(tx, now)));
    }
  }
  const result = await deps.store.read((tx) => tx.listEvents(companyId, filter, page));
  return result ?? fail('unknown_cursor', 'starting_after names no item of this list', 'starting_after');
}

export interface UsageInput extends UsageQueryInput {
  account_id?: string;
  /** Comma-separated event types to count (default: all). */
  type?: string;
  /** Comma-separated denominations to count (default: all). */
  denomination?: string;
}

const listOf = (csv: string | undefined): string[] | undefined =>
  csv === undefined ? undefined : [...new Set(csv.split(',').map((s) => s.trim()))];

/** Usage of the company (or of one account), by window and group, paged. */
export async function getUsage(
  deps: Deps,
  companyId: string,
  input: UsageInput,
  page: { limit: number; startingAfter?: string | undefined },
): Promise<{ rows: UsageGroup[]; hasMore: boolean }> {
  const earliestMs = deps.clock.now() - deps.usage.retentionMs;
  const parsed = parseUsageQuery(input, earliestMs);
  if (!parsed.ok) fail(parsed.reason, parsed.message, parsed.param);
  const q = parsed.value;
  if (input.account_id !== undefined) await requireAccount(deps, companyId, input.account_id);
  const types = listOf(input.type);
  const denominations = listOf(input.denomination);
  const rows = await deps.store.read((tx) =>
    tx.listUsage(
      {
        companyId,
        ...(input.account_id !== undefined ? { accountId: input.account_id } : {}),
        byAccount: q.groupBy.accountId,
        fromMs: q.fromMs,
        toMs: q.toMs,
        ...(types ? { types } : {}),
        ...(denominations ? { denominations } : {}),
      },
      USAGE_ROWS_MAX + 1,
    ),
  );
  if (rows.length > USAGE_ROWS_MAX) {
    fail(
      'usage_query_too_large',
      `the query spans more than ${USAGE_ROWS_MAX} hourly usage rows: filter by account_id, type or ` +
        'denomination, or ask for a shorter period',
    );
  }
  const groups = aggregateUsage(rows, q);
  if (!groups.ok) fail(groups.reason, groups.message, groups.param);
  const after = page.startingAfter === undefined ? undefined : decodeUsageCursor(page.startingAfter);
  return pageUsage(groups.value, after, page.limit);
}

/** A usage page's cursor: where its last group stands in the order (opaque to clients). */
export function encodeUsageCursor(g: UsageGroupPosition): string {
  return Buffer.from(
    JSON.stringify([g.windowStartMs, g.type ?? null, g.denomination ?? null, g.accountId ?? null]),
  ).toString('base64url');
}

function decodeUsageCursor(cursor: string): UsageGroupPosition {
  try {
    const [w, type, denomination, accountId] = JSON.parse(
      Buffer.from(cursor, 'base64url').toString('utf8'),
    ) as unknown[];
    if (typeof w !== 'number' || !Number.isSafeInteger(w)) throw new Error('window');
    const position: UsageGroupPosition = { windowStartMs: w };
    if (typeof type === 'string') position.type = type;
    if (typeof denomination === 'string') position.denomination = denomination;
    if (typeof accountId === 'string') position.accountId = accountId;
    return position;
  } catch {
    fail('unknown_cursor', 'starting_after is not a cursor of this list', 'starting_after');
  }
}
