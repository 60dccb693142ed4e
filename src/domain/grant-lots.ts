/**
 * What a credit grant and a balance's lots are (the model domain/grants.ts changes), how they read
 * (status, drawing order, debt, the next instant due) and the invariant every lots value keeps
 * (stated in domain/grants.ts, checked by checkInvariant). Pure, integers only.
 */
import { addExact } from './money.js';

export const GRANT_CATEGORIES = ['promotional', 'paid'] as const;

export type GrantCategory = (typeof GRANT_CATEGORIES)[number];

export const GRANT_SOURCES = [
  'grant',
  'initial',
  'adjustment',
  'refill',
  'monthly_refill',
  'plan',
  'proration',
  'topup',
] as const;

export type GrantSource = (typeof GRANT_SOURCES)[number];

export const GRANT_STATUSES = ['scheduled', 'active', 'depleted', 'expired', 'voided'] as const;

export type GrantStatus = (typeof GRANT_STATUSES)[number];

/** Priorities run from 0 (drawn first) to 100; a grant without one gets 50. */
export const GRANT_PRIORITY_MIN = 0;

export const GRANT_PRIORITY_MAX = 100;

export const GRANT_PRIORITY_DEFAULT = 50;

/** How far ahead `effective_at` may be. */
export const GRANT_EFFECTIVE_AHEAD_MAX_MS = 366 * 24 * 60 * 60 * 1000;

export interface Grant {
  grantId: string;
  amount: number;
  /** Units not yet used, held units included. */
  remaining: number;
  /** Units of `remaining` held by pending events. */
  held: number;
  priority: number;
  category: GrantCategory;
  source: GrantSource;
  effectiveAtMs: number;
  /** null: never expires. */
  expiresAtMs: number | null;
  voidedAtMs: number | null;
  /** Its opening transaction has been posted: its units are on the balance. */
  opened: boolean;
  /** Its expiry or void has been applied: nothing is drawn from it again. */
  closed: boolean;
}

/** What a caller states of a new grant; the module sets the rest. */
export type NewGrant = Pick<
  Grant,
  'grantId' | 'amount' | 'priority' | 'category' | 'source' | 'effectiveAtMs' | 'expiresAtMs'
>;

/** One balance: its posted `amount` (negative: debt), its `pending` holds, and its grants. */
export interface Lots {
  amount: number;
  pending: number;
  grants: Grant[];
}

/** Units of one grant (a `drawn_from` entry, or what a hold took from it). */
export interface Allocation {
  grantId: string;
  amount: number;
}

/** Kinds of the transaction that opens a grant (the contract keeps each source's kind). */
export type OpeningKind = 'grant' | 'refill' | 'adjustment' | 'proration' | 'period_reset';

/** Kinds of a transaction that takes units away in drawing order. */
export type TakingKind = 'usage' | 'adjustment' | 'proration';

export type GrantTransactionKind = OpeningKind | TakingKind | 'grant_expiry' | 'grant_void';

export interface GrantTransaction {
  kind: GrantTransactionKind;
  /** Signed change of the balance amount; never 0. */
  amount: number;
  /** The grant opened or closed (`grant`, `grant_expiry`, `grant_void`, an opening kind); null on a taking. */
  grantId: string | null;
  /** On a taking only: the grants its units came from, in drawing order (what debt covered is not listed). */
  drawnFrom?: Allocation[];
  /** The caller's reference of a taking made by drawMany (the event it is for). */
  ref?: string;
}

/** New lots and the transactions that took them there, in order. */
export interface Step {
  lots: Lots;
  transactions: GrantTransaction[];
}

export type GrantRefusalReason =
  | 'not_found'
  | 'grant_expired'
  | 'grant_depleted'
  | 'grant_voided'
  | 'expires_at_must_be_after_effective_at';

export interface GrantRefusal {
  ok: false;
  reason: GrantRefusalReason;
  message: string;
  param?: string;
}

export type GrantOutcome<T> = { ok: true; value: T } | GrantRefusal;

/** The contract's status at `nowMs`, by precedence voided > expired > scheduled > depleted > active. */
export function statusOf(grant: Grant, nowMs: number): GrantStatus {
  if (grant.voidedAtMs !== null) return 'voided';
  if (grant.expiresAtMs !== null && grant.expiresAtMs <= nowMs) return 'expired';
  if (grant.effectiveAtMs > nowMs) return 'scheduled';
  return grant.remaining === 0 ? 'depleted' : 'active';
}

/**
 * The drawing order: priority ascending; expires_at ascending, never-expiring last; promotional
 * before paid; effective_at ascending; grant_id ascending (code-unit order). A total order.
 */
export function compareDrawingOrder(a: Grant, b: Grant): number {
  if (a.priority !== b.priority) return a.priority - b.priority;
  if (a.expiresAtMs !== b.expiresAtMs) {
    if (a.expiresAtMs === null) return 1;
    if (b.expiresAtMs === null) return -1;
    return a.expiresAtMs - b.expiresAtMs;
  }
  if (a.category !== b.category) return a.category === 'promotional' ? -1 : 1;
  if (a.effectiveAtMs !== b.effectiveAtMs) return a.effectiveAtMs - b.effectiveAtMs;
  return a.grantId < b.grantId ? -1 : a.grantId > b.grantId ? 1 : 0;
}

