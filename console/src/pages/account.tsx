/**
 * One account: its balances, a chart of each balance over time (from the transactions' balance_after),
 * usage by event type per day, transactions, events (by state), pending holds and charges, all live; and
 * the actions a support or finance person takes on it.
 */
import { useMemo, useState } from 'preact/hooks';
import {
  type Account,
  type Balance,
  type BillingEvent,
  type Transaction,
  type UsageGroup,
  ApiError,
  allPages,
  api,
  ok,
} from '../api';
import { useCompany } from '../app';
import { Chart } from '../chart';
import { DAY, cents, day, units, usagePeriod, when } from '../format';
import { usePoll } from '../hooks';
import { Alert, Empty, Field, Loading, Notice, Select, Submit, formValues, useAction } from '../ui';

/** The chart draws at most this many of the newest transactions. */
const TX_MAX_PAGES = 20;
const TX_SHOWN = 50;

async function loadTransactions(
  accountId: string,
  prev: Transaction[] | undefined,
  partial: (txs: Transaction[]) => void,
): Promise<Transaction[]> {
  const page = (cursor?: string) =>
    ok(
      api.GET('/v1/accounts/{account_id}/transactions', {
        params: {
          path: { account_id: accountId },
          query: { limit: 100, ...(cursor ? { starting_after: cursor } : {}) },
        },
      }),
    );
  if (!prev) {
    // The newest page shows at once; older pages follow into the chart as they arrive.
    const all: Transaction[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < TX_MAX_PAGES; i++) {
      const p = await page(cursor);
      all.push(...p.data);
      if (!p.has_more || !p.next_cursor) break;
      partial([...all]);
      cursor = p.next_cursor;
    }
    return all;
  }
  // Live: only the newest page, merged in front of what is already here.
  const first = await page();
  const known = new Set(prev.slice(0, 200).map((t) => t.transaction_id));
  const fresh: Transaction[] = [];
  for (const t of first.data) {
    if (known.has(t.transaction_id)) break;
    fresh.push(t);
  }
  if (fresh.length === 0) return prev;
  if (fresh.length === first.data.length && first.has_more) return allPages(page, TX_MAX_PAGES);
  return [...fresh, ...prev];
}

export function AccountPage({ companyId, accountId }: { companyId: string; accountId: string }) {
  const path = { account_id: accountId };
  const account = usePoll(
    async () => (await ok(api.GET('/v1/accounts/{account_id}', { params: { path } }))).data,
    [accountId],
  );
  const txs = usePoll(
    (prev: Transaction[] | undefined, partial: (t: Transaction[]) => void) =>
      loadTransactions(accountId, prev, partial),
    [accountId],
  );

  if (account.error?.status === 404)
    return (
      <section>
        <h1 tabIndex={-1}>Account not found</h1>
        <Alert error={`There is no account ${accountId} in this company.`} />
        <a href={`/c/${companyId}/accounts`}>Back to the accounts</a>
      </section>
    );
  if (!account.data)
    return (
      <section>
        <h1 tabIndex={-1}>Account</h1>
        <Alert error={account.error} />
        <Loading what="the account" />
      </section>
    );
  const a = account.data;
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
      <Alert error={account.error} />
      <Balances account={a} />
      <BalanceChart balances={a.balances} txs={txs.data} />
      <AccountUsage accountId={accountId} />
      <div class="grid-2">
        <Actions companyId={companyId} account={a} onChange={account.reload} />
        <Holds accountId={accountId} />
      </div>
      <Transactions txs={txs.data} error={txs.error} />
      <Events accountId={accountId} />
      <Charges accountId={accountId} />
    </section>
  );
}

