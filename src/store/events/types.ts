/**
 * Events: usage events and their holds (a pending event holds its cost on its balance until it
 * is settled, cancelled or expires). An event is the domain's (domain/events.ts `EventRow`); it is
 * recorded, and its hold resolved, with the balance change it makes, through the ledger's port
 * (src/ledger/port.ts); its hourly usage, usage/.
 */
import type { EventRow } from '../../domain/events.js';
import type { EventState } from '../../domain/holds.js';
import type { Allocation } from '../grants/types.js';
import type { BalanceKey } from '../balances/types.js';
import type { Page, PageResult } from '../common.js';

export type { EventRow };

/** The filters of an event list; `fromMs` inclusive, `toMs` exclusive on `occurredAtMs`. */
export interface EventFilter {
  /** One account's events (the caller has checked that it is the company's). */
  accountId?: string;
  type?: string;
  state?: EventState;
  denomination?: string;
  fromMs?: number;
  toMs?: number;
}

/** A settle's or a cancellation's change of one event. */
export interface EventChange {
  companyId: string;
  eventId: string;
  state: EventState;
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
  ): Promise<{ accountId: string; denomination: string; costAmount: number; heldFrom: Allocation[] | null }[]>;
  findEvent(companyId: string, eventId: string): Promise<EventRow | undefined>;
  /** Events of the company with these ids (for client-id de-duplication). */
  findEventsByIds(companyId: string, eventIds: string[]): Promise<EventRow[]>;
  /**
   * Events newest `occurredAtMs` first (ties: newest recorded first), through the index of
   * their scope (company, or account); undefined when the cursor names no event of the list.
   */
  listEvents(companyId: string, filter: EventFilter, page: Page): Promise<PageResult<EventRow> | undefined>;
}

/** Events are inserted, and their holds resolved, only by the ledger's postings (src/ledger/port.ts). */
export interface EventsTx extends EventsReadTx {
  /**
   * Locks events for settling (PostgreSQL `FOR UPDATE`, in (company_id, event_id) order, so that
   * groups of settles never wait on each other in a cycle). Each event once, however often it
   * is named; missing ones are absent.
   */
  lockEvents(keys: EventKey[]): Promise<EventRow[]>;
}
