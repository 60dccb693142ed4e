/**
 * Plans (every field, with the API's validation message next to the field it names), the features each includes
 * (chosen at creation, replaced later with PUT …/features), and prices.
 */
import { useState } from 'preact/hooks';
import { type ApiError, type Feature, type Plan, api, ok } from '../api';
import { cents, units, when } from '../format';
import { usePoll } from '../hooks';
import { Alert, Empty, Field, List, Notice, Submit, formValues, useAction } from '../ui';
import { jsonText, loadFeatures, loadPlans, normalizeParam as normalize } from './feature-data';
import {
  type Choices,
  FeaturePicker,
  type PlanFeatureInput,
  choicesOf,
  entryError,
  featureList,
} from './plan-features';
import { Prices } from './prices';

interface Row {
  key: number;
}
let rowKeys = 0;

export function PlansPage({ companyId }: { companyId: string }) {
  // The company's features, for the plan forms' choices (live: one created on the Features page shows here).
  const features = usePoll(loadFeatures, [companyId]);
  return (
    <section>
      <h1 tabIndex={-1}>Plans &amp; prices</h1>
      <div class="grid-2">
        <Prices />
        <NewPlan companyId={companyId} features={features.data} />
      </div>
      <Plans companyId={companyId} features={features.data} />
    </section>
  );
}

/** A plan's features in a few words: "sso, seats = 5". */
const featuresText = (p: Plan) =>
  p.features.map((f) => (f.value === null ? f.feature : `${f.feature} = ${jsonText(f.value)}`)).join(', ');

