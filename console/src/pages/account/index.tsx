/**
 * One account: its balances, a chart of each balance over time (from the transactions' balance_after),
 * usage by event type per day, transactions, events (by state), pending holds, open leases and charges, all live; and
 * the actions a support or finance person takes on it. This file loads the page (one poll, poll.ts) and lays
 * out its panels, one file each.
 */
import { useRef, useState } from 'preact/hooks';
import { usePoll } from '../../hooks';
import { Alert, Loading } from '../../ui';
import { Actions } from './actions';
import { BalanceChart } from './balance-chart';
import { Balances } from './balances';
import { Charges } from './charges';
import { Events } from './events';
import { Grants } from './grants';
import { Holds } from './holds';
import { Leases } from './leases';
import { loadAccountView } from './poll';
import { OpenPortal } from './portal';
import { type AccountQuery, accountQuery } from './schedule';
import { Transactions } from './transactions';
import { AccountUsage } from './usage';
import { type AccountView, type EventState, type GrantFilter, PARTS } from './view';

export function AccountPage({ companyId, accountId }: { companyId: string; accountId: string }) {
  const [eventState, setEventState] = useState<EventState>('');
  const [grantFilter, setGrantFilter] = useState<GrantFilter>('current');
  // The poll's own state for this account (the chosen state of events carries over to the next account).
  const query = useRef<AccountQuery | null>(null);
  if (query.current?.accountId !== accountId) query.current = accountQuery(accountId, eventState, grantFilter);
  const q = query.current;
  const page = usePoll<AccountView>((prev, partial) => loadAccountView(q, prev, partial), [accountId]);
  /** After an action here: everything again, now. */
  const refresh = async () => {
    for (const p of PARTS) q.force.add(p);
    await page.reload();
  };
  const chooseEventState = (state: EventState) => {
    q.eventState = state;
    q.force.add('events');
    setEventState(state);
    void page.reload();
  };

  const chooseGrantFilter = (filter: GrantFilter) => {
    q.grantFilter = filter;
    q.force.add('grants');
    setGrantFilter(filter);
    void page.reload();
  };

  if (page.error?.status === 404)
    return (
      <section>
        <h1 tabIndex={-1}>Account not found</h1>
        <Alert error={`There is no account ${accountId} in this company.`} />
        <a href={`/c/${companyId}/accounts`}>Back to the accounts</a>
      </section>
    );
  if (!page.data)
    return (
      <section>
        <h1 tabIndex={-1}>Account</h1>
        <Alert error={page.error} />
        <Loading what="the account" />
      </section>
    );
  const v = page.data;
  const a = v.account;
  return (
    <section class="account">
      <p class="crumbs">
        <a href={`/c/${companyId}/accounts`}>Accounts</a> /
      </p>
      <h1 tabIndex={-1}>{a.name || a.account_id}</h1>
      <p class="muted">
        <code>{a.account_id}</code>
        {a.email && <> · {a.email}</>}
        {a.plan_id && <> · plan {a.plan_id}</>}
        {a.processor_id && <> · processor customer {a.processor_id}</>}
        {a.metadata && Object.keys(a.metadata).length > 0 && <> · metadata {JSON.stringify(a.metadata)}</>}
      </p>
      <OpenPortal key={a.account_id} account={a} />
      <Alert error={page.error} />
      <Balances account={a} />
      <Grants
        account={a}
        grants={v.grants}
        error={v.errors.grants}
        filter={grantFilter}
        onFilter={chooseGrantFilter}
        onChange={refresh}
      />
      <BalanceChart balances={a.balances} txs={v.transactions} />
      <AccountUsage usage={v.usage} error={v.errors.usage} />
      <div class="grid-2">
        <Actions companyId={companyId} account={a} onChange={refresh} />
        <Holds holds={v.holds} error={v.errors.holds} />
      </div>
      <Leases key={a.account_id} account={a} onChange={refresh} />
      <Transactions txs={v.transactions} error={v.errors.transactions} labels={v.grantLabels} />
      <Events events={v.events} error={v.errors.events} state={eventState} onState={chooseEventState} />
      <Charges charges={v.charges} card={v.card} error={v.errors.charges ?? v.errors.card} />
    </section>
  );
}
