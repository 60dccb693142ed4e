/** The company's usage by event type and day for a chosen period: chart, table and CSV download. */
import { useMemo, useState } from 'preact/hooks';
import { allPages, api, ok } from '../api';
import { Chart } from '../chart';
import { day, toCsv, units, usagePeriod } from '../format';
import { usePoll } from '../hooks';
import { List, Select } from '../ui';
import { UsageTable, usageChartData } from '../usage-table';

export function UsagePage({ companyId }: { companyId: string }) {
  const [days, setDays] = useState('30');
  const n = Number(days);
  const usage = usePoll(async () => {
    const period = usagePeriod(n);
    const groups = await allPages((c) =>
      ok(
        api.GET('/v1/usage', {
          params: {
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
    return { groups, from: period.from, to: period.to };
  }, [companyId, n]);
  const chart = useMemo(
    () => (usage.data ? usageChartData(usage.data.groups, usage.data.from, n) : null),
    [usage.data, n],
  );
  const csvHref = useMemo(() => {
    if (!usage.data) return null;
    const rows = usage.data.groups.map((g) => [
      day(g.window_start),
      g.type ?? '',
      g.denomination ?? '',
      g.events,
      g.quantity,
      g.cost,
    ]);
    const csv = toCsv([['day', 'type', 'denomination', 'events', 'quantity', 'cost'], ...rows]);
    return `data:text/csv;charset=utf-8,${encodeURIComponent(`${csv}\r\n`)}`;
  }, [usage.data]);
  const totals = useMemo(() => {
    const t = new Map<string, { events: number; cost: number }>();
    for (const g of usage.data?.groups ?? []) {
      const k = `${g.type} (${g.denomination})`;
      const cur = t.get(k) ?? { events: 0, cost: 0 };
      t.set(k, { events: cur.events + g.events, cost: cur.cost + g.cost });
    }
    return [...t.entries()].sort();
  }, [usage.data]);
  return (
    <section>
      <div class="row">
        <h1 tabIndex={-1}>Usage</h1>
        <Select
          label="Period"
          name="period"
          value={days}
          onChange={setDays}
          options={[
            { value: '7', label: 'Last 7 days' },
            { value: '30', label: 'Last 30 days' },
            { value: '90', label: 'Last 90 days' },
          ]}
        />
        {csvHref && (
          <a class="button secondary" href={csvHref} download={`usage-${companyId}-${days}d.csv`}>
            Download CSV
          </a>
        )}
      </div>
      <p class="muted">Completed events by UTC day and type, at their final cost, for every account.</p>
      <List
        items={usage.data?.groups}
        error={usage.error}
        what="usage"
        empty={<p class="muted">No completed usage in this period.</p>}
      >
        {(groups) => (
          <>
            <Chart
              title="Cost per day by event type"
              kind="bars"
              x={chart!.x}
              series={chart!.series}
              summary={totals.map(([k, v]) => `${k}: ${units(v.cost)}`).join(', ')}
            />
            <ul class="totals">
              {totals.map(([k, v]) => (
                <li key={k}>
                  <strong>{k}</strong>: {units(v.events)} events, cost {units(v.cost)}
                </li>
              ))}
            </ul>
            <UsageTable name="usage" groups={groups} />
          </>
        )}
      </List>
    </section>
  );
}
