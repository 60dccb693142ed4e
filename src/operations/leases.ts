/**
 * Leases (contract "Leases"): open one (a hold of `amount` on a balance, refused like usage would be when the
 * balance or a spend limit cannot carry it), close it (the rest released at once), read one and an account's.
 * Events draw from leases in the ingest plan (ledger/ingest.ts); the ledger releases expired ones (ledger/due.ts)
 * the first time a read, a write or the sweeper meets them.
 */
import { hold, releaseHold } from '../domain/grants.js';
import { available } from '../domain/holds.js';
import { limitPassed, spendLimitFailure } from '../domain/ingest-plan.js';
import {
  LEASE_TTL_DEFAULT_S,
  type LeaseRow,
  type LeaseStatus,
  leaseAt,
  leaseOpened,
  leaseReleased,
  remainingOf,
  sameLeaseRequest,
  statusAt,
} from '../domain/leases.js';
import { fail, OutcomeError } from '../domain/outcome.js';
import { toIso } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type { Page, PageResult } from '../store/types.js';
import type { Command, Deps } from './deps.js';
import { ownedAccount, unknownCursor } from './lookups.js';

export interface OpenLeaseInput {
  denomination: string;
  amount: number;
  ttl_seconds?: number;
  id?: string;
}

/**
 * Opens a lease: the balance locked (what is due on it written first), then its `amount` held from the grants in
 * drawing order, counted as spend. 402 when `available` is short or a spend limit would be passed; with a client
 * `id` seen before, the same lease as it is now (409 when that id opened a lease of another balance or amount).
 */
export function openLease(deps: Deps, companyId: string, accountId: string, input: OpenLeaseInput): Command<LeaseRow> {
  return async (tx) => {
    await ownedAccount(tx, companyId, accountId);
    const { denomination, amount } = input;
    const clientId = input.id ?? null;
    const p = await deps.ledger.open(tx, [{ accountId, denomination }], () => deps.clock.now());
    const { nowMs } = p;
    if (clientId !== null) {
      const earlier = await tx.leases.findLeaseByClientId(companyId, clientId);
      if (earlier !== undefined) {
        if (!sameLeaseRequest(earlier, { accountId, denomination, amount }))
          fail(
            'lease_id_reused_with_different_content',
            `lease id "${clientId}" was already used for a lease of another balance or amount`,
            'id',
          );
        return leaseAt(earlier, nowMs);
      }
    }
    const b = p.balance(accountId, denomination);
    if (!b)
      fail(
        'no_balance_for_denomination',
        `the account has no balance of denomination "${denomination}"`,
        'denomination',
      );
    const free = available(b.amount, b.pending);
    if (free < amount)
      fail(
        'insufficient_balance',
        `the balance "${denomination}" has ${free} available, the lease asks ${amount}`,
        undefined,
        {
          denomination,
          available: free,
        },
      );
    const breach = limitPassed(b, amount, nowMs);
    if (breach !== undefined) throw new OutcomeError(spendLimitFailure('lease', denomination, breach));
    const lease: LeaseRow = {
      leaseId: newId('ls'),
      companyId,
      accountId,
      denomination,
      clientId,
      amount,
      used: 0,
      released: 0,
      status: 'open',
      heldFrom: [],
      expiresAtMs: nowMs + (input.ttl_seconds ?? LEASE_TTL_DEFAULT_S) * 1000,
      createdAtMs: nowMs,
      closedAtMs: null,
    };
    await p.post(
      [
        {
          accountId,
          denomination,
          spend: leaseOpened(amount, nowMs),
          apply: (lots) => {
            const step = hold(lots, amount, nowMs);
            lease.heldFrom = step.heldFrom;
            return step;
          },
        },
      ],
      { openedLeases: [lease] },
    );
    return lease;
  };
}

/**
 * Closes the company's lease: what it still holds goes back to the balance (and out of the spend it was counted
 * in). A closed lease is answered as it is; an expired one (its units already released) is 409 `lease_expired`.
 */
export function closeLease(deps: Deps, companyId: string, leaseId: string): Command<LeaseRow> {
  return async (tx) => {
    const found = await tx.leases.findLease(companyId, leaseId);
    if (!found) fail('not_found', `no such lease: ${leaseId}`, 'lease_id');
    // Locked first: the posting releases the lease if it has expired meanwhile, and the row read next is current.
    const p = await deps.ledger.open(tx, [found], () => deps.clock.now());
    const l = (await tx.leases.findLease(companyId, leaseId))!;
    if (l.status === 'closed') return l;
    // Expired from expires_at on, written so or not (a lease that holds nothing is written by the sweeper).
    if (statusAt(l, p.nowMs) === 'expired')
      fail('lease_expired', `lease ${leaseId} expired at ${toIso(l.expiresAtMs)}`);
    const units = remainingOf(l);
    const closed: LeaseRow = {
      ...l,
      status: 'closed',
      released: l.released + units,
      heldFrom: [],
      closedAtMs: p.nowMs,
    };
    const { leaseId: id, used, released, status, heldFrom, closedAtMs } = closed;
    await p.post(
      [
        {
          accountId: l.accountId,
          denomination: l.denomination,
          spend: leaseReleased(l, units),
          apply: (lots) => releaseHold(lots, l.heldFrom, units, p.nowMs),
        },
      ],
      { leases: [{ leaseId: id, used, released, status, heldFrom, closedAtMs }] },
    );
    return closed;
  };
}

/** The company's lease as it is now (404 for another company's). */
export async function getLease(deps: Deps, companyId: string, leaseId: string): Promise<LeaseRow> {
  const l = await deps.store.read((tx) => tx.leases.findLease(companyId, leaseId));
  if (!l) fail('not_found', `no such lease: ${leaseId}`, 'lease_id');
  return leaseAt(l, deps.clock.now());
}

/** An account's leases, newest first, as they are now; with `status`, those of that status now. */
export async function listLeases(
  deps: Deps,
  companyId: string,
  accountId: string,
  status: LeaseStatus | undefined,
  page: Page,
): Promise<PageResult<LeaseRow>> {
  const nowMs = deps.clock.now();
  const result = await deps.store.read(async (tx) => {
    await ownedAccount(tx, companyId, accountId);
    return tx.leases.listLeases(accountId, { ...(status !== undefined ? { status } : {}), nowMs }, page);
  });
  if (!result) unknownCursor();
  return { ...result, rows: result.rows.map((l) => leaseAt(l, nowMs)) };
}
