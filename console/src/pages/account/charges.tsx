/** The account page's card on file and the USD charges made to it, newest first, a succeeded one's receipt too. */
import { ApiError, api, ok } from '../../api';
import { cents, when } from '../../format';
import { POPUP_BLOCKED, openHtmlWindow } from '../../html-window';
import { Alert, List, useAction } from '../../ui';
import type { Card, Charge } from './view';

/** Opens a charge's receipt (fetched with the console's credentials) in a new window. */
async function openReceipt(chargeId: string): Promise<void> {
  const html = await ok(
    api.GET('/v1/charges/{charge_id}/receipt', {
      params: { path: { charge_id: chargeId } },
      headers: { accept: 'text/html' },
      parseAs: 'text',
    }),
  );
  if (!openHtmlWindow(html)) throw new ApiError(0, 'client', POPUP_BLOCKED);
}

/** A succeeded charge's receipt number, a button that opens the receipt; "—" for a charge without one. */
function Receipt({ charge }: { charge: Charge }) {
  const { busy, error, run } = useAction();
  const n = charge.receipt_number;
  if (!n) return <>—</>;
  return (
    <>
      <button
        type="button"
        class="link"
        disabled={busy}
        aria-busy={busy ? 'true' : undefined}
        onClick={() => void run(() => openReceipt(charge.charge_id))}
      >
        {n}
        <span class="sr-only"> (open the receipt in a new window)</span>
      </button>
      <Alert error={error} />
    </>
  );
}

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
                    <td data-field="receipt">
                      <Receipt charge={c} />
                    </td>
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
