/**
 * A plan's features, chosen in a form: one checkbox per feature of the company and, for a chosen config feature, its
 * JSON value. Used by the new plan form and by the editor of an existing plan's features (PUT …/features). The API
 * names a refused entry by its index in the list sent (`features[2].value`): the form keeps which feature each index
 * was, and shows the message next to that feature's checkbox or value.
 */
import { useRef } from 'preact/hooks';
import type { ApiError, Feature, Plan } from '../api';
import { Field } from '../ui';
import { jsonText, normalizeParam, parseJson } from './feature-data';

/** Whether each feature is chosen, and the JSON text of a config feature's value. */
export type Choices = Record<string, { on: boolean; value: string }>;

/** The choices a plan's list makes. */
export function choicesOf(plan: Plan): Choices {
  const out: Choices = {};
  for (const f of plan.features) out[f.feature] = { on: true, value: jsonText(f.value) };
  return out;
}

export type PlanFeatureInput = { feature: string; value?: unknown };

/**
 * The list the API takes, in the order of the company's features, and the problems found before asking (a value
 * that is not JSON), by feature key. A chosen key the company no longer has is sent all the same: the API says so.
 */
export function featureList(features: Feature[], choices: Choices): { list: PlanFeatureInput[]; problems: Choices } {
  const list: PlanFeatureInput[] = [];
  const problems: Choices = {};
  const kinds = new Map(features.map((f) => [f.key, f.kind]));
  const keys = [...features.map((f) => f.key), ...Object.keys(choices).filter((k) => !kinds.has(k))];
  for (const key of keys) {
    const c = choices[key];
    if (!c?.on) continue;
    if (kinds.get(key) !== 'config') {
      list.push({ feature: key });
      continue;
    }
    const parsed = parseJson(c.value);
    if (!parsed.ok) problems[key] = { on: true, value: parsed.message };
    else list.push(parsed.value === undefined ? { feature: key } : { feature: key, value: parsed.value });
  }
  return { list, problems };
}

/** The API's refusal of one entry, by the key of the feature at its index; null when it names no entry. */
export function entryError(
  error: ApiError | null,
  sent: readonly PlanFeatureInput[],
): { key: string; part: 'feature' | 'value'; message: string } | null {
  const m = /^features\.(\d+)\.(feature|value)$/.exec(normalizeParam(error?.param));
  const key = m ? sent[Number(m[1])]?.feature : undefined;
  if (!error || !m || key === undefined) return null;
  return { key, part: m[2] as 'feature' | 'value', message: error.message };
}

let pickers = 0;

interface PickerProps {
  features: Feature[] | undefined;
  choices: Choices;
  onChoices: (c: Choices) => void;
  /** Problems found before asking, by key (`value`: the message). */
  problems: Choices;
  /** The API's refusal of one entry. */
  refused: { key: string; part: 'feature' | 'value'; message: string } | null;
  /** Where the company's features are created, for the empty case. */
  featuresHref: string;
}

export function FeaturePicker({ features, choices, onChoices, problems, refused, featuresHref }: PickerProps) {
  const id = useRef(`fp-${++pickers}`).current;
  const set = (key: string, change: Partial<{ on: boolean; value: string }>) =>
    onChoices({ ...choices, [key]: { on: false, value: '', ...choices[key], ...change } });
  // A chosen feature the company no longer has (deleted since the form was filled) stays listed, to be unchosen.
  const gone = Object.keys(choices).filter((k) => choices[k]?.on && !features?.some((f) => f.key === k));
  const shown: { key: string; label: string; kind: Feature['kind'] | null }[] = [
    ...(features ?? []).map((f) => ({ key: f.key, label: f.name ?? '', kind: f.kind })),
    ...gone.map((key) => ({ key, label: '(no longer a feature)', kind: null })),
  ];
  return (
    <fieldset class="feature-picker">
      <legend>Features</legend>
      {features === undefined && <p class="muted small">Loading the features…</p>}
      {features !== undefined && shown.length === 0 && (
        <p class="small muted">
          No features yet: <a href={featuresHref}>create them on the Features page</a>, then choose them here.
        </p>
      )}
      {shown.map((f, i) => {
        const c = choices[f.key] ?? { on: false, value: '' };
        const boxError = refused?.key === f.key && refused.part === 'feature' ? refused.message : undefined;
        const valueError =
          problems[f.key]?.value ?? (refused?.key === f.key && refused.part === 'value' ? refused.message : undefined);
        const boxId = `${id}-${i}`;
        return (
          <div class="feature-choice" key={f.key} data-feature-choice={f.key}>
            <div class="check feature-check">
              <input
                id={boxId}
                type="checkbox"
                checked={c.on}
                aria-invalid={boxError ? 'true' : undefined}
                aria-describedby={boxError ? `${boxId}-err` : undefined}
                onChange={(e) => set(f.key, { on: (e.target as HTMLInputElement).checked })}
              />
              <label for={boxId}>
                <code>{f.key}</code>
                {f.label && ` ${f.label}`}
                {f.kind && <span class="muted small"> ({f.kind})</span>}
              </label>
            </div>
            {boxError && (
              <small id={`${boxId}-err`} class="field-error feature-under">
                {boxError}
              </small>
            )}
            {f.kind === 'config' && c.on && (
              <div class="feature-under">
                <Field
                  label={`Value of ${f.key} (JSON)`}
                  name={`features.${f.key}.value`}
                  value={c.value}
                  onInput={(e) => set(f.key, { value: (e.target as HTMLInputElement).value })}
                  hint='What an account on the plan gets, e.g. 5 or {"max_seats": 5}. Empty: none.'
                  error={valueError}
                />
              </div>
            )}
          </div>
        );
      })}
    </fieldset>
  );
}
