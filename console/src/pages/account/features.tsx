/**
 * The account page's Features tab: what the account is entitled to now, feature by feature (its access, the config
 * value in force, whether its plan or an override of its own decides, and when that override ends), an override set
 * here (on or off, a config value, an optional end) and one removed after asking. Only while the tab is open it asks
 * for the list every second (usePoll): a change of the plan's features shows within about a second.
 */
import { useState } from 'preact/hooks';
import { type Entitlement, api, ok } from '../../api';
import { when } from '../../format';
import { usePoll } from '../../hooks';
import { Alert, ConfirmButton, Field, List, Notice, Select, Submit, useAction } from '../../ui';
import { jsonText, parseJson } from '../feature-data';
import type { ActionProps } from './form-parts';

const SOURCES = { plan: 'plan', override: 'override' } as const;

/** What the account's entitlement of a feature is, in a sentence. */
const said = (e: Entitlement) =>
  `${e.feature} is ${e.has_access ? 'on' : 'off'}` +
  `${e.value !== null && e.value !== undefined ? ` (value ${jsonText(e.value)})` : ''}` +
  `${e.source ? `, from the ${SOURCES[e.source]}` : ''}${e.expires_at ? ` until ${when(e.expires_at)}` : ''}`;

export function AccountFeatures({ companyId, account }: ActionProps) {
  const accountId = account.account_id;
  const list = usePoll(
    async () =>
      (await ok(api.GET('/v1/accounts/{account_id}/entitlements', { params: { path: { account_id: accountId } } })))
        .data,
    [accountId],
  );
  const del = useAction();
  const [done, setDone] = useState('');
  const remove = (e: Entitlement) =>
    void del.run(async () => {
      setDone('');
      const r = await ok(
        api.DELETE('/v1/accounts/{account_id}/features/{key}', {
          params: { path: { account_id: accountId, key: e.feature } },
        }),
      );
      setDone(`Removed the override: ${said(r.data)}.`);
      await list.reload();
    });
  return (
    <div class="account-features">
      <p class="small muted">
        What this account may use: its plan's features{account.plan_id ? ` (plan ${account.plan_id})` : ''}, unless an
        override of its own decides. Features are created on the <a href={`/c/${companyId}/features`}>Features</a> page.
      </p>
      <h3 id="entitlements-h">Entitlements</h3>
      {done && <Notice>{done}</Notice>}
      <List
        items={list.data}
        error={list.error ?? del.error}
        what="entitlements"
        empty={<p class="muted">The company has no features yet.</p>}
      >
        {(items) => <EntitlementList items={items} onRemove={remove} />}
      </List>
      {list.data && list.data.length > 0 && (
        <SetOverride
          accountId={accountId}
          entitlements={list.data}
          onSet={async (text) => {
            setDone(text);
            await list.reload();
          }}
        />
      )}
    </div>
  );
}

/** Each feature as the account has it now: a card each (the panel is narrow), like the Alerts tab's alerts. */
function EntitlementList({ items, onRemove }: { items: Entitlement[]; onRemove: (e: Entitlement) => void }) {
  return (
    <ul class="alert-list entitlement-list" aria-labelledby="entitlements-h">
      {items.map((e) => (
        <li
          key={e.feature}
          class={`alert-item entitlement-${e.has_access ? 'yes' : 'no'}`}
          data-feature={e.feature}
          data-access={e.has_access ? 'yes' : 'no'}
        >
          <div class="row">
            <span class="alert-title">
              <code>{e.feature}</code>
            </span>
            {e.source === 'override' && (
              <ConfirmButton
                label="Remove override"
                question={`Remove the override of “${e.feature}”? The plan decides again.`}
                confirm="Yes, remove"
                onConfirm={() => onRemove(e)}
              />
            )}
          </div>
          <dl class="alert-facts">
            <dt>Kind</dt>
            <dd data-field="kind">{e.kind}</dd>
            <dt>Access</dt>
            <dd>
              <span class={`badge badge-${e.has_access ? 'yes' : 'no'}`} data-field="access">
                {e.has_access ? 'Yes' : 'No'}
              </span>
            </dd>
            <dt>Value</dt>
            <dd data-field="value">{e.value === null || e.value === undefined ? '—' : jsonText(e.value)}</dd>
            <dt>Source</dt>
            <dd data-field="source">{e.source ?? '—'}</dd>
            <dt>Ends</dt>
            <dd data-field="expires_at">{e.expires_at ? when(e.expires_at) : '—'}</dd>
          </dl>
        </li>
      ))}
    </ul>
  );
}