function Balances({ account }: { account: Account }) {
  if (account.balances.length === 0)
    return <Empty title="No balances yet">Create one with the form below (for example “tokens” or “usd”).</Empty>;
  return (
    <ul class="balances" aria-label="Balances">
      {account.balances.map((b) => (
        <li key={b.denomination} class="balance" data-denomination={b.denomination}>
          <h2>{b.denomination}</h2>
          <dl>
            <dt>Amount</dt>
            <dd data-field="amount">{units(b.amount)}</dd>
            <dt>Pending</dt>
            <dd data-field="pending">{units(b.pending)}</dd>
            <dt>Available</dt>
            <dd data-field="available" class={b.available < 0 ? 'negative' : ''}>
              {units(b.available)}
            </dd>
          </dl>
          <p class="small">{refillText(b)}</p>
        </li>
      ))}
    </ul>
  );
}

function refillText(b: Balance): string {
  const parts: string[] = [];
  if (b.refill_threshold !== null)
    parts.push(
      `Refills ${units(b.refill_amount)} for ${cents(b.refill_usd_amount)} below ${units(b.refill_threshold)}`,
    );
  if (b.refill_monthly) parts.push(`monthly ${units(b.refill_amount)}, next ${when(b.next_refill_at)}`);
  if (b.auto_refill_paused) parts.push('auto-refill PAUSED after declined charges: attach a new card');
  return parts.length ? `${parts.join('; ')}.` : 'No auto-refill.';
}

function BalanceChart({ balances, txs }: { balances: Balance[]; txs: Transaction[] | undefined }) {
  const [chosen, setChosen] = useState<string | null>(null);
  const denomination = chosen ?? balances[0]?.denomination ?? null;
  const points = useMemo(() => {
    const x: number[] = [];
    const y: number[] = [];
    if (!txs || !denomination) return { x, y };
    for (let i = txs.length - 1; i >= 0; i--) {
      const t = txs[i]!;
      if (t.denomination !== denomination) continue;
      x.push(Date.parse(t.created_at) / 1000);
      y.push(t.balance_after);
    }
    return { x, y };
  }, [txs, denomination]);
  if (!denomination) return null;
  return (
    <section aria-labelledby="chart-h">
      <div class="row">
        <h2 id="chart-h">Balance over time</h2>
        {balances.length > 1 && (
          <Select
            label="Balance"
            name="chart-denomination"
            value={denomination}
            onChange={setChosen}
            options={balances.map((b) => ({ value: b.denomination, label: b.denomination }))}
          />
        )}
      </div>
      {points.x.length === 0 ? (
        <p class="muted">No transactions yet: the chart starts with the first change of the balance.</p>
      ) : (
        <Chart
          title={`${denomination} after each transaction`}
          kind="step"
          x={points.x}
          series={[{ label: denomination, values: points.y }]}
          summary={`${points.x.length} points, now ${units(points.y[points.y.length - 1])}`}
        />
      )}
    </section>
  );
}

