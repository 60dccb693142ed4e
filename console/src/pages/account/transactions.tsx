/** The account page's transactions, newest first: the first TX_SHOWN, more on demand from what is loaded. */
import { useState } from 'preact/hooks';
import type { ApiError, Transaction } from '../../api';
import { units, when } from '../../format';
import { List } from '../../ui';

const TX_SHOWN = 50;

export function Transactions({ txs, error }: { txs: Transaction[] | undefined; error?: ApiError }) {
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
