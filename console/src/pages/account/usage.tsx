/** The account page's usage by event type per day: one bar series per type (cost in its denomination). */
import { useMemo } from 'preact/hooks';
import type { ApiError, UsageGroup } from '../../api';
import { Chart } from '../../chart';
import { List } from '../../ui';
import { UsageTable, usageChartData } from '../../usage-table';
import { USAGE_DAYS } from './view';

export function AccountUsage(props: { usage: { from: string; groups: UsageGroup[] } | undefined; error?: ApiError }) {
  const { usage } = props;
  const chart = useMemo(() => (usage ? usageChartData(usage.groups, usage.from, USAGE_DAYS) : null), [usage]);
  return (
    <section aria-labelledby="usage-h">
      <h2 id="usage-h">Usage by type, last {USAGE_DAYS} days</h2>
      <List
        items={usage?.groups}
        error={props.error}
        what="usage"
        empty={<p class="muted">No completed usage in the last {USAGE_DAYS} days.</p>}
      >
        {(groups) => (
          <>
            <Chart
              title="Cost per day by event type"
              kind="bars"
              x={chart!.x}
              series={chart!.series}
              height={180}
              summary={`${groups.length} day and type groups`}
            />
            <UsageTable name="account-usage" groups={groups} />
          </>
        )}
      </List>
    </section>
  );
}
