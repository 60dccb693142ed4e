/**
 * Alerts (contract "Spend limits and alerts"): create, list, read and delete an account's alerts, and their
 * decisions, made in the transaction of every change of their balance. The rules are domain/alerts.ts; here
 * an alert's metric is read from its balance as the posting left it, its new state written only when it
 * changes, and each crossing written as one `alert_triggered` / `alert_resolved` notification in the same
 * transaction. Three writers decide, each with the balance locked, from the state the last one wrote, so that
 * none notifies a crossing twice:
 * - the balance effect `decideAlertsAfter` (compose.ts), after every posting on a balance with alerts;
 * - `createAlert`, an alert created already triggered;
 * - the job (`resolveEndedAlerts`), for spend alerts whose window ended on a balance nobody touched since.
 * A read decides in memory what a write at that instant would (`alertAt`): writing nothing.
 */
import {
  ALERTS_PER_ACCOUNT_MAX,
  type AlertCrossing,
  type AlertRule,
  type AlertState,
  type AlertWatch,
  alertRuleOf,
  alertWatchOf,
  alertValue,
  type AlertStatus,
  applyTypeSpend,
  decideAlert,
  resolvesAt,
  type TypeSpend,
  windowStartOf,
  withinWatch,
} from '../domain/alerts.js';
import { fail } from '../domain/outcome.js';
import type { SpendChange } from '../domain/spend.js';
import { newId } from '../lib/ids.js';
import { balanceKey } from '../lib/keys.js';
import type { BalanceChange, MemoSlot, Posting } from '../ledger/posting.js';
import type { AlertRow, AlertStateRow, BalanceKey, BalanceRow, Page, PageResult, ReadTx, Tx } from '../store/types.js';
import type { Command, Deps } from './deps.js';
import { ownedAccount, unknownCursor } from './lookups.js';
import { notifyAlert } from './notifications.js';

/** An alert as it is at an instant: its row, and its status and metric then. */
export interface AlertView {
  row: AlertRow;
  status: AlertStatus;
  value: number;
  /** The last time it was triggered / resolved, at that instant. */
  triggeredAtMs: number | null;
  resolvedAtMs: number | null;
}

export function ruleOf(a: Pick<AlertRow, 'metric' | 'threshold' | 'window' | 'eventType'>): AlertRule {
  return { metric: a.metric, threshold: a.threshold, window: a.window, eventType: a.eventType };
}

/** Alerts' rules and states as their stored rows have them. */
function statesOf(rows: readonly AlertRow[]): { rule: AlertRule; state: AlertState }[] {
  return rows.map((a) => ({ rule: ruleOf(a), state: { status: a.status, windowStartMs: a.windowStartMs } }));
}

/** A spend alert of one event type counts that type's spend itself; any other alert counts none. */
function typeSpendAfter(a: AlertRow, changes: readonly SpendChange[] | undefined, nowMs: number): TypeSpend | null {
  if (a.metric !== 'spend' || a.eventType === null) return null;
  const start = a.typeSpend ?? { windowStartMs: windowStartOf(a.window!, nowMs), units: 0 };
  return applyTypeSpend(start, a.window!, a.eventType, changes ?? [], nowMs);
}

/** The alert's state after its metric became `value` at `nowMs`, and the crossings to notify. */
function decided(
  a: AlertRow,
  b: BalanceRow,
  typeSpend: TypeSpend | null,
  nowMs: number,
): { state: AlertStateRow; crossings: AlertCrossing[]; value: number } {
  const rule = ruleOf(a);
  const value = alertValue(rule, b, typeSpend, nowMs);
  const { state, crossings } = decideAlert(rule, { status: a.status, windowStartMs: a.windowStartMs }, value, nowMs);
  const triggered = crossings.some((c) => c.type === 'alert_triggered');
  const resolved = crossings.some((c) => c.type === 'alert_resolved');
  return {
    value,
    crossings,
    state: {
      alertId: a.alertId,
      status: state.status,
      windowStartMs: state.windowStartMs,
      resolvesAtMs: resolvesAt(rule, state),
      triggeredAtMs: triggered ? nowMs : a.triggeredAtMs,
      resolvedAtMs: resolved ? nowMs : a.resolvedAtMs,
      typeSpend,
    },
  };
}

const sameTypeSpend = (x: TypeSpend | null, y: TypeSpend | null): boolean =>
  x === y || (x !== null && y !== null && x.windowStartMs === y.windowStartMs && x.units === y.units);

