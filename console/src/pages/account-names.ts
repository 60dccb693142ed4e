/**
 * The names of the accounts a company-wide list mentions (the grants page), asked for once each and kept in the
 * page's map; a few at a time, so that a long list does not send hundreds of requests at once.
 */
import { ApiError, api, ok } from '../api';

/** Requests under way at once. */
const AT_ONCE = 8;

/** Adds to `names` the name of each account of `ids` it does not hold yet (its id when it has none or is gone). */
export async function nameAccounts(ids: readonly string[], names: Map<string, string>): Promise<void> {
  const missing = [...new Set(ids)].filter((id) => !names.has(id));
  const next = async (): Promise<void> => {
    for (let id = missing.shift(); id !== undefined; id = missing.shift()) {
      try {
        const a = (await ok(api.GET('/v1/accounts/{account_id}', { params: { path: { account_id: id } } }))).data;
        names.set(id, a.name || id);
      } catch (err) {
        // Deleted since, or out of reach: its id is what the page can say. Anything else is asked again next time.
        if (err instanceof ApiError && err.status === 404) names.set(id, id);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, missing.length) }, next));
}
