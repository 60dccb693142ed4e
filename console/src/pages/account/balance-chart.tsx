/** The account page's chart of one balance over time, from the transactions' balance_after. */
import { useMemo, useState } from 'preact/hooks';
import type { Balance, Transaction } from '../../api';
import { Chart } from '../../chart';
import { units } from '../../format';
import { Select } from '../../ui';

export function BalanceChart({ balances, txs }: { balances: Balance[]; txs: Transaction[] | undefined }) {
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
