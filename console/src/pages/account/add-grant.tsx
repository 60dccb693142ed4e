/** The account page's action that grants units to a balance: a lot with its own priority, start and expiry. */
import { useState } from 'preact/hooks';
import { type Grant, api, ok } from '../../api';
import { date, units } from '../../format';
import { Alert, Field, Notice, Select, Submit, formValues, useAction } from '../../ui';
import { type ActionProps, DenominationSelect, NeedsBalance, int } from './form-parts';

/** The form's fields, by the name the API's error `param` gives them. */
const FIELDS = ['amount', 'category', 'priority', 'effective_at', 'expires_at', 'name', 'cost_basis'];

/** A datetime-local value ("2026-12-01T00:00") read as UTC; as typed when it is no date (the API then says why). */
function utc(v: string | undefined): string | undefined {
  if (v === undefined || v.trim() === '') return undefined;
  const ms = Date.parse(`${v}Z`);
  return Number.isNaN(ms) ? v : new Date(ms).toISOString();
}

type Category = 'promotional' | 'paid';

/** The request's body: what the form's values say, with only the optional fields that were filled in. */
function grantBody(v: Record<string, string>, category: Category) {
  const priority = int(v.priority);
  const effective_at = utc(v.effective_at);
  const expires_at = utc(v.expires_at);
  const name = v.name?.trim();
  const costBasis = v.cost_basis?.trim();
  return {
    amount: Number(v.amount),
    category,
    ...(priority === undefined ? {} : { priority }),
    ...(effective_at ? { effective_at } : {}),
    ...(expires_at ? { expires_at } : {}),
    ...(name ? { name } : {}),
    ...(category === 'paid' && costBasis ? { cost_basis: costBasis } : {}),
  };
}

/** What the person is told of the grant made: how much, when it joins or what is left, when it expires. */
function granted(g: Grant, denomination: string): string {
  const when = g.status === 'scheduled' ? `joins ${date(g.effective_at)}` : `${units(g.remaining)} remaining`;
  const expiry = g.expires_at ? `expires ${date(g.expires_at)}` : 'never expires';
  return `Granted ${units(g.amount)} ${denomination}${g.name ? ` (${g.name})` : ''}: ${when}, ${expiry}.`;
}

export function AddGrant({ account, onChange }: ActionProps) {
  const [denomination, setDenomination] = useState(account.balances[0]?.denomination ?? '');
  const [category, setCategory] = useState<Category>('promotional');
  const { busy, error, run } = useAction();
  const [done, setDone] = useState('');
  if (account.balances.length === 0) return <NeedsBalance account={account} />;
  const submit = (e: Event) => {
    const v = formValues(e);
    const form = e.currentTarget as HTMLFormElement;
    void run(async () => {
      setDone('');
      const body = grantBody(v, category);
      const r = await ok(
        api.POST('/v1/accounts/{account_id}/balance/{denomination}/grants', {
          params: { path: { account_id: account.account_id, denomination } },
          body,
        }),
      );
      setDone(granted(r.data, denomination));
      form.reset();
      setCategory('promotional');
      await onChange();
    });
  };
  const param = error?.param?.replace(/^\//, '');
  const field = (name: string) => (param === name ? error?.message : undefined);
  return (
    <form onSubmit={submit} aria-label="Add a grant">
      <DenominationSelect account={account} value={denomination} onChange={setDenomination} />
      <Field
        label="Units"
        name="amount"
        type="number"
        min={1}
        step={1}
        required
        inputMode="numeric"
        error={field('amount')}
      />
      <Select
        label="Category"
        name="category"
        value={category}
        onChange={(c) => setCategory(c as Category)}
        options={[
          { value: 'promotional', label: 'Promotional (given away)' },
          { value: 'paid', label: 'Paid (bought)' },
        ]}
        error={field('category')}
      />
      {category === 'paid' && (
        <Field
          label="Cost basis (USD cents per unit)"
          name="cost_basis"
          inputMode="decimal"
          hint="What a unit was sold for, e.g. 0.25; finance values outstanding paid units at it."
          error={field('cost_basis')}
        />
      )}
      <GrantTerms field={field} />
      {error && !FIELDS.includes(param ?? '') && <Alert error={error} />}
      {done && <Notice>{done}</Notice>}
      <Submit busy={busy}>Add grant</Submit>
    </form>
  );
}

/** The optional fields, each with what leaving it empty means: the order it is drawn in, its dates, its name. */
function GrantTerms({ field }: { field: (name: string) => string | undefined }) {
  return (
    <>
      <Field
        label="Priority"
        name="priority"
        type="number"
        min={0}
        max={100}
        step={1}
        inputMode="numeric"
        placeholder="50"
        hint="0–100: lower numbers are used first. Empty: 50."
        error={field('priority')}
      />
      <Field
        label="Expires at (UTC)"
        name="expires_at"
        type="datetime-local"
        hint="Unused units leave the balance then. Empty: never expires."
        error={field('expires_at')}
      />
      <Field
        label="Starts at (UTC)"
        name="effective_at"
        type="datetime-local"
        hint="Empty: now. Up to 366 days ahead."
        error={field('effective_at')}
      />
      <Field
        label="Name"
        name="name"
        maxLength={200}
        hint="Shown with the grant, e.g. “November promotion”."
        error={field('name')}
      />
    </>
  );
}
