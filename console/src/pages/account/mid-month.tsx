/** The account page's mid-month increase of a monthly refill: the prorated price first, then the charge. */
import { useState } from 'preact/hooks';
import { api, ok } from '../../api';
import { cents, units } from '../../format';
import { Alert, Field, Notice, Submit, formValues, useAction } from '../../ui';
import { type ActionProps, DenominationSelect, NeedsBalance } from './form-parts';

interface Quote {
  amount: number;
  usd_charge: number;
  denomination: string;
  charged: string;
  balanceAfter: number;
}

export function MidMonth({ account, onChange }: ActionProps) {
  const [denomination, setDenomination] = useState(account.balances[0]?.denomination ?? '');
  const { busy, error, run } = useAction();
  const [quote, setQuote] = useState<Quote | null>(null);
  const [done, setDone] = useState('');
  if (account.balances.length === 0) return <NeedsBalance account={account} />;
  const call = (q: { amount: number; usd_charge: number }, dryrun: boolean) =>
    ok(
      api.POST('/v1/accounts/{account_id}/modifymidmonth', {
        params: { path: { account_id: account.account_id } },
        body: { denomination, amount: q.amount, usd_charge: q.usd_charge, dryrun },
      }),
    );
  const preview = (e: Event) => {
    const v = formValues(e);
    void run(async () => {
      const q = { amount: Number(v.amount), usd_charge: Number(v.usd_charge) };
      const r = await call(q, true);
      setDone('');
      setQuote({ ...q, denomination, charged: r.data.usd_amount_charged, balanceAfter: r.data.amount });
    });
  };
  const confirm = () =>
    void run(async () => {
      if (!quote) return;
      const r = await call(quote, false);
      setQuote(null);
      setDone(`Done: charged ${cents(r.data.usd_amount_charged)}; ${denomination} is now ${units(r.data.amount)}.`);
      await onChange();
    });
  const field = (name: string) => (error?.param === name ? error.message : undefined);
  return (
    <div>
      {!quote ? (
        <form onSubmit={preview}>
          <DenominationSelect account={account} value={denomination} onChange={setDenomination} />
          <Field
            label="New monthly refill (units)"
            name="amount"
            type="number"
            min={1}
            step={1}
            required
            error={field('amount')}
          />
          <Field
            label="New monthly price (USD cents)"
            name="usd_charge"
            type="number"
            min={0}
            step={1}
            required
            error={field('usd_charge')}
          />
          {error && !['amount', 'usd_charge'].includes(error.param ?? '') && <Alert error={error} />}
          {done && <Notice>{done}</Notice>}
          <Submit busy={busy}>See the price</Submit>
        </form>
      ) : (
        <section class="quote" aria-label="Mid-month increase quote">
          <p>
            Increasing the monthly refill of <strong>{quote.denomination}</strong> to {units(quote.amount)} units for
            {` ${cents(quote.usd_charge)}`} charges the card <strong data-quote>{cents(quote.charged)}</strong> now
            (prorated); the balance becomes {units(quote.balanceAfter)}.
          </p>
          <Alert error={error} />
          <button type="button" onClick={confirm} disabled={busy}>
            Charge {cents(quote.charged)} and increase
          </button>{' '}
          <button type="button" class="secondary" onClick={() => setQuote(null)}>
            Cancel
          </button>
        </section>
      )}
    </div>
  );
}
