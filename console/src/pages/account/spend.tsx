/**
 * A balance's spend against its limits, per UTC window (today, this month): the units usage took, and for a
 * window with a limit a bar (a <meter>, named by its text) that turns amber from 75 % and red from 90 %.
 */
import type { Balance } from '../../api';
import { units } from '../../format';

type Window = { key: 'day' | 'month'; label: string; spend: number; limit: number | null };

export function Spend({ balance: b }: { balance: Balance }) {
  const windows: Window[] = [
    { key: 'day', label: 'Today', spend: b.spend.day, limit: b.limits.daily },
    { key: 'month', label: 'This month', spend: b.spend.month, limit: b.limits.monthly },
  ];
  return (
    <div class="spend" data-field="spend">
      {windows.map((w) => (
        <SpendWindow key={w.key} id={`spend-${b.denomination}-${w.key}`} w={w} />
      ))}
    </div>
  );
}

/** "Today 120 of 5,000" and its bar; "This month 2,400 · no limit" without one. */
function SpendWindow({ id, w }: { id: string; w: Window }) {
  const { spend, limit } = w;
  const reached = limit !== null && spend >= limit;
  const text =
    limit === null ? `${w.label} ${units(spend)} · no limit` : `${w.label} ${units(spend)} of ${units(limit)}`;
  // A limit of 0 refuses all usage: its bar is full. A spend above a lowered limit fills the bar too.
  const max = Math.max(limit ?? 0, 1);
  return (
    <div class="spend-window" data-window={w.key}>
      <span id={id} class={`spend-text${reached ? ' spend-reached' : ''}`} data-field={`spend-${w.key}`}>
        {text}
        {reached && <strong> · limit reached</strong>}
      </span>
      {limit !== null && (
        <meter
          aria-labelledby={id}
          min={0}
          max={max}
          low={max * 0.75}
          high={max * 0.9}
          optimum={0}
          value={limit === 0 ? max : Math.min(spend, max)}
          data-limit={limit}
          data-spend={spend}
        />
      )}
    </div>
  );
}
