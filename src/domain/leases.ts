/**
 * Leases (contract "Leases"): units held on a balance for a short time, so that a client decides in its own
 * process whether usage is allowed and reports the events afterwards, charged first against the lease. A lease is
 * a hold: opened like a pending event's (domain/grants.ts `hold`), drawn by the events that name it
 * (`drawMany` with `lease`), released at close or at `expires_at` (`releaseHold`). This module is the rest of
 * the rule: its status at an instant, what an event's cost takes from it, and its spend. Pure: no I/O, no clock.
 */
import type { Allocation } from './grant-lots.js';
import type { SpendChange } from './spend.js';

/** A lease's time to live when the request names none, and the longest it may ask for. */
export const LEASE_TTL_DEFAULT_S = 300;
export const LEASE_TTL_MAX_S = 3600;

export type LeaseStatus = 'open' | 'closed' | 'expired';

/** A lease as recorded (store/leases/). `remaining` is `amount − used − released`. */
export interface LeaseRow {
  leaseId: string;
  companyId: string;
  accountId: string;
  denomination: string;
  /** The client's id (`id` of the request), unique per company; null when none was given. */
  clientId: string | null;
  amount: number;
  /** Units the events that named it took from it. */
  used: number;
  /** Units given back to the balance at close or expiry. */
  released: number;
  /** As recorded: an `open` lease whose `expiresAtMs` has come is expired (statusAt). */
  status: LeaseStatus;
  /** The units it holds, per grant (what it holds beyond them is held without a grant), as drawn so far. */
  heldFrom: Allocation[];
  expiresAtMs: number;
  createdAtMs: number;
  /** When it was closed or expired; null while open. */
  closedAtMs: number | null;
}

/** The units a lease still holds. */
export function remainingOf(l: Pick<LeaseRow, 'amount' | 'used' | 'released'>): number {
  return l.amount - l.used - l.released;
}

/** A lease's status at `nowMs`: an open lease is expired from its `expires_at` on (a read then sees it released). */
export function statusAt(l: Pick<LeaseRow, 'status' | 'expiresAtMs'>, nowMs: number): LeaseStatus {
  return l.status === 'open' && l.expiresAtMs <= nowMs ? 'expired' : l.status;
}

/** Whether events naming the lease at `nowMs` draw from it (else they are charged to the balance alone). */
export function isOpenAt(l: Pick<LeaseRow, 'status' | 'expiresAtMs'>, nowMs: number): boolean {
  return statusAt(l, nowMs) === 'open';
}

/** The part of an event's `cost` a lease with `remaining` units covers: the rest is taken from the balance. */
export function coveredBy(remaining: number, cost: number): number {
  return Math.max(0, Math.min(remaining, cost));
}

/**
 * The spend of a lease (domain/spend.ts): its whole amount counts when it is opened (as a hold does); the events
 * it covers are not counted again; what it gives back at close or expiry is subtracted from the window it was
 * counted in. No event type: a spend alert of one event type does not see the units its events took from a lease.
 */
export function leaseOpened(amount: number, nowMs: number): SpendChange {
  return { units: amount, takenAtMs: nowMs };
}

export function leaseReleased(l: Pick<LeaseRow, 'createdAtMs'>, units: number): SpendChange {
  return { units: -units, takenAtMs: l.createdAtMs };
}

/** Whether a repeated client id names the same lease request (the same balance and amount; the ttl is not content). */
export function sameLeaseRequest(
  l: Pick<LeaseRow, 'accountId' | 'denomination' | 'amount'>,
  r: { accountId: string; denomination: string; amount: number },
): boolean {
  return l.accountId === r.accountId && l.denomination === r.denomination && l.amount === r.amount;
}

/** A lease as it is at `nowMs`: an open lease past its expiry is expired, its remaining released at `expires_at`. */
export function leaseAt(l: LeaseRow, nowMs: number): LeaseRow {
  if (l.status !== 'open' || l.expiresAtMs > nowMs) return l;
  return { ...l, status: 'expired', released: l.released + remainingOf(l), heldFrom: [], closedAtMs: l.expiresAtMs };
}
