/**
 * Alerts (contract "Spend limits and alerts"): a company's alerts on its accounts' balances, each with its rule
 * and its state. The state changes only in the transaction of a change of its balance, with the balance locked
 * (src/operations/alerts.ts): `alertsOfBalances` and `updateAlerts` assume that lock. `balances.alert_count`
 * (read with the balance) says whether a balance has any, so that a posting on one without costs no query.
 */
import type { AlertMetric, AlertStatus, TypeSpend } from '../../domain/alerts.js';
import type { SpendWindow } from '../../domain/spend.js';
import type { BalanceKey } from '../balances/types.js';
import type { Page, PageResult } from '../common.js';

/** What an alert's state is: its status, the window a triggered spend alert is about, its last crossings. */
export interface AlertStateRow {
  alertId: string;
  status: AlertStatus;
  /** A triggered spend alert: the start of the window it was triggered in; else null. */
  windowStartMs: number | null;
  /** A triggered spend alert: when that window ends (it resolves then); else null. The resolving job's index. */
  resolvesAtMs: number | null;
  /** The last time it was triggered / resolved (null: never). */
  triggeredAtMs: number | null;
  resolvedAtMs: number | null;
  /** A spend alert of one event type: that type's spend in its window (null: none counted yet). */
  typeSpend: TypeSpend | null;
}

export interface AlertRow extends AlertStateRow {
  companyId: string;
  accountId: string;
  denomination: string;
  metric: AlertMetric;
  threshold: number;
  window: SpendWindow | null;
  eventType: string | null;
  name: string | null;
  createdAtMs: number;
}

export interface AlertsReadTx {
  /** An account's alerts, newest first; undefined for an unknown cursor. */
  listAlerts(accountId: string, page: Page): Promise<PageResult<AlertRow> | undefined>;
  /**
   * A company's alerts triggered at `nowMs` (a spend alert whose window ended before is not, whether or not
   * its resolution was written), newest first; undefined for an unknown cursor.
   */
  listTriggeredAlerts(companyId: string, nowMs: number, page: Page): Promise<PageResult<AlertRow> | undefined>;
  findAlert(alertId: string): Promise<AlertRow | undefined>;
  countAlerts(accountId: string): Promise<number>;
}

export interface AlertsTx extends AlertsReadTx {
  /** Inserts the alert and counts it on its balance (`alert_count`). The balance is locked. */
  insertAlert(row: AlertRow): Promise<void>;
  /** Deletes the alert and uncounts it; false when there is none. The balance is locked. */
  deleteAlert(alert: AlertRow): Promise<boolean>;
  /** The alerts of these (locked) balances. */
  alertsOfBalances(keys: BalanceKey[]): Promise<AlertRow[]>;
  /** Sets a (locked) balance's alerts' watch (domain/alerts.ts AlertWatch as JSON). */
  setAlertWatch(accountId: string, denomination: string, watch: string): Promise<void>;
  /** Writes the states of alerts of locked balances. */
  updateAlerts(states: AlertStateRow[]): Promise<void>;
  /**
   * Balances with a triggered spend alert whose window has ended by `nowMs`, at most `limit`, each once: the
   * job's work (a read or a posting decides them as resolved too; both decide under the balance's lock).
   */
  findBalancesWithAlertsResolving(nowMs: number, limit: number): Promise<BalanceKey[]>;
}
