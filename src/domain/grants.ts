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
import {
  applyDue,
  changeable,
  close,
  type Draft,
  draftOf,
  draw,
  merge,
  newGrantOf,
  open,
  post,
  refusal,
  repayDebt,
} from './grant-draft.js';
import {
  type Allocation,
  assertInteger,
  assertNonNegative,
  assertPriority,
  compareDrawingOrder,
  debtOf,
  type Grant,
  type GrantOutcome,
  type Lots,
  type NewGrant,
  type OpeningKind,
  type Step,
  type TakingKind,
} from './grant-lots.js';
import { addExact } from './money.js';

export * from './grant-lots.js';

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
  /**
   * A complete event that names an open lease: `covered` of its units (≤ the lease's remaining) are the lease's
   * held units, used in the order the lease drew them (domain/leases.ts); the rest are taken as by any event.
   */
  lease?: { leaseId: string; covered: number };
}

/**
 * The events of one group on one balance, in order, on one copy of the lots (the ingest path: one copy per
 * balance, not per event): each as `take` (a `usage` transaction of −units carrying its `ref`) or `hold` would
 * do it. `allocations[i]` is where draw i's units came from (its drawn_from, or its held_from).
 */
export function drawMany(
  lots: Lots,
  draws: readonly Draw[],
  nowMs: number,
  leases: ReadonlyMap<string, readonly Allocation[]> = new Map(),
): Step & { allocations: Allocation[][]; leases: Map<string, Allocation[]> } {
  const draft = draftOf(lots, nowMs);
  const allocations: Allocation[][] = [];
  const heldBy = new Map<string, Allocation[]>();
  for (const d of draws) {
    assertNonNegative('units', d.units);
    let from: Allocation[];
    if (d.lease !== undefined && d.lease.covered > 0) {
      const { leaseId, covered } = d.lease;
      if (d.hold || covered > d.units) throw new RangeError('a lease covers part of a complete event only');
      const used = useHeld(draft, heldBy.get(leaseId) ?? leases.get(leaseId) ?? [], covered);
      heldBy.set(leaseId, used.rest);
      from = merge(used.used, draw(draft, d.units - covered + used.beyond, 'use'));
    } else from = draw(draft, d.units, d.hold ? 'hold' : 'use');
    allocations.push(from);
    if (d.hold) draft.lots.pending = addExact(draft.lots.pending, d.units);
    else post(draft, { kind: 'usage', amount: -d.units, grantId: null, drawnFrom: from, ref: d.ref });
  }
  for (const [leaseId, held] of leases) if (!heldBy.has(leaseId)) heldBy.set(leaseId, [...held]);
  return { lots: draft.lots, transactions: draft.transactions, allocations, leases: heldBy };
}

/**
 * Uses `units` of a lease's hold (`heldFrom`: what it holds per grant, in the order drawn): each grant's held
 * units are used first, in that order (held and remaining fall); `pending` falls by all of `units`. Returns what
 * was used per grant, what the lease still holds per grant, and the units it held beyond its grants that were
 * used (`beyond`: the caller draws them in drawing order, as a settle does).
 */
function useHeld(
  draft: Draft,
  heldFrom: readonly Allocation[],
  units: number,
): { used: Allocation[]; rest: Allocation[]; beyond: number } {
  if (units > draft.lots.pending) throw new RangeError(`lease units ${units} exceed pending ${draft.lots.pending}`);
  let left = units;
  const used: Allocation[] = [];
  const rest: Allocation[] = [];
  for (const h of heldFrom) {
    const g = draft.lots.grants.find((x) => x.grantId === h.grantId);
    if (g === undefined || h.amount > g.held) throw new RangeError(`the lease's held units do not match ${h.grantId}`);
    const n = Math.min(h.amount, left);
    g.held -= n;
    g.remaining -= n;
    left -= n;
    if (n > 0) used.push({ grantId: g.grantId, amount: n });
    if (h.amount > n) rest.push({ grantId: g.grantId, amount: h.amount - n });
  }
  draft.lots.pending -= units;
  return { used, rest, beyond: left };
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
