/** Plans: row mappers and the SQL both databases share (mixed into SqlTx, sql-base.ts). */
import type { Page } from '../common.js';
import { SqlCore, num, strOrNull, type SqlRow } from '../sql-core.js';
import type { PlanFeatureRow } from '../features/types.js';
import type { AccountPlanRow, PlanRow, PlansTx } from './types.js';

const toPlan = (r: SqlRow, entries: SqlRow[], features: SqlRow[]): PlanRow => ({
  planId: String(r.plan_id),
  companyId: String(r.company_id),
  name: String(r.name),
  chargeAmountUsdCents: num(r.charge_amount),
  billingPeriod: 'month',
  overageChargeMode: 'postpay',
  thresholdAlertPercentage: strOrNull(r.threshold_alert_percentage),
  rollover: Boolean(r.rollover),
  createdAtMs: num(r.created_at),
  balances: entries.map((e) => ({
    denomination: String(e.denomination),
    amount: num(e.amount),
    overageUnitUsdCents: num(e.overage_charge_amount),
  })),
  features: features.map((f) => ({ feature: String(f.feature_key), value: strOrNull(f.value) })),
});

const toAccountPlan = (r: SqlRow): AccountPlanRow => ({
  accountId: String(r.account_id),
  companyId: String(r.company_id),
  planId: String(r.plan_id),
  anchorAtMs: num(r.anchor_at),
  periodStartMs: num(r.period_start),
  nextRenewalAtMs: num(r.next_renewal_at),
});

export class PlansSql extends SqlCore implements PlansTx {
  async findPlan(companyId: string, planId: string) {
    const r = await this.one('SELECT * FROM plans WHERE plan_id = ? AND company_id = ?', [planId, companyId]);
    return r && (await this.withPlanBalances([r]))[0];
  }
  async lockPlan(companyId: string, planId: string) {
    const r = await this.one(`SELECT * FROM plans WHERE plan_id = ? AND company_id = ?${this.forUpdate()}`, [
      planId,
      companyId,
    ]);
    return r && (await this.withPlanBalances([r]))[0];
  }
  async listPlans(companyId: string, page: Page) {
    const result = await this.pageBySeq('plans', 'plan_id', [['company_id', companyId]], page, (r) => r);
    if (!result) return undefined;
    return { rows: await this.withPlanBalances(result.rows), hasMore: result.hasMore };
  }
  private async withPlanBalances(rows: SqlRow[]): Promise<PlanRow[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((r) => String(r.plan_id));
    const [inIds, params] = this.inList('plan_id', ids);
    const entries = await this.db.all(`SELECT * FROM plan_balances WHERE ${inIds} ORDER BY plan_id, position`, params);
    const features = await this.db.all(`SELECT * FROM plan_features WHERE ${inIds} ORDER BY plan_id, position`, params);
    return rows.map((r) =>
      toPlan(
        r,
        entries.filter((e) => e.plan_id === r.plan_id),
        features.filter((f) => f.plan_id === r.plan_id),
      ),
    );
  }
  async findAccountPlan(accountId: string) {
    const r = await this.one('SELECT * FROM account_plans WHERE account_id = ?', [accountId]);
    return r && toAccountPlan(r);
  }

  async setPlanBalance(accountId: string, denomination: string, included: number, alertPercentage: string | null) {
    await this.db.run(
      'UPDATE balances SET plan_included = ?, plan_alert_percentage = ?, plan_alerted = ? ' +
        'WHERE account_id = ? AND denomination = ?',
      [included, alertPercentage, this.bool(false), accountId, denomination],
    );
  }
  async setPlanAlerted(accountId: string, denomination: string, alerted: boolean) {
    await this.db.run('UPDATE balances SET plan_alerted = ? WHERE account_id = ? AND denomination = ?', [
      this.bool(alerted),
      accountId,
      denomination,
    ]);
  }
  async insertPlan(p: PlanRow) {
    await this.db.run(
      'INSERT INTO plans (plan_id, company_id, name, charge_amount, billing_period, overage_charge_mode, ' +
        `threshold_alert_percentage, rollover, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        p.planId,
        p.companyId,
        p.name,
        p.chargeAmountUsdCents,
        p.billingPeriod,
        p.overageChargeMode,
        p.thresholdAlertPercentage,
        this.bool(p.rollover),
        p.createdAtMs,
      ],
    );
    let position = 0;
    for (const b of p.balances) {
      await this.db.run(
        'INSERT INTO plan_balances (plan_id, position, denomination, amount, overage_charge_amount) ' +
          'VALUES (?, ?, ?, ?, ?)',
        [p.planId, position++, b.denomination, b.amount, b.overageUnitUsdCents],
      );
    }
    await this.insertPlanFeatures(p, p.features);
  }
  async replacePlanFeatures(p: PlanRow, features: PlanFeatureRow[]) {
    await this.db.run('DELETE FROM plan_features WHERE plan_id = ?', [p.planId]);
    await this.insertPlanFeatures(p, features);
  }
  private async insertPlanFeatures(p: PlanRow, features: PlanFeatureRow[]) {
    if (features.length === 0) return;
    await this.db.run(
      'INSERT INTO plan_features (plan_id, feature_key, company_id, position, value) VALUES ' +
        features.map(() => '(?, ?, ?, ?, ?)').join(', '),
      features.flatMap((f, i) => [p.planId, f.feature, p.companyId, i, f.value]),
    );
  }
  async insertAccountPlan(a: AccountPlanRow) {
    await this.db.run(
      'INSERT INTO account_plans (account_id, company_id, plan_id, anchor_at, period_start, next_renewal_at) ' +
        'VALUES (?, ?, ?, ?, ?, ?)',
      [a.accountId, a.companyId, a.planId, a.anchorAtMs, a.periodStartMs, a.nextRenewalAtMs],
    );
  }
  async claimDuePlanRenewal(nowMs: number) {
    const r = await this.one(
      `SELECT * FROM account_plans WHERE next_renewal_at <= ? ORDER BY next_renewal_at LIMIT 1${this.skipLocked()}`,
      [nowMs],
    );
    return r && toAccountPlan(r);
  }
  async updateAccountPlanPeriod(accountId: string, periodStartMs: number, nextRenewalAtMs: number) {
    await this.db.run('UPDATE account_plans SET period_start = ?, next_renewal_at = ? WHERE account_id = ?', [
      periodStartMs,
      nextRenewalAtMs,
      accountId,
    ]);
  }
}
