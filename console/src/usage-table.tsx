/** Usage groups by day and type, as a table and as chart series (the account page and the usage page). */
import type { UsageGroup } from './api';
import { DAY, day, units } from './format';

/** Usage groups by day and type, newest day first. */
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

/** Cost per day by event type: one bar series per type and denomination, one point per day from `from`. */
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
