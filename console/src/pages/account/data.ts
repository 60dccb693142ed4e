/**
 * What the account page shows, asked for by the page's one poll (usePoll, every second).
 *
 * Each tick asks for the account. Its balances move with every transaction and hold, so they tell which lists
 * changed, and the new transactions then tell what happened (usage, a refill, a proration): each list notes the
 * "footprint" it was loaded under, and only a list whose footprint moved is asked for again (those that read the
 * transactions after them, in a second round of the same tick). The few changes that leave no footprint (a
 * charge that failed without touching a balance, a card replaced, an event that cost nothing) are caught by
 * asking again, every SWEEP_TICKS ticks with nothing else to ask, the list asked longest ago. The lists together
 * make at most LIST_BUDGET requests in any BUDGET_MS, so that the page makes at most two requests a second however
 * busy the account is (the lists then wait their turn, longest-waiting first). The first load and a person's
 * action ask for everything at once. The grants the transactions name get their names from the grants lists;
 * one that no list has (it ended before the page loaded it) is asked for once, by id.
 */
import {
  type Account,
  ApiError,
  type BillingEvent,
  type Grant,
  type Transaction,
  type UsageGroup,
  allPages,
  api,
  ok,
} from '../../api';
import type { operations } from '@billing-engine/client';
import { shortId, usagePeriod } from '../../format';

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
/** Pages of one balance's grants the panel loads (100 each). */
const GRANT_MAX_PAGES = 3;
/** The newest transactions whose grants get a label (asked for one by one, at most GRANT_LOOKUPS a load). */
const LABELLED_TXS = 100;
const GRANT_LOOKUPS = 10;

/** The lists of the page besides the account itself. */
export const PARTS = ['transactions', 'grants', 'events', 'holds', 'usage', 'charges', 'card'] as const;
export type Part = (typeof PARTS)[number];

/** At most this many list requests in any BUDGET_MS (besides the account's own, one a tick). */
export const LIST_BUDGET = 10;
export const BUDGET_MS = 10_000;
/** How often (in ticks with nothing else to ask) a list is asked for although the account shows no change. */
export const SWEEP_TICKS = 2;
/** The usage panel's period. */
export const USAGE_DAYS = 14;
/** The chart draws at most this many pages of the newest transactions. */
const TX_MAX_PAGES = 20;

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
  /** The footprint (see `footprint`) each list was last loaded under. */
  loadedUnder: Partial<Record<Part, string>>;
}

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

