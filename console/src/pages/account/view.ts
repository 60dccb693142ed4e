/**
 * What the account page holds, in one object: the account and each of its lists as last loaded, with why a list
 * could not be loaded and the footprint it was loaded under. Its own module so that the panels, the poll
 * (poll.ts), its decisions (schedule.ts) and the loaders (lists.ts and the modules it calls) share one shape
 * without depending on one another.
 */
import type { Account, ApiError, BillingEvent, Grant, Transaction, UsageGroup } from '../../api';
import type { operations } from '@billing-engine/client';

export type Charge = operations['listCharges']['responses'][200]['content']['application/json']['data'][number];
export type Card = operations['getCard']['responses'][200]['content']['application/json']['data'];
export type EventState = '' | 'pending' | 'complete' | 'cancelled';
/** Which grants the grants panel shows: those that can still be drawn from, those that ended, or all. */
export const GRANT_FILTERS = {
  current: 'scheduled,active',
  ended: 'depleted,expired,voided',
  all: 'scheduled,active,depleted,expired,voided',
} as const;
export type GrantFilter = keyof typeof GRANT_FILTERS;

/** The lists of the page besides the account itself. */
export const PARTS = ['transactions', 'grants', 'events', 'holds', 'usage', 'charges', 'card'] as const;
export type Part = (typeof PARTS)[number];

/** The usage panel's period. */
export const USAGE_DAYS = 14;

export interface AccountView {
  account: Account;
  /** Newest first. */
  transactions?: Transaction[];
  /** The events of the chosen state (the panel shows them only while that is still the chosen one). */
  events?: { state: EventState; list: BillingEvent[] };
  holds?: BillingEvent[];
  /** Each balance's grants of the chosen filter, in drawing order; `more`: balances with more than were loaded. */
  grants?: { filter: GrantFilter; byDenomination: Record<string, Grant[]>; more: string[] };
  /** What to call a grant in the transactions (its name, else its source), for every grant loaded so far. */
  grantLabels?: Record<string, string>;
  usage?: { from: string; groups: UsageGroup[] };
  charges?: Charge[];
  /** null: no card on file. */
  card?: Card | null;
  /** Why a list could not be loaded the last time (what it showed before stays). */
  errors: Partial<Record<Part, ApiError>>;
  /** The footprint (see `footprint` in schedule.ts) each list was last loaded under. */
  loadedUnder: Partial<Record<Part, string>>;
}
