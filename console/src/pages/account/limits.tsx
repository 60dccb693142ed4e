/**
 * The account page's action that sets a balance's spend limits: the most units usage may take in a UTC day and in
 * a UTC month. An empty field is no limit (null); the API refuses usage past a limit (402 spend_limit_reached).
 */
import { useState } from 'preact/hooks';
import { api, ok } from '../../api';
import { units } from '../../format';
import { Alert, Field, Notice, Submit, formValues, useAction } from '../../ui';
import { type ActionProps, DenominationSelect, NeedsBalance } from './form-parts';

/** A limit from its field: null when left empty (no limit), else the number the API checks. */
const limitOf = (v: string | undefined): number | null => (v === undefined || v.trim() === '' ? null : Number(v));
const said = (limit: number | null) => (limit === null ? 'no limit' : units(limit));
const LIMIT_FIELDS = ['daily', 'monthly'];

export function SpendLimits({ account, onChange }: ActionProps) {
  const [denomination, setDenomination] = useState(account.balances[0]?.denomination ?? '');
  const { busy, error, run } = useAction();
  const [done, setDone] = useState('');
  const b = account.balances.find((x) => x.denomination === denomination);
  if (!b) return <NeedsBalance account={account} />;
  const submit = (e: Event) => {
    const v = formValues(e);
    setDone('');
    void run(async () => {
      const body = { daily: limitOf(v.daily), monthly: limitOf(v.monthly) };
      const saved = await ok(
        api.PUT('/v1/accounts/{account_id}/balance/{denomination}/limits', {
          params: { path: { account_id: account.account_id, denomination } },
          body,
        }),
      );
      const { daily, monthly } = saved.data.limits;
      setDone(`Limits of ${denomination} saved: ${said(daily)} a day, ${said(monthly)} a month.`);
      await onChange();
    });
  };
  const field = (name: string) => (error?.param === name ? error.message : undefined);
  return (
    <form onSubmit={submit} key={denomination} aria-label="Spend limits">
      <DenominationSelect account={account} value={denomination} onChange={setDenomination} />
      <Field
        label="Daily limit (units per UTC day)"
        name="daily"
        type="number"
        min={0}
        step={1}
        inputMode="numeric"
        defaultValue={String(b.limits.daily ?? '')}
        hint="Leave empty for no limit."
        error={field('daily')}
      />
      <Field
        label="Monthly limit (units per UTC month)"
        name="monthly"
        type="number"
        min={0}
        step={1}
        inputMode="numeric"
        defaultValue={String(b.limits.monthly ?? '')}
        hint="Leave empty for no limit."
        error={field('monthly')}
      />
      <p class="small muted">
        Usage that would pass a limit is refused whole (402 spend_limit_reached) until the window resets at UTC midnight
        or the first of the month.
      </p>
      {error && !LIMIT_FIELDS.includes(error.param ?? '') && <Alert error={error} />}
      {done && <Notice>{done}</Notice>}
      <Submit busy={busy}>Save limits</Submit>
    </form>
  );
}
