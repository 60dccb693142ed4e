/**
 * What the account page's Alerts tab and the company's Alerts page say of an alert, in one place: its rule in
 * words, its status as a badge, what its metric is now, and its last crossing (triggered or resolved, whichever
 * came last), so that the two pages cannot describe the same alert differently.
 */
import type { Schemas } from '../../api';
import { units, when } from '../../format';

export type AlertRecord = Schemas['Alert'];

const WINDOWS = { day: 'UTC day', month: 'UTC month' } as const;

/** "Available" or "Spend per UTC day", with "(api_call only)" when the alert counts one event type. */
export function metricText(a: AlertRecord): string {
  if (a.metric === 'available') return 'Available';
  const per = a.window ? ` per ${WINDOWS[a.window]}` : '';
  return `Spend${per}${a.event_type ? ` (${a.event_type} only)` : ''}`;
}

/** When it triggers: "below 500" for available, "at 5,000 or more" for spend. */
export function thresholdText(a: AlertRecord): string {
  return a.metric === 'available' ? `below ${units(a.threshold)}` : `at ${units(a.threshold)} or more`;
}

/** The whole rule in a phrase: "available below 500", "spend per UTC day (api_call only) at 5,000 or more". */
export function ruleText(a: AlertRecord): string {
  const metric = metricText(a);
  return `${metric.charAt(0).toLowerCase()}${metric.slice(1)} ${thresholdText(a)}`;
}

/** The metric now: the balance's available, or what the current window has spent. */
export function valueText(a: AlertRecord): string {
  if (a.metric === 'available') return `${units(a.value)} available`;
  return `${units(a.value)} spent this ${a.window === 'month' ? 'month' : 'day'}`;
}

/**
 * The later of the last trigger and the last resolution, said with which one it was; null if it never crossed. Two
 * crossings in the same millisecond are told apart by the status: a triggered alert was triggered last.
 */
export function lastCrossing(a: AlertRecord): { kind: 'triggered' | 'resolved'; at: string } | null {
  const t = a.triggered_at ? Date.parse(a.triggered_at) : Number.NEGATIVE_INFINITY;
  const r = a.resolved_at ? Date.parse(a.resolved_at) : Number.NEGATIVE_INFINITY;
  const triggeredLast = t > r || (t === r && a.status === 'triggered');
  if (a.triggered_at && triggeredLast) return { kind: 'triggered', at: a.triggered_at };
  if (a.resolved_at) return { kind: 'resolved', at: a.resolved_at };
  return null;
}

export function LastCrossing({ alert }: { alert: AlertRecord }) {
  const c = lastCrossing(alert);
  if (!c) return <span class="muted">Never crossed</span>;
  return (
    <span data-crossing={c.kind}>
      {c.kind === 'triggered' ? 'Triggered' : 'Resolved'} {when(c.at)}
    </span>
  );
}

/** The status as a badge that reads without colour too ("OK", "Triggered"). */
export function StatusBadge({ status }: { status: AlertRecord['status'] }) {
  return (
    <span class={`badge badge-${status}`} data-status={status}>
      {status === 'triggered' ? 'Triggered' : 'OK'}
    </span>
  );
}
