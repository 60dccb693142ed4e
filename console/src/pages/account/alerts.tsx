/**
 * The account page's Alerts tab: the account's alerts, newest first, each with its status at the instant of the
 * read, the metric now and its last crossing, deleted here after asking; and the form that adds one (add-alert.tsx).
 * Only while the tab is open it asks for the list every second (usePoll), besides the page's own poll: an alert
 * is decided by the server in the transaction of each change, so the list shows a crossing within about a second.
 */
import { useState } from 'preact/hooks';
import { allPages, api, ok } from '../../api';
import { when } from '../../format';
import { usePoll } from '../../hooks';
import { ConfirmButton, List, Notice, useAction } from '../../ui';
import { AddAlert } from './add-alert';
import { type AlertRecord, LastCrossing, StatusBadge, metricText, thresholdText, valueText } from './alert-parts';
import { type ActionProps, NeedsBalance } from './form-parts';

/** An account has at most 50 alerts: one page of 100 holds them all. */
const PAGE = 100;

export function AccountAlerts({ account }: ActionProps) {
  const accountId = account.account_id;
  const alerts = usePoll(
    () =>
      allPages<AlertRecord>((c) =>
        ok(
          api.GET('/v1/accounts/{account_id}/alerts', {
            params: { path: { account_id: accountId }, query: { limit: PAGE, ...(c ? { starting_after: c } : {}) } },
          }),
        ),
      ),
    [accountId],
  );
  const del = useAction();
  const [done, setDone] = useState('');
  if (account.balances.length === 0) return <NeedsBalance account={account} />;
  const remove = (a: AlertRecord) =>
    void del.run(async () => {
      setDone('');
      await ok(api.DELETE('/v1/alerts/{alert_id}', { params: { path: { alert_id: a.alert_id } } }));
      setDone(`Deleted the alert ${a.name ? `“${a.name}”` : a.alert_id}.`);
      await alerts.reload();
    });
  return (
    <div class="account-alerts">
      <p class="small muted">
        An alert watches one balance: its available units falling below a threshold, or its spend in a UTC day or month
        reaching one. Each change of status sends an alert_triggered or alert_resolved webhook.
      </p>
      <h3 id="alerts-h">This account's alerts</h3>
      {done && <Notice>{done}</Notice>}
      <List
        items={alerts.data}
        error={alerts.error ?? del.error}
        what="alerts"
        empty={<p class="muted">No alerts on this account yet. Add one below.</p>}
      >
        {(list) => (
          <ul class="alert-list" aria-labelledby="alerts-h">
            {list.map((a) => (
              <AlertItem key={a.alert_id} alert={a} onDelete={() => remove(a)} />
            ))}
          </ul>
        )}
      </List>
      <AddAlert
        account={account}
        onCreated={async () => {
          setDone('');
          await alerts.reload();
        }}
      />
    </div>
  );
}

function AlertItem({ alert: a, onDelete }: { alert: AlertRecord; onDelete: () => void }) {
  const label = a.name ?? 'Unnamed alert';
  return (
    <li class={`alert-item alert-${a.status}`} data-alert={a.alert_id} data-status={a.status}>
      <div class="row">
        <span class="alert-title">
          <strong>{label}</strong> <StatusBadge status={a.status} />
        </span>
        <ConfirmButton
          label="Delete"
          question={`Delete ${a.name ? `“${a.name}”` : 'this alert'}? No notification is sent.`}
          confirm="Yes, delete"
          onConfirm={onDelete}
        />
      </div>
      <dl class="alert-facts">
        <dt>Balance</dt>
        <dd data-field="denomination">{a.denomination}</dd>
        <dt>Metric</dt>
        <dd data-field="metric">{metricText(a)}</dd>
        <dt>Threshold</dt>
        <dd data-field="threshold">{thresholdText(a)}</dd>
        <dt>Now</dt>
        <dd data-field="value">{valueText(a)}</dd>
        <dt>Last crossing</dt>
        <dd data-field="crossing">
          <LastCrossing alert={a} />
        </dd>
      </dl>
      <p class="small muted">
        <code>{a.alert_id}</code> · created {when(a.created_at)}
      </p>
    </li>
  );
}
