/**
 * The working copy every change of domain/grants.ts is made on: a draft of the lots with what is due
 * applied first, and the moves its changes share (drawing in drawing order, repaying debt, opening and
 * closing a grant). Internal to the grant rules: domain/grants.ts is their public face.
 */
import {
  type Allocation,
  assertInteger,
  assertNonNegative,
  assertPriority,
  compareDrawingOrder,
  debtOf,
  GRANT_CATEGORIES,
  GRANT_SOURCES,
  type Grant,
  type GrantRefusal,
  type GrantRefusalReason,
  type GrantTransaction,
  type Lots,
  type NewGrant,
  type OpeningKind,
  statusOf,
} from './grant-lots.js';
import { addExact } from './money.js';

export interface Draft {
  lots: Lots;
  transactions: GrantTransaction[];
}

export function draftOf(lots: Lots, nowMs: number): Draft {
  assertInteger('nowMs', nowMs);
  const draft: Draft = {
    lots: { amount: lots.amount, pending: lots.pending, grants: lots.grants.map((g) => ({ ...g })) },
    transactions: [],
  };
  applyDue(draft, nowMs);
  return draft;
}

export function post(draft: Draft, t: GrantTransaction): void {
  if (t.amount === 0) return;
  draft.lots.amount = addExact(draft.lots.amount, t.amount);
  draft.transactions.push(t);
}

/** Whether a grant has units to draw: opened, not closed, with unheld units. */
export function isDrawable(g: Grant): boolean {
  return g.opened && !g.closed && g.remaining > g.held;
}

/** Open grants with unheld units, in drawing order. */
export function drawable(lots: Lots): Grant[] {
  const out: Grant[] = [];
  for (const g of lots.grants) if (isDrawable(g)) out.push(g);
  // Lots are kept in drawing order (sortGrants), so the sort is rarely needed.
  return inDrawingOrder(out) ? out : out.sort(compareDrawingOrder);
}

/** Whether the drawable grants among `grants` come in drawing order. */
export function inDrawingOrder(grants: readonly Grant[]): boolean {
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
export function draw(draft: Draft, units: number, into: 'use' | 'hold', first?: (g: Grant) => boolean): Allocation[] {
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
export function repayDebt(draft: Draft): void {
  let debt = debtOf(draft.lots);
  for (const g of drawable(draft.lots)) {
    if (debt <= 0) return;
    const n = Math.min(g.remaining - g.held, debt);
    g.remaining -= n;
    debt -= n;
  }
}

export function open(draft: Draft, g: Grant, kind: OpeningKind): void {
  g.opened = true;
  post(draft, { kind, amount: g.amount, grantId: g.grantId });
  repayDebt(draft);
}

/** Expiry or void: the unheld units leave; held units stay until their events settle. */
export function close(draft: Draft, g: Grant, kind: 'grant_expiry' | 'grant_void'): void {
  g.closed = true;
  if (!g.opened) {
    g.remaining = 0;
    return;
  }
  const unheld = g.remaining - g.held;
  g.remaining = g.held;
  post(draft, { kind, amount: -unheld, grantId: g.grantId });
}

export function applyDue(draft: Draft, nowMs: number): void {
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

export function isDue(g: Grant, nowMs: number): boolean {
  return (!g.opened && g.effectiveAtMs <= nowMs) || (g.expiresAtMs !== null && g.expiresAtMs <= nowMs);
}

export function merge(a: Allocation[], b: Allocation[]): Allocation[] {
  const out = a.map((x) => ({ ...x }));
  for (const x of b) {
    const same = out.find((y) => y.grantId === x.grantId);
    if (same) same.amount += x.amount;
    else out.push({ ...x });
  }
  return out;
}

/** A new grant's lot, checked (RangeError on what the HTTP layer refuses first). */
export function newGrantOf(grant: NewGrant): Grant {
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

export function refusal(reason: GrantRefusalReason, message: string, param?: string): GrantRefusal {
  const r: GrantRefusal = { ok: false, reason, message };
  if (param !== undefined) r.param = param;
  return r;
}

/** The grant at `nowMs` in a draft, or why it cannot be changed (`voided` passes when allowed). */
export function changeable(draft: Draft, grantId: string, nowMs: number, allowVoided: boolean): Grant | GrantRefusal {
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
