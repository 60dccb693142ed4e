/**
 * One list of the account page, loaded: the request (or requests) each list makes, and the part of the page's
 * view it answers. Apart from the poll (poll.ts), which decides when to call it and keeps what comes back; the
 * transactions and the grants, which are more than one plain read, have modules of their own.
 */
import { ApiError, type Transaction, allPages, api, ok } from '../../api';
import { usagePeriod } from '../../format';
import { loadGrants } from './grant-lists';
import { type AccountQuery, asks } from './schedule';
import { loadTransactions } from './transaction-list';
import { type AccountView, type Part, USAGE_DAYS } from './view';

const path = (q: AccountQuery) => ({ account_id: q.accountId });

/** The usage panel's groups: by event type and denomination, per day of the last USAGE_DAYS. */
async function loadUsage(q: AccountQuery): Promise<Partial<AccountView>> {
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

/** The card on file; null when there is none. */
async function loadCard(q: AccountQuery, view: AccountView): Promise<Partial<AccountView>> {
  if (!asks('card', view.account)) return { card: null };
  try {
    return { card: (await ok(api.GET('/v1/accounts/{account_id}/card', { params: { path: path(q) } }))).data };
  } catch (e) {
    // A customer without a card yet (an account created with its processor_id): there is no 200 to ask.
    if (e instanceof ApiError && e.status === 404) return { card: null };
    throw e;
  }
}

/** One list, loaded (a list of more than one page, rare when live, makes more than one request). */
export async function loadPart(
  part: Part,
  q: AccountQuery,
  view: AccountView,
  partial: (patch: Partial<AccountView>) => void,
): Promise<Partial<AccountView>> {
  switch (part) {
    case 'transactions': {
      const show = (t: Transaction[]) => partial({ transactions: t });
      return { transactions: await loadTransactions(q.accountId, view.transactions, show) };
    }
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
    case 'usage':
      return loadUsage(q);
    case 'charges': {
      const query = { limit: 25 };
      return {
        charges: (await ok(api.GET('/v1/accounts/{account_id}/charges', { params: { path: path(q), query } }))).data,
      };
    }
    case 'card':
      return loadCard(q, view);
  }
}
