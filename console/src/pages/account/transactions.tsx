/** The account page's transactions, newest first: the first TX_SHOWN, more on demand from what is loaded. */
import { useState } from 'preact/hooks';
import type { ApiError, Transaction } from '../../api';
import { shortId, units, when } from '../../format';
import { List } from '../../ui';

const TX_SHOWN = 50;

/** What to call a grant: its label where the grants panel has loaded it, else its short id. */
type Labels = Record<string, string> | undefined;
const label = (labels: Labels, id: string) => labels?.[id] ?? shortId(id);

/**
 * Which grants a transaction took its units from, and which grant it opened or closed (a mid-month increase or a
 * plan renewal does both): "from Promo (40), Paid pack (10)", "into Refill g_…x2LmQ", "expired from Promo".
 */
function grantsOf(t: Transaction, labels: Labels): string {
  const parts: string[] = [];
  if (t.drawn_from && t.drawn_from.length > 0)
    parts.push(`from ${t.drawn_from.map((d) => `${label(labels, d.grant_id)} (${units(d.amount)})`).join(', ')}`);
  if (t.grant_id) {
    const verb = t.kind === 'grant_expiry' ? 'expired from' : t.kind === 'grant_void' ? 'voided from' : 'into';
    parts.push(`${verb} ${label(labels, t.grant_id)}`);
  }
  return parts.join('; ');
}

export function Transactions(props: { txs: Transaction[] | undefined; error?: ApiError; labels?: Labels }) {
  const { txs, error, labels } = props;
  const [shown, setShown] = useState(TX_SHOWN);
  return (
    <section aria-labelledby="tx-h">
      <h2 id="tx-h">Transactions</h2>
      <List items={txs} error={error} what="transactions" empty={<p class="muted">No transactions yet.</p>}>
        {(list) => (
          <>
            <div class="table-wrap">
              <table data-table="transactions">
                <caption class="sr-only">Transactions, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Kind</th>
                    <th scope="col">Amount</th>
                    <th scope="col">Balance after</th>
                    <th scope="col">Grants</th>
                    <th scope="col">Why</th>
                  </tr>
                </thead>
                <tbody>
                  {list.slice(0, shown).map((t) => (
                    <tr key={t.transaction_id}>
                      <td>{when(t.created_at)}</td>
                      <td>{t.kind}</td>
                      <td class={`num ${t.amount < 0 ? 'negative' : ''}`}>
                        {t.amount > 0 ? '+' : ''}
                        {units(t.amount)} {t.denomination}
                      </td>
                      <td class="num">{units(t.balance_after)}</td>
                      <td class="small" data-field="grants">
                        {grantsOf(t, labels)}
                      </td>
                      <td class="small">{t.reason ?? (t.event_id ? `event ${t.event_id}` : '')}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            {list.length > shown && (
              <button type="button" class="secondary" onClick={() => setShown(shown + 100)}>
                Show more ({units(list.length - shown)} more loaded)
              </button>
            )}
          </>
        )}
      </List>
    </section>
  );
}