function Plans({ companyId, features }: { companyId: string; features: Feature[] | undefined }) {
  const plans = usePoll(() => loadPlans(companyId), [companyId]);
  const [editing, setEditing] = useState<string | null>(null);
  const edited = plans.data?.find((p) => p.plan_id === editing);
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
                  <th scope="col">Features</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {list.map((p) => (
                  <tr key={p.plan_id} data-plan={p.plan_id}>
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
                    <td>
                      <span data-field="features">{p.features.length > 0 ? featuresText(p) : 'none'}</span>
                      <div>
                        <button
                          type="button"
                          class="link"
                          aria-label={`Edit features of ${p.name}`}
                          aria-expanded={editing === p.plan_id}
                          onClick={() => setEditing(editing === p.plan_id ? null : p.plan_id)}
                        >
                          Edit features
                        </button>
                      </div>
                    </td>
                    <td>{when(p.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </List>
      {edited && (
        <PlanFeaturesEditor
          key={edited.plan_id}
          companyId={companyId}
          plan={edited}
          features={features}
          onSaved={plans.reload}
          onClose={() => setEditing(null)}
        />
      )}
    </section>
  );
}

/** Replace an existing plan's features (every account on it at once): PUT /v1/plans/{plan_id}/features. */
function PlanFeaturesEditor(props: {
  companyId: string;
  plan: Plan;
  features: Feature[] | undefined;
  onSaved: () => Promise<void>;
  onClose: () => void;
}) {
  const { plan } = props;
  const [choices, setChoices] = useState<Choices>(() => choicesOf(plan));
  const [problems, setProblems] = useState<Choices>({});
  const [sent, setSent] = useState<PlanFeatureInput[]>([]);
  const { busy, error, run, setError } = useAction();
  const [done, setDone] = useState('');
  const submit = (e: Event) => {
    e.preventDefault();
    setDone('');
    const { list, problems: found } = featureList(props.features ?? [], choices);
    setProblems(found);
    if (Object.keys(found).length > 0) {
      setError(null);
      return;
    }
    setSent(list);
    void run(async () => {
      const r = await ok(
        api.PUT('/v1/plans/{plan_id}/features', {
          params: { path: { plan_id: plan.plan_id } },
          body: { features: list },
        }),
      );
      const now = r.data.features.map((f) => f.feature);
      setDone(`Saved: ${r.data.name} now includes ${now.length > 0 ? now.join(', ') : 'no features'}.`);
      await props.onSaved();
    });
  };
  const refused = entryError(error, sent);
  return (
    <section aria-labelledby="plan-features-h" class="panel plan-features">
      <h3 id="plan-features-h">Features of “{plan.name}”</h3>
      <p class="small muted">
        Saving replaces the plan's list for every account on it at once (an account's own overrides still win).
      </p>
      <form onSubmit={submit} noValidate aria-labelledby="plan-features-h">
        <FeaturePicker
          features={props.features}
          choices={choices}
          onChoices={setChoices}
          problems={problems}
          refused={refused}
          featuresHref={`/c/${props.companyId}/features`}
        />
        {Object.keys(problems).length > 0 && (
          <Alert error="Some values need a change: see the messages next to them." />
        )}
        {error && !refused && <Alert error={error} />}
        {done && !error && <Notice>{done}</Notice>}
        <div class="actions">
          <Submit busy={busy}>Save features</Submit>
          <button type="button" class="secondary" onClick={props.onClose}>
            Close
          </button>
        </div>
      </form>
    </section>
  );
}

/** What the new plan form finds wrong before asking, by field (the API's own names, `balances.0.amount`). */
function planProblems(v: Record<string, string>, balances: number): Record<string, string> {
  const problems: Record<string, string> = {};
  if (!v.name?.trim()) problems.name = 'Give the plan a name.';
  if (!/^\d+$/.test(v.charge_amount ?? '')) problems.charge_amount = 'A whole number of cents, 0 or more.';
  const pct = v.threshold_alert_percentage?.trim();
  if (pct && !(Number(pct) >= 0 && Number(pct) <= 100)) problems.threshold_alert_percentage = 'A number from 0 to 100.';
  for (let i = 0; i < balances; i++) {
    if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(v[`balances.${i}.denomination`] ?? ''))
      problems[`balances.${i}.denomination`] = 'Letters, digits and _ . : - (1–64).';
    if (!/^\d+$/.test(v[`balances.${i}.amount`] ?? ''))
      problems[`balances.${i}.amount`] = 'A whole number of units, 0 or more.';
    if (!/^\d+$/.test(v[`balances.${i}.overage_charge_amount`] ?? ''))
      problems[`balances.${i}.overage_charge_amount`] = 'A whole number of cents, 0 or more.';
  }
  return problems;
}

/** The new plan's included balances: a row each, added and removed here. */
function BalanceRows({
  rows,
  onRows: setRows,
  msg,
}: {
  rows: Row[];
  onRows: (rows: Row[]) => void;
  msg: (name: string) => string | undefined;
}) {
  return (
    <fieldset>
      <legend>Included balances</legend>
      {rows.map((row, i) => (
        <div class="plan-row" key={row.key}>
          <Field label="Denomination" name={`balances.${i}.denomination`} error={msg(`balances.${i}.denomination`)} />
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
  );
}

function NewPlan({ companyId, features }: { companyId: string; features: Feature[] | undefined }) {
  const [rows, setRows] = useState<Row[]>([{ key: ++rowKeys }]);
  const [local, setLocal] = useState<Record<string, string>>({});
  const [choices, setChoices] = useState<Choices>({});
  const [featureProblems, setFeatureProblems] = useState<Choices>({});
  const [sent, setSent] = useState<PlanFeatureInput[]>([]);
  const { busy, error, run, setError } = useAction();
  const [done, setDone] = useState('');
  const apiField = normalize(error?.param);
  const msg = (name: string) => local[name] ?? (apiField === name ? error?.message : undefined);
  const submit = (e: Event) => {
    const v = formValues(e);
    const form = e.currentTarget as HTMLFormElement;
    const problems = planProblems(v, rows.length);
    const pct = v.threshold_alert_percentage?.trim();
    const chosen = featureList(features ?? [], choices);
    setLocal(problems);
    setFeatureProblems(chosen.problems);
    if (Object.keys(problems).length > 0 || Object.keys(chosen.problems).length > 0) {
      e.preventDefault();
      setError(null);
      return;
    }
    setSent(chosen.list);
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
            ...(chosen.list.length > 0 ? { features: chosen.list } : {}),
          },
        }),
      );
      setDone(`Plan ${r.data.name} created (${r.data.plan_id}).`);
      form.reset();
      setRows([{ key: ++rowKeys }]);
      setChoices({});
    });
  };
  const shown = new Set([...Object.keys(local), ...Object.keys(featureProblems)]);
  const refused = entryError(error, sent);
  const unplaced =
    error &&
    !refused &&
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
        <BalanceRows rows={rows} onRows={setRows} msg={msg} />
        <FeaturePicker
          features={features}
          choices={choices}
          onChoices={setChoices}
          problems={featureProblems}
          refused={refused}
          featuresHref={`/c/${companyId}/features`}
        />
        {shown.size > 0 && <Alert error="Some fields need a change: see the messages next to them." />}
        {unplaced && <Alert error={unplaced as ApiError} />}
        {done && <Notice>{done}</Notice>}
        <Submit busy={busy}>Create plan</Submit>
      </form>
    </section>
  );
}