/** Units owed that no grant covers: Σ remaining over opened grants − amount. */
export function debtOf(lots: Lots): number {
  let sum = 0;
  for (const g of lots.grants) if (g.opened) sum = addExact(sum, g.remaining);
  return addExact(sum, -lots.amount);
}

/** The soonest instant at which a start or an expiry of these lots falls due, or null. */
export function nextDueAt(lots: Lots): number | null {
  let due: number | null = null;
  for (const g of lots.grants) {
    if (g.closed) continue;
    if (!g.opened && (due === null || g.effectiveAtMs < due)) due = g.effectiveAtMs;
    if (g.expiresAtMs !== null && (due === null || g.expiresAtMs < due)) due = g.expiresAtMs;
  }
  return due;
}

/** The same grants with the same figures, in the same order. */
export function sameGrants(a: readonly Grant[], b: readonly Grant[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (
      x.grantId !== y.grantId ||
      x.remaining !== y.remaining ||
      x.held !== y.held ||
      x.priority !== y.priority ||
      x.expiresAtMs !== y.expiresAtMs ||
      x.voidedAtMs !== y.voidedAtMs ||
      x.opened !== y.opened ||
      x.closed !== y.closed
    )
      return false;
  }
  return true;
}

/**
 * A grant is finished once nothing can change its units again: closed with nothing held, or
 * opened and used up. Finished grants leave the lots (their records keep the final figures).
 */
export function isFinished(g: Grant): boolean {
  return g.held === 0 && (g.closed || (g.opened && g.remaining === 0));
}

/** Every way `lots` breaks the invariant in the header (empty: it holds); with `nowMs`, line 5 too. */
export function checkInvariant(lots: Lots, nowMs?: number): string[] {
  const v: string[] = [];
  const int = (name: string, n: number) => {
    if (!Number.isSafeInteger(n)) v.push(`${name} is not a safe integer: ${n}`);
  };
  int('amount', lots.amount);
  int('pending', lots.pending);
  const ids = new Set<string>();
  let held = 0;
  let remaining = 0;
  for (const g of lots.grants) {
    const at = `grant ${g.grantId}`;
    if (ids.has(g.grantId)) v.push(`${at} appears twice`);
    ids.add(g.grantId);
    for (const [k, n] of [
      ['amount', g.amount],
      ['remaining', g.remaining],
      ['held', g.held],
      ['priority', g.priority],
    ] as const)
      int(`${at} ${k}`, n);
    if (g.amount < 1) v.push(`${at}: amount ${g.amount} < 1`);
    if (!(g.held >= 0 && g.held <= g.remaining && g.remaining <= g.amount))
      v.push(`${at}: not 0 ≤ held ${g.held} ≤ remaining ${g.remaining} ≤ amount ${g.amount}`);
    if (g.priority < GRANT_PRIORITY_MIN || g.priority > GRANT_PRIORITY_MAX) v.push(`${at}: priority ${g.priority}`);
    if (g.expiresAtMs !== null && g.expiresAtMs <= g.effectiveAtMs) v.push(`${at}: expires before it starts`);
    if (!g.opened && g.held !== 0) v.push(`${at}: held units on a grant not opened`);
    if (!g.opened && g.remaining !== (g.closed ? 0 : g.amount))
      v.push(`${at}: remaining ${g.remaining} on a grant not opened`);
    if (g.closed && g.remaining !== g.held) v.push(`${at}: closed with unheld units`);
    if (g.voidedAtMs !== null && !g.closed) v.push(`${at}: voided but not closed`);
    if (nowMs !== undefined) {
      if (!g.closed && !g.opened && g.effectiveAtMs <= nowMs) v.push(`${at}: start at ${g.effectiveAtMs} not applied`);
      if (!g.closed && g.expiresAtMs !== null && g.expiresAtMs <= nowMs)
        v.push(`${at}: expiry at ${g.expiresAtMs} not applied`);
      if (g.opened && g.effectiveAtMs > nowMs) v.push(`${at}: opened before its effective_at`);
    }
    held += g.held;
    if (g.opened) remaining += g.remaining;
  }
  const debt = remaining - lots.amount;
  if (debt < 0) v.push(`amount ${lots.amount} exceeds Σ remaining ${remaining}`);
  if (debt > 0) {
    for (const g of lots.grants)
      if (g.opened && !g.closed && g.remaining > g.held)
        v.push(`grant ${g.grantId} has unheld units while the balance owes ${debt}`);
  }
  if (lots.pending < held) v.push(`pending ${lots.pending} < Σ held ${held}`);
  return v;
}

export function assertInteger(name: string, n: number): void {
  if (!Number.isSafeInteger(n)) throw new RangeError(`${name} must be a safe integer, got ${n}`);
}

export function assertNonNegative(name: string, n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${name} must be a non-negative safe integer, got ${n}`);
}

export function assertPriority(p: number): void {
  if (!Number.isSafeInteger(p) || p < GRANT_PRIORITY_MIN || p > GRANT_PRIORITY_MAX)
    throw new RangeError(`priority must be an integer from 0 to 100, got ${p}`);
}
