/**
 * Credit grants (contract "Credit grants"): the units of a balance are kept in lots, each with its
 * own remainder, priority and validity, so that promotional units can be used before paid ones,
 * expire to the instant, and finance can see which units are still owed. This module is the whole
 * rule: which grant a taking draws from, how debt is repaid, what a hold, a settle, a cancel, an
 * expiry, a void or a PATCH does to the lots, and which transactions say so. Pure: no I/O, no
 * clock (every function takes `nowMs`), integer amounts only (RangeError beyond
 * Number.MAX_SAFE_INTEGER, as money.ts). Inputs are never mutated: every function returns new lots.
 *
 * Every function that changes lots first applies what is due at `nowMs` (`advanceTo`): the lots
 * it works on are exact at that instant whether or not anything applied them before, and the
 * transactions it returns begin with those starts and expiries.
 *
 * Words: a grant is *opened* once its `grant` transaction is posted (its units are on the
 * balance) and *closed* once its expiry or void has been applied (nothing is drawn from it again,
 * and units given back to it leave at once). *Unheld* units of a grant are `remaining − held`.
 * *Debt* is Σ remaining over opened grants − `amount`: the units taken that no grant covered.
 *
 * Invariant (`checkInvariant` checks each line), for every lots value these functions return:
 * 1. every grant: 0 ≤ held ≤ remaining ≤ amount, amount ≥ 1; a grant not opened has held 0 and
 *    remaining = amount (remaining 0 once voided); a closed grant has remaining = held;
 *    voided ⇒ closed.
 * 2. `amount` = Σ remaining over opened grants − debt, with debt ≥ 0 (the contract's
 *    `amount` = Σ remaining − debt; units of a scheduled grant are not on the balance yet).
 * 3. debt > 0 ⇒ no open grant has unheld units (units added while the balance owes repay the
 *    debt first). So with nothing held, debt = max(0, −amount); units held by pending events
 *    stay theirs, and debt can then coexist with a positive `amount`.
 * 4. `pending` ≥ Σ held: pending = Σ held + what pending events hold beyond their grants.
 * 5. at `nowMs` (when given): no start or expiry that is due is left unapplied.
 *
 * Where the contract is silent, this module decides:
 * - Instant order: starts and expiries apply in order of their instant; at one instant expiries
 *   come before starts, then by grant_id. A scheduled grant opens with kind `grant`.
 * - A transaction of 0 is not a transaction: none is returned (an expiry of a grant whose units
 *   are all held or used, a taking of 0 units, a void of a grant with nothing unheld).
 * - A settle uses the held units in the order they were drawn (heldFrom order) and gives back the
 *   rest; the part of a hold that no grant covered is drawn at settle, in drawing order.
 * - Units given back to an expired grant leave with `grant_expiry`, to a voided one with
 *   `grant_void`; they never repay debt (nothing is drawn from a closed grant).
 * - Units given back to an open grant while the balance owes repay the debt first, in drawing
 *   order (the contract counts a released hold among what repays debt); no transaction moves.
 * - Voiding a scheduled grant closes it with no transaction (its units never joined); it never opens.
 * - Refusals (`GrantRefusal`) are for what depends on a grant's state (not found, status, an
 *   expiry not after its effective_at); malformed input the HTTP layer refuses first (a
 *   fractional amount, a priority outside 0–100) is a RangeError here.
 * - Status precedence: voided > expired > scheduled > depleted > active.
 * - Lots keep their grants in drawing order (adding or changing a grant re-sorts them), so that
 *   drawing, once per event, seldom sorts; any order given is still drawn correctly.
 * - `nextExpiry` counts opened grants' unheld units only: held units may still be used, and a
 *   scheduled grant's units are not on the balance.
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

// ---------------------------------------------------------------------------------------------
// Reading a grant

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

/**
 * The soonest expiry of units on the balance at `nowMs`: among opened grants not yet closed, the
 * soonest `expires_at` of a grant with unheld units, and the unheld units of every grant expiring
 * at that instant. null when none will expire.
 */
