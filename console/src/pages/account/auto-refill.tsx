/** The account page's action that sets a balance's auto-refill: below a threshold, monthly, or both. */
import { useState } from 'preact/hooks';
import { api, ok } from '../../api';
import { Alert, Field, Notice, Submit, formValues, useAction } from '../../ui';
import { type ActionProps, DenominationSelect, NeedsBalance, int } from './form-parts';

export function AutoRefill({ account, onChange }: ActionProps) {
  const [denomination, setDenomination] = useState(account.balances[0]?.denomination ?? '');
  const { busy, error, run } = useAction();
  const [done, setDone] = useState('');
  const b = account.balances.find((x) => x.denomination === denomination);
  if (!b) return <NeedsBalance account={account} />;
  const submit = (e: Event) => {
    const v = formValues(e);
    void run(async () => {
      const threshold = int(v.threshold);
      await ok(
        api.PUT('/v1/accounts/{account_id}/balance/{denomination}/autorefill', {
          params: { path: { account_id: account.account_id, denomination } },
          body: {
            threshold: threshold === undefined ? null : threshold,
            amount: Number(v.amount),
            usd_charge: Number(v.usd_charge),
            refill_monthly: v.refill_monthly === 'on',
          },
        }),
      );
      setDone('Auto-refill saved. Refills happen once their charge succeeds.');
      await onChange();
    });
  };
  const field = (name: string) => (error?.param === name ? error.message : undefined);
  return (
    <form onSubmit={submit} key={denomination}>
      <DenominationSelect account={account} value={denomination} onChange={setDenomination} />
      <Field
        label="Refill when available drops below"
        name="threshold"
        type="number"
        step={1}
        defaultValue={String(b.refill_threshold ?? '')}
        hint="Leave empty to switch threshold refills off."
        error={field('threshold')}
      />
      <Field
        label="Units added per refill"
        name="amount"
        type="number"
        min={1}
        step={1}
        required
        defaultValue={String(b.refill_amount ?? '')}
        error={field('amount')}
      />
      <Field
        label="Charge per refill (USD cents)"
        name="usd_charge"
        type="number"
        min={0}
        step={1}
        required
        defaultValue={String(b.refill_usd_amount ?? '')}
        error={field('usd_charge')}
      />
      <div class="check">
        <input id="refill-monthly" type="checkbox" name="refill_monthly" defaultChecked={b.refill_monthly} />
        <label for="refill-monthly">Also refill every month (switching it on refills now)</label>
      </div>
      {error && !['threshold', 'amount', 'usd_charge'].includes(error.param ?? '') && <Alert error={error} />}
      {done && <Notice>{done}</Notice>}
      <Submit busy={busy}>Save auto-refill</Submit>
    </form>
  );
}
