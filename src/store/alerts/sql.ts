/** Alerts: the row mapper and the SQL both databases share (store/alerts/types.ts). */
import type { AlertMetric, AlertStatus } from '../../domain/alerts.js';
import type { SpendWindow } from '../../domain/spend.js';
import type { BalanceKey } from '../balances/types.js';
import type { Page } from '../common.js';
import { SqlCore, num, numOrNull, strOrNull, type SqlRow } from '../sql-core.js';
import type { AlertRow, AlertStateRow, AlertsTx } from './types.js';

const toAlert = (r: SqlRow): AlertRow => ({
  alertId: String(r.alert_id),
  companyId: String(r.company_id),
  accountId: String(r.account_id),
  denomination: String(r.denomination),
  metric: String(r.metric) as AlertMetric,
  threshold: num(r.threshold),
  window: strOrNull(r.alert_window) as SpendWindow | null,
  eventType: strOrNull(r.event_type),
  name: strOrNull(r.name),
  status: String(r.status) as AlertStatus,
  windowStartMs: numOrNull(r.window_start),
  resolvesAtMs: numOrNull(r.resolves_at),
  triggeredAtMs: numOrNull(r.triggered_at),
  resolvedAtMs: numOrNull(r.resolved_at),
  typeSpend:
    r.type_spend_start === null || r.type_spend_start === undefined
      ? null
      : { windowStartMs: num(r.type_spend_start), units: num(r.type_spend) },
  createdAtMs: num(r.created_at),
});

export class AlertsSql extends SqlCore implements AlertsTx {
  listAlerts(accountId: string, page: Page) {
    return this.pageBySeq('alerts', 'alert_id', [['account_id', accountId]], page, toAlert);
  }
  async listTriggeredAlerts(companyId: string, nowMs: number, page: Page) {
    const [inCompany, params] = this.inList('company_id', [companyId]);
    const where = `${inCompany} AND status = 'triggered' AND (resolves_at IS NULL OR resolves_at > ?)`;
    params.push(nowMs);
    let cursorClause = '';
    if (page.startingAfter !== undefined) {
      const seq = await this.cursorSeq('alerts', 'alert_id', page.startingAfter, where, params);
      if (seq === undefined) return undefined;
      cursorClause = ' AND seq < ?';
      params.push(seq);
    }
    const rows = await this.db.all(
      `SELECT * FROM alerts WHERE ${where}${cursorClause} ORDER BY ${this.seqOrder('company_id')} LIMIT ?`,
      [...params, page.limit + 1],
    );
    return { rows: rows.slice(0, page.limit).map(toAlert), hasMore: rows.length > page.limit };
  }
  async findAlert(alertId: string) {
    const r = await this.one('SELECT * FROM alerts WHERE alert_id = ?', [alertId]);
    return r && toAlert(r);
  }
  async countAlerts(accountId: string) {
    return num((await this.one('SELECT COUNT(*) AS n FROM alerts WHERE account_id = ?', [accountId]))!.n);
  }

  async insertAlert(a: AlertRow) {
    await this.db.run(
      'INSERT INTO alerts (alert_id, company_id, account_id, denomination, metric, threshold, alert_window, ' +
        'event_type, name, status, window_start, resolves_at, triggered_at, resolved_at, type_spend_start, ' +
        'type_spend, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [
        a.alertId,
        a.companyId,
        a.accountId,
        a.denomination,
        a.metric,
        a.threshold,
        a.window,
        a.eventType,
        a.name,
        a.status,
        a.windowStartMs,
        a.resolvesAtMs,
        a.triggeredAtMs,
        a.resolvedAtMs,
        a.typeSpend?.windowStartMs ?? null,
        a.typeSpend?.units ?? null,
        a.createdAtMs,
      ],
    );
    await this.countOn(a, 1);
  }
  async deleteAlert(a: AlertRow) {
    const n = await this.db.run('DELETE FROM alerts WHERE alert_id = ?', [a.alertId]);
    if (n > 0) await this.countOn(a, -1);
    return n > 0;
  }
  private async countOn(a: AlertRow, by: 1 | -1) {
    await this.db.run('UPDATE balances SET alert_count = alert_count + ? WHERE account_id = ? AND denomination = ?', [
      by,
      a.accountId,
      a.denomination,
    ]);
  }

  async setAlertWatch(accountId: string, denomination: string, watch: string) {
    await this.db.run('UPDATE balances SET alert_watch = ? WHERE account_id = ? AND denomination = ?', [
      watch,
      accountId,
      denomination,
    ]);
  }
  async alertsOfBalances(keys: BalanceKey[]) {
    if (keys.length === 0) return [];
    if (this.dialect.name === 'postgres') {
      // One statement text whatever the number of balances (its prepared plan is reused), the keys as arrays.
      const rows = await this.db.all(
        'SELECT * FROM alerts WHERE (account_id, denomination) IN (SELECT * FROM unnest(?::text[], ?::text[])) ' +
          'ORDER BY seq',
        [keys.map((k) => k.accountId), keys.map((k) => k.denomination)],
      );
      return rows.map(toAlert);
    }
    // SQLite: one cached statement per balance (an index seek each) beats an OR of many pairs.
    const out: AlertRow[] = [];
    for (const k of keys)
      for (const r of await this.db.all('SELECT * FROM alerts WHERE account_id = ? AND denomination = ? ORDER BY seq', [
        k.accountId,
        k.denomination,
      ]))
        out.push(toAlert(r));
    return out;
  }
  async updateAlerts(states: AlertStateRow[]) {
    if (states.length === 0) return;
    if (this.dialect.name === 'postgres') {
      // One statement for a posting's alerts (one round trip), the states as arrays.
      await this.db.run(
        'UPDATE alerts AS a SET status = v.status, window_start = v.window_start, resolves_at = v.resolves_at, ' +
          'triggered_at = v.triggered_at, resolved_at = v.resolved_at, type_spend_start = v.type_spend_start, ' +
          'type_spend = v.type_spend FROM unnest(?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ' +
          '?::bigint[], ?::bigint[], ?::bigint[]) AS v(alert_id, status, window_start, resolves_at, triggered_at, ' +
          'resolved_at, type_spend_start, type_spend) WHERE a.alert_id = v.alert_id',
        [
          states.map((s) => s.alertId),
          states.map((s) => s.status),
          states.map((s) => s.windowStartMs),
          states.map((s) => s.resolvesAtMs),
          states.map((s) => s.triggeredAtMs),
          states.map((s) => s.resolvedAtMs),
          states.map((s) => s.typeSpend?.windowStartMs ?? null),
          states.map((s) => s.typeSpend?.units ?? null),
        ],
      );
      return;
    }
    for (const s of states)
      await this.db.run(
        'UPDATE alerts SET status = ?, window_start = ?, resolves_at = ?, triggered_at = ?, resolved_at = ?, ' +
          'type_spend_start = ?, type_spend = ? WHERE alert_id = ?',
        [
          s.status,
          s.windowStartMs,
          s.resolvesAtMs,
          s.triggeredAtMs,
          s.resolvedAtMs,
          s.typeSpend?.windowStartMs ?? null,
          s.typeSpend?.units ?? null,
          s.alertId,
        ],
      );
  }
  async findBalancesWithAlertsResolving(nowMs: number, limit: number) {
    const rows = await this.db.all(
      'SELECT DISTINCT account_id, denomination FROM alerts WHERE resolves_at IS NOT NULL AND resolves_at <= ? ' +
        'LIMIT ?',
      [nowMs, limit],
    );
    return rows.map((r) => ({ accountId: String(r.account_id), denomination: String(r.denomination) }));
  }
}
