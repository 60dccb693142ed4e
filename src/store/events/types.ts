/**
 * Events: usage events and their holds (a pending event holds its cost on its balance until it
 * is settled, cancelled or expires). Writing an event's ledger rows and balance deltas with it is
 * the ledger's (`writeLedger`, ledger/types.ts); its hourly usage, usage/.
 */
import type { GrantAllocation } from '../grants/types.js';
import type { BalanceKey } from '../balances/types.js';
import type { Page, PageResult } from '../common.js';

export type EventStateValue = 'pending' | 'complete' | 'cancelled';

export interface EventRow {
  eventId: string;
  companyId: string;
  accountId: string;
  clientSupplied: boolean;
  type: string;
  quantity: number;
  costAmount: number;
  denomination: string;
  /** The model of the price that gave the cost; null for a cost_override (or an event from before models). */
  priceModel: 'unit' | 'graduated' | 'package' | null;
  metadata: Record<string, unknown> | null;
  state: EventStateValue;
  contentHash: string | null;
  /** When the usage happened: the request's `timestamp`, else when it was recorded. */
  occurredAtMs: number;
  createdAtMs: number;
  updatedAtMs: number;
  expiresAtMs: number | null;
  /** While pending: the units it holds, per grant (what it holds beyond them is held without a grant). */
  heldFrom: GrantAllocation[] | null;
}

/** The filters of an event list; `fromMs` inclusive, `toMs` exclusive on `occurredAtMs`. */
export interface EventFilter {
  /** One account's events (the caller has checked that it is the company's). */
  accountId?: string;
  type?: string;
  state?: EventStateValue;
  denomination?: string;
  fromMs?: number;
  toMs?: number;
}

/** A settle's or a cancellation's change of one event. */
export interface EventChange {
  companyId: string;
  eventId: string;
  state: EventStateValue;
  costAmount: number;
  priceModel: EventRow['priceModel'];
  updatedAtMs: number;
}

/** An event as a company names it. */
export interface EventKey {
  companyId: string;
  eventId: string;
}

export interface EventsReadTx {
  /** The pending events of these balances: what each holds, and of which grants (audits). */
  listPendingHolds(
    keys: BalanceKey[],
  ): Promise<{ accountId: string; denomination: string; costAmount: number; heldFrom: GrantAllocation[] | null }[]>;
  findEvent(companyId: string, eventId: string): Promise<EventRow | undefined>;
  /** Events of the company with these ids (for client-id de-duplication). */
  findEventsByIds(companyId: string, eventIds: string[]): Promise<EventRow[]>;
  /**
   * Pending events whose hold has expired by `nowMs`, oldest first; optionally only of these
   * balances. Inside a write transaction on PostgreSQL the rows are locked (`FOR UPDATE SKIP
   * LOCKED`: a hold another transaction is settling right now is left to it).
   */
  findExpiredHolds(nowMs: number, limit: number, only?: BalanceKey[]): Promise<EventRow[]>;
  /**
   * Events newest `occurredAtMs` first (ties: newest recorded first), through the index of
   * their scope (company, or account); undefined when the cursor names no event of the list.
   */
  listEvents(companyId: string, filter: EventFilter, page: Page): Promise<PageResult<EventRow> | undefined>;
}

export interface EventsTx extends EventsReadTx {
  insertEvents(rows: EventRow[]): Promise<void>;
  /**
   * Locks events for settling (PostgreSQL `FOR UPDATE`, in (company_id, event_id) order, so that
   * groups of settles never wait on each other in a cycle). Each event once, however often it
   * is named; missing ones are absent.
   */
  lockEvents(keys: EventKey[]): Promise<EventRow[]>;
  /**
   * Sets the state, cost, price model and updated_at of each event (expires_at cleared); each event
   * at most once per call.
   */
  updateEvents(changes: EventChange[]): Promise<void>;
}