export function nextExpiry(lots: Lots, nowMs: number): { expiresAtMs: number; amount: number } | null {
  const now = advanceTo(lots, nowMs).lots;
  let next: { expiresAtMs: number; amount: number } | null = null;
  for (const g of now.grants) {
    if (!g.opened || g.closed || g.expiresAtMs === null || g.remaining === g.held) continue;
    const unheld = g.remaining - g.held;
    if (next === null || g.expiresAtMs < next.expiresAtMs) next = { expiresAtMs: g.expiresAtMs, amount: unheld };
    else if (g.expiresAtMs === next.expiresAtMs) next.amount = addExact(next.amount, unheld);
  }
  return next;
}

// ---------------------------------------------------------------------------------------------
// Changing lots. Each public function copies the lots into a draft, changes the draft, returns it.

interface Draft {
  lots: Lots;
  transactions: GrantTransaction[];
}

function draftOf(lots: Lots, nowMs: number): Draft {
  assertInteger('nowMs', nowMs);
  const draft: Draft = {
    lots: { amount: lots.amount, pending: lots.pending, grants: lots.grants.map((g) => ({ ...g })) },
    transactions: [],
  };
  applyDue(draft, nowMs);
  return draft;
}

function post(draft: Draft, t: GrantTransaction): void {
  if (t.amount === 0) return;
  draft.lots.amount = addExact(draft.lots.amount, t.amount);
  draft.transactions.push(t);
}

/** Whether a grant has units to draw: opened, not closed, with unheld units. */
function isDrawable(g: Grant): boolean {
  return g.opened && !g.closed && g.remaining > g.held;
}

/** Open grants with unheld units, in drawing order. */
function drawable(lots: Lots): Grant[] {
  const out: Grant[] = [];
  for (const g of lots.grants) if (isDrawable(g)) out.push(g);
  // Lots are kept in drawing order (sortGrants), so the sort is rarely needed.
  return inDrawingOrder(out) ? out : out.sort(compareDrawingOrder);
}

/** Whether the drawable grants among `grants` come in drawing order. */
function inDrawingOrder(grants: readonly Grant[]): boolean {
  let last: Grant | undefined;
  for (const g of grants) {
    if (!isDrawable(g)) continue;
    if (last !== undefined && compareDrawingOrder(last, g) > 0) return false;
    last = g;
  }
  return true;
}

/**
 * Take up to `units` unheld units in drawing order, into use (remaining falls) or into `held`;
 * with `first`, the grants it picks are drawn before the others (each part in drawing order).
 * Called once per event on the ingest path: the lots are walked in place where they are in drawing
 * order, as they are kept (no list of the drawable grants is built).
 */
function draw(draft: Draft, units: number, into: 'use' | 'hold', first?: (g: Grant) => boolean): Allocation[] {
  const from: Allocation[] = [];
  let left = units;
  let order: readonly Grant[] = draft.lots.grants;
  if (first) {
    const d = drawable(draft.lots);
    order = [...d.filter(first), ...d.filter((g) => !first(g))];
  } else if (!inDrawingOrder(order)) order = drawable(draft.lots);
  for (const g of order) {
    if (left === 0) break;
    if (!isDrawable(g)) continue;
    const n = Math.min(g.remaining - g.held, left);
    if (into === 'use') g.remaining -= n;
    else g.held += n;
    from.push({ grantId: g.grantId, amount: n });
    left -= n;
  }
  return from;
}

/** Units added while the balance owes repay the debt first: unheld units cover it in drawing order. */
function repayDebt(draft: Draft): void {
  let debt = debtOf(draft.lots);
  for (const g of drawable(draft.lots)) {
    if (debt <= 0) return;
    const n = Math.min(g.remaining - g.held, debt);
    g.remaining -= n;
    debt -= n;
  }
}

function open(draft: Draft, g: Grant, kind: OpeningKind): void {
  g.opened = true;
  post(draft, { kind, amount: g.amount, grantId: g.grantId });
  repayDebt(draft);
}

/** Expiry or void: the unheld units leave; held units stay until their events settle. */
function close(draft: Draft, g: Grant, kind: 'grant_expiry' | 'grant_void'): void {
  g.closed = true;
  if (!g.opened) {
    g.remaining = 0;
    return;
  }
  const unheld = g.remaining - g.held;
  g.remaining = g.held;
  post(draft, { kind, amount: -unheld, grantId: g.grantId });
}

