/** The company's accounts: search, pages, each account's balances; an empty list shows how to create one. */
import { useState } from 'preact/hooks';
import { type Account, ApiError, allPages, api, ok } from '../api';
import { units, when } from '../format';
import { usePoll } from '../hooks';
import { Empty, List } from '../ui';

const PAGE = 25;

interface Page {
  data: Account[];
  has_more: boolean;
  next_cursor: string | null;
}

/** Name, email, id or any metadata value containing the text (the fallback when the API cannot search). */
export function matches(a: Account, q: string): boolean {
  const needle = q.toLowerCase();
  const values = [a.account_id, a.name ?? '', a.email ?? '', ...Object.values(a.metadata ?? {}).map(String)];
  return values.some((v) => v.toLowerCase().includes(needle));
}

let serverSearch = true;

async function listAccounts(q: string, cursor: string | undefined): Promise<Page> {
  const query = { limit: PAGE, ...(cursor ? { starting_after: cursor } : {}) };
  if (q && serverSearch) {
    try {
      const found = await ok(api.GET('/v1/accounts', { params: { query: { ...query, q } as typeof query } }));
      // A server that ignores `q` answers the unfiltered list: search here instead.
      if (found.data.every((a) => matches(a, q))) return found;
      serverSearch = false;
    } catch (err) {
      // A server without `q` refuses it (400 naming q): search the list here instead.
      if (!(err instanceof ApiError && err.status === 400 && (err.param === 'q' || err.message.includes('q'))))
        throw err;
      serverSearch = false;
    }
  }
  if (!q) return ok(api.GET('/v1/accounts', { params: { query } }));
  const all = await allPages((c) =>
    ok(api.GET('/v1/accounts', { params: { query: { limit: 100, ...(c ? { starting_after: c } : {}) } } })),
  );
  const found = all.filter((a) => matches(a, q));
  const start = cursor ? found.findIndex((a) => a.account_id === cursor) + 1 : 0;
  const data = found.slice(start, start + PAGE);
  const has_more = start + PAGE < found.length;
  return { data, has_more, next_cursor: has_more ? (data[data.length - 1]?.account_id ?? null) : null };
}

export function AccountsPage({ companyId }: { companyId: string }) {
  const [q, setQ] = useState('');
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const page = usePoll(() => listAccounts(q, cursor), [companyId, q, cursor]);
  return (
    <section>
      <h1 tabIndex={-1}>Accounts</h1>
      <form
        class="search"
        onSubmit={(e) => {
          e.preventDefault();
          const v = new FormData(e.currentTarget as HTMLFormElement).get('q');
          setQ(String(v ?? '').trim());
          setCursors([undefined]);
        }}
      >
        <label for="account-search">Search accounts</label>
        <input id="account-search" name="q" type="search" placeholder="Name, email, id or metadata value" />
        <button type="submit">Search</button>
        {q && (
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setQ('');
              setCursors([undefined]);
            }}
          >
            Clear
          </button>
        )}
      </form>
      <List
        items={page.data?.data}
        error={page.error}
        what="accounts"
        empty={
          q ? (
            <Empty title={`No account matches “${q}”`}>Try part of a name, an email, an id or a metadata value.</Empty>
          ) : (
            <Empty title="No accounts yet">
              <p>Accounts are created by your code through the API. With one of your API keys:</p>
              <pre class="code">
                {`curl -u ${companyId}:YOUR_API_KEY \\\n  -H 'content-type: application/json' \\\n` +
                  `  -d '{"name":"Ada Lovelace","email":"ada@example.com"}' \\\n` +
                  `  ${location.origin}/v1/companies/${companyId}/accounts`}
              </pre>
              <p>
                No key at hand? <a href={`/c/${companyId}/keys`}>Create an API key</a>. The account appears here within
                a second.
              </p>
            </Empty>
          )
        }
      >
        {(accounts) => (
          <div class="table-wrap">
            <table>
              <caption class="sr-only">Accounts{q ? ` matching ${q}` : ''}</caption>
              <thead>
                <tr>
                  <th scope="col">Account</th>
                  <th scope="col" class="wide-only">
                    Email
                  </th>
                  <th scope="col">Balances (available)</th>
                  <th scope="col" class="wide-only">
                    Created
                  </th>
                </tr>
              </thead>
              <tbody>
                {accounts.map((a) => (
                  <tr key={a.account_id}>
                    <td>
                      <a href={`/c/${companyId}/accounts/${encodeURIComponent(a.account_id)}`}>
                        {a.name || a.account_id}
                      </a>
                      <div class="muted small">{a.account_id}</div>
                    </td>
                    <td class="wide-only">{a.email ?? '—'}</td>
                    <td>
                      {a.balances.length === 0
                        ? '—'
                        : a.balances.map((b) => (
                            <span key={b.denomination} class="pill" data-balance={b.denomination}>
                              {units(b.available)} {b.denomination}
                            </span>
                          ))}
                    </td>
                    <td class="wide-only">{when(a.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </List>
      <nav class="pager" aria-label="Pages of accounts">
        <button
          type="button"
          class="secondary"
          disabled={cursors.length < 2}
          onClick={() => setCursors(cursors.slice(0, -1))}
        >
          Previous page
        </button>
        <span class="muted">Page {cursors.length}</span>
        <button
          type="button"
          class="secondary"
          disabled={!page.data?.has_more}
          onClick={() => setCursors([...cursors, page.data?.next_cursor ?? undefined])}
        >
          Next page
        </button>
      </nav>
    </section>
  );
}
