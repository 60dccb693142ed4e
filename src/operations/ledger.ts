/**
 * The one way a balance's amount changes: the net delta applied atomically
 * (`amount = amount + Δ`) to a locked row, and one appended transaction per change whose
 * `balance_after` chains from the previous one.
 */
import { balanceKey } from '../domain/events.js';
import { newId } from '../lib/ids.js';
import type { BalanceRow, EventRow, TransactionKind, TransactionRow, Tx } from '../store/types.js';
import { runBalanceEffects, type BalanceChange } from './balance-effects.js';

export interface PostedEntry {
  accountId: string;
  denomination: string;
  amount: number;
  kind: TransactionKind;
  eventId?: string | null;
  reason?: string | null;
}

export interface NetDelta {
  amount: number;
  pending: number;
}

export async function lockBalanceMap(
  tx: Tx,
  keys: Iterable<{ accountId: string; denomination: string }>,
): Promise<Map<string, BalanceRow>> {
  const unique = new Map<string, { accountId: string; denomination: string }>();
  for (const k of keys) unique.set(balanceKey(k.accountId, k.denomination), k);
  const sorted = [...unique.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, k]) => k);
  const rows = await tx.lockBalances(sorted);
  return new Map(rows.map((r) => [balanceKey(r.accountId, r.denomination), r]));
}

/**
 * Applies `deltas` (net amount and pending change per balance key, balances already locked
 * and given in `before`) and appends `entries` in order, writing `events` in the same step (the
 * ingest path's events: on PostgreSQL all of it is one statement). Returns the balances after.
 * Throws if the database disagrees with the entries: that would be a bug, never a business case.
 */
export async function postToLedger(
  tx: Tx,
  nowMs: number,
  before: Map<string, BalanceRow>,
  entries: PostedEntry[],
  deltas: Map<string, NetDelta>,
  events: EventRow[] = [],
): Promise<Map<string, BalanceRow>> {
  const list = [...deltas.entries()].filter(([, d]) => d.amount !== 0 || d.pending !== 0);
  const balanceDeltas = list.map(([key, d]) => {
    const b = before.get(key);
    if (!b) throw new Error(`ledger: balance ${key} was not locked`);
    return { accountId: b.accountId, denomination: b.denomination, amount: d.amount, pending: d.pending };
  });

  // Each entry's balance_after chains from the locked figure, so the rows are known before the write.
  const running = new Map<string, number>();
  const rows: TransactionRow[] = [];
  for (const e of entries) {
    const key = balanceKey(e.accountId, e.denomination);
    const start = running.get(key) ?? before.get(key)?.amount;
    if (start === undefined) throw new Error(`ledger: balance ${key} was not locked`);
    const balanceAfter = start + e.amount;
    running.set(key, balanceAfter);
    rows.push({
      transactionId: newId('tx'),
      accountId: e.accountId,
      denomination: e.denomination,
      amount: e.amount,
      balanceAfter,
      kind: e.kind,
      eventId: e.eventId ?? null,
      reason: e.reason ?? null,
      createdAtMs: nowMs,
    });
  }

  const updated = await tx.writeLedger(events, balanceDeltas, rows);
  const after = new Map(before);
  for (const r of updated) after.set(balanceKey(r.accountId, r.denomination), r);
  for (const [key, amount] of running) {
    if (after.get(key)?.amount !== amount)
      throw new Error(`ledger: ${key} is ${after.get(key)?.amount} after update, entries say ${amount}`);
  }
  const changes: BalanceChange[] = [];
  for (const [key] of list) {
    changes.push({ before: before.get(key)!, after: after.get(key)! });
  }
  await runBalanceEffects(tx, nowMs, changes);
  return after;
}