function changed(a: AlertRow, s: AlertStateRow): boolean {
  return (
    a.status !== s.status ||
    a.windowStartMs !== s.windowStartMs ||
    a.resolvesAtMs !== s.resolvesAtMs ||
    !sameTypeSpend(a.typeSpend, s.typeSpend)
  );
}

/** The notification's fields: the alert's, the metric after the change, and the window it is about. */
function crossingFields(a: AlertRow, c: AlertCrossing): Record<string, unknown> {
  return {
    alert_id: a.alertId,
    name: a.name,
    denomination: a.denomination,
    metric: a.metric,
    threshold: a.threshold,
    window: a.window,
    event_type: a.eventType,
    value: c.value,
    window_start: c.windowStartMs === null ? null : new Date(c.windowStartMs).toISOString(),
  };
}

/** An alert's status as the transaction found it, and the notifications the transaction wrote for it. */
interface Crossed {
  status: AlertStatus;
  windowStartMs: number | null;
  callbackIds: string[];
}

/**
 * What a transaction's decisions have notified, per alert: a transaction may post several changes (what is due
 * on a balance, then the request's own), and one that takes an alert back where the transaction found it
 * notifies nothing (its earlier notifications are deleted: they were never sent).
 */
const CROSSED: MemoSlot<Map<string, Crossed>> = { name: 'alert crossings', create: () => new Map() };

/**
 * Decides the alerts of locked balances after a change (`spendOf`: what the change did to each balance's
 * spend), writes the states that changed (one statement per alert) and one notification per crossing.
 */
async function decideAlerts(
  p: Posting,
  alerts: readonly AlertRow[],
  balanceOf: (a: AlertRow) => BalanceRow | undefined,
  spendOf: (a: AlertRow) => readonly SpendChange[] | undefined,
): Promise<void> {
  const updates: AlertStateRow[] = [];
  // Each balance's alerts as decided, for its watch.
  const watched = new Map<string, { b: BalanceRow; alerts: { rule: AlertRule; state: AlertState }[] }>();
  for (const a of alerts) {
    const b = balanceOf(a);
    if (b === undefined) continue;
    const { state, crossings } = decided(a, b, typeSpendAfter(a, spendOf(a), p.nowMs), p.nowMs);
    if (changed(a, state)) updates.push(state);
    const key = balanceKey(a.accountId, a.denomination);
    const w = watched.get(key) ?? { b, alerts: [] };
    w.alerts.push({ rule: ruleOf(a), state: { status: state.status, windowStartMs: state.windowStartMs } });
    watched.set(key, w);
    if (crossings.length === 0) continue;
    const crossed = p.memo(CROSSED);
    let m = crossed.get(a.alertId);
    if (m === undefined) {
      m = { status: a.status, windowStartMs: a.windowStartMs, callbackIds: [] };
      crossed.set(a.alertId, m);
    }
    if (m.callbackIds.length > 0 && state.status === m.status && state.windowStartMs === m.windowStartMs) {
      await p.tx.webhooks.deleteWebhookDeliveries(m.callbackIds);
      m.callbackIds = [];
      continue;
    }
    for (const c of crossings) m.callbackIds.push(...(await notifyAlert(p, c.type, b, crossingFields(a, c))));
  }
  if (updates.length > 0) await p.tx.alerts.updateAlerts(updates);
  for (const { b, alerts: decidedAlerts } of watched.values()) await rewatch(p.tx, b, decidedAlerts);
}

/** Writes a balance's alerts' watch where it changed (a crossing, an alert created or deleted). */
async function rewatch(tx: Tx, b: BalanceRow, alerts: readonly { rule: AlertRule; state: AlertState }[]) {
  const watch = JSON.stringify(alertWatchOf(alerts));
  if (watch !== b.alertWatch) await tx.alerts.setAlertWatch(b.accountId, b.denomination, watch);
}

/** Whether a balance with alerts is, after a change, inside its alerts' watch (none can have changed status). */
function quiet(b: BalanceRow, nowMs: number): boolean {
  return b.alertWatch !== null && withinWatch(JSON.parse(b.alertWatch) as AlertWatch, b, nowMs);
}

/**
 * The balance effect (compose.ts): after every posting, the alerts of the balances it changed. A balance
 * without alerts (its row's `alertCount`, read with it) costs nothing: usually no query is made at all.
 */
