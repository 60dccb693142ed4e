/**
 * The account page's grants: each balance's lots in drawing order (the top row is drawn from first), with what is
 * left of each, what pending events hold of it, when it expires and its status; a grant that can still be drawn
 * from is voided here, after a confirmation under its table (with an optional reason), which fits a phone's width.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { type Account, type ApiError, type Grant, api, ok } from '../../api';
import { date, shortId, units } from '../../format';
import { Alert, Field, Notice, Select, formValues, useAction } from '../../ui';
import { grantLabel, grantName } from './grant-names';
import { type AccountView, GRANT_FILTERS, type GrantFilter } from './view';

const FILTERS: { value: GrantFilter; label: string }[] = [
  { value: 'current', label: 'Active and scheduled' },
  { value: 'ended', label: 'Ended (used up, expired, voided)' },
  { value: 'all', label: 'All' },
];

export function Grants(props: {
  account: Account;
  grants: AccountView['grants'];
  error?: ApiError | undefined;
  filter: GrantFilter;
  onFilter: (filter: GrantFilter) => void;
  onChange: () => Promise<void>;
}) {
  const { account, filter } = props;
  const { error, run } = useAction();
  const [done, setDone] = useState('');
  /** The grant whose void is being confirmed. */
  const [voiding, setVoiding] = useState<string | null>(null);
  // Grants of the filter chosen before are not shown as those of the filter chosen now.
  const shown = props.grants?.filter === filter ? props.grants : undefined;
  if (account.balances.length === 0) return null;
  const voidGrant = (g: Grant, reason: string) =>
    void run(async () => {
      setVoiding(null);
      setDone('');
      const r = await ok(
        api.POST('/v1/grants/{grant_id}/void', {
          params: { path: { grant_id: g.grant_id } },
          body: reason ? { reason } : {},
        }),
      );
      const gone = g.status === 'scheduled' ? 'it never joined the balance' : `${units(g.remaining - g.held)} left`;
      const held = r.data.held > 0 ? `; ${units(r.data.held)} held by pending events leave when they settle` : '';
      setDone(`Voided ${grantLabel(g)} (${g.denomination}): ${gone}${held}.`);
      await props.onChange();
    });
  return (
    <section aria-labelledby="grants-h">
      <div class="row">
        <h2 id="grants-h">Grants</h2>
        <Select
          label="Show"
          name="grant-filter"
          value={filter}
          onChange={(v) => props.onFilter(v as GrantFilter)}
          options={FILTERS}
        />
      </div>
      <p class="small muted">
        Every unit of a balance belongs to a grant. Units are taken from the top row down: lowest priority number, then
        the soonest expiry, promotional before paid, oldest first.
      </p>
      <Alert error={error ?? props.error} />
      {done && <Notice>{done}</Notice>}
      {!shown ? (
        <p class="muted" aria-busy="true">
          Loading grants…
        </p>
      ) : (
        account.balances.map((b) => {
          const list = shown.byDenomination[b.denomination];
          if (!list) return null;
          const asked = list.find((g) => g.grant_id === voiding && (g.status === 'active' || g.status === 'scheduled'));
          return (
            <div key={b.denomination} class="grant-balance">
              <h3>{b.denomination}</h3>
              {list.length === 0 ? (
                <p class="muted">
                  {filter === 'ended' ? 'No ended grants.' : 'No grants: the balance has no units to draw from.'}
                </p>
              ) : (
                <GrantTable denomination={b.denomination} grants={list} onVoid={(g) => setVoiding(g.grant_id)} />
              )}
              {asked && (
                <VoidConfirm
                  grant={asked}
                  onConfirm={(reason) => voidGrant(asked, reason)}
                  onCancel={() => {
                    setVoiding(null);
                    document.querySelector<HTMLElement>(`[data-grant="${asked.grant_id}"] button`)?.focus();
                  }}
                />
              )}
              {shown.more.includes(b.denomination) && (
                <p class="small muted">
                  Showing the first {units(list.length)} ({GRANT_FILTERS[filter]}); the API lists the rest.
                </p>
              )}
            </div>
          );
        })
      )}
    </section>
  );
}

/** "Void it?", with what leaves the balance, an optional reason (kept on the grant_void transaction) and Cancel. */
function VoidConfirm(props: { grant: Grant; onConfirm: (reason: string) => void; onCancel: () => void }) {
  const g = props.grant;
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => form.current?.querySelector('input')?.focus(), []);
  const submit = (e: Event) => props.onConfirm(formValues(e).reason?.trim() ?? '');
  const unheld = g.remaining - g.held;
  return (
    <form ref={form} class="quote void-confirm" aria-label={`Void ${grantName(g)}`} onSubmit={submit}>
      <p>
        Void <strong>{grantName(g)}</strong> <code class="small">{shortId(g.grant_id)}</code>?{' '}
        {g.status === 'scheduled'
          ? 'It has not started: it will never join the balance.'
          : `Its ${units(unheld)} unused ${g.denomination} leave the balance now.`}
        {g.held > 0 && ` The ${units(g.held)} held by pending events leave when those settle.`} This cannot be undone.
      </p>
      <Field label="Reason (optional)" name="reason" maxLength={256} hint="Kept on the grant_void transaction." />
      <div class="actions">
        <button type="submit" class="danger">
          Yes, void
        </button>
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function GrantTable(props: { denomination: string; grants: Grant[]; onVoid: (g: Grant) => void }) {
  return (
    <div class="table-wrap">
      <table data-table="grants" data-grants={props.denomination}>
        <caption class="sr-only">Grants of {props.denomination}, in drawing order</caption>
        <thead>
          <tr>
            <th scope="col">Grant</th>
            <th scope="col">Category</th>
            <th scope="col">Priority</th>
            <th scope="col">Remaining / amount</th>
            <th scope="col">Held</th>
            <th scope="col">Expires</th>
            <th scope="col">Status</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.grants.map((g) => (
            <tr key={g.grant_id} data-grant={g.grant_id}>
              <td class="grant-name">
                <span>{grantName(g)}</span>
                <code class="small muted">{shortId(g.grant_id)}</code>
              </td>
              <td>
                {g.category}
                {g.cost_basis !== null && <div class="small muted">{g.cost_basis}¢ / unit</div>}
              </td>
              <td class="num">{g.priority}</td>
              <td class="num" data-field="remaining">
                {units(g.remaining)} / {units(g.amount)}
              </td>
              <td class="num">{units(g.held)}</td>
              <td>{g.expires_at ? date(g.expires_at) : <span class="muted">never</span>}</td>
              <td>
                <span class={`state state-${g.status}`}>{g.status}</span>
                {g.status === 'scheduled' && <div class="small">starts {date(g.effective_at)}</div>}
              </td>
              <td>
                {(g.status === 'active' || g.status === 'scheduled') && (
                  <button type="button" class="danger-outline" onClick={() => props.onVoid(g)}>
                    Void<span class="sr-only"> {grantName(g)}</span>
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
