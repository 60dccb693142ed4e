/**
 * Alerts (contract "Spend limits and alerts"): the rules that decide an alert's status from its metric, and
 * which changes of status are notified. Pure: the ledger's posting gives each alert of a changed balance its
 * metric after the change and writes what `decideAlert` says, in the transaction of the change.
 *
 * - `available`: triggered while the balance's available is below the threshold (any integer), resolved when
 *   it is back at or above it;
 * - `spend` of a `day` or `month` window (optionally of one event type's usage): triggered once the window's
 *   spend reaches the threshold (≥ 1); it stays triggered for the rest of that window, whatever is given back,
 *   and is resolved when the next window starts (value 0, that window's start).
 */
import { failure, type Outcome } from './outcome.js';
import { type SpendChange, type SpendWindow, type SpendWindows, spendAt, windowResetsAt } from './spend.js';
import { dayStart, monthStart } from './time.js';

export const ALERT_METRICS = ['available', 'spend'] as const;
export type AlertMetric = (typeof ALERT_METRICS)[number];
export const ALERT_WINDOWS = ['day', 'month'] as const;
export type AlertStatus = 'ok' | 'triggered';

/** Most alerts per account (the 51st is refused). */
export const ALERTS_PER_ACCOUNT_MAX = 50;

export interface AlertRule {
  metric: AlertMetric;
  threshold: number;
  /** The spend window; null for `available`. */
  window: SpendWindow | null;
  /** Only usage of events of this type counts (spend alerts); null: all usage. */
  eventType: string | null;
}

/** What an alert keeps: its status, and for a triggered spend alert the start of the window it was triggered in. */
export interface AlertState {
  status: AlertStatus;
  windowStartMs: number | null;
}

export type AlertNotificationType = 'alert_triggered' | 'alert_resolved';

/** A change of status to notify: the metric after it, and the window it is about (null for `available`). */
export interface AlertCrossing {
  type: AlertNotificationType;
  value: number;
  windowStartMs: number | null;
}

/**
 * The spend of one event type that a spend alert with an `event_type` counts itself (the balance keeps only
 * its total): the units of that type's usage taken in the window that starts at `windowStartMs`.
 */
export interface TypeSpend {
  windowStartMs: number;
  units: number;
}

/** The start of the window of `window` that holds `nowMs`. */
export function windowStartOf(window: SpendWindow, nowMs: number): number {
  return window === 'day' ? dayStart(nowMs) : monthStart(nowMs);
}

/** Whether the metric's value triggers the rule (within a spend window: reaching the threshold). */
function triggers(rule: AlertRule, value: number): boolean {
  return rule.metric === 'available' ? value < rule.threshold : value >= rule.threshold;
}

/**
 * The alert's state after its metric became `value` at `nowMs`, and the crossings to notify, in order. A spend
 * alert triggered in a window that has ended is first resolved (value 0, the new window's start), then decided
 * again in the new one. An alert that ends as it started notifies nothing.
 */
export function decideAlert(
  rule: AlertRule,
  before: AlertState,
  value: number,
  nowMs: number,
): { state: AlertState; crossings: AlertCrossing[] } {
  if (rule.metric === 'available') {
    const status: AlertStatus = triggers(rule, value) ? 'triggered' : 'ok';
    if (status === before.status) return { state: before, crossings: [] };
    const type: AlertNotificationType = status === 'triggered' ? 'alert_triggered' : 'alert_resolved';
    return { state: { status, windowStartMs: null }, crossings: [{ type, value, windowStartMs: null }] };
  }
  const w = windowStartOf(rule.window!, nowMs);
  const crossings: AlertCrossing[] = [];
  let state = before;
  if (state.status === 'triggered' && state.windowStartMs !== w) {
    crossings.push({ type: 'alert_resolved', value: 0, windowStartMs: w });
    state = { status: 'ok', windowStartMs: null };
  }
  if (state.status === 'ok' && triggers(rule, value)) {
    crossings.push({ type: 'alert_triggered', value, windowStartMs: w });
    state = { status: 'triggered', windowStartMs: w };
  }
  return { state, crossings };
}

/** A type's spend as it is at `nowMs`: a window that has ended reads as the current one, at 0. */
export function typeSpendAt(c: TypeSpend, window: SpendWindow, nowMs: number): TypeSpend {
  const w = windowStartOf(window, nowMs);
  return c.windowStartMs === w ? c : { windowStartMs: w, units: 0 };
}

/**
 * A type's spend at `nowMs` after `changes` (those of other types are not its): as the balance's own windows
 * (domain/spend.ts applySpend), units taken now count, units given back leave the window they were taken in.
 */
export function applyTypeSpend(
  c: TypeSpend,
  window: SpendWindow,
  eventType: string,
  changes: readonly SpendChange[],
  nowMs: number,
): TypeSpend {
  const at = typeSpendAt(c, window, nowMs);
  let units = at.units;
  for (const x of changes) {
    if (x.eventType !== eventType || x.units === 0) continue;
    if (x.units > 0 || windowStartOf(window, x.takenAtMs) === at.windowStartMs) units = Math.max(0, units + x.units);
  }
  return units === at.units ? at : { windowStartMs: at.windowStartMs, units };
}

/** What an alert's metric reads from its balance: its figures and spend windows. */
export interface AlertBalance {
  amount: number;
  pending: number;
  spend: SpendWindows;
}