/** Grants the newest transactions name that have no label yet (grants that ended before the page loaded them). */
function unlabelled(v: Pick<AccountView, 'transactions' | 'grantLabels'>): string[] {
  const ids = new Set<string>();
  for (const t of v.transactions?.slice(0, LABELLED_TXS) ?? []) {
    for (const d of t.drawn_from ?? []) ids.add(d.grant_id);
    if (t.grant_id) ids.add(t.grant_id);
  }
  return [...ids].filter((id) => v.grantLabels?.[id] === undefined);
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
const asks = (part: Part, a: Account) => part !== 'card' || a.processor_id !== null;

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

const path = (q: AccountQuery) => ({ account_id: q.accountId });

async function loadTransactions(
  q: AccountQuery,
  prev: Transaction[] | undefined,
  partial: (txs: Transaction[]) => void,
): Promise<Transaction[]> {
  const page = (cursor?: string) =>
    ok(
      api.GET('/v1/accounts/{account_id}/transactions', {
        params: { path: path(q), query: { limit: 100, ...(cursor ? { starting_after: cursor } : {}) } },
      }),
    );
  if (!prev) {
    // The newest page shows at once; older pages follow into the chart as they arrive.
    const all: Transaction[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < TX_MAX_PAGES; i++) {
      const p = await page(cursor);
      all.push(...p.data);
      if (!p.has_more || !p.next_cursor) break;
      partial([...all]);
      cursor = p.next_cursor;
    }
    return all;
  }
  // Live: only the newest page, merged in front of what is already here.
  const first = await page();
  const known = new Set(prev.slice(0, 200).map((t) => t.transaction_id));
  const fresh: Transaction[] = [];
  for (const t of first.data) {
    if (known.has(t.transaction_id)) break;
    fresh.push(t);
  }
  if (fresh.length === 0) return prev;
  if (fresh.length === first.data.length && first.has_more) return allPages(page, TX_MAX_PAGES);
  return [...fresh, ...prev];
}

/** What made a grant, in words: for a grant without a name. */
const SOURCES: Record<Grant['source'], string> = {
  grant: 'Unnamed grant',
  initial: 'Initial grant',
  adjustment: 'Adjustment',
  refill: 'Refill',
  monthly_refill: 'Monthly refill',
  plan: 'Plan period',
  proration: 'Mid-month increase',
};
/** A grant's name, else what made it. */
export const grantName = (g: Grant): string => g.name ?? SOURCES[g.source];
/** A grant in a few words, to tell it apart in a transaction: its name, else what made it and its short id. */
export const grantLabel = (g: Grant): string => g.name ?? `${SOURCES[g.source]} ${shortId(g.grant_id)}`;

/** Every balance's grants of the chosen filter (at most GRANT_MAX_PAGES pages each), and what to call them. */
async function loadGrants(q: AccountQuery, view: AccountView): Promise<Partial<AccountView>> {
  const filter = q.grantFilter;
  const more: string[] = [];
  const lists = await Promise.all(
    view.account.balances.map(async (b) => {
      const list: Grant[] = [];
      let cursor: string | undefined;
      for (let i = 0; ; i++) {
        const query = { limit: 100, status: GRANT_FILTERS[filter], ...(cursor ? { starting_after: cursor } : {}) };
        const p = await ok(
          api.GET('/v1/accounts/{account_id}/balance/{denomination}/grants', {
            params: { path: { ...path(q), denomination: b.denomination }, query },
          }),
        );
        list.push(...p.data);
        if (!p.has_more || !p.next_cursor) break;
        if (i + 1 === GRANT_MAX_PAGES) {
          more.push(b.denomination);
          break;
        }
        cursor = p.next_cursor;
      }
      return [b.denomination, list] as const;
    }),
  );
  const grantLabels = { ...view.grantLabels };
  for (const [, list] of lists) for (const g of list) grantLabels[g.grant_id] = grantLabel(g);
  return { grants: { filter, byDenomination: Object.fromEntries(lists), more }, grantLabels };
}

/**
 * Labels for the grants the newest transactions name that no grants list had (they ended before the page loaded
 * them): each asked for once, a few a tick. Nothing is asked while every grant named has a label.
 */
async function labelGrants(view: AccountView): Promise<AccountView> {
  const missing = unlabelled(view).slice(0, GRANT_LOOKUPS);
  if (missing.length === 0 || view.grants === undefined) return view;
  const grantLabels = { ...view.grantLabels };
  await Promise.all(
    missing.map(async (id) => {
      try {
        const g = (await ok(api.GET('/v1/grants/{grant_id}', { params: { path: { grant_id: id } } }))).data;
        grantLabels[id] = grantLabel(g);
      } catch (err) {
        // Gone (or never this company's): not asked for again, the short id says which. Else: again next tick.
        if (err instanceof ApiError && err.status === 404) grantLabels[id] = shortId(id);
      }
    }),
  );
  return { ...view, grantLabels };
}

/** One list, loaded (a list of more than one page, rare when live, makes more than one request). */
async function loadPart(
  part: Part,
  q: AccountQuery,
  view: AccountView,
  partial: (patch: Partial<AccountView>) => void,
): Promise<Partial<AccountView>> {
  switch (part) {
    case 'transactions':
      return { transactions: await loadTransactions(q, view.transactions, (t) => partial({ transactions: t })) };
    case 'events': {
      const state = q.eventState;
      const query = { limit: 50, ...(state ? { state } : {}) };
      const list = (await ok(api.GET('/v1/accounts/{account_id}/events', { params: { path: path(q), query } }))).data;
      return { events: { state, list } };
    }
    case 'grants':
      return loadGrants(q, view);
    case 'holds': {
      const query = { limit: 50, state: 'pending' as const };
      return {
        holds: (await ok(api.GET('/v1/accounts/{account_id}/events', { params: { path: path(q), query } }))).data,
      };
    }
    case 'usage': {
      const period = usagePeriod(USAGE_DAYS);
      const groups = await allPages((c) =>
        ok(
          api.GET('/v1/accounts/{account_id}/usage', {
            params: {
              path: path(q),
              query: {
                ...period,
                window: 'day',
                group_by: 'type,denomination',
                limit: 100,
                ...(c ? { starting_after: c } : {}),
              },
            },
          }),
        ),
      );
      return { usage: { from: period.from, groups } };
    }
    case 'charges': {
      const query = { limit: 25 };
      return {
        charges: (await ok(api.GET('/v1/accounts/{account_id}/charges', { params: { path: path(q), query } }))).data,
      };
    }
    case 'card': {
      if (!asks('card', view.account)) return { card: null };
      try {
        return { card: (await ok(api.GET('/v1/accounts/{account_id}/card', { params: { path: path(q) } }))).data };
      } catch (e) {
        // A customer without a card yet (an account created with its processor_id): there is no 200 to ask.
        if (e instanceof ApiError && e.status === 404) return { card: null };
        throw e;
      }
    }
  }
}

/** The loader of the poll: the account, then the lists `choose` picks, each shown as soon as it arrives. */
export async function loadAccountView(
  q: AccountQuery,
  prev: AccountView | undefined,
  partial: (view: AccountView) => void,
): Promise<AccountView> {
  const account = (await ok(api.GET('/v1/accounts/{account_id}', { params: { path: path(q) } }))).data;
  const now = Date.now();
  let view: AccountView = prev ? { ...prev, account } : { account, errors: {}, loadedUnder: {} };
  const load = (parts: readonly Part[]) =>
    Promise.all(
      parts.map(async (part) => {
        const under = footprint(part, view, q);
        try {
          const patch = await loadPart(part, q, view, (p) => {
            view = { ...view, ...p };
            partial(view);
          });
          const errors = { ...view.errors };
          delete errors[part];
          view = { ...view, ...patch, errors, loadedUnder: { ...view.loadedUnder, [part]: under } };
        } catch (err) {
          const error = err instanceof ApiError ? err : new ApiError(0, 'client', String(err));
          view = { ...view, errors: { ...view.errors, [part]: error } };
        }
        partial(view);
      }),
    );
  if (!prev) {
    // The first load: the account shows at once, every list follows as it arrives. Those that read the
    // transactions are loaded before these are known, so the next tick asks for them again: nothing slips by.
    partial(view);
    for (const p of PARTS) q.askedAt[p] = now;
    await load(PARTS);
    return labelGrants(view);
  }
  const done = new Set<Part>();
  let round = choose(q, view, now, done);
  // Nothing moved: the same object, so that nothing renders again.
  if (round.length === 0 && JSON.stringify(prev.account) === JSON.stringify(account)) return prev;
  while (round.length > 0) {
    for (const p of round) done.add(p);
    // The lists that read the transactions are loaded after them, under what they say.
    const after = round.includes('transactions') ? round.filter((p) => READS_TRANSACTIONS.has(p)) : [];
    await load(round.filter((p) => !after.includes(p)));
    await load(after);
    // New transactions can make other lists stale: a second round.
    round = choose(q, view, now, done);
  }
  return labelGrants(view);
}
