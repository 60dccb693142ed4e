/** The account page's action that creates a balance, with an optional initial amount (a grant). */
import { useState } from 'preact/hooks';
import { api, ok } from '../../api';
import { Alert, Field, Notice, Submit, formValues, useAction } from '../../ui';
import { type ActionProps, int } from './form-parts';

export function CreateBalance({ account, onChange }: ActionProps) {
  const { busy, error, run } = useAction();
  const [done, setDone] = useState('');
  const submit = (e: Event) => {
    const v = formValues(e);
    const form = e.currentTarget as HTMLFormElement;
    void run(async () => {
      const amount = int(v.amount);
      await ok(
        api.POST('/v1/accounts/{account_id}/balance/{denomination}', {
          params: { path: { account_id: account.account_id, denomination: v.denomination ?? '' } },
          body: amount === undefined ? {} : { amount },
        }),
      );
      setDone(`Balance ${v.denomination} created.`);
      form.reset();
      await onChange();
    });
  };
  return (
    <form onSubmit={submit}>
      <Field
        label="Denomination"
        name="denomination"
        required
        pattern="[A-Za-z0-9_.:\-]{1,64}"
        hint="The unit, e.g. tokens or usd: letters, digits and _ . : -"
        error={error?.param === 'denomination' ? error.message : undefined}
      />
      <Field label="Initial amount" name="amount" type="number" min={0} step={1} inputMode="numeric" />
      {error && error.param !== 'denomination' && <Alert error={error} />}
      {done && <Notice>{done}</Notice>}
      <Submit busy={busy}>Create balance</Submit>
    </form>
  );
}