function applyDue(draft: Draft, nowMs: number): void {
  if (!draft.lots.grants.some((g) => !g.closed && isDue(g, nowMs))) return;
  const due: { atMs: number; expiry: boolean; g: Grant }[] = [];
  for (const g of draft.lots.grants) {
    if (g.closed) continue;
    if (!g.opened && g.effectiveAtMs <= nowMs) due.push({ atMs: g.effectiveAtMs, expiry: false, g });
    if (g.expiresAtMs !== null && g.expiresAtMs <= nowMs) due.push({ atMs: g.expiresAtMs, expiry: true, g });
  }
  due.sort(
    (a, b) =>
      a.atMs - b.atMs ||
      Number(b.expiry) - Number(a.expiry) ||
      (a.g.grantId < b.g.grantId ? -1 : a.g.grantId > b.g.grantId ? 1 : 0),
  );
  for (const d of due) {
    if (d.expiry) close(draft, d.g, 'grant_expiry');
    else open(draft, d.g, 'grant');
  }
}

function isDue(g: Grant, nowMs: number): boolean {
  return (!g.opened && g.effectiveAtMs <= nowMs) || (g.expiresAtMs !== null && g.expiresAtMs <= nowMs);
}

/**
 * Applies every start (`effective_at` ≤ now: a `grant` transaction of +amount, debt repaid first)
 * and every expiry (`expires_at` ≤ now: a `grant_expiry` transaction of −unheld remaining) that is
 * due and not yet applied, in instant order. Applying it again changes nothing.
 */
export function advanceTo(lots: Lots, nowMs: number): Step {
  return draftOf(lots, nowMs);
}

/**
 * Takes `units` away (a complete event, a negative adjustment): from open grants' unheld units in
 * drawing order; what no grant covers becomes debt. One transaction of −units, of `kind`.
 */
export function take(
  lots: Lots,
  units: number,
  nowMs: number,
  kind: TakingKind = 'usage',
): Step & { drawnFrom: Allocation[] } {
  assertNonNegative('units', units);
  const draft = draftOf(lots, nowMs);
  const drawnFrom = draw(draft, units, 'use');
  post(draft, { kind, amount: -units, grantId: null, drawnFrom });
  return { lots: draft.lots, transactions: draft.transactions, drawnFrom };
}

/** One event's units for drawMany: taken (a complete event) or held (a pending one), with the event's reference. */
export interface Draw {
  units: number;
  hold: boolean;
  ref: string;
}

/**
 * The events of one group on one balance, in order, on one copy of the lots (the ingest path: one copy per
 * balance, not per event): each as `take` (a `usage` transaction of −units carrying its `ref`) or `hold` would
 * do it. `allocations[i]` is where draw i's units came from (its drawn_from, or its held_from).
 */
export function drawMany(lots: Lots, draws: readonly Draw[], nowMs: number): Step & { allocations: Allocation[][] } {
  const draft = draftOf(lots, nowMs);
  const allocations: Allocation[][] = [];
  for (const d of draws) {
    assertNonNegative('units', d.units);
    const from = draw(draft, d.units, d.hold ? 'hold' : 'use');
    allocations.push(from);
    if (d.hold) draft.lots.pending = addExact(draft.lots.pending, d.units);
    else post(draft, { kind: 'usage', amount: -d.units, grantId: null, drawnFrom: from, ref: d.ref });
  }
  return { lots: draft.lots, transactions: draft.transactions, allocations };
}

/**
 * A pending event holds `units`: from open grants' unheld units in drawing order into their
 * `held` (remaining unchanged); `pending` rises by all of `units`, `amount` does not move.
 * `heldFrom` is what to keep with the event for its settle; the part beyond it was held without a grant.
 */
export function hold(lots: Lots, units: number, nowMs: number): Step & { heldFrom: Allocation[] } {
  assertNonNegative('units', units);
  const draft = draftOf(lots, nowMs);
  const heldFrom = draw(draft, units, 'hold');
  draft.lots.pending = addExact(draft.lots.pending, units);
  return { lots: draft.lots, transactions: draft.transactions, heldFrom };
}

/**
 * Completes a held event at `finalCost`: the held units are used first (in heldFrom order); what
 * the final cost does not use goes back to the grants it came from (leaving at once, with
 * `grant_expiry` or `grant_void`, where the grant has expired or been voided; repaying debt first
 * where not); a final cost beyond what grants held is drawn in drawing order, or becomes debt.
 * Transactions: due starts and expiries, the taking of −finalCost (of `kind`), then what left at once.
 */