/** Usage per day by event type: one bar series per type (cost in the type's denomination). */
/** Usage groups by day and type, newest day first (the account page and the usage page). */
export function UsageTable({ name, groups }: { name: string; groups: UsageGroup[] }) {
  return (
    <div class="table-wrap">
      <table data-table={name}>
        <caption class="sr-only">Usage by day and type</caption>
        <thead>
          <tr>
            <th scope="col">Day (UTC)</th>
            <th scope="col">Type</th>
            <th scope="col">Events</th>
            <th scope="col">Quantity</th>
            <th scope="col">Cost</th>
          </tr>
        </thead>
        <tbody>
          {[...groups].reverse().map((g) => (
            <tr key={`${g.window_start}-${g.type}-${g.denomination}`}>
              <td>{day(g.window_start)}</td>
              <td>{g.type}</td>
              <td class="num">{units(g.events)}</td>
              <td class="num">{g.quantity}</td>
              <td class="num">
                {units(g.cost)} {g.denomination}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function usageChartData(groups: UsageGroup[], from: string, days: number) {
  const start = Date.parse(from);
  const x = Array.from({ length: days }, (_, i) => (start + i * DAY) / 1000);
  const types = [...new Set(groups.map((g) => `${g.type ?? '?'} (${g.denomination ?? '?'})`))].sort();
  const series = types.map((label) => ({ label, values: x.map(() => null as number | null) }));
  for (const g of groups) {
    const i = Math.round((Date.parse(g.window_start) - start) / DAY);
    const s = series[types.indexOf(`${g.type ?? '?'} (${g.denomination ?? '?'})`)];
    if (s && i >= 0 && i < days) s.values[i] = (s.values[i] ?? 0) + g.cost;
  }
  return { x, series };
}

function AccountUsage({ accountId }: { accountId: string }) {
  const days = 14;
  const usage = usePoll(async () => {
    const period = usagePeriod(days);
    const groups = await allPages((c) =>
      ok(
        api.GET('/v1/accounts/{account_id}/usage', {
          params: {
            path: { account_id: accountId },
            query: {
              ...period,
              window: 'day',
              group_by: 'type,denomination',
              limit: 100,
              ...(c ? { starting_after: c } : {}),
            },
          },
        }),
      ),
    );
    return { groups, from: period.from };
  }, [accountId]);
  const chart = useMemo(
    () => (usage.data ? usageChartData(usage.data.groups, usage.data.from, days) : null),
    [usage.data],
  );
  return (
    <section aria-labelledby="usage-h">
      <h2 id="usage-h">Usage by type, last {days} days</h2>
      <Alert error={usage.error} />
      {!usage.data ? (
        <Loading what="usage" />
      ) : usage.data.groups.length === 0 ? (
        <p class="muted">No completed usage in the last {days} days.</p>
      ) : (
        <>
          <Chart
            title="Cost per day by event type"
            kind="bars"
            x={chart!.x}
            series={chart!.series}
            height={180}
            summary={`${usage.data.groups.length} day and type groups`}
          />
          <UsageTable name="account-usage" groups={usage.data.groups} />
        </>
      )}
    </section>
  );
}

function Transactions({ txs, error }: { txs: Transaction[] | undefined; error: Error | null }) {
  const [shown, setShown] = useState(TX_SHOWN);
  return (
    <section aria-labelledby="tx-h">
      <h2 id="tx-h">Transactions</h2>
      <Alert error={error?.message} />
      {!txs ? (
        <Loading what="transactions" />
      ) : txs.length === 0 ? (
        <p class="muted">No transactions yet.</p>
      ) : (
        <>
          <div class="table-wrap">
            <table data-table="transactions">
              <caption class="sr-only">Transactions, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Amount</th>
                  <th scope="col">Balance after</th>
                  <th scope="col">Why</th>
                </tr>
              </thead>
              <tbody>
                {txs.slice(0, shown).map((t) => (
                  <tr key={t.transaction_id}>
                    <td>{when(t.created_at)}</td>
                    <td>{t.kind}</td>
                    <td class={`num ${t.amount < 0 ? 'negative' : ''}`}>
                      {t.amount > 0 ? '+' : ''}
                      {units(t.amount)} {t.denomination}
                    </td>
                    <td class="num">{units(t.balance_after)}</td>
                    <td class="small">{t.reason ?? (t.event_id ? `event ${t.event_id}` : '')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {txs.length > shown && (
            <button type="button" class="secondary" onClick={() => setShown(shown + 100)}>
              Show more ({units(txs.length - shown)} more loaded)
            </button>
          )}
        </>
      )}
    </section>
  );
}

function Events({ accountId }: { accountId: string }) {
  const [state, setState] = useState('');
  const events = usePoll(
    async () =>
      (
        await ok(
          api.GET('/v1/accounts/{account_id}/events', {
            params: {
              path: { account_id: accountId },
              query: { limit: 50, ...(state ? { state: state as 'pending' | 'complete' | 'cancelled' } : {}) },
            },
          }),
        )
      ).data,
    [accountId, state],
  );
  return (
    <section aria-labelledby="ev-h">
      <div class="row">
        <h2 id="ev-h">Events</h2>
        <Select
          label="State"
          name="event-state"
          value={state}
          onChange={setState}
          options={[
            { value: '', label: 'All states' },
            { value: 'pending', label: 'Pending' },
            { value: 'complete', label: 'Complete' },
            { value: 'cancelled', label: 'Cancelled' },
          ]}
        />
      </div>
      <Alert error={events.error} />
      {!events.data ? (
        <Loading what="events" />
      ) : events.data.length === 0 ? (
        <p class="muted">No {state || ''} events.</p>
      ) : (
        <EventTable events={events.data} name="events" />
      )}
    </section>
  );
}

function EventTable({ events, name }: { events: BillingEvent[]; name: string }) {
  return (
    <div class="table-wrap">
      <table data-table={name}>
        <caption class="sr-only">{name}</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Type</th>
            <th scope="col">Quantity</th>
            <th scope="col">Cost</th>
            <th scope="col">State</th>
            <th scope="col">Event id</th>
          </tr>
        </thead>
        <tbody>
          {events.map((e) => (
            <tr key={e.event_id}>
              <td>{when(e.timestamp)}</td>
              <td>{e.type}</td>
              <td class="num">{units(e.quantity)}</td>
              <td class="num">
                {units(e.cost.amount)} {e.cost.denomination}
              </td>
              <td>
                <span class={`state state-${e.state}`}>{e.state}</span>
                {e.state === 'pending' && e.expires_at && <div class="small">expires {when(e.expires_at)}</div>}
              </td>
              <td class="small">
                <code>{e.event_id}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Holds({ accountId }: { accountId: string }) {
  const holds = usePoll(
    async () =>
      (
        await ok(
          api.GET('/v1/accounts/{account_id}/events', {
            params: { path: { account_id: accountId }, query: { limit: 50, state: 'pending' } },
          }),
        )
      ).data,
    [accountId],
  );
  return (
    <section aria-labelledby="holds-h" class="panel">
      <h2 id="holds-h">Pending holds</h2>
      <Alert error={holds.error} />
      {!holds.data ? (
        <Loading what="holds" />
      ) : holds.data.length === 0 ? (
        <p class="muted">No pending holds. A pending event holds its cost until it is settled or expires.</p>
      ) : (
        <ul class="holds">
          {holds.data.map((e) => (
            <li key={e.event_id}>
              <strong>
                {units(e.cost.amount)} {e.cost.denomination}
              </strong>{' '}
              for {e.type} <code>{e.event_id}</code>, expires {when(e.expires_at)}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Charges({ accountId }: { accountId: string }) {
  const charges = usePoll(
    async () =>
      (
        await ok(
          api.GET('/v1/accounts/{account_id}/charges', {
            params: { path: { account_id: accountId }, query: { limit: 25 } },
          }),
        )
      ).data,
    [accountId],
  );
  // The card on file: 404 while the account has none.
  const card = usePoll(async () => {
    try {
      return (await ok(api.GET('/v1/accounts/{account_id}/card', { params: { path: { account_id: accountId } } })))
        .data;
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return null;
      throw e;
    }
  }, [accountId]);
  return (
    <section aria-labelledby="ch-h">
      <h2 id="ch-h">Charges to the card</h2>
      <p data-card>
        {card.data === undefined
          ? ''
          : card.data === null
            ? 'No card on file: attach one below (Card) before refills, plan fees or overage can be charged.'
            : `Card on file: ${card.data.brand} ending ${card.data.last4}, expires ` +
              `${String(card.data.exp_month).padStart(2, '0')}/${card.data.exp_year}.`}
      </p>
      <Alert error={charges.error ?? card.error} />
      {!charges.data ? (
        <Loading what="charges" />
      ) : charges.data.length === 0 ? (
        <p class="muted">No charges. Refills, plan fees, overage and mid-month increases charge the card.</p>
      ) : (
        <div class="table-wrap">
          <table data-table="charges">
            <caption class="sr-only">Charges</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Reason</th>
                <th scope="col">Amount</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {charges.data.map((c) => (
                <tr key={c.charge_id}>
                  <td>{when(c.created_at)}</td>
                  <td>
                    {c.reason}
                    {c.denomination ? ` (${c.denomination})` : ''}
                  </td>
                  <td class="num">{cents(c.usd_amount)}</td>
                  <td>
                    {c.status}
                    {c.failure_code ? `: ${c.failure_code}` : ''}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

// --- actions

const ACTIONS = [
  ['adjust', 'Adjust'],
  ['create', 'New balance'],
  ['refill', 'Auto-refill'],
  ['card', 'Card'],
  ['midmonth', 'Mid-month increase'],
] as const;
type ActionName = (typeof ACTIONS)[number][0];

function Actions(props: { companyId: string; account: Account; onChange: () => Promise<void> }) {
  const hasBalances = props.account.balances.length > 0;
  const [tab, setTab] = useState<ActionName>(hasBalances ? 'adjust' : 'create');
  return (
    <section aria-labelledby="act-h" class="panel">
      <h2 id="act-h">Actions</h2>
      <div class="tabs" role="tablist" aria-label="Actions">
        {ACTIONS.map(([name, label]) => (
          <button
            key={name}
            type="button"
            role="tab"
            id={`tab-${name}`}
            aria-selected={tab === name}
            aria-controls="action-panel"
            onClick={() => setTab(name)}
          >
            {label}
          </button>
        ))}
      </div>
      <div id="action-panel" role="tabpanel" aria-labelledby={`tab-${tab}`}>
        {tab === 'create' && <CreateBalance {...props} />}
        {tab === 'adjust' && <Adjust {...props} />}
        {tab === 'refill' && <AutoRefill {...props} />}
        {tab === 'card' && <AttachCard {...props} />}
        {tab === 'midmonth' && <MidMonth {...props} />}
      </div>
    </section>
  );
}

type ActionProps = { companyId: string; account: Account; onChange: () => Promise<void> };

const int = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : Number(v));

function DenominationSelect(props: { account: Account; value: string; onChange: (v: string) => void }) {
  return (
    <Select
      label="Balance"
      name="denomination"
      value={props.value}
      onChange={props.onChange}
      options={props.account.balances.map((b) => ({ value: b.denomination, label: b.denomination }))}
    />
  );
}

function NeedsBalance({ account }: { account: Account }) {
  return account.balances.length === 0 ? <p class="muted">Create a balance first.</p> : null;
}

function CreateBalance({ account, onChange }: ActionProps) {
  const { busy, error, run } = useAction();
  const [done, setDone] = useState('');
  const submit = (e: Event) => {
    const v = formValues(e);
    const form = e.currentTarget as HTMLFormElement;
    void run(async () => {
      const amount = int(v.amount);
      await ok(
        api.POST('/v1/accounts/{account_id}/balance/{denomination}', {
          params: { path: { account_id: account.account_id, denomination: v.denomination ?? '' } },
          body: amount === undefined ? {} : { amount },
        }),
      );
      setDone(`Balance ${v.denomination} created.`);
      form.reset();
      await onChange();
    });
  };
  return (
    <form onSubmit={submit}>
      <Field
        label="Denomination"
        name="denomination"
        required
        pattern="[A-Za-z0-9_.:\-]{1,64}"
        hint="The unit, e.g. tokens or usd: letters, digits and _ . : -"
        error={error?.param === 'denomination' ? error.message : undefined}
      />
      <Field label="Initial amount" name="amount" type="number" min={0} step={1} inputMode="numeric" />
      {error && error.param !== 'denomination' && <Alert error={error} />}
      {done && <Notice>{done}</Notice>}
      <Submit busy={busy}>Create balance</Submit>
    </form>
  );
}

function Adjust({ account, onChange }: ActionProps) {
  const [denomination, setDenomination] = useState(account.balances[0]?.denomination ?? '');
  const { busy, error, run } = useAction();
  const [done, setDone] = useState('');
  if (account.balances.length === 0) return <NeedsBalance account={account} />;
  const submit = (e: Event) => {
    const v = formValues(e);
    const form = e.currentTarget as HTMLFormElement;
    void run(async () => {
      const amount = Number(v.amount);
      const r = await ok(
        api.POST('/v1/accounts/{account_id}/balance/{denomination}/adjustments', {
          params: { path: { account_id: account.account_id, denomination } },
          body: { amount, reason: v.reason ?? '' },
        }),
      );
      setDone(`Adjusted by ${units(amount)}: ${denomination} is now ${units(r.data.amount)}.`);
      form.reset();
      await onChange();
    });
  };
  return (
    <form onSubmit={submit}>
      <DenominationSelect account={account} value={denomination} onChange={setDenomination} />
      <Field
        label="Amount"
        name="amount"
        type="number"
        step={1}
        required
        hint="Positive credits the balance, negative debits it."
        error={error?.param === 'amount' ? error.message : undefined}
      />
      <Field
        label="Reason"
        name="reason"
        required
        hint="Kept on the transaction, e.g. “goodwill credit, ticket 1234”."
      />
      {error && error.param !== 'amount' && <Alert error={error} />}
      {done && <Notice>{done}</Notice>}
      <Submit busy={busy}>Adjust balance</Submit>
    </form>
  );
}

function AutoRefill({ account, onChange }: ActionProps) {
  const [denomination, setDenomination] = useState(account.balances[0]?.denomination ?? '');
  const { busy, error, run } = useAction();
  const [done, setDone] = useState('');
  const b = account.balances.find((x) => x.denomination === denomination);
  if (!b) return <NeedsBalance account={account} />;
  const submit = (e: Event) => {
    const v = formValues(e);
    void run(async () => {
      const threshold = int(v.threshold);
      await ok(
        api.PUT('/v1/accounts/{account_id}/balance/{denomination}/autorefill', {
          params: { path: { account_id: account.account_id, denomination } },
          body: {
            threshold: threshold === undefined ? null : threshold,
            amount: Number(v.amount),
            usd_charge: Number(v.usd_charge),
            refill_monthly: v.refill_monthly === 'on',
          },
        }),
      );
      setDone('Auto-refill saved. Refills happen once their charge succeeds.');
      await onChange();
    });
  };
  const field = (name: string) => (error?.param === name ? error.message : undefined);
  return (
    <form onSubmit={submit} key={denomination}>
      <DenominationSelect account={account} value={denomination} onChange={setDenomination} />
      <Field
        label="Refill when available drops below"
        name="threshold"
        type="number"
        step={1}
        defaultValue={String(b.refill_threshold ?? '')}
        hint="Leave empty to switch threshold refills off."
        error={field('threshold')}
      />
      <Field
        label="Units added per refill"
        name="amount"
        type="number"
        min={1}
        step={1}
        required
        defaultValue={String(b.refill_amount ?? '')}
        error={field('amount')}
      />
      <Field
        label="Charge per refill (USD cents)"
        name="usd_charge"
        type="number"
        min={0}
        step={1}
        required
        defaultValue={String(b.refill_usd_amount ?? '')}
        error={field('usd_charge')}
      />
      <div class="check">
        <input id="refill-monthly" type="checkbox" name="refill_monthly" defaultChecked={b.refill_monthly} />
        <label for="refill-monthly">Also refill every month (switching it on refills now)</label>
      </div>
      {error && !['threshold', 'amount', 'usd_charge'].includes(error.param ?? '') && <Alert error={error} />}
      {done && <Notice>{done}</Notice>}
      <Submit busy={busy}>Save auto-refill</Submit>
    </form>
  );
}

const SANDBOX_TOKENS = [
  { value: 'tok_visa', label: 'Visa (tok_visa): attaches and pays' },
  { value: 'tok_mastercard', label: 'Mastercard (tok_mastercard): attaches and pays' },
  { value: 'tok_chargeCustomerFail', label: 'Attaches, every charge declined (tok_chargeCustomerFail)' },
  { value: 'tok_chargeDeclined', label: 'Declined when attached (tok_chargeDeclined)' },
];

function AttachCard({ companyId, account, onChange }: ActionProps) {
  const company = useCompany(companyId);
  const sandbox = (company?.processor ?? 'sandbox') === 'sandbox';
  const [token, setToken] = useState('tok_visa');
  const { busy, error, run } = useAction();
  const [done, setDone] = useState('');
  const submit = (e: Event) => {
    const v = formValues(e);
    void run(async () => {
      const r = await ok(
        api.POST('/v1/accounts/{account_id}/card', {
          params: { path: { account_id: account.account_id } },
          body: { token: sandbox ? token : (v.token ?? '') },
        }),
      );
      setDone(`Card attached: ${r.data.brand} ending ${r.data.last4}, expires ${r.data.exp_month}/${r.data.exp_year}.`);
      await onChange();
    });
  };
  return (
    <form onSubmit={submit}>
      {sandbox ? (
        <Select label="Sandbox test card" name="token" value={token} onChange={setToken} options={SANDBOX_TOKENS} />
      ) : (
        <Field label="Card token" name="token" required hint="A token from Stripe's card element (tok_… or pm_…)." />
      )}
      <Alert error={error?.status === 402 ? `The card was declined: ${error.message}` : error} />
      {done && <Notice>{done}</Notice>}
      <Submit busy={busy}>Attach card</Submit>
    </form>
  );
}

interface Quote {
  amount: number;
  usd_charge: number;
  denomination: string;
  charged: string;
  balanceAfter: number;
}

function MidMonth({ account, onChange }: ActionProps) {
  const [denomination, setDenomination] = useState(account.balances[0]?.denomination ?? '');
  const { busy, error, run } = useAction();
  const [quote, setQuote] = useState<Quote | null>(null);
  const [done, setDone] = useState('');
  if (account.balances.length === 0) return <NeedsBalance account={account} />;
  const call = (q: { amount: number; usd_charge: number }, dryrun: boolean) =>
    ok(
      api.POST('/v1/accounts/{account_id}/modifymidmonth', {
        params: { path: { account_id: account.account_id } },
        body: { denomination, amount: q.amount, usd_charge: q.usd_charge, dryrun },
      }),
    );
  const preview = (e: Event) => {
    const v = formValues(e);
    void run(async () => {
      const q = { amount: Number(v.amount), usd_charge: Number(v.usd_charge) };
      const r = await call(q, true);
      setDone('');
      setQuote({ ...q, denomination, charged: r.data.usd_amount_charged, balanceAfter: r.data.amount });
    });
  };
  const confirm = () =>
    void run(async () => {
      if (!quote) return;
      const r = await call(quote, false);
      setQuote(null);
      setDone(`Done: charged ${cents(r.data.usd_amount_charged)}; ${denomination} is now ${units(r.data.amount)}.`);
      await onChange();
    });
  const field = (name: string) => (error?.param === name ? error.message : undefined);
  return (
    <div>
      {!quote ? (
        <form onSubmit={preview}>
          <DenominationSelect account={account} value={denomination} onChange={setDenomination} />
          <Field
            label="New monthly refill (units)"
            name="amount"
            type="number"
            min={1}
            step={1}
            required
            error={field('amount')}
          />
          <Field
            label="New monthly price (USD cents)"
            name="usd_charge"
            type="number"
            min={0}
            step={1}
            required
            error={field('usd_charge')}
          />
          {error && !['amount', 'usd_charge'].includes(error.param ?? '') && <Alert error={error} />}
          {done && <Notice>{done}</Notice>}
          <Submit busy={busy}>See the price</Submit>
        </form>
      ) : (
        <section class="quote" aria-label="Mid-month increase quote">
          <p>
            Increasing the monthly refill of <strong>{quote.denomination}</strong> to {units(quote.amount)} units for{' '}
            {cents(quote.usd_charge)} charges the card <strong data-quote>{cents(quote.charged)}</strong> now
            (prorated); the balance becomes {units(quote.balanceAfter)}.
          </p>
          <Alert error={error} />
          <button type="button" onClick={confirm} disabled={busy}>
            Charge {cents(quote.charged)} and increase
          </button>{' '}
          <button type="button" class="secondary" onClick={() => setQuote(null)}>
            Cancel
          </button>
        </section>
      )}
    </div>
  );
}
