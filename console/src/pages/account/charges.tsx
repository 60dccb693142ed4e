/** The account page's card on file and the USD charges made to it, newest first. */
import type { ApiError } from '../../api';
import { cents, when } from '../../format';
import { List } from '../../ui';
import type { Card, Charge } from './view';

export function Charges(props: {
  charges: Charge[] | undefined;
  /** null: no card on file; undefined: not known yet. */
  card: Card | null | undefined;
  error?: ApiError | undefined;
}) {
  const { card } = props;
  return (
    <section aria-labelledby="ch-h">
      <h2 id="ch-h">Charges to the card</h2>
      <p data-card>
        {card === undefined
          ? ''
          : card === null
            ? 'No card on file: attach one below (Card) before refills, plan fees or overage can be charged.'
            : `Card on file: ${card.brand} ending ${card.last4}, expires ` +
              `${String(card.exp_month).padStart(2, '0')}/${card.exp_year}.`}
      </p>
      <List
        items={props.charges}
        error={props.error}
        what="charges"
        empty={<p class="muted">No charges. Refills, plan fees, overage and mid-month increases charge the card.</p>}
      >
        {(list) => (
          <div class="table-wrap">
            <table data-table="charges">
              <caption class="sr-only">Charges</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Amount</th>
                  <th scope="col">Status</th>
                  <th scope="col">Receipt</th>
                </tr>
              </thead>
              <tbody>
                {list.map((c) => (
                  <tr key={c.charge_id}>
                    <td>{when(c.created_at)}</td>
                    <td>
                      {c.reason}
                      {c.denomination ? ` (${c.denomination})` : ''}
                    </td>
                    <td class="num">{cents(c.usd_amount)}</td>
                    <td>
                      {c.status}
                      {c.failure_code ? `: ${c.failure_code}` : ''}
                    </td>
                    <td data-field="receipt">{c.receipt_number ?? '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </List>
    </section>
  );
}
