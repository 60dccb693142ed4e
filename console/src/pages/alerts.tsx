/**
 * The company's Alerts page: every alert triggered now, across the accounts, newest first, each linking to its
 * account's page (where its Alerts tab lists, adds and deletes them). Live like every page: an alert that triggers
 * or resolves through usage shows or leaves within about a second. Accounts are named once each, by id, as they
 * first appear.
 */
import { useRef } from 'preact/hooks';
import { ApiError, allPages, api, ok } from '../api';
import { usePoll } from '../hooks';
import { Empty, List } from '../ui';
import { type AlertRecord, LastCrossing, StatusBadge, ruleText, valueText } from './account/alert-parts';

/** Pages of triggered alerts shown (100 each). */
const ALERT_PAGES_MAX = 10;

/** The name of each account of the list, asked for once; an account that cannot be read keeps its id. */
async function nameAccounts(alerts: AlertRecord[], names: Map<string, string>): Promise<void> {
  const missing = [...new Set(alerts.map((a) => a.account_id))].filter((id) => !names.has(id));
  await Promise.all(
    missing.map(async (id) => {
      try {
        const a = (await ok(api.GET('/v1/accounts/{account_id}', { params: { path: { account_id: id } } }))).data;
        names.set(id, a.name || id);
      } catch (err) {
        // Deleted since, or out of reach: its id is what the page can say. Anything else is asked again next time.
        if (err instanceof ApiError && err.status === 404) names.set(id, id);
      }
    }),
  );
}

export function AlertsPage({ companyId }: { companyId: string }) {
  const names = useRef(new Map<string, string>());
  const list = usePoll(async () => {
    const alerts = await allPages<AlertRecord>(
      (c) => ok(api.GET('/v1/alerts', { params: { query: { limit: 100, ...(c ? { starting_after: c } : {}) } } })),
      ALERT_PAGES_MAX,
    );
    await nameAccounts(alerts, names.current);
    return alerts;
  }, [companyId]);
  return (
    <section>
      <h1 tabIndex={-1}>Alerts</h1>
      <p class="muted">
        The alerts of your accounts that are triggered now. Alerts are set on an account's page (its Alerts tab) or
        through the API; each change of status also sends an alert_triggered or alert_resolved webhook.
      </p>
      <List
        items={list.data}
        error={list.error}
        what="triggered alerts"
        empty={<Empty title="No alert is triggered">Every alert of your accounts is OK right now.</Empty>}
      >
        {(alerts) => <TriggeredTable companyId={companyId} alerts={alerts} names={names.current} />}
      </List>
    </section>
  );
}

function TriggeredTable(props: { companyId: string; alerts: AlertRecord[]; names: Map<string, string> }) {
  return (
    <div class="table-wrap">
      <table data-table="triggered-alerts">
        <caption class="sr-only">Triggered alerts, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Account</th>
            <th scope="col">Alert</th>
            <th scope="col">Status</th>
            <th scope="col">Now</th>
            <th scope="col">Last crossing</th>
          </tr>
        </thead>
        <tbody>
          {props.alerts.map((a) => (
            <tr key={a.alert_id} data-alert={a.alert_id}>
              <td>
                <a href={`/c/${props.companyId}/accounts/${encodeURIComponent(a.account_id)}`}>
                  {props.names.get(a.account_id) ?? a.account_id}
                </a>
                <div class="muted small wide-only">{a.account_id}</div>
              </td>
              <td class="alert-rule">
                <strong>{a.name ?? 'Unnamed alert'}</strong>
                <div class="small">
                  {a.denomination}: {ruleText(a)}
                </div>
              </td>
              <td>
                <StatusBadge status={a.status} />
              </td>
              <td class="num">{valueText(a)}</td>
              <td>
                <LastCrossing alert={a} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
