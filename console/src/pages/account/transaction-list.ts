/**
 * The account page's transactions: loaded once in full (up to TX_MAX_PAGES pages, for the chart), then only the
 * newest page, merged in front of what is already here. Its own module because the merge is the one list whose
 * live load is not a plain re-read, and its rules (where the known part starts, when to read all again) are its own.
 */
import { type Transaction, allPages, api, ok } from '../../api';

/** The chart draws at most this many pages of the newest transactions. */
const TX_MAX_PAGES = 20;

/** `prev`: the transactions already loaded (newest first); `partial`: shows the first load page by page. */
export async function loadTransactions(
  accountId: string,
  prev: Transaction[] | undefined,
  partial: (txs: Transaction[]) => void,
): Promise<Transaction[]> {
  const page = (cursor?: string) =>
    ok(
      api.GET('/v1/accounts/{account_id}/transactions', {
        params: {
          path: { account_id: accountId },
          query: { limit: 100, ...(cursor ? { starting_after: cursor } : {}) },
        },
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
