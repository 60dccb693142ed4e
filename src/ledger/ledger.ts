/**
 * The ledger: the single owner of what a balance is at an instant and of how it changes. Built
 * once per process in the composition root with the balance effects (compose.ts); every operation
 * reaches balances through it:
 *
 * - `view(tx, keys, nowMs)`: balances at an instant, projected from committed data, writing nothing;
 * - `open(tx, keys, nowMs)`: a posting that has locked the balances (sorted keys) and written what
 *   is due on them, ready to post entries; its effects run inside the same transaction;
 * - the jobs' and the reads' ways to write what is due on balances nobody is changing.
 */
import type { Lots } from '../domain/grants.js';
import { remainingOf } from '../domain/leases.js';
import type { BalanceKey, BalanceRow, ReadTx, Store, Tx } from '../store/types.js';
import { balanceKey } from '../lib/keys.js';
import {
  cancellations,
  dueEntries,
  EXPIRE_BATCH_MAX,
  expiredOf,
  grantsDue,
  keysOf,
  leaseExpirations,
  noneExpired,
} from './due.js';
import { portOf } from './port.js';
import { type BalanceEffect, Posting } from './posting.js';
import { type BalanceMap, viewAccounts, viewBalances, viewGrants } from './view.js';

/** Most balances one run of the grant job applies; the job loops until none is due. */
export const GRANT_JOB_BATCH_MAX = 500;

/** Keys in one order everywhere (sorted by balanceKey): concurrent postings never lock in a cycle. */
function sortedKeys(keys: Iterable<BalanceKey>): BalanceKey[] {
  const unique = new Map<string, BalanceKey>();
  for (const k of keys) unique.set(balanceKey(k.accountId, k.denomination), k);
  return [...unique.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, k]) => k);
}

export interface OpenOptions {
  /**
   * Apply what is due up to this instant instead of `nowMs` (a plan renewal applies what fell due
   * before its own instant, then renews: domain/grants.ts renewPlan).
   */
  asOfMs?: number;
}

export class Ledger {
  constructor(private readonly effects: readonly BalanceEffect[]) {}

  /**
   * Opens the ledger work of a transaction on the balances of `keys`: locks them (each once, in
   * sorted order), then writes what is due on them at `nowMs` (grant starts and expiries, expired
   * holds released and their events cancelled: `Posting.cancelled`), with the effects. `nowMs` may
   * be a function, read once the balances are locked (what another transaction applied meanwhile
   * is then in the past). Missing balances are simply absent from the posting.
   */
  async open(
    tx: Tx,
    keys: Iterable<BalanceKey>,
    nowMs: number | (() => number),
    opts: OpenOptions = {},
  ): Promise<Posting> {
    const port = portOf(tx);
    const locked = await port.lockBalances(sortedKeys(keys));
    const now = typeof nowMs === 'number' ? nowMs : nowMs();
    const posting = new Posting(tx, port, now, this.effects, locked);
    const asOfMs = opts.asOfMs ?? now;
    const expired = await expiredOf(port, locked, asOfMs);
    if (noneExpired(expired) && !locked.some((b) => grantsDue(b, asOfMs))) return posting;
    await posting.post(dueEntries(locked, expired.events, asOfMs, expired.leases), {
      eventChanges: cancellations(expired.events, now),
      leases: leaseExpirations(expired.leases),
    });
    posting.cancelled = expired.events;
    posting.expiredLeases = expired.leases.length;
    return posting;
  }

  /** The balances of `keys` as they are at `nowMs`, projected from committed data; nothing is written. */
  view(tx: ReadTx, keys: BalanceKey[], nowMs: number): Promise<BalanceMap> {
    return viewBalances(portOf(tx), keys, nowMs);
  }

  /** Every balance of these accounts as it is at `nowMs` (by account, then denomination); nothing is written. */
  viewAccounts(tx: ReadTx, accountIds: string[], nowMs: number): Promise<BalanceRow[]> {
    return viewAccounts(portOf(tx), accountIds, nowMs);
  }

  /**
   * The grants of these accounts' balances as they are at `nowMs`, by balanceKey (grants finished at
   * that instant included, at their final figures: grantViewOf overlays a grant's row with them).
   */
  viewGrants(tx: ReadTx, accountIds: string[], nowMs: number): Promise<Map<string, Pick<Lots, 'grants'>>> {
    return viewGrants(portOf(tx), accountIds, nowMs);
  }

  /**
   * Writes what is due at `nowMs` on an account's balances (or one of them), if anything is: one
   * read to find out, and a posting only where something is due. For the reads of rows a view
   * cannot project (transactions, events): they then list what is due as written. `guard` runs
   * first in the read (the caller's ownership check).
   */
  async writeDue(
    store: Store,
    accountId: string,
    denomination: string | undefined,
    nowMs: number,
    guard: (tx: ReadTx) => Promise<unknown> = async () => {},
  ): Promise<void> {
    const due = await store.read(async (tx) => {
      await guard(tx);
      const port = portOf(tx);
      const all = await port.listBalancesOfAccounts([accountId]);
      const balances = denomination === undefined ? all : all.filter((b) => b.denomination === denomination);
      if (balances.some((b) => grantsDue(b, nowMs))) return balances;
      return noneExpired(await expiredOf(port, balances, nowMs)) ? [] : balances;
    });
    if (due.length > 0) await store.write((tx) => this.open(tx, keysOf(due), nowMs));
  }

  /** Cancels a batch of expired holds of any balance, if there are any: before a company-wide list of events. */
  async writeExpiredHolds(store: Store, nowMs: number): Promise<void> {
    const any = await store.read((tx) => portOf(tx).findExpiredHolds(nowMs, 1));
    if (any.length > 0) await store.write((tx) => this.expireHolds(tx, nowMs));
  }

  /**
   * Cancels a batch of expired holds and releases a batch of expired leases, of any balance; returns how many
   * (the sweeper loops until none).
   */
  async expireHolds(tx: Tx, nowMs: number): Promise<number> {
    const port = portOf(tx);
    const events = await port.findExpiredHolds(nowMs, EXPIRE_BATCH_MAX);
    const leases = await port.findExpiredLeases(nowMs, EXPIRE_BATCH_MAX);
    // A lease that holds nothing any more changes no balance (a posting skips a balance with nothing pending): it
    // is written expired here. Nothing else writes it: events draw nothing from it, and closing it is refused.
    const spent = leases.filter((l) => remainingOf(l) === 0);
    if (spent.length > 0) await port.updateLeases(leaseExpirations(spent));
    const holding = leases.filter((l) => remainingOf(l) !== 0);
    if (events.length === 0 && holding.length === 0) return spent.length;
    const posting = await this.open(tx, keysOf([...events, ...holding]), nowMs);
    return spent.length + posting.cancelled.length + posting.expiredLeases;
  }

  /**
   * Applies the grant starts and expiries due on balances nobody has touched since (a batch of
   * them); returns how many balances. A start or expiry another process applied first is already
   * in the locked lots, and is never applied twice.
   */
  async applyDueGrants(tx: Tx, nowMs: number): Promise<number> {
    const due = await portOf(tx).findBalancesWithGrantsDue(nowMs, GRANT_JOB_BATCH_MAX);
    if (due.length > 0) await this.open(tx, due, nowMs);
    return due.length;
  }
}
