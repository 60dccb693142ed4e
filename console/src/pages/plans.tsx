/** Plans (every field, with the API's validation message next to the field it names) and prices. */
import { useState } from 'preact/hooks';
import { type ApiError, api, ok } from '../api';
import { cents, units, when } from '../format';
import { usePoll } from '../hooks';
import { Alert, Empty, Field, List, Notice, Submit, formValues, useAction } from '../ui';
import { Prices } from './prices';

/** "balances/0/amount", "balances.0.amount" and "/balances/0/amount" name the same field. */
const normalize = (param: string | undefined) =>
  (param ?? '')
    .replace(/^\//, '')
    .replace(/[/[\]]+/g, '.')
    .replace(/\.$/, '');

interface Row {
  key: number;
}
let rowKeys = 0;

export function PlansPage({ companyId }: { companyId: string }) {
  return (
    <section>
      <h1 tabIndex={-1}>Plans &amp; prices</h1>
      <div class="grid-2">
        <Prices />
        <NewPlan companyId={companyId} />
      </div>
      <Plans companyId={companyId} />
    </section>
  );
}

function Plans({ companyId }: { companyId: string }) {
  const plans = usePoll(
    async () =>
      (
        await ok(
          api.GET('/v1/companies/{company_id}/plans', {
            params: { path: { company_id: companyId }, query: { limit: 100 } },
          }),
        )
      ).data,
    [companyId],
  );
  return (
    <section aria-labelledby="plans-h">
      <h2 id="plans-h">Plans</h2>
      <List
        items={plans.data}
        error={plans.error}
        what="plans"
        empty={
          <Empty title="No plans yet">
            A plan gives an account included balances every month for a fee; create one with the form above.
          </Empty>
        }
      >
        {(list) => (
          <div class="table-wrap">
            <table data-table="plans">
              <caption class="sr-only">Plans</caption>
              <thead>
                <tr>
                  <th scope="col">Plan</th>
                  <th scope="col">Fee / month</th>
                  <th scope="col">Included</th>
                  <th scope="col">Rollover</th>
                  <th scope="col">Alert at</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {list.map((p) => (
                  <tr key={p.plan_id}>
                    <td>
                      {p.name}
                      <div class="small muted">
                        <code>{p.plan_id}</code>
                      </div>
                    </td>
                    <td class="num">{cents(p.charge_amount)}</td>
                    <td>
                      {p.balances.map((b) => (
                        <div key={b.denomination}>
                          {units(Number(b.amount))} {b.denomination}, overage {cents(b.overage_charge_amount)}/unit
                        </div>
                      ))}
                    </td>
                    <td>{p.rollover ? 'Yes' : 'No'}</td>
                    <td>{p.threshold_alert_percentage ? `${p.threshold_alert_percentage}%` : '—'}</td>
                    <td>{when(p.created_at)}</td>
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

function NewPlan({ companyId }: { companyId: string }) {
  const [rows, setRows] = useState<Row[]>([{ key: ++rowKeys }]);
  const [local, setLocal] = useState<Record<string, string>>({});
  const { busy, error, run, setError } = useAction();
  const [done, setDone] = useState('');
  const apiField = normalize(error?.param);
  const msg = (name: string) => local[name] ?? (apiField === name ? error?.message : undefined);
  const submit = (e: Event) => {
    const v = formValues(e);
    const form = e.currentTarget as HTMLFormElement;
    const problems: Record<string, string> = {};
    if (!v.name?.trim()) problems.name = 'Give the plan a name.';
    if (!/^\d+$/.test(v.charge_amount ?? '')) problems.charge_amount = 'A whole number of cents, 0 or more.';
    const pct = v.threshold_alert_percentage?.trim();
    if (pct && !(Number(pct) >= 0 && Number(pct) <= 100))
      problems.threshold_alert_percentage = 'A number from 0 to 100.';
    rows.forEach((_, i) => {
      if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(v[`balances.${i}.denomination`] ?? ''))
        problems[`balances.${i}.denomination`] = 'Letters, digits and _ . : - (1–64).';
      if (!/^\d+$/.test(v[`balances.${i}.amount`] ?? ''))
        problems[`balances.${i}.amount`] = 'A whole number of units, 0 or more.';
      if (!/^\d+$/.test(v[`balances.${i}.overage_charge_amount`] ?? ''))
        problems[`balances.${i}.overage_charge_amount`] = 'A whole number of cents, 0 or more.';
    });
    setLocal(problems);
    if (Object.keys(problems).length > 0) {
      e.preventDefault();
      setError(null);
      return;
    }
    void run(async () => {
      const r = await ok(
        api.POST('/v1/companies/{company_id}/plan', {
          params: { path: { company_id: companyId } },
          body: {
            name: v.name ?? '',
            charge_amount: Number(v.charge_amount),
            billing_period: 'month',
            overage_charge_mode: 'postpay',
            rollover: v.rollover === 'on',
            ...(pct ? { threshold_alert_percentage: pct } : {}),
            balances: rows.map((_, i) => ({
              denomination: v[`balances.${i}.denomination`] ?? '',
              amount: v[`balances.${i}.amount`] ?? '0',
              overage_charge_amount: Number(v[`balances.${i}.overage_charge_amount`]),
            })),
          },
        }),
      );
      setDone(`Plan ${r.data.name} created (${r.data.plan_id}).`);
      form.reset();
      setRows([{ key: ++rowKeys }]);
    });
  };
  const shown = new Set(Object.keys(local));
  const unplaced =
    error &&
    !['name', 'charge_amount', 'threshold_alert_percentage'].includes(apiField) &&
    !apiField.startsWith('balances.')
      ? error
      : null;
  return (
    <section aria-labelledby="newplan-h" class="panel">
      <h2 id="newplan-h">New plan</h2>
      <form onSubmit={submit} noValidate>
        <Field label="Name" name="name" error={msg('name')} />
        <Field label="Monthly fee (USD cents)" name="charge_amount" inputMode="numeric" error={msg('charge_amount')} />
        <Field
          label="Alert below this % of included (optional)"
          name="threshold_alert_percentage"
          inputMode="decimal"
          hint="A threshold webhook when a plan balance first drops below it in a period."
          error={msg('threshold_alert_percentage')}
        />
        <div class="check">
          <input id="plan-rollover" type="checkbox" name="rollover" />
          <label for="plan-rollover">Roll unused units over to the next month</label>
        </div>
        <p class="small muted">Billing period: monthly. Overage: charged after the period (postpay).</p>
        <fieldset>
          <legend>Included balances</legend>
          {rows.map((row, i) => (
            <div class="plan-row" key={row.key}>
              <Field
                label="Denomination"
                name={`balances.${i}.denomination`}
                error={msg(`balances.${i}.denomination`)}
              />
              <Field
                label="Included units"
                name={`balances.${i}.amount`}
                inputMode="numeric"
                error={msg(`balances.${i}.amount`)}
              />
              <Field
                label="Overage (cents/unit)"
                name={`balances.${i}.overage_charge_amount`}
                inputMode="numeric"
                error={msg(`balances.${i}.overage_charge_amount`)}
              />
              {rows.length > 1 && (
                <button type="button" class="secondary" onClick={() => setRows(rows.filter((r) => r !== row))}>
                  Remove
                </button>
              )}
            </div>
          ))}
          <button type="button" class="secondary" onClick={() => setRows([...rows, { key: ++rowKeys }])}>
            Add a balance
          </button>
        </fieldset>
        {shown.size > 0 && <Alert error="Some fields need a change: see the messages next to them." />}
        {unplaced && <Alert error={unplaced as ApiError} />}
        {done && <Notice>{done}</Notice>}
        <Submit busy={busy}>Create plan</Submit>
      </form>
    </section>
  );
}
