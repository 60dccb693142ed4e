/**
 * Usage read back (contract "Usage"): usage by window and group. It reads the hourly rollups
 * (store: usage_hours, usage_company_hours), never scanning events, written by the same transaction
 * that recorded or settled the events: an answered request is visible at once, on every process
 * sharing the database. (Event lists are the events' own: operations/events.ts.)
 */
import { fail } from '../domain/outcome.js';
import {
  aggregateUsage,
  pageUsage,
  parseUsageQuery,
  type UsageGroup,
  type UsageGroupPosition,
  type UsageQueryInput,
  USAGE_ROWS_MAX,
} from '../domain/usage.js';
import type { Deps } from './deps.js';
import { ownedAccount } from './lookups.js';

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
  if (input.account_id !== undefined) await deps.store.read((tx) => ownedAccount(tx, companyId, input.account_id!));
  const types = listOf(input.type);
  const denominations = listOf(input.denomination);
  const rows = await deps.store.read((tx) =>
    tx.usage.listUsage(
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