export async function decideAlertsAfter(p: Posting, changes: BalanceChange[]): Promise<void> {
  let any = false;
  for (const c of changes) if (c.after.alertCount > 0) any = true;
  if (!any) return;
  const keys: BalanceKey[] = changes
    .filter((c) => c.after.alertCount > 0 && !quiet(c.after, p.nowMs))
    .map((c) => c.after);
  if (keys.length === 0) return;
  const byKey = new Map(changes.map((c) => [balanceKey(c.after.accountId, c.after.denomination), c]));
  const of = (a: AlertRow) => byKey.get(balanceKey(a.accountId, a.denomination));
  await decideAlerts(
    p,
    await p.tx.alerts.alertsOfBalances(keys),
    (a) => of(a)?.after,
    (a) => of(a)?.spend,
  );
}

/** Most balances one run of the resolving job handles; the job loops until none is due. */
const RESOLVE_BATCH_MAX = 200;

/**
 * The job: spend alerts triggered in a window that has ended, on balances no change has reached since (a
 * change decides them itself). Each balance is locked (the posting opened on it) and its alerts decided from
 * the state last written: an alert another process or a change resolved first is left as it is.
 */
export async function resolveEndedAlerts(deps: Deps, tx: Tx, nowMs: number): Promise<number> {
  const due = await tx.alerts.findBalancesWithAlertsResolving(nowMs, RESOLVE_BATCH_MAX);
  if (due.length === 0) return 0;
  const p = await deps.ledger.open(tx, due, nowMs);
  // Every alert of those balances, decided at now from the state last written (those another process or a change
  // resolved first stay as they are), so that each balance's watch is made of all of them.
  await decideAlerts(
    p,
    await tx.alerts.alertsOfBalances(due),
    (a) => p.balance(a.accountId, a.denomination),
    () => undefined,
  );
  return due.length;
}

// ---------------------------------------------------------------------------------------------
// The API

/** An alert as it reads at `nowMs` on balance `b` (as a view has it at that instant): nothing is written. */
export function alertAt(a: AlertRow, b: BalanceRow | undefined, nowMs: number): AlertView {
  if (b === undefined)
    return {
      row: a,
      status: a.status,
      value: 0,
      triggeredAtMs: a.triggeredAtMs,
      resolvedAtMs: a.resolvedAtMs,
    };
  const { state, value } = decided(a, b, typeSpendAfter(a, undefined, nowMs), nowMs);
  return { row: a, status: state.status, value, triggeredAtMs: state.triggeredAtMs, resolvedAtMs: state.resolvedAtMs };
}

/** Views of alerts, each over its balance as it is at `nowMs`. */
async function viewsOf(deps: Deps, tx: ReadTx, rows: AlertRow[], nowMs: number): Promise<AlertView[]> {
  const balances = await deps.ledger.view(tx, rows, nowMs);
  return rows.map((a) => alertAt(a, balances.get(balanceKey(a.accountId, a.denomination)), nowMs));
}

/** What `POST …/alerts` takes, as the schema has shaped it. */
export interface AlertCreateInput {
  denomination: string;
  metric: string;
  threshold: number;
  window?: string | null;
  event_type?: string | null;
  name?: string | null;
}

/**
 * Creates an alert on a balance of the account (its balance locked), decided at once: one created already
 * triggered writes its `alert_triggered` notification in the same transaction. A spend alert of one event
 * type starts from that type's usage already recorded in the window (the hourly rollups: complete events of
 * the window's hours) and counts the type's spend as taken from then on.
 */
