/**
 * What a posting applies, and the one computation of what it does: each entry is a function of
 * domain/grants.ts on its balance's lots (take, hold, settleHold, addGrant, …), applied in order
 * to the lots as the entries before it left them, making the transactions it says. A view runs
 * the same computation in memory (view.ts) that a posting writes (posting.ts), so that a read and
 * a write cannot disagree on what a balance is at an instant.
 */
import { isFinished, type Lots, nextDueAt, sameGrants, type Step } from '../domain/grants.js';
import { applySpend, type SpendChange, type SpendWindows } from '../domain/spend.js';
import { balanceKey } from '../lib/keys.js';
import type { BalanceDelta, BalanceRow, GrantRow, GrantUpdate, TransactionRow } from '../store/types.js';

/**
 * One change of one balance: what it does to the balance's grants (a function of domain/grants.ts
 * given the balance's lots as they are when the entry's turn comes), and what the transactions it
 * makes say (`eventId`, `reason`). `grant`: the row of a grant the entry creates, inserted with it.
 */
export interface PostedEntry {
  accountId: string;
  denomination: string;
  apply: (lots: Lots) => Step;
  eventId?: string | null;
  reason?: string | null;
  grant?: GrantRow;
  /**
   * What the entry does to the balance's spend (domain/spend.ts): usage taken (one change per event type), or a
   * hold resolved.
   */
  spend?: SpendChange | readonly SpendChange[];
}

/** A balance row's lots (domain/grants.ts): its amount, pending and live grants. */
export function lotsOf(b: BalanceRow): Lots {
  return { amount: b.amount, pending: b.pending, grants: b.grants };
}

/** What entries do to their balances: the lots after, the transactions in order, the grants created. */
export interface Computed {
  lots: Map<string, Lots>;
  /** The spend changes of each balance whose entries change its spend, in order. */
  spend: Map<string, SpendChange[]>;
  transactions: TransactionRow[];
  created: GrantRow[];
}

/**
 * Applies `entries` in order to the lots of their balances (`before`, by balanceKey), chaining each
 * transaction's `balance_after` from the balance's amount. `transactionId` names each transaction
 * (a view, which writes none, gives an empty one). Throws for an entry whose balance is not in `before`.
 */
export function computeEntries(
  before: ReadonlyMap<string, BalanceRow>,
  entries: readonly PostedEntry[],
  nowMs: number,
  transactionId: () => string,
): Computed {
  const lots = new Map<string, Lots>();
  const spend = new Map<string, SpendChange[]>();
  const transactions: TransactionRow[] = [];
  const created: GrantRow[] = [];
  for (const e of entries) {
    const key = balanceKey(e.accountId, e.denomination);
    const b = before.get(key);
    if (!b) throw new Error(`ledger: balance ${key} was not locked`);
    if (e.grant) created.push(e.grant);
    if (e.spend !== undefined)
      for (const c of Array.isArray(e.spend) ? (e.spend as readonly SpendChange[]) : [e.spend as SpendChange]) {
        if (c.units === 0) continue;
        const changes = spend.get(key);
        if (changes === undefined) spend.set(key, [c]);
        else changes.push(c);
      }
    const current = lots.get(key);
    const step = e.apply(current ?? lotsOf(b));
    let balanceAfter = (current ?? b).amount;
    lots.set(key, step.lots);
    for (const t of step.transactions) {
      balanceAfter += t.amount;
      transactions.push({
        transactionId: transactionId(),
        accountId: e.accountId,
        denomination: e.denomination,
        amount: t.amount,
        balanceAfter,
        kind: t.kind,
        eventId: t.ref ?? e.eventId ?? null,
        reason: e.reason ?? null,
        grantId: t.grantId,
        drawnFrom: t.drawnFrom ?? null,
        createdAtMs: nowMs,
      });
    }
  }
  return { lots, spend, transactions, created };
}

/** A balance's spend windows after `changes` at `nowMs`, or undefined where they leave the stored ones as they are. */
export function spendAfter(
  stored: SpendWindows,
  changes: readonly SpendChange[] | undefined,
  nowMs: number,
): SpendWindows | undefined {
  if (changes === undefined) return undefined;
  const after = applySpend(stored, changes, nowMs);
  // applySpend gives back the stored windows themselves when it changes nothing.
  return after === stored ? undefined : after;
}

/** A balance's live grants after a change: finished grants leave the lots (their rows keep the final figures). */
export function liveGrants(lots: Lots): Lots['grants'] {
  return lots.grants.some(isFinished) ? lots.grants.filter((g) => !isFinished(g)) : lots.grants;
}

/**
 * The balance row as `lots` leave it: a view's answer, never written (a write returns the row it
 * wrote, and a posting's deltas start from rows the store returned).
 */
export function rowWith(b: BalanceRow, lots: Lots, spend?: SpendWindows): BalanceRow {
  const grants = liveGrants(lots);
  return {
    ...b,
    spend: spend ?? b.spend,
    amount: lots.amount,
    pending: lots.pending,
    grants,
    grantsDueAtMs: nextDueAt(grants === lots.grants ? lots : { ...lots, grants }),
  };
}

/** What a posting writes of its balances and grants. */
export interface BalanceWrites {
  deltas: BalanceDelta[];
  /** Grants finished, or whose priority, expiry or void changed: their rows take the lot's figures. */
  updates: GrantUpdate[];
}

/** The writes that take each balance of `lots` from `before` to its lots (none for a balance left as it was). */
export function balanceWrites(
  before: ReadonlyMap<string, BalanceRow>,
  computed: Computed,
  nowMs: number,
): BalanceWrites {
  const deltas: BalanceDelta[] = [];
  const updates: GrantUpdate[] = [];
  for (const [key, l] of computed.lots) {
    const b = before.get(key)!;
    const live = liveGrants(l);
    const dueAtMs = nextDueAt(live === l.grants ? l : { ...l, grants: live });
    const spend = spendAfter(b.spend, computed.spend.get(key), nowMs);
    const same = l.amount === b.amount && l.pending === b.pending && sameGrants(live, b.grants);
    if (same && dueAtMs === b.grantsDueAtMs && spend === undefined) continue;
    const delta: BalanceDelta = {
      accountId: b.accountId,
      denomination: b.denomination,
      amount: l.amount - b.amount,
      pending: l.pending - b.pending,
      grants: live,
      grantsDueAtMs: dueAtMs,
      from: b,
    };
    if (spend !== undefined) delta.spend = spend;
    deltas.push(delta);
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
  return { deltas, updates };
}
