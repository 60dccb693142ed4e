/**
 * How units join and leave a balance's grants, as entries of a posting (grantEntry, takeEntry: used
 * by balances, refills, plans and charges), and how a grant reads at an instant: its row with the
 * live figures of its balance's lots (a view or a posting gives the balance as it is then).
 */
import {
  addGrant,
  GRANT_PRIORITY_DEFAULT,
  type Grant,
  type GrantCategory,
  type GrantSource,
  type GrantStatus,
  type Lots,
  type OpeningKind,
  statusOf,
  take,
  type TakingKind,
} from '../domain/grants.js';
import { AMOUNT_MAX } from '../domain/money.js';
import { formatDecimal, quotientDecimal } from '../lib/decimal.js';
import { newId } from '../lib/ids.js';
import type { BalanceRow, GrantRow } from '../store/types.js';
import type { PostedEntry } from './entries.js';

/** What a grant is made of: the API's body, or what a refill, a plan or an adjustment gives. */
export interface GrantSpec {
  amount: number;
  source: GrantSource;
  priority?: number;
  category?: GrantCategory;
  effectiveAtMs?: number;
  expiresAtMs?: number | null;
  costBasis?: string | null;
  name?: string | null;
  metadata?: Record<string, unknown> | null;
}

/** The balance a grant belongs to. */
type Owner = Pick<BalanceRow, 'companyId' | 'accountId' | 'denomination'>;

/** A new grant's row, as its balance's lots will start it. */
export function newGrantRow(owner: Owner, spec: GrantSpec, nowMs: number): GrantRow {
  return {
    grantId: newId('g'),
    companyId: owner.companyId,
    accountId: owner.accountId,
    denomination: owner.denomination,
    amount: spec.amount,
    remaining: spec.amount,
    held: 0,
    priority: spec.priority ?? GRANT_PRIORITY_DEFAULT,
    category: spec.category ?? 'promotional',
    costBasis: spec.costBasis ?? null,
    name: spec.name ?? null,
    metadata: spec.metadata ?? null,
    source: spec.source,
    effectiveAtMs: spec.effectiveAtMs ?? nowMs,
    expiresAtMs: spec.expiresAtMs ?? null,
    createdAtMs: nowMs,
    voidedAtMs: null,
  };
}

/** The domain's part of a grant row. */
export function lotOf(
  row: GrantRow,
): Pick<Grant, 'grantId' | 'amount' | 'priority' | 'category' | 'source' | 'effectiveAtMs' | 'expiresAtMs'> {
  return {
    grantId: row.grantId,
    amount: row.amount,
    priority: row.priority,
    category: row.category,
    source: row.source,
    effectiveAtMs: row.effectiveAtMs,
    expiresAtMs: row.expiresAtMs,
  };
}

/** The entry that adds a grant to a balance: one opening transaction of `kind` (or none while scheduled). */
export function grantEntry(
  owner: Owner,
  spec: GrantSpec,
  nowMs: number,
  kind: OpeningKind,
  reason: string | null = null,
): PostedEntry & { grant: GrantRow } {
  const grant = newGrantRow(owner, spec, nowMs);
  return {
    accountId: owner.accountId,
    denomination: owner.denomination,
    grant,
    reason,
    apply: (lots) => addGrant(lots, lotOf(grant), nowMs, kind),
  };
}

/** The entry that takes units away in drawing order (usage, a negative adjustment). */
export function takeEntry(
  key: { accountId: string; denomination: string },
  units: number,
  nowMs: number,
  kind: TakingKind,
  more: { eventId?: string | null; reason?: string | null } = {},
): PostedEntry {
  return { ...key, ...more, apply: (lots) => take(lots, units, nowMs, kind) };
}

/**
 * How many units may still be added to a balance without any figure leaving the exact integer range:
 * its amount once every scheduled grant has joined must stay ≤ 2^53 − 1.
 */
export function headroom(b: Pick<BalanceRow, 'amount' | 'grants'>): number {
  let committed = Math.max(b.amount, 0);
  for (const g of b.grants) if (!g.opened && !g.closed) committed += g.amount;
  return Math.max(0, AMOUNT_MAX - committed);
}

/** A refill's cost basis: USD cents per unit, to six decimal places. */
export function costBasisOf(usdCents: number, units: number): string {
  return formatDecimal(quotientDecimal(BigInt(usdCents), BigInt(units), 6));
}

/** A grant as the API shows it: its row with the live figures of its balance at an instant, and its status. */
export interface GrantView extends GrantRow {
  status: GrantStatus;
}

/**
 * A grant's row read at `nowMs` with its lot's figures where the grant is still live in its
 * balance (`balance`, as a view or a posting has it at `nowMs`); a grant no longer in the lots is
 * finished and its row holds the final figures.
 */
export function grantViewOf(row: GrantRow, balance: Pick<Lots, 'grants'> | undefined, nowMs: number): GrantView {
  const lot = balance?.grants.find((g) => g.grantId === row.grantId);
  const g: Grant = lot ?? {
    ...lotOf(row),
    remaining: row.remaining,
    held: row.held,
    voidedAtMs: row.voidedAtMs,
    opened: true,
    closed: true,
  };
  return {
    ...row,
    remaining: g.remaining,
    held: g.held,
    priority: g.priority,
    expiresAtMs: g.expiresAtMs,
    voidedAtMs: g.voidedAtMs,
    status: statusOf(g, nowMs),
  };
}
