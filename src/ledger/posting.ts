/**
 * A posting: the ledger work of one database transaction on the balances it locked. Opened by
 * `Ledger.open` (ledger.ts), which locks the balances and writes what is due on them first, it
 * keeps each balance as the transaction has left it; `post` applies entries (entries.ts) to them,
 * writes the balances, grants, transactions and the rows that go with them (events, their holds
 * resolved, usage) in one step, and runs the balance effects the composition root gave the ledger.
 */
import type { SpendChange } from '../domain/spend.js';
import type { UsageRow } from '../domain/usage.js';
import { newId } from '../lib/ids.js';
import { balanceKey } from '../lib/keys.js';
import type { BalanceRow, EventChange, EventRow, LeaseChange, LeaseRow, TransactionRow, Tx } from '../store/types.js';
import { balanceWrites, computeEntries, type PostedEntry } from './entries.js';
import type { LedgerPort } from './port.js';

/** One balance as it was before a posting's `post` and as it left it. */
export interface BalanceChange {
  before: BalanceRow;
  after: BalanceRow;
  /** What the post did to the balance's spend, in order (domain/spend.ts), each with its events' type. */
  spend?: readonly SpendChange[];
}

/**
 * What follows a change of balances, inside the same transaction: effects only write rows
 * (charge requests, notifications); anything that leaves the process happens after the commit,
 * from the outbox or the delivery log. The list is built in the composition root (compose.ts).
 */
export type BalanceEffect = (posting: Posting, changes: BalanceChange[]) => Promise<void>;

/**
 * A slot of a posting's memo: what an effect keeps for the rest of its database transaction (the
 * notifications keep the subscriptions they looked up and the notifications they wrote, to coalesce).
 * The slot object itself is the key, so two effects never share one by accident of naming.
 */
export interface MemoSlot<T> {
  readonly name: string;
  create(): T;
}

/** What `post` writes beside the balances: events recorded, holds resolved, usage of events completed. */
export interface PostedRows {
  events?: EventRow[];
  eventChanges?: EventChange[];
  usage?: UsageRow[];
  /**
   * Leases drawn, closed or expired, as the entries leave them: written after the entries are applied (an entry
   * that draws a lease sets its `heldFrom` then).
   */
  leases?: LeaseChange[];
  /** Leases opened: inserted after the entries are applied (the entry that holds a lease's units sets `heldFrom`). */
  openedLeases?: LeaseRow[];
}

export interface Posted {
  /** Every balance the posting holds, as it is after this post (a copy: later posts do not change it). */
  balances: ReadonlyMap<string, BalanceRow>;
  /** The transactions written, in order. */
  transactions: TransactionRow[];
}

export class Posting {
  readonly #memo = new Map<MemoSlot<unknown>, unknown>();
  readonly #balances: Map<string, BalanceRow>;
  /** The expired holds the posting cancelled when it was opened (their events are now `cancelled`). */
  cancelled: readonly EventRow[] = [];
  /** How many expired leases the posting released when it was opened. */
  expiredLeases = 0;

  constructor(
    /** The transaction, for what the effects and the operation write beside the balances. */
    readonly tx: Tx,
    private readonly port: LedgerPort,
    readonly nowMs: number,
    private readonly effects: readonly BalanceEffect[],
    locked: readonly BalanceRow[],
  ) {
    this.#balances = new Map(locked.map((b) => [balanceKey(b.accountId, b.denomination), b]));
  }

  /** Every balance the posting locked, as the transaction has left it so far. */
  get balances(): ReadonlyMap<string, BalanceRow> {
    return this.#balances;
  }

  /** One locked balance, as the transaction has left it so far (undefined: it does not exist). */
  balance(accountId: string, denomination: string): BalanceRow | undefined {
    return this.#balances.get(balanceKey(accountId, denomination));
  }

  /** This transaction's value of `slot`, created on first use. */
  memo<T>(slot: MemoSlot<T>): T {
    if (!this.#memo.has(slot)) this.#memo.set(slot, slot.create());
    return this.#memo.get(slot) as T;
  }

  /**
   * Applies `entries` in order to their (locked) balances, appends one transaction row per
   * transaction they make, and writes each changed balance (amount, pending and live grants) in the
   * same step as `rows.events` and `rows.usage`: on PostgreSQL one statement. Grants created are
   * inserted; grants finished, or whose priority, expiry or void changed, take their lot's figures.
   * Then the holds of `rows.eventChanges` are resolved and the effects run.
   * Throws if the database disagrees with the lots: that would be a bug, never a business case.
   */
  async post(entries: readonly PostedEntry[], rows: PostedRows = {}): Promise<Posted> {
    const before = this.#balances;
    const computed = computeEntries(before, entries, this.nowMs, () => newId('tx'));
    const { deltas, updates } = balanceWrites(before, computed, this.nowMs);
    const { port } = this;
    const written = await port.writeLedger(rows.events ?? [], deltas, computed.transactions, rows.usage ?? []);
    if (computed.created.length > 0) await port.insertGrants(computed.created);
    if (updates.length > 0) await port.updateGrants(updates);
    if (rows.eventChanges !== undefined && rows.eventChanges.length > 0) await port.updateEvents(rows.eventChanges);
    if (rows.leases !== undefined && rows.leases.length > 0) await port.updateLeases(rows.leases);
    for (const l of rows.openedLeases ?? []) await port.insertLease(l);
    const after = new Map(written.map((r) => [balanceKey(r.accountId, r.denomination), r]));
    const changes: BalanceChange[] = [];
    for (const d of deltas) {
      const key = balanceKey(d.accountId, d.denomination);
      const r = after.get(key);
      const l = computed.lots.get(key)!;
      if (r === undefined || r.amount !== l.amount || r.pending !== l.pending)
        throw new Error(
          `ledger: ${key} is ${r?.amount}/${r?.pending} after update, grants say ${l.amount}/${l.pending}`,
        );
      const spend = computed.spend.get(key);
      changes.push(
        spend === undefined ? { before: before.get(key)!, after: r } : { before: before.get(key)!, after: r, spend },
      );
      this.#balances.set(key, r);
    }
    if (changes.length > 0) for (const effect of this.effects) await effect(this, changes);
    return { balances: new Map(this.#balances), transactions: computed.transactions };
  }
}
