/**
 * The account page's grants: each balance's grants of the chosen filter, and the labels the transactions panel
 * gives the grants they name. Together because loading the grants lists is what labels most grants; the few the
 * lists do not have (they ended before the page loaded them) are asked for one by one.
 */
import { ApiError, type Grant, api, ok } from '../../api';
import { shortId } from '../../format';
import { grantLabel } from './grant-names';
import type { AccountQuery } from './schedule';
import { type AccountView, GRANT_FILTERS } from './view';

/** Pages of one balance's grants the panel loads (100 each). */
const GRANT_MAX_PAGES = 3;
/** The newest transactions whose grants get a label (asked for one by one, at most GRANT_LOOKUPS a load). */
const LABELLED_TXS = 100;
const GRANT_LOOKUPS = 10;

/** Every balance's grants of the chosen filter (at most GRANT_MAX_PAGES pages each), and what to call them. */
export async function loadGrants(q: AccountQuery, view: AccountView): Promise<Partial<AccountView>> {
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
            params: { path: { account_id: q.accountId, denomination: b.denomination }, query },
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

/** Grants the newest transactions name that have no label yet (grants that ended before the page loaded them). */
function unlabelled(v: Pick<AccountView, 'transactions' | 'grantLabels'>): string[] {
  const ids = new Set<string>();
  for (const t of v.transactions?.slice(0, LABELLED_TXS) ?? []) {
    for (const d of t.drawn_from ?? []) ids.add(d.grant_id);
    if (t.grant_id) ids.add(t.grant_id);
  }
  return [...ids].filter((id) => v.grantLabels?.[id] === undefined);
}

/**
 * Labels for the grants the newest transactions name that no grants list had (they ended before the page loaded
 * them): each asked for once, a few a tick. Nothing is asked while every grant named has a label.
 */
export async function labelGrants(view: AccountView): Promise<AccountView> {
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
