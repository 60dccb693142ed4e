/** The account page's action that attaches a card (a sandbox test card, or a token from Stripe). */
import { useState } from 'preact/hooks';
import { api, ok } from '../../api';
import { useCompany } from '../../session';
import { Alert, Field, Notice, Select, Submit, formValues, useAction } from '../../ui';
import type { ActionProps } from './form-parts';

const SANDBOX_TOKENS = [
  { value: 'tok_visa', label: 'Visa (tok_visa): attaches and pays' },
  { value: 'tok_mastercard', label: 'Mastercard (tok_mastercard): attaches and pays' },
  { value: 'tok_chargeCustomerFail', label: 'Attaches, every charge declined (tok_chargeCustomerFail)' },
  { value: 'tok_chargeDeclined', label: 'Declined when attached (tok_chargeDeclined)' },
];

export function AttachCard({ companyId, account, onChange }: ActionProps) {
  const company = useCompany(companyId);
  const sandbox = (company?.processor ?? 'sandbox') === 'sandbox';
  const [token, setToken] = useState('tok_visa');
  const { busy, error, run } = useAction();
  const [done, setDone] = useState('');
  const submit = (e: Event) => {
    const v = formValues(e);
    void run(async () => {
      const r = await ok(
        api.POST('/v1/accounts/{account_id}/card', {
          params: { path: { account_id: account.account_id } },
          body: { token: sandbox ? token : (v.token ?? '') },
        }),
      );
      setDone(`Card attached: ${r.data.brand} ending ${r.data.last4}, expires ${r.data.exp_month}/${r.data.exp_year}.`);
      await onChange();
    });
  };
  return (
    <form onSubmit={submit}>
      {sandbox ? (
        <Select label="Sandbox test card" name="token" value={token} onChange={setToken} options={SANDBOX_TOKENS} />
      ) : (
        <Field label="Card token" name="token" required hint="A token from Stripe's card element (tok_… or pm_…)." />
      )}
      <Alert error={error?.status === 402 ? `The card was declined: ${error.message}` : error} />
      {done && <Notice>{done}</Notice>}
      <Submit busy={busy}>Attach card</Submit>
    </form>
  );
}
