/**
 * The company's features: each with its kind, name, event type (metered ones) and the plans that include it; a
 * form that creates one or changes one (the API decides what is valid: its refusal is shown next to the field its
 * `param` names); delete after asking (a feature a plan or an override still names is refused, 409, said in words).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { type ApiError, type Feature, type Plan, api, ok } from '../api';
import { usePoll } from '../hooks';
import { Alert, ConfirmButton, Empty, Field, List, Notice, Select, Submit, useAction } from '../ui';
import { FEATURE_KEY, KEY_RULE, KINDS, jsonText, loadFeatures, loadPlans } from './feature-data';

/** The plans that include each feature: "Pro" or, for a config feature, "Pro: {"max_seats":5}". */
function plansOf(plans: Plan[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const p of plans)
    for (const f of p.features) {
      const list = out.get(f.feature) ?? [];
      list.push(f.value === null ? p.name : `${p.name}: ${jsonText(f.value)}`);
      out.set(f.feature, list);
    }
  return out;
}

export function FeaturesPage({ companyId }: { companyId: string }) {
  const data = usePoll(async () => {
    const [features, plans] = await Promise.all([loadFeatures(), loadPlans(companyId)]);
    return { features, plans };
  }, [companyId]);
  // The feature the form is filled with ("Change"; null: a new one), and a count that starts the form afresh.
  const [editing, setEditing] = useState<{ feature: Feature | null; n: number; focus: boolean }>({
    feature: null,
    n: 0,
    focus: false,
  });
  const [done, setDone] = useState('');
  const known = new Set(data.data?.features.map((f) => f.key));
  return (
    <section>
      <h1 tabIndex={-1}>Features</h1>
      <p class="muted">
        A feature is something a plan includes or an account is given: <strong>boolean</strong> (on or off),{' '}
        <strong>config</strong> (a JSON value, e.g. a number of seats) or <strong>metered</strong> (usage of an event
        type, paid from balances). Plans list their features on the <a href={`/c/${companyId}/plans`}>Plans</a> page; an
        account's Features tab shows what it is entitled to and overrides its plan.
      </p>
      <FeatureTable
        features={data.data?.features}
        plans={data.data?.plans ?? []}
        error={data.error}
        onChange={(f) => {
          setDone('');
          setEditing({ feature: f, n: editing.n + 1, focus: true });
        }}
        onDeleted={data.reload}
      />
      {done && <Notice>{done}</Notice>}
      <FeatureForm
        key={editing.n}
        initial={editing.feature}
        focus={editing.focus}
        exists={(key) => known.has(key)}
        onSaving={() => setDone('')}
        onSaved={async (text) => {
          setDone(text);
          // Saved: the form starts afresh, for a new feature.
          setEditing({ feature: null, n: editing.n + 1, focus: false });
          await data.reload();
        }}
      />
    </section>
  );
}

interface TableProps {
  features: Feature[] | undefined;
  plans: Plan[];
  error: ApiError | null;
  onChange: (f: Feature) => void;
  onDeleted: () => Promise<void>;
}

