/**
 * A view: balances as they are at an instant, read from committed data and projected in memory,
 * writing nothing. What is due (grant starts and expiries, holds that outlived their hour) is
 * applied by the very entries a posting would write (due.ts, entries.ts), so a view equals what a
 * posting opened at that instant finds: balance reads, grant lists and the pre-flight check use it.
 */
import type { Lots } from '../domain/grants.js';
import type { BalanceKey, BalanceRow } from '../store/types.js';
import { balanceKey } from '../lib/keys.js';
import { dueEntries, expiredOf, grantsDue, keysOf, noneExpired } from './due.js';
import { computeEntries, rowWith, spendAfter } from './entries.js';
import type { LedgerReadPort } from './port.js';

/** Balances by balanceKey. */
export type BalanceMap = ReadonlyMap<string, BalanceRow>;

/**
 * Rows as they are at an instant, and the lots of those a view changed: with the grants finished at
 * that instant still in them, at their final figures (a write would put those in the grants' rows).
 */
export interface Projection {
  rows: Map<string, BalanceRow>;
  lots: Map<string, Lots>;
}

/** These rows as they are at `nowMs`: what is due applied in memory (rows with nothing due are returned as read). */
export async function project(port: LedgerReadPort, rows: readonly BalanceRow[], nowMs: number): Promise<Projection> {
  const byKey = new Map(rows.map((b) => [balanceKey(b.accountId, b.denomination), b]));
  const expired = await expiredOf(port, rows, nowMs);
  if (noneExpired(expired) && !rows.some((b) => grantsDue(b, nowMs))) return { rows: byKey, lots: new Map() };
  const computed = computeEntries(byKey, dueEntries(rows, expired.events, nowMs, expired.leases), nowMs, () => '');
  for (const [key, lots] of computed.lots) {
    const b = byKey.get(key)!;
    byKey.set(key, rowWith(b, lots, spendAfter(b.spend, computed.spend.get(key), nowMs)));
  }
  return { rows: byKey, lots: computed.lots };
}

/** The balances of `keys` at `nowMs` (each once; missing ones absent). */
export async function viewBalances(port: LedgerReadPort, keys: BalanceKey[], nowMs: number): Promise<BalanceMap> {
  return keys.length === 0 ? new Map() : (await project(port, await port.readBalances(keysOf(keys)), nowMs)).rows;
}

/**
 * The grants of these accounts' balances at `nowMs`, by balanceKey: each balance's lots, with the
 * grants that finished at that instant at their final figures (grant reads overlay their rows with them).
 */
export async function viewGrants(
  port: LedgerReadPort,
  accountIds: string[],
  nowMs: number,
): Promise<Map<string, Pick<Lots, 'grants'>>> {
  if (accountIds.length === 0) return new Map();
  const rows = await port.listBalancesOfAccounts(accountIds);
  const { lots } = await project(port, rows, nowMs);
  const out = new Map<string, Pick<Lots, 'grants'>>();
  for (const b of rows) {
    const key = balanceKey(b.accountId, b.denomination);
    out.set(key, lots.get(key) ?? b);
  }
  return out;
}

/** Every balance of these accounts at `nowMs`, by account then denomination. */
export async function viewAccounts(port: LedgerReadPort, accountIds: string[], nowMs: number): Promise<BalanceRow[]> {
  if (accountIds.length === 0) return [];
  const rows = await port.listBalancesOfAccounts(accountIds);
  const now = (await project(port, rows, nowMs)).rows;
  return rows.map((b) => now.get(balanceKey(b.accountId, b.denomination))!);
}
