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
import { advanceTo, isFinished, type Lots, nextDueAt, sameGrants, type Step } from '../domain/grants.js';
import type { UsageAddition } from '../domain/usage.js';
import { newId } from '../lib/ids.js';
import type {
  BalanceDelta,
  BalanceKey,
  BalanceRow,
  EventRow,
  GrantRow,
  GrantUpdate,
  Page,
  TransactionRow,
  Tx,
} from '../store/types.js';
import type { Deps } from './deps.js';
import { ownedAccount, unknownCursor } from './lookups.js';

/**
 * One change of one balance: what it does to the balance's grants (a function of domain/grants.ts
 * given the balance's lots as they are when the entry's turn comes: take, hold, settleHold,
 * addGrant, …), and what the transactions it makes say (`eventId`, `reason`). `grant`: the row of
 * a grant the entry creates, inserted with it.
 */
export interface PostedEntry {
  accountId: string;
  denomination: string;
  apply: (lots: Lots) => Step;
  eventId?: string | null;
  reason?: string | null;
  grant?: GrantRow;
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
  /** The transactions written, in order. */
  transactions: TransactionRow[];
}

/** A balance row's lots (domain/grants.ts): its amount, pending and live grants. */
export function lotsOf(b: BalanceRow): Lots {
  return { amount: b.amount, pending: b.pending, grants: b.grants };
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
   * Locks the balances of `keys` (lockBalanceMap) and applies the grant starts and expiries due
   * now on them (each a transaction), so that what follows sees each balance as it is now.
   */
  async lock(keys: Iterable<BalanceKey>): Promise<Map<string, BalanceRow>> {
    const locked = await lockBalanceMap(this.tx, keys);
    const due = [...locked.values()].filter((b) => b.grantsDueAtMs !== null && b.grantsDueAtMs <= this.nowMs);
    if (due.length === 0) return locked;
    const entries = due.map((b) => ({
      accountId: b.accountId,
      denomination: b.denomination,
      apply: (lots: Lots) => advanceTo(lots, this.nowMs),
    }));
    return (await this.post(locked, entries)).balances;
  }

  /**
   * Applies `entries` in order to their balances' lots (balances locked, given in `before`),
   * appends one ledger row per transaction they make (its `balance_after` chained from the
   * locked figure), and writes each changed balance (amount, pending and live grants) in the
   * same step as `events` (the ingest path's) and `usage` (events that became complete): on
   * PostgreSQL all of it one statement. Grants created are inserted; grants finished (used up,
   * or closed with nothing held) leave the lots and their rows take the final figures, as do
   * grants whose priority, expiry or void changed. Then runs the effects.
   * Throws if the database disagrees with the lots: that would be a bug, never a business case.
   */
  async post(
    before: Map<string, BalanceRow>,
    entries: PostedEntry[],
    events: EventRow[] = [],
    usage: UsageAddition[] = [],
  ): Promise<Posted> {
    const lots = new Map<string, Lots>();
    const rows: TransactionRow[] = [];
    const created: GrantRow[] = [];
    for (const e of entries) {
      const key = balanceKey(e.accountId, e.denomination);
      const b = before.get(key);
      if (!b) throw new Error(`ledger: balance ${key} was not locked`);
      if (e.grant) created.push(e.grant);
      const step = e.apply(lots.get(key) ?? lotsOf(b));
      let balanceAfter = (lots.get(key) ?? b).amount;
      lots.set(key, step.lots);
      for (const t of step.transactions) {
        balanceAfter += t.amount;
        rows.push({
          transactionId: newId('tx'),
          accountId: e.accountId,
          denomination: e.denomination,
          amount: t.amount,
          balanceAfter,
          kind: t.kind,
          eventId: t.ref ?? e.eventId ?? null,
          reason: e.reason ?? null,
          grantId: t.grantId,
          drawnFrom: t.drawnFrom ?? null,
          createdAtMs: this.nowMs,
        });
      }
    }

    const deltas: BalanceDelta[] = [];
    const updates: GrantUpdate[] = [];
    for (const [key, l] of lots) {
      const b = before.get(key)!;
      const live = l.grants.some(isFinished) ? l.grants.filter((g) => !isFinished(g)) : l.grants;
      const dueAtMs = nextDueAt(live === l.grants ? l : { ...l, grants: live });
      const same = l.amount === b.amount && l.pending === b.pending && sameGrants(live, b.grants);
      if (same && dueAtMs === b.grantsDueAtMs) continue;
      deltas.push({
        accountId: b.accountId,
        denomination: b.denomination,
        amount: l.amount - b.amount,
        pending: l.pending - b.pending,
        grants: live,
        grantsDueAtMs: dueAtMs,
        from: b,
      });
      for (let i = 0; i < l.grants.length; i++) {
        const g = l.grants[i]!;
        // Mostly the same grant at the same place: a search only where the lots changed shape.
        const atPlace = b.grants[i]?.grantId === g.grantId ? b.grants[i] : undefined;
        const w = atPlace ?? b.grants.find((x) => x.grantId === g.grantId);
        const changed =
          isFinished(g) ||
          (w !== undefined &&
            (w.priority !== g.priority || w.expiresAtMs !== g.expiresAtMs || w.voidedAtMs !== g.voidedAtMs));
        if (changed)
          updates.push({
            grantId: g.grantId,
            remaining: g.remaining,
            held: g.held,
            priority: g.priority,
            expiresAtMs: g.expiresAtMs,
            voidedAtMs: g.voidedAtMs,
          });
      }
    }

    const updated = await this.tx.writeLedger(events, deltas, rows, usage);
    if (created.length > 0) await this.tx.insertGrants(created);
    if (updates.length > 0) await this.tx.updateGrants(updates);
    const after = new Map(before);
    for (const r of updated) after.set(balanceKey(r.accountId, r.denomination), r);
    const changes: BalanceChange[] = [];
    for (const d of deltas) {
      const key = balanceKey(d.accountId, d.denomination);
      const a = after.get(key);
      const l = lots.get(key)!;
      if (a?.amount !== l.amount || a.pending !== l.pending)
        throw new Error(
          `ledger: ${key} is ${a?.amount}/${a?.pending} after update, grants say ${l.amount}/${l.pending}`,
        );
      changes.push({ before: before.get(key)!, after: a });
    }
    if (changes.length > 0) for (const effect of this.effects) await effect(this, changes);
    return { balances: after, transactions: rows };
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

/**
 * An account's transactions, newest first (of one denomination, or all). The caller applies what is
 * due first (events.ts applyDueOfAccount), so that a list read at an instant holds its expiries.
 */
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