export function settleHold(
  lots: Lots,
  heldFrom: readonly Allocation[],
  heldTotal: number,
  finalCost: number,
  nowMs: number,
  kind: TakingKind = 'usage',
): Step {
  assertNonNegative('finalCost', finalCost);
  const draft = draftOf(lots, nowMs);
  resolve(draft, heldFrom, heldTotal, finalCost, kind);
  return draft;
}

/** Cancels a held event (by request or after the hour): every held unit goes back, as in settleHold. */
export function releaseHold(lots: Lots, heldFrom: readonly Allocation[], heldTotal: number, nowMs: number): Step {
  const draft = draftOf(lots, nowMs);
  resolve(draft, heldFrom, heldTotal, 0, null);
  return draft;
}

function resolve(
  draft: Draft,
  heldFrom: readonly Allocation[],
  heldTotal: number,
  finalCost: number,
  kind: TakingKind | null,
): void {
  const { lots } = draft;
  assertNonNegative('heldTotal', heldTotal);
  if (heldTotal > lots.pending) throw new RangeError(`heldTotal ${heldTotal} exceeds pending ${lots.pending}`);
  let fromGrants = 0;
  const seen = new Set<string>();
  for (const h of heldFrom) {
    assertNonNegative('heldFrom amount', h.amount);
    const g = lots.grants.find((x) => x.grantId === h.grantId);
    if (g === undefined || seen.has(h.grantId) || h.amount > g.held)
      throw new RangeError(`heldFrom does not match the grants' held units (${h.grantId})`);
    seen.add(h.grantId);
    fromGrants = addExact(fromGrants, h.amount);
  }
  if (fromGrants > heldTotal) throw new RangeError('heldFrom exceeds heldTotal');

  lots.pending -= heldTotal;
  let cost = finalCost;
  const used: Allocation[] = [];
  const leaving: { g: Grant; amount: number }[] = [];
  for (const h of heldFrom) {
    const g = lots.grants.find((x) => x.grantId === h.grantId) as Grant;
    g.held -= h.amount;
    const use = Math.min(h.amount, cost);
    cost -= use;
    g.remaining -= use;
    if (use > 0) used.push({ grantId: g.grantId, amount: use });
    if (h.amount > use && g.closed) leaving.push({ g, amount: h.amount - use });
  }
  const drawnFrom = merge(used, draw(draft, cost, 'use'));
  if (kind !== null) post(draft, { kind, amount: -finalCost, grantId: null, drawnFrom });
  for (const { g, amount } of leaving) {
    g.remaining -= amount;
    post(draft, { kind: g.voidedAtMs !== null ? 'grant_void' : 'grant_expiry', amount: -amount, grantId: g.grantId });
  }
  repayDebt(draft);
}

function merge(a: Allocation[], b: Allocation[]): Allocation[] {
  const out = a.map((x) => ({ ...x }));
  for (const x of b) {
    const same = out.find((y) => y.grantId === x.grantId);
    if (same) same.amount += x.amount;
    else out.push({ ...x });
  }
  return out;
}

/**
 * Adds a grant (of any source). Already effective: it opens at once with one transaction of
 * +amount of `kind` (debt repaid first: 500 onto −200 leaves the balance at 300 and the grant's
 * remaining at 300), and expires at once if `expiresAtMs` ≤ now. Scheduled: nothing moves until
 * `advanceTo` reaches its `effectiveAtMs` (it then opens with kind `grant`). The HTTP layer
 * refuses bad input with the contract's error body; here it is a RangeError.
 */
export function addGrant(lots: Lots, grant: NewGrant, nowMs: number, kind: OpeningKind = 'grant'): Step {
  if (typeof grant.grantId !== 'string' || grant.grantId === '') throw new RangeError('grantId must be a string');
  if (lots.grants.some((g) => g.grantId === grant.grantId)) throw new RangeError(`grant ${grant.grantId} exists`);
  const draft = draftOf(lots, nowMs);
  const g = newGrantOf(grant);
  draft.lots.grants.push(g);
  draft.lots.grants.sort(compareDrawingOrder);
  if (g.effectiveAtMs <= nowMs) open(draft, g, kind);
  applyDue(draft, nowMs);
  return draft;
}

