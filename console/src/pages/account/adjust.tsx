/** The account page's action that adjusts a balance up or down, with the reason kept on the transaction. */
import { useState } from 'preact/hooks';
import { api, ok } from '../../api';
import { units } from '../../format';
import { Alert, Field, Notice, Submit, formValues, useAction } from '../../ui';
import { type ActionProps, DenominationSelect, NeedsBalance } from './form-parts';

export function Adjust({ account, onChange }: ActionProps) {
  const [denomination, setDenomination] = useState(account.balances[0]?.denomination ?? '');
  const { busy, error, run } = useAction();
  const [done, setDone] = useState('');
  if (account.balances.length === 0) return <NeedsBalance account={account} />;
  const submit = (e: Event) => {
    const v = formValues(e);
    const form = e.currentTarget as HTMLFormElement;
    void run(async () => {
      const amount = Number(v.amount);
      const r = await ok(
        api.POST('/v1/accounts/{account_id}/balance/{denomination}/adjustments', {
          params: { path: { account_id: account.account_id, denomination } },
          body: { amount, reason: v.reason ?? '' },
        }),
      );
      setDone(`Adjusted by ${units(amount)}: ${denomination} is now ${units(r.data.amount)}.`);
      form.reset();
      await onChange();
    });
  };
  return (
    <form onSubmit={submit}>
      <DenominationSelect account={account} value={denomination} onChange={setDenomination} />
      <Field
        label="Amount"
        name="amount"
        type="number"
        step={1}
        required
        hint="Positive credits the balance, negative debits it."
        error={error?.param === 'amount' ? error.message : undefined}
      />
      <Field
        label="Reason"
        name="reason"
        required
        hint="Kept on the transaction, e.g. “goodwill credit, ticket 1234”."
      />
      {error && error.param !== 'amount' && <Alert error={error} />}
      {done && <Notice>{done}</Notice>}
      <Submit busy={busy}>Adjust balance</Submit>
    </form>
  );
}
