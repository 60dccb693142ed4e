/**
 * What is due on a balance at an instant: the grant starts and expiries whose instant has come
 * (domain/grants.ts advanceTo) and the holds that outlived their hour (released, their events
 * cancelled). A view applies these entries in memory; a posting opened on the balance writes them
 * first. The same entries from the same rows, so a read at an instant sees exactly what a write
 * at that instant would find, whether or not anything applied them before.
 */
import { advanceTo, releaseHold } from '../domain/grants.js';
import { leaseReleased, remainingOf } from '../domain/leases.js';
import { holdResolved } from '../domain/spend.js';
import { balanceKey } from '../lib/keys.js';
import type { BalanceKey, BalanceRow, EventChange, EventRow, LeaseChange, LeaseRow } from '../store/types.js';
import type { PostedEntry } from './entries.js';
import type { LedgerReadPort } from './port.js';

/** Most expired holds one posting (or one sweep) cancels; the sweeper loops until none are due. */
export const EXPIRE_BATCH_MAX = 1000;

/** Whether a balance has a grant start or expiry due at `asOfMs`. */
export function grantsDue(b: BalanceRow, asOfMs: number): boolean {
  return b.grantsDueAtMs !== null && b.grantsDueAtMs <= asOfMs;
}

/**
 * The expired holds of these balances at `asOfMs` (only a balance with something pending can have
 * one: usually none has, and the query is saved).
 */
export async function expiredHoldsOf(
  port: LedgerReadPort,
  balances: Iterable<BalanceRow>,
  asOfMs: number,
): Promise<EventRow[]> {
  const holding = holdingOf(balances);
  return holding.length > 0 ? port.findExpiredHolds(asOfMs, EXPIRE_BATCH_MAX, holding) : [];
}

/** The leases of these balances expired at `asOfMs` and not yet released (only a balance with something pending). */
export async function expiredLeasesOf(
  port: LedgerReadPort,
  balances: Iterable<BalanceRow>,
  asOfMs: number,
): Promise<LeaseRow[]> {
  const holding = holdingOf(balances);
  return holding.length > 0 ? port.findExpiredLeases(asOfMs, EXPIRE_BATCH_MAX, holding) : [];
}

/** What is held on these balances and due at `asOfMs`: holds of pending events, and leases. */
export interface ExpiredHolds {
  events: EventRow[];
  leases: LeaseRow[];
}

export async function expiredOf(
  port: LedgerReadPort,
  balances: readonly BalanceRow[],
  asOfMs: number,
): Promise<ExpiredHolds> {
  return {
    events: await expiredHoldsOf(port, balances, asOfMs),
    leases: await expiredLeasesOf(port, balances, asOfMs),
  };
}

export function noneExpired(e: ExpiredHolds): boolean {
  return e.events.length === 0 && e.leases.length === 0;
}

function holdingOf(balances: Iterable<BalanceRow>): BalanceKey[] {
  const holding: BalanceKey[] = [];
  for (const b of balances) if (b.pending !== 0) holding.push({ accountId: b.accountId, denomination: b.denomination });
  return holding;
}

/**
 * The entries that apply what is due at `asOfMs` on these balances: each balance's grant instants
 * first, then each expired hold released (its event's transactions, if its grants expired or were
 * voided meanwhile, name it).
 */
export function dueEntries(
  balances: Iterable<BalanceRow>,
  expired: readonly EventRow[],
  asOfMs: number,
  leases: readonly LeaseRow[] = [],
): PostedEntry[] {
  const entries: PostedEntry[] = [];
  for (const b of balances) {
    if (!grantsDue(b, asOfMs)) continue;
    entries.push({
      accountId: b.accountId,
      denomination: b.denomination,
      apply: (lots) => advanceTo(lots, asOfMs),
    });
  }
  for (const e of expired)
    entries.push({
      accountId: e.accountId,
      denomination: e.denomination,
      eventId: e.eventId,
      apply: (lots) => releaseHold(lots, e.heldFrom ?? [], e.costAmount, asOfMs),
      spend: holdResolved(e.costAmount, e.createdAtMs, null, asOfMs, e.type),
    });
  for (const l of leases)
    entries.push({
      accountId: l.accountId,
      denomination: l.denomination,
      apply: (lots) => releaseHold(lots, l.heldFrom, remainingOf(l), asOfMs),
      spend: leaseReleased(l, remainingOf(l)),
    });
  return entries;
}

/** The expired leases, released at their `expires_at` (the instant a read first sees them released). */
export function leaseExpirations(leases: readonly LeaseRow[]): LeaseChange[] {
  return leases.map((l) => ({
    leaseId: l.leaseId,
    used: l.used,
    released: l.released + remainingOf(l),
    status: 'expired' as const,
    heldFrom: [],
    closedAtMs: l.expiresAtMs,
  }));
}

/** The expired holds' events, cancelled at `nowMs`. */
export function cancellations(expired: readonly EventRow[], nowMs: number): EventChange[] {
  return expired.map((e) => ({
    companyId: e.companyId,
    eventId: e.eventId,
    state: 'cancelled' as const,
    costAmount: e.costAmount,
    priceModel: e.priceModel,
    updatedAtMs: nowMs,
  }));
}

/** The balance keys of these rows or events, each once. */
export function keysOf(items: Iterable<BalanceKey>): BalanceKey[] {
  const unique = new Map<string, BalanceKey>();
  for (const k of items) unique.set(balanceKey(k.accountId, k.denomination), k);
  return [...unique.values()];
}