/** A new grant's lot, checked (RangeError on what the HTTP layer refuses first). */
function newGrantOf(grant: NewGrant): Grant {
  assertNonNegative('amount', grant.amount);
  if (grant.amount < 1) throw new RangeError('amount must be at least 1');
  assertPriority(grant.priority);
  if (!GRANT_CATEGORIES.includes(grant.category)) throw new RangeError(`unknown category ${grant.category}`);
  if (!GRANT_SOURCES.includes(grant.source)) throw new RangeError(`unknown source ${grant.source}`);
  assertInteger('effectiveAtMs', grant.effectiveAtMs);
  if (grant.expiresAtMs !== null) {
    assertInteger('expiresAtMs', grant.expiresAtMs);
    if (grant.expiresAtMs <= grant.effectiveAtMs) throw new RangeError('expiresAtMs must be after effectiveAtMs');
  }
  return {
    grantId: grant.grantId,
    amount: grant.amount,
    remaining: grant.amount,
    held: 0,
    priority: grant.priority,
    category: grant.category,
    source: grant.source,
    effectiveAtMs: grant.effectiveAtMs,
    expiresAtMs: grant.expiresAtMs,
    voidedAtMs: null,
    opened: false,
    closed: false,
  };
}

/**
 * A plan's renewal at `dueMs` (≤ nowMs), as one transaction (contract "Credit grants"): what is
 * due before the renewal instant is applied first; then, without rollover, the plan's own open
 * grants end (their unheld units leave; held units stay held and expire when their events
 * settle); the debt is cleared (the caller charges it as overage); and the new plan grant, if
 * any, opens at `dueMs` with all of its units. One transaction of the net change: `period_reset`,
 * or `grant` with rollover (the plan's grants then keep their units). What else falls due at
 * `dueMs` is applied after it; what falls due later is left to the next step (missed periods are
 * renewed one by one, each ending its own plan grant). Returns the debt cleared.
 */
export function renewPlan(
  lots: Lots,
  input: { grant: NewGrant | null; rollover: boolean },
  dueMs: number,
  nowMs: number,
): Step & { debt: number } {
  assertInteger('dueMs', dueMs);
  if (dueMs > nowMs) throw new RangeError('a renewal is not due yet');
  if (input.grant !== null && input.grant.effectiveAtMs !== dueMs)
    throw new RangeError('the new plan grant starts at the renewal instant');
  if (lots.grants.some((g) => g.grantId === input.grant?.grantId)) throw new RangeError('the grant exists');
  const draft = draftOf(lots, dueMs - 1);
  const debt = Math.max(0, debtOf(draft.lots));
  let ended = 0;
  if (!input.rollover) {
    for (const g of draft.lots.grants) {
      if (g.source !== 'plan' || !g.opened || g.closed) continue;
      ended = addExact(ended, g.remaining - g.held);
      g.remaining = g.held;
      g.closed = true;
    }
  }
  let added = 0;
  let grantId: string | null = null;
  if (input.grant !== null) {
    const g = newGrantOf(input.grant);
    g.opened = true;
    draft.lots.grants.push(g);
    draft.lots.grants.sort(compareDrawingOrder);
    added = g.amount;
    grantId = g.grantId;
  }
  post(draft, {
    kind: input.rollover ? 'grant' : 'period_reset',
    amount: addExact(addExact(-ended, debt), added),
    grantId,
  });
  applyDue(draft, dueMs);
  return { ...draft, debt };
}

/**
 * A mid-month increase (contract): `removeUnits` leave (the monthly refills' unheld units first,
 * then the rest in drawing order; what no grant covers becomes debt) and the new grant opens,
 * repaying any debt first, as one `proration` transaction of the net change, naming the new grant
 * and where the removed units came from.
 */