function FeatureTable({ features, plans, error, onChange, onDeleted }: TableProps) {
  const byFeature = plansOf(plans);
  return (
    <section aria-labelledby="features-h">
      <h2 id="features-h">Your features</h2>
      <List
        items={features}
        error={error}
        what="features"
        empty={
          <Empty title="No features yet">
            Create one with the form below, e.g. <code>sso</code> (boolean), <code>seats</code> (config) or{' '}
            <code>gpt4</code> (metered by the event type <code>gpt4_tokens</code>).
          </Empty>
        }
      >
        {(list) => (
          <div class="table-wrap">
            <table data-table="features">
              <caption class="sr-only">Features, by key</caption>
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Name</th>
                  <th scope="col">Event type</th>
                  <th scope="col">In plans</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.map((f) => (
                  <FeatureRow
                    key={f.key}
                    feature={f}
                    plans={byFeature.get(f.key) ?? []}
                    onChange={() => onChange(f)}
                    onDeleted={onDeleted}
                  />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </List>
    </section>
  );
}

function FeatureRow(props: {
  feature: Feature;
  plans: string[];
  onChange: () => void;
  onDeleted: () => Promise<void>;
}) {
  const f = props.feature;
  const del = useAction();
  const remove = () =>
    void del.run(async () => {
      await ok(api.DELETE('/v1/features/{key}', { params: { path: { key: f.key } } }));
      await props.onDeleted();
    });
  return (
    <tr data-feature={f.key}>
      <td>
        <code>{f.key}</code>
      </td>
      <td data-field="kind">{f.kind}</td>
      <td data-field="name">{f.name ?? '—'}</td>
      <td data-field="event_type">{f.event_type ?? '—'}</td>
      <td data-field="plans">{props.plans.length === 0 ? <span class="muted">none</span> : props.plans.join(', ')}</td>
      <td>
        <div class="actions">
          <button type="button" class="secondary" onClick={props.onChange} aria-label={`Change ${f.key}`}>
            Change
          </button>
          <ConfirmButton
            label="Delete"
            question={`Delete the feature “${f.key}”?`}
            confirm="Yes, delete"
            onConfirm={remove}
          />
        </div>
        <Alert error={del.error} />
      </td>
    </tr>
  );
}

/** The form's fields, by the name the API's error `param` gives them (`feature` and `key` name the key). */
const PLACED = ['key', 'feature', 'kind', 'name', 'event_type'];

interface FormProps {
  initial: Feature | null;
  focus: boolean;
  exists: (key: string) => boolean;
  onSaving: () => void;
  /** Saved: what to tell the person. */
  onSaved: (text: string) => Promise<void>;
}

/** Create a feature, or change one (its name, a metered one's event type): PUT of its key. */
function FeatureForm({ initial, focus, exists, onSaving, onSaved }: FormProps) {
  const [key, setKey] = useState(initial?.key ?? '');
  const [kind, setKind] = useState<Feature['kind']>(initial?.kind ?? 'boolean');
  const [name, setName] = useState(initial?.name ?? '');
  const [eventType, setEventType] = useState(initial?.event_type ?? '');
  const [keyProblem, setKeyProblem] = useState<string | null>(null);
  const { busy, error, run, setError } = useAction();
  const ref = useRef<HTMLFormElement>(null);
  useEffect(() => {
    if (focus) ref.current?.querySelector<HTMLInputElement>('input[name=key]')?.focus();
  }, [focus]);
  const submit = (e: Event) => {
    e.preventDefault();
    onSaving();
    const k = key.trim();
    const problem = FEATURE_KEY.test(k) ? null : KEY_RULE;
    setKeyProblem(problem);
    if (problem) {
      setError(null);
      return;
    }
    const existed = exists(k);
    void run(async () => {
      const r = await ok(
        api.PUT('/v1/features/{key}', {
          params: { path: { key: k } },
          body: {
            kind,
            name: name.trim() || null,
            ...(kind === 'metered' ? { event_type: eventType.trim() || null } : {}),
          },
        }),
      );
      const f = r.data;
      await onSaved(
        `${existed ? 'Changed' : 'Created'} the feature “${f.key}” (${f.kind}` +
          `${f.event_type ? `, event type ${f.event_type}` : ''}).`,
      );
    });
  };
  const param = error?.param?.replace(/^\//, '');
  const field = (n: string) => (param === n ? error?.message : undefined);
  return (
    <section aria-labelledby="feature-form-h" class="panel">
      <h2 id="feature-form-h">{initial ? `Change “${initial.key}”` : 'Create or change a feature'}</h2>
      <form ref={ref} onSubmit={submit} noValidate aria-labelledby="feature-form-h">
        <p class="small muted">
          Saving a key that exists changes that feature's name (and a metered one's event type); its kind cannot change.
        </p>
        <Field
          label="Key"
          name="key"
          value={key}
          onInput={(e) => setKey((e.target as HTMLInputElement).value)}
          hint="How your code names it, e.g. sso or seats."
          error={keyProblem ?? field('key') ?? field('feature')}
        />
        <Select
          label="Kind"
          name="kind"
          value={kind}
          onChange={(v) => setKind(v as Feature['kind'])}
          options={KINDS}
          error={field('kind')}
        />
        <Field
          label="Name (optional)"
          name="name"
          maxLength={200}
          value={name}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
          hint="Shown to people, e.g. Single sign-on."
          error={field('name')}
        />
        {kind === 'metered' && (
          <Field
            label="Event type"
            name="event_type"
            value={eventType}
            onInput={(e) => setEventType((e.target as HTMLInputElement).value)}
            hint="The type of the events it meters, e.g. gpt4_tokens."
            error={field('event_type')}
          />
        )}
        {error && !(PLACED.includes(param ?? '') && (param !== 'event_type' || kind === 'metered')) && (
          <Alert error={error} />
        )}
        <Submit busy={busy}>Save feature</Submit>
      </form>
    </section>
  );
}