/**
 * The alert's metric at `nowMs`: the balance's available, the spend of its window, or (with an event type)
 * that type's spend, which the alert counts itself (`typeSpend`, null before any).
 */
export function alertValue(rule: AlertRule, b: AlertBalance, typeSpend: TypeSpend | null, nowMs: number): number {
  if (rule.metric === 'available') return b.amount - b.pending;
  if (rule.eventType !== null) return typeSpend === null ? 0 : typeSpendAt(typeSpend, rule.window!, nowMs).units;
  const w = spendAt(b.spend, nowMs);
  return rule.window === 'day' ? w.day : w.month;
}

/**
 * What a balance's alerts watch, kept on the balance row: the bounds within which no change of the balance can
 * change any of its alerts' statuses. A posting that leaves its balance inside them reads no alert at all.
 */
export interface AlertWatch {
  /** `available` must stay at or above this: the highest threshold of an `ok` available alert. */
  low: number | null;
  /** `available` must stay below this: the lowest threshold of a `triggered` available alert. */
  high: number | null;
  /** The day's (month's) spend must stay below this: the lowest threshold of an `ok` spend alert of that window. */
  day: number | null;
  month: number | null;
  /** Before this instant: the soonest end of a triggered spend alert's window. */
  until: number | null;
  /** A spend alert of one event type counts that type's spend itself: every change of the balance is decided. */
  typed: boolean;
}

const lowest = (a: number | null, b: number): number => (a === null || b < a ? b : a);

/** The watch of a balance's alerts in these states. */
export function alertWatchOf(alerts: readonly { rule: AlertRule; state: AlertState }[]): AlertWatch {
  const w: AlertWatch = { low: null, high: null, day: null, month: null, until: null, typed: false };
  for (const { rule, state } of alerts) {
    if (rule.metric === 'available') {
      if (state.status === 'ok') w.low = w.low === null || rule.threshold > w.low ? rule.threshold : w.low;
      else w.high = lowest(w.high, rule.threshold);
      continue;
    }
    if (rule.eventType !== null) w.typed = true;
    if (state.status === 'ok') {
      if (rule.window === 'day') w.day = lowest(w.day, rule.threshold);
      else w.month = lowest(w.month, rule.threshold);
    } else {
      const end = resolvesAt(rule, state);
      if (end !== null) w.until = lowest(w.until, end);
    }
  }
  return w;
}

/** Whether the balance, as it is at `nowMs`, is inside its alerts' watch: no alert's status can have changed. */
export function withinWatch(w: AlertWatch, b: AlertBalance, nowMs: number): boolean {
  if (w.typed || (w.until !== null && nowMs >= w.until)) return false;
  const available = b.amount - b.pending;
  if ((w.low !== null && available < w.low) || (w.high !== null && available >= w.high)) return false;
  if (w.day === null && w.month === null) return true;
  const spend = spendAt(b.spend, nowMs);
  return (w.day === null || spend.day < w.day) && (w.month === null || spend.month < w.month);
}

/** The status an alert shows at `nowMs` (a spend alert of an ended window reads resolved before anything writes it). */
export function statusAt(rule: AlertRule, state: AlertState, nowMs: number): AlertStatus {
  if (
    rule.metric === 'spend' &&
    state.status === 'triggered' &&
    state.windowStartMs !== windowStartOf(rule.window!, nowMs)
  )
    return 'ok';
  return state.status;
}

/** When a triggered spend alert resolves by itself (the end of its window); null for any other. */
export function resolvesAt(rule: AlertRule, state: AlertState): number | null {
  if (rule.metric !== 'spend' || state.status !== 'triggered' || state.windowStartMs === null) return null;
  return windowResetsAt(rule.window!, state.windowStartMs);
}

/** What `POST …/alerts` takes, as the schema has shaped it. */
export interface AlertInput {
  metric: string;
  threshold: number;
  window?: string | null;
  event_type?: string | null;
}

/** The rule of a new alert, or the field that makes it invalid (400 naming it). */
export function alertRuleOf(input: AlertInput): Outcome<AlertRule> {
  if (!(ALERT_METRICS as readonly string[]).includes(input.metric))
    return failure('unknown_alert_metric', `metric must be one of ${ALERT_METRICS.join(', ')}`, 'metric');
  const window = input.window ?? null;
  const eventType = input.event_type ?? null;
  if (input.metric === 'available') {
    if (window !== null) return failure('window_only_for_spend_alerts', 'an available alert has no window', 'window');
    if (eventType !== null)
      return failure('event_type_only_for_spend_alerts', 'an available alert has no event_type', 'event_type');
    return { ok: true, value: { metric: 'available', threshold: input.threshold, window: null, eventType: null } };
  }
  if (window === null) return failure('spend_alert_needs_window', 'a spend alert needs window: day or month', 'window');
  if (!(ALERT_WINDOWS as readonly string[]).includes(window))
    return failure('unknown_alert_window', `window must be one of ${ALERT_WINDOWS.join(', ')}`, 'window');
  if (input.threshold < 1)
    return failure('spend_alert_threshold_below_1', 'a spend alert needs a threshold of at least 1', 'threshold');
  return { ok: true, value: { metric: 'spend', threshold: input.threshold, window: window as SpendWindow, eventType } };
}