export async function createAlert(
  deps: Deps,
  companyId: string,
  accountId: string,
  input: AlertCreateInput,
): Promise<Command<AlertView>> {
  const rule = alertRuleOf(input);
  if (!rule.ok) fail(rule.reason, rule.message, rule.param);
  const { denomination } = input;
  return async (tx) => {
    await ownedAccount(tx, companyId, accountId);
    const nowMs = deps.clock.now();
    const p = await deps.ledger.open(tx, [{ accountId, denomination }], nowMs);
    const b = p.balance(accountId, denomination);
    if (b === undefined)
      fail('not_found', `the account has no balance of denomination "${denomination}"`, 'denomination');
    if ((await tx.alerts.countAlerts(accountId)) >= ALERTS_PER_ACCOUNT_MAX)
      fail('too_many_alerts', `an account has at most ${ALERTS_PER_ACCOUNT_MAX} alerts`);
    const r = rule.value;
    let typeSpend: TypeSpend | null = null;
    if (r.metric === 'spend' && r.eventType !== null) {
      const windowStartMs = windowStartOf(r.window!, nowMs);
      typeSpend = { windowStartMs, units: await usageCost(tx, b, r.eventType, windowStartMs, nowMs) };
    }
    const fresh: AlertRow = {
      alertId: newId('al'),
      companyId,
      accountId,
      denomination,
      ...r,
      name: input.name ?? null,
      status: 'ok',
      windowStartMs: null,
      resolvesAtMs: null,
      triggeredAtMs: null,
      resolvedAtMs: null,
      typeSpend,
      createdAtMs: nowMs,
    };
    const { state, crossings, value } = decided(fresh, b, typeSpend, nowMs);
    const row: AlertRow = { ...fresh, ...state };
    await tx.alerts.insertAlert(row);
    await rewatch(tx, b, statesOf(await tx.alerts.alertsOfBalances([b])));
    for (const c of crossings) await notifyAlert(p, c.type, b, crossingFields(row, c));
    return { row, status: row.status, value, triggeredAtMs: row.triggeredAtMs, resolvedAtMs: row.resolvedAtMs };
  };
}

/** Hours of a month and one: the rollup rows of one type of one balance a window can hold. */
const WINDOW_HOURS_MAX = 31 * 24 + 1;

/** The cost of the balance's complete events of `type` recorded in the rollups' hours of [fromMs, nowMs]. */
async function usageCost(tx: ReadTx, b: BalanceRow, type: string, fromMs: number, nowMs: number): Promise<number> {
  const rows = await tx.usage.listUsage(
    {
      companyId: b.companyId,
      accountId: b.accountId,
      byAccount: true,
      fromMs,
      toMs: nowMs + 1,
      types: [type],
      denominations: [b.denomination],
    },
    WINDOW_HOURS_MAX,
  );
  return rows.reduce((sum, r) => sum + r.cost, 0);
}

/** The company's alert, or 404 (another company's is answered like a missing one). */
async function ownedAlert(tx: ReadTx, companyId: string, alertId: string): Promise<AlertRow> {
  const a = await tx.alerts.findAlert(alertId);
  if (a === undefined || a.companyId !== companyId) fail('not_found', `no such alert: ${alertId}`, 'alert_id');
  return a;
}

export async function getAlert(deps: Deps, companyId: string, alertId: string): Promise<AlertView> {
  const nowMs = deps.clock.now();
  return deps.store.read(
    async (tx) => (await viewsOf(deps, tx, [await ownedAlert(tx, companyId, alertId)], nowMs))[0]!,
  );
}

/** An account's alerts, newest first, each as it is now. */
export async function listAlerts(
  deps: Deps,
  companyId: string,
  accountId: string,
  page: Page,
): Promise<PageResult<AlertView>> {
  const nowMs = deps.clock.now();
  return deps.store.read(async (tx) => {
    await ownedAccount(tx, companyId, accountId);
    const result = (await tx.alerts.listAlerts(accountId, page)) ?? unknownCursor();
    return { rows: await viewsOf(deps, tx, result.rows, nowMs), hasMore: result.hasMore };
  });
}

/** The company's alerts triggered now, newest first (the console's page of them). */
export async function listTriggeredAlerts(deps: Deps, companyId: string, page: Page): Promise<PageResult<AlertView>> {
  const nowMs = deps.clock.now();
  return deps.store.read(async (tx) => {
    const result = (await tx.alerts.listTriggeredAlerts(companyId, nowMs, page)) ?? unknownCursor();
    // An available alert whose balance a due grant expiry took below its threshold reads triggered before the
    // expiry is written; one a due start took back above it reads resolved.
    const views = await viewsOf(deps, tx, result.rows, nowMs);
    return { rows: views.filter((v) => v.status === 'triggered'), hasMore: result.hasMore };
  });
}

/** Deletes an alert, its balance locked (a change deciding it finishes first); nothing is notified. */
export async function deleteAlert(deps: Deps, companyId: string, alertId: string): Promise<Command<string>> {
  return async (tx) => {
    const a = await ownedAlert(tx, companyId, alertId);
    const p = await deps.ledger.open(tx, [a], deps.clock.now());
    if (!(await tx.alerts.deleteAlert(a))) fail('not_found', `no such alert: ${alertId}`, 'alert_id');
    const b = p.balance(a.accountId, a.denomination);
    if (b !== undefined) await rewatch(tx, b, statesOf(await tx.alerts.alertsOfBalances([b])));
    return alertId;
  };
}