/** The form's fields, by the name the API's error `param` gives them. */
const FIELDS = ['feature', 'key', 'enabled', 'value', 'expires_at'];

/** "2030-01-31T09:30" (a datetime-local field, read as UTC) as RFC 3339; empty: none. */
export function utcInstant(local: string): string | undefined {
  const v = local.trim();
  if (v === '') return undefined;
  return /T\d\d:\d\d$/.test(v) ? `${v}:00Z` : `${v}Z`;
}

function SetOverride(props: {
  accountId: string;
  entitlements: Entitlement[];
  onSet: (text: string) => Promise<void>;
}) {
  const [feature, setFeature] = useState(props.entitlements[0]?.feature ?? '');
  const [enabled, setEnabled] = useState('off');
  const [value, setValue] = useState('');
  const [endsAt, setEndsAt] = useState('');
  const [local, setLocal] = useState<string | null>(null);
  const { busy, error, run, setError } = useAction();
  const kind = props.entitlements.find((e) => e.feature === feature)?.kind;
  const takesValue = kind === 'config' && enabled === 'on';
  const submit = (e: Event) => {
    e.preventDefault();
    const parsed = takesValue ? parseJson(value) : { ok: true as const, value: undefined };
    setLocal(parsed.ok ? null : parsed.message);
    if (!parsed.ok) {
      setError(null);
      return;
    }
    const expires = utcInstant(endsAt);
    void run(async () => {
      const r = await ok(
        api.PUT('/v1/accounts/{account_id}/features/{key}', {
          params: { path: { account_id: props.accountId, key: feature } },
          body: {
            enabled: enabled === 'on',
            ...(parsed.value === undefined ? {} : { value: parsed.value }),
            ...(expires ? { expires_at: expires } : {}),
          },
        }),
      );
      setValue('');
      setEndsAt('');
      await props.onSet(`Override set: ${said(r.data)}.`);
    });
  };
  const param = error?.param?.replace(/^\//, '');
  const field = (name: string) => (param === name ? error?.message : undefined);
  return (
    <form onSubmit={submit} noValidate aria-label="Set an override">
      <h3>Set an override</h3>
      <p class="small muted">
        Decides for this account instead of its plan: off takes a plan's feature away, on gives one the plan does not
        include. Setting one again replaces it.
      </p>
      <Select
        label="Feature"
        name="feature"
        value={feature}
        onChange={setFeature}
        options={props.entitlements.map((e) => ({ value: e.feature, label: `${e.feature} (${e.kind})` }))}
        error={field('feature') ?? field('key')}
      />
      <Select
        label="Access"
        name="enabled"
        value={enabled}
        onChange={setEnabled}
        options={[
          { value: 'off', label: 'Off: take it away' },
          { value: 'on', label: 'On: give it' },
        ]}
        error={field('enabled')}
      />
      {takesValue && (
        <Field
          label="Value (JSON, optional)"
          name="value"
          value={value}
          onInput={(e) => setValue((e.target as HTMLInputElement).value)}
          hint='e.g. 10 or {"max_seats": 10}. Empty: the plan’s value.'
          error={local ?? field('value')}
        />
      )}
      <Field
        label="Ends at (UTC, optional)"
        name="expires_at"
        type="datetime-local"
        value={endsAt}
        onInput={(e) => setEndsAt((e.target as HTMLInputElement).value)}
        hint="Empty: until removed. At that instant the plan decides again."
        error={field('expires_at')}
      />
      {error && !(FIELDS.includes(param ?? '') && (param !== 'value' || takesValue)) && <Alert error={error} />}
      <Submit busy={busy}>Set override</Submit>
    </form>
  );
}
