/**
 * The account poll's decisions: which lists a tick asks for again. Apart from the loop (poll.ts) and from the
 * requests (lists.ts) because these are the rules that keep the page live and cheap, and they read only the
 * account, the lists already loaded and the poll's own state.
 *
 * The account's balances move with every transaction and hold, so they tell which lists changed, and the new
 * transactions then tell what happened (usage, a refill, a proration): each list notes the "footprint" it was
 * loaded under, and only a list whose footprint moved is asked for again (those that read the transactions after
 * them, in a second round of the same tick). The few changes that leave no footprint (a charge that failed
 * without touching a balance, a card replaced, an event that cost nothing) are caught by asking again, every
 * SWEEP_TICKS ticks with nothing else to ask, the list asked longest ago. The lists together make at most
 * LIST_BUDGET requests in any BUDGET_MS, so that the page makes at most two requests a second however busy the
 * account is (the lists then wait their turn, longest-waiting first).
 */
import type { Account, Transaction } from '../../api';
import { usagePeriod } from '../../format';
import { type AccountView, type EventState, type GrantFilter, PARTS, type Part, USAGE_DAYS } from './view';

/** At most this many list requests in any BUDGET_MS (besides the account's own, one a tick). */
export const LIST_BUDGET = 10;
export const BUDGET_MS = 10_000;
/** How often (in ticks with nothing else to ask) a list is asked for although the account shows no change. */
export const SWEEP_TICKS = 2;

/** The page's side of the poll: what it asks for, and the budget of its lists (one per open account page). */
export interface AccountQuery {
  accountId: string;
  eventState: EventState;
  grantFilter: GrantFilter;
  /** Lists a person's action wants now, whatever the budget. */
  force: Set<Part>;
  /** When each list was last asked for (the longest-waiting goes first). */
  askedAt: Record<Part, number>;
  /** When the lists' budgeted requests were made, within the last BUDGET_MS. */
  spent: number[];
  /** Ticks since the last sweep. */
  idle: number;
}

export function accountQuery(
  accountId: string,
  eventState: EventState = '',
  grantFilter: GrantFilter = 'current',
): AccountQuery {
  const askedAt = Object.fromEntries(PARTS.map((p) => [p, 0])) as Record<Part, number>;
  return { accountId, eventState, grantFilter, force: new Set(), askedAt, spent: [], idle: 0 };
}

const amounts = (a: Account) => a.balances.map((b) => `${b.denomination}=${b.amount}`).join(',');
const pending = (a: Account) => a.balances.map((b) => `${b.denomination}=${b.pending}`).join(',');
/** The newest transaction of these kinds among those loaded. */
const newest = (txs: Transaction[] | undefined, kinds: Transaction['kind'][]) =>
  txs?.find((t) => kinds.includes(t.kind))?.transaction_id ?? '';

/** What the footprints are read from: the account, and the transactions loaded. */
type Basis = Pick<AccountView, 'account' | 'transactions'>;

/** The lists whose footprint reads the transactions: loaded after them when both are due. */
const READS_TRANSACTIONS = new Set<Part>(['events', 'usage', 'charges']);

/**
 * A round in the order it is loaded: when the transactions are in it, the lists whose footprint reads them
 * come in a second step (`after`), under what the new transactions say.
 */
export function inOrder(round: Part[]): { first: Part[]; after: Part[] } {
  const after = round.includes('transactions') ? round.filter((p) => READS_TRANSACTIONS.has(p)) : [];
  return { first: round.filter((p) => !after.includes(p)), after };
}

/** What moves when the list changes: the list is asked for again when this moves. */
export function footprint(part: Part, v: Basis, q: AccountQuery): string {
  const a = v.account;
  switch (part) {
    case 'transactions':
      return amounts(a); // every transaction moves the amount of its balance
    case 'holds':
      return pending(a);
    case 'grants': {
      // A grant that joins, is drawn from, held from, expires or is voided moves its balance's amount, pending or
      // next expiry; a change that moves none (a PATCH of its name or priority) is caught by the sweep.
      const expiries = a.balances.map((b) => JSON.stringify(b.next_expiry));
      return `${q.grantFilter}|${amounts(a)}|${pending(a)}|${expiries.join(',')}`;
    }
    case 'events':
      // A pending event moves `pending`; a complete one adds a usage transaction.
      return `${q.eventState}|${pending(a)}|${newest(v.transactions, ['usage'])}`;
    case 'usage': {
      const { from, to } = usagePeriod(USAGE_DAYS); // and the period moves on with the clock
      return `${from}|${to}|${newest(v.transactions, ['usage'])}`;
    }
    case 'charges': {
      // A paid charge adds a refill, proration or period_reset transaction; a declined refill counts in its
      // balance; a plan's fee comes with the plan.
      const declines = a.balances.map((b) => `${b.consecutive_declines}${b.auto_refill_paused ? 'p' : ''}`);
      const paid = newest(v.transactions, ['refill', 'proration', 'period_reset']);
      return JSON.stringify([a.processor_id, a.plan_id, declines, paid]);
    }
    case 'card':
      return a.processor_id ?? '';
  }
}

/**
 * No request is needed to know an account without a processor customer has no card: attaching the first card
 * creates the customer, and a new customer detaches the card. Not asking spares a 404, which the browser
 * logs as an error in its console.
 */
export const asks = (part: Part, a: Account) => part !== 'card' || a.processor_id !== null;

function spend(q: AccountQuery, now: number): boolean {
  q.spent = q.spent.filter((t) => t > now - BUDGET_MS);
  if (q.spent.length >= LIST_BUDGET) return false;
  q.spent.push(now);
  return true;
}

/**
 * The lists a tick asks for: those a person's action forced (no budget), then the stale ones while the budget
 * lasts, longest-waiting first; else, on an idle tick now and then, the list asked for longest ago (a sweep).
 * `done`: asked for already this tick (a second round looks only at what the new transactions made stale).
 */
export function choose(q: AccountQuery, v: AccountView, now: number, done: Set<Part>): Part[] {
  const a = v.account;
  const waiting = PARTS.filter((p) => !done.has(p)).sort((x, y) => q.askedAt[x] - q.askedAt[y]);
  const due = (p: Part) => q.force.has(p) || v.loadedUnder[p] !== footprint(p, v, q);
  // A forced list, and one answered without a request, cost nothing; the others spend the budget.
  const free = (p: Part) => q.force.has(p) || !asks(p, a);
  const chosen = waiting.filter((p) => due(p) && (free(p) || spend(q, now)));
  if (done.size === 0 && chosen.length === 0 && ++q.idle >= SWEEP_TICKS) {
    const p = waiting.find((x) => asks(x, a));
    if (p && spend(q, now)) {
      chosen.push(p);
      q.idle = 0;
    }
  }
  for (const p of chosen) {
    q.askedAt[p] = now;
    q.force.delete(p);
  }
  return chosen;
}
