/**
 * The store as the ledger needs it, declared here by its one consumer (as Formance's ledger owns
 * its store interface): the reads a view of a balance needs, and the writes that change a balance.
 * Nothing outside src/ledger/ writes a balance's figures or grants: the store implements these
 * methods (src/store/ledger/) and the ledger reaches them through `portOf(tx)`, so that an
 * operation holding a `Tx` changes balances only through a posting (`Ledger.open`).
 *
 * Locking: `lockBalances` is the only method that takes balance row locks (PostgreSQL `FOR UPDATE`,
 * in the order given: the ledger sorts the keys, so concurrent postings never wait in a cycle; on
 * SQLite the single writer already serialises them). Every write assumes its balances are locked.
 */
import type {
  BalanceDelta,
  BalanceKey,
  BalanceRow,
  EventChange,
  EventRow,
  GrantRow,
  GrantUpdate,
  LeaseChange,
  LeaseRow,
  ReadTx,
  TransactionRow,
  Tx,
  UsageRow,
} from '../store/types.js';

/** What a view reads: committed data, no lock taken. */
export interface LedgerReadPort {
  /** The balances of these keys (each given once; missing ones absent), as committed. */
  readBalances(keys: BalanceKey[]): Promise<BalanceRow[]>;
  /** Every balance of these accounts, by account then denomination. */
  listBalancesOfAccounts(accountIds: string[]): Promise<BalanceRow[]>;
  /**
   * Pending events whose hold has expired by `nowMs`, oldest first; optionally only of these
   * balances. Inside a write transaction on PostgreSQL the rows are locked (`FOR UPDATE SKIP
   * LOCKED`: a hold another transaction is settling right now is left to it); a read locks nothing.
   */
  findExpiredHolds(nowMs: number, limit: number, only?: BalanceKey[]): Promise<EventRow[]>;
  /**
   * Leases still recorded open whose `expires_at` has come by `nowMs`, soonest first; optionally only of these
   * balances. A lease changes only under its balance's lock, so nothing here locks.
   */
  findExpiredLeases(nowMs: number, limit: number, only?: BalanceKey[]): Promise<LeaseRow[]>;
}

/** What a posting writes, inside the transaction that opened it. */
export interface LedgerPort extends LedgerReadPort {
  /** Locks the balances, in the order given (sorted by the caller), and returns them; missing keys are absent. */
  lockBalances(keys: BalanceKey[]): Promise<BalanceRow[]>;
  /**
   * One posting's write: inserts `events`, applies `deltas` (`amount = amount + Δ`, the grants and
   * their next instant) to their locked balances, appends `transactions` in order (their `seq`
   * keeps it) and adds `usage` to the hourly rollups; returns the balances changed, as after.
   * PostgreSQL runs it as one statement (the ingest path's whole write).
   */
  writeLedger(
    events: EventRow[],
    deltas: BalanceDelta[],
    transactions: TransactionRow[],
    usage?: UsageRow[],
  ): Promise<BalanceRow[]>;
  insertGrants(rows: GrantRow[]): Promise<void>;
  updateGrants(rows: GrantUpdate[]): Promise<void>;
  /** The holds a posting resolved: each event's new state and cost (expires_at cleared), each event once. */
  updateEvents(changes: EventChange[]): Promise<void>;
  insertLease(row: LeaseRow): Promise<void>;
  /** Leases drawn, closed or expired by a posting: their figures and status as it leaves them. */
  updateLeases(changes: LeaseChange[]): Promise<void>;
  /**
   * Balances with a grant start or expiry due at `nowMs`, at most `limit`; on PostgreSQL skipping
   * rows another transaction has locked.
   */
  findBalancesWithGrantsDue(nowMs: number, limit: number): Promise<BalanceKey[]>;
}

/**
 * The key under which every transaction of the store carries its implementation of the port. Only
 * src/ledger/ (through portOf) and the store that implements it name it: test/architecture.test.ts.
 */
export const LEDGER_PORT: unique symbol = Symbol('ledger port');

/** The ledger's port of a transaction: the store's implementation of it. */
export function portOf(tx: Tx): LedgerPort;
export function portOf(tx: ReadTx): LedgerReadPort;
export function portOf(tx: ReadTx | Tx): LedgerReadPort | LedgerPort {
  return tx[LEDGER_PORT];
}