export function prorate(
  lots: Lots,
  removeUnits: number,
  grant: NewGrant,
  nowMs: number,
): Step & { drawnFrom: Allocation[] } {
  assertNonNegative('removeUnits', removeUnits);
  if (grant.effectiveAtMs > nowMs) throw new RangeError('a proration grant starts now');
  if (lots.grants.some((g) => g.grantId === grant.grantId)) throw new RangeError('the grant exists');
  const draft = draftOf(lots, nowMs);
  const drawnFrom = draw(draft, removeUnits, 'use', (g) => g.source === 'monthly_refill');
  const g = newGrantOf(grant);
  g.opened = true;
  draft.lots.grants.push(g);
  draft.lots.grants.sort(compareDrawingOrder);
  post(draft, { kind: 'proration', amount: addExact(g.amount, -removeUnits), grantId: g.grantId, drawnFrom });
  repayDebt(draft);
  applyDue(draft, nowMs);
  return { ...draft, drawnFrom };
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

function refusal(reason: GrantRefusalReason, message: string, param?: string): GrantRefusal {
  const r: GrantRefusal = { ok: false, reason, message };
  if (param !== undefined) r.param = param;
  return r;
}

/** The grant at `nowMs` in a draft, or why it cannot be changed (`voided` passes when allowed). */
function changeable(draft: Draft, grantId: string, nowMs: number, allowVoided: boolean): Grant | GrantRefusal {
  const g = draft.lots.grants.find((x) => x.grantId === grantId);
  if (g === undefined) return refusal('not_found', `no grant ${grantId}`);
  const status = statusOf(g, nowMs);
  // A grant closed but not voided has expired, even read at an instant before its expiry (a caller's clock read
  // before it waited for the balance, while another applied the expiry).
  if (status === 'expired' || (g.closed && g.voidedAtMs === null))
    return refusal('grant_expired', 'the grant has expired');
  if (status === 'depleted') return refusal('grant_depleted', 'the grant has no remaining units');
  if (status === 'voided' && !allowVoided) return refusal('grant_voided', 'the grant has been voided');
  return g;
}

/**
 * Voids a grant: its unheld remaining leaves with one `grant_void` transaction, and its held units
 * are voided when their events settle. Voiding a voided grant changes nothing; an expired or
 * depleted one is refused. A scheduled grant is closed with no transaction and never opens.
 */
export function voidGrant(lots: Lots, grantId: string, nowMs: number): GrantOutcome<Step> {
  const draft = draftOf(lots, nowMs);
  const g = changeable(draft, grantId, nowMs, true);
  if ('ok' in g) return g;
  if (g.voidedAtMs === null) {
    g.voidedAtMs = nowMs;
    close(draft, g, 'grant_void');
  }
  return { ok: true, value: draft };
}

/**
 * Changes a scheduled or active grant's priority or expiry (null: never expires); refused on any
 * other status, or for an expiry not after `effective_at`. An expiry at or before now expires
 * the grant at once (one `grant_expiry` of its unheld units).
 */
export function patchGrant(
  lots: Lots,
  grantId: string,
  patch: { priority?: number; expiresAtMs?: number | null },
  nowMs: number,
): GrantOutcome<Step> {
  if (patch.priority !== undefined) assertPriority(patch.priority);
  if (patch.expiresAtMs !== undefined && patch.expiresAtMs !== null) assertInteger('expiresAtMs', patch.expiresAtMs);
  const draft = draftOf(lots, nowMs);
  const g = changeable(draft, grantId, nowMs, false);
  if ('ok' in g) return g;
  if (patch.expiresAtMs !== undefined && patch.expiresAtMs !== null && patch.expiresAtMs <= g.effectiveAtMs)
    return refusal('expires_at_must_be_after_effective_at', 'expires_at must be after effective_at', 'expires_at');
  if (patch.priority !== undefined) g.priority = patch.priority;
  if (patch.expiresAtMs !== undefined) g.expiresAtMs = patch.expiresAtMs;
  draft.lots.grants.sort(compareDrawingOrder);
  applyDue(draft, nowMs);
  return { ok: true, value: draft };
}

// ---------------------------------------------------------------------------------------------
// The invariant

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

// ---------------------------------------------------------------------------------------------

function assertInteger(name: string, n: number): void {
  if (!Number.isSafeInteger(n)) throw new RangeError(`${name} must be a safe integer, got ${n}`);
}

function assertNonNegative(name: string, n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${name} must be a non-negative safe integer, got ${n}`);
}

function assertPriority(p: number): void {
  if (!Number.isSafeInteger(p) || p < GRANT_PRIORITY_MIN || p > GRANT_PRIORITY_MAX)
    throw new RangeError(`priority must be an integer from 0 to 100, got ${p}`);
}
