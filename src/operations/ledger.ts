/**
 * The one way a balance's amount changes: the net delta applied atomically
 * (`amount = amount + Δ`) to a locked row, and one appended transaction per change whose
 * `balance_after` chains from the previous one; then, in the same database transaction, what
 * follows a balance change (the server's balance effects: refill decisions, plan alerts,
 * notifications).
 *
 * A `Ledger` is built once in the composition root (server.ts, and the SQLite writer thread)
 * from the list of effects; each database transaction that changes balances opens one `Posting`
 * with `ledger.begin(tx, nowMs)` and posts through it.
 */
import { balanceKey } from '../domain/events.js';
import type { UsageAddition } from '../domain/usage.js';
import { newId } from '../lib/ids.js';
import type { BalanceRow, EventRow, Page, TransactionKind, TransactionRow, Tx } from '../store/types.js';
import type { Deps } from './deps.js';
import { ownedAccount, unknownCursor } from './lookups.js';

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

/** One balance as it was locked before a posting and as the posting left it. */
export interface BalanceChange {
  before: BalanceRow;
  after: BalanceRow;
}

/**
 * What follows a change of balances, inside the same transaction. Effects only write rows
 * (charge requests, notifications); anything that leaves the process happens after the commit,
 * from the outbox or the delivery log.
 */
export type BalanceEffect = (posting: Posting, changes: BalanceChange[]) => Promise<void>;

export interface Posted {
  /** Every balance given to `post`, as it is after the posting. */
  balances: Map<string, BalanceRow>;
  /** The ids of the transactions written, in the order of the entries. */
  transactionIds: string[];
}

/** The balance effects of one server, in the order they run after every posting. */
export class Ledger {
  constructor(private readonly effects: readonly BalanceEffect[]) {}

  /** Opens the ledger work of one database transaction. */
  begin(tx: Tx, nowMs: number): Posting {
    return new Posting(tx, nowMs, this.effects);
  }
}

/**
 * A slot of a posting's memo: what an effect keeps for the rest of its database transaction (the
 * notifications keep the subscriptions they looked up and the notifications they wrote, to coalesce).
 * The slot object itself is the key, so two effects never share one by accident of naming.
 */
export interface MemoSlot<T> {
  readonly name: string;
  create(): T;
}

/** The ledger work of one database transaction: its postings, and its effects' memo. */
export class Posting {
  readonly #memo = new Map<MemoSlot<unknown>, unknown>();

  constructor(
    readonly tx: Tx,
    readonly nowMs: number,
    private readonly effects: readonly BalanceEffect[],
  ) {}

  /** This transaction's value of `slot`, created on first use. */
  memo<T>(slot: MemoSlot<T>): T {
    if (!this.#memo.has(slot)) this.#memo.set(slot, slot.create());
    return this.#memo.get(slot) as T;
  }

  /**
   * Applies `deltas` (net amount and pending change per balance key, balances already locked
   * and given in `before`) and appends `entries` in order, writing `events` in the same step (the
   * ingest path's events) and adding `usage` to the hourly rollups (events that became complete):
   * on PostgreSQL all of it is one statement. Then runs the effects.
   * Throws if the database disagrees with the entries: that would be a bug, never a business case.
   */
  async post(
    before: Map<string, BalanceRow>,
    entries: PostedEntry[],
    deltas: Map<string, NetDelta>,
    events: EventRow[] = [],
    usage: UsageAddition[] = [],
  ): Promise<Posted> {
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
        createdAtMs: this.nowMs,
      });
    }

    const updated = await this.tx.writeLedger(events, balanceDeltas, rows, usage);
    const after = new Map(before);
    for (const r of updated) after.set(balanceKey(r.accountId, r.denomination), r);
    for (const [key, amount] of running) {
      if (after.get(key)?.amount !== amount)
        throw new Error(`ledger: ${key} is ${after.get(key)?.amount} after update, entries say ${amount}`);
    }
    const changes: BalanceChange[] = list.map(([key]) => ({ before: before.get(key)!, after: after.get(key)! }));
    if (changes.length > 0) for (const effect of this.effects) await effect(this, changes);
    return { balances: after, transactionIds: rows.map((r) => r.transactionId) };
  }
}

/** Locks the balances of `keys` (each once, in sorted order: no lock cycles between transactions). */
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

/** An account's transactions, newest first (of one denomination, or all). */
export async function listTransactions(
  deps: Deps,
  companyId: string,
  accountId: string,
  denomination: string | undefined,
  page: Page,
) {
  const result = await deps.store.read(async (tx) => {
    await ownedAccount(tx, companyId, accountId);
    return tx.listTransactions(accountId, denomination, page);
  });
  return result ?? unknownCursor();
}
