/**
 * The Alerts tab's form: an alert on one of the account's balances, on its available units (below a threshold)
 * or on its spend in a UTC day or month (reaching a threshold, optionally of one event type). The server decides
 * what is valid: its refusal is shown next to the field its `param` names.
 */
import { useState } from 'preact/hooks';
import { type Account, api, ok } from '../../api';
import { Alert, Field, Notice, Select, Submit, formValues, useAction } from '../../ui';
import { type AlertRecord, ruleText } from './alert-parts';

type Metric = 'available' | 'spend';

/** The form's fields, by the name the API's error `param` gives them. */
const FIELDS = ['denomination', 'metric', 'threshold', 'window', 'event_type', 'name'];

const METRICS = [
  { value: 'available', label: 'Available drops below a threshold' },
  { value: 'spend', label: 'Spend in a window reaches a threshold' },
];
/** No window until one is chosen: day or month is a choice the person makes. */
const WINDOWS = [
  { value: '', label: 'Choose a window' },
  { value: 'day', label: 'UTC day' },
  { value: 'month', label: 'UTC month' },
];

/** The request's body: what the form says, with only the optional fields filled in (spend's only for spend). */
function alertBody(v: Record<string, string>, denomination: string, metric: Metric, window: string) {
  const name = v.name?.trim();
  const eventType = v.event_type?.trim();
  return {
    denomination,
    metric,
    threshold: Number(v.threshold),
    ...(metric === 'spend' && window ? { window } : {}),
    ...(metric === 'spend' && eventType ? { event_type: eventType } : {}),
    ...(name ? { name } : {}),
  };
}

const created = (a: AlertRecord) =>
  `Alert ${a.name ? `“${a.name}” ` : ''}created on ${a.denomination}: ${ruleText(a)}; ` +
  `${a.status === 'triggered' ? 'already triggered' : 'OK now'}.`;

export function AddAlert({ account, onCreated }: { account: Account; onCreated: () => Promise<void> }) {
  const [denomination, setDenomination] = useState(account.balances[0]?.denomination ?? '');
  const [metric, setMetric] = useState<Metric>('available');
  const [window, setWindow] = useState('');
  const { busy, error, run } = useAction();
  const [done, setDone] = useState('');
  const submit = (e: Event) => {
    const v = formValues(e);
    const form = e.currentTarget as HTMLFormElement;
    void run(async () => {
      setDone('');
      const r = await ok(
        api.POST('/v1/accounts/{account_id}/alerts', {
          params: { path: { account_id: account.account_id } },
          body: alertBody(v, denomination, metric, window),
        }),
      );
      setDone(created(r.data));
      form.reset();
      await onCreated();
    });
  };
  const param = error?.param?.replace(/^\//, '');
  const field = (name: string) => (param === name ? error?.message : undefined);
  return (
    <form onSubmit={submit} aria-label="Add an alert">
      <h3>Add an alert</h3>
      <Select
        label="Balance"
        name="denomination"
        value={denomination}
        onChange={setDenomination}
        options={account.balances.map((b) => ({ value: b.denomination, label: b.denomination }))}
        error={field('denomination')}
      />
      <Select
        label="Alert when"
        name="metric"
        value={metric}
        onChange={(m) => setMetric(m as Metric)}
        options={METRICS}
        error={field('metric')}
      />
      <Field
        label="Threshold (units)"
        name="threshold"
        type="number"
        step={1}
        required
        inputMode="numeric"
        hint={metric === 'spend' ? 'Triggered once the window’s spend reaches it (at least 1).' : 'Any whole number.'}
        error={field('threshold')}
      />
      {metric === 'spend' && (
        <>
          <Select
            label="Window"
            name="window"
            value={window}
            onChange={setWindow}
            options={WINDOWS}
            error={field('window')}
          />
          <Field
            label="Event type (optional)"
            name="event_type"
            hint="Only this type’s usage counts. Empty: all usage of the balance."
            error={field('event_type')}
          />
        </>
      )}
      <Field
        label="Name (optional)"
        name="name"
        maxLength={200}
        hint="Shown with the alert and in its notifications, e.g. “Low tokens”."
        error={field('name')}
      />
      {error && !FIELDS.includes(param ?? '') && <Alert error={error} />}
      {done && <Notice>{done}</Notice>}
      <Submit busy={busy}>Add alert</Submit>
    </form>
  );
}
