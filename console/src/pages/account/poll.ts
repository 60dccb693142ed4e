/**
 * The account page's one poll (usePoll, every second): each tick asks for the account, then for the lists the
 * poll's decisions (schedule.ts) pick, each shown as soon as it arrives. The first load and a person's action ask
 * for everything at once. The grants the transactions name get their names from the grants lists; one that no
 * list has (it ended before the page loaded it) is asked for once, by id (grant-lists.ts).
 */
import { ApiError, api, ok } from '../../api';
import { labelGrants } from './grant-lists';
import { loadPart } from './lists';
import { type AccountQuery, choose, footprint, inOrder } from './schedule';
import { type AccountView, PARTS, type Part } from './view';

/** The loader of the poll: the account, then the lists `choose` picks, each shown as soon as it arrives. */
export async function loadAccountView(
  q: AccountQuery,
  prev: AccountView | undefined,
  partial: (view: AccountView) => void,
): Promise<AccountView> {
  const path = { account_id: q.accountId };
  const account = (await ok(api.GET('/v1/accounts/{account_id}', { params: { path } }))).data;
  const now = Date.now();
  let view: AccountView = prev ? { ...prev, account } : { account, errors: {}, loadedUnder: {} };
  // Each list lands in the view as it arrives, noted with the footprint it was asked under (or with its error).
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
    const { first, after } = inOrder(round);
    await load(first);
    await load(after);
    // New transactions can make other lists stale: a second round.
    round = choose(q, view, now, done);
  }
  return labelGrants(view);
}
