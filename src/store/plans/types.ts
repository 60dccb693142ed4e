/**
 * Plans: a company's subscription plans (a monthly charge and the balances it includes), each
 * account's plan periods, and the plan columns of its balances (included amount, alert).
 */
import type { Page, PageResult } from '../common.js';

export interface PlanBalanceRow {
  denomination: string;
  amount: number;
  overageUnitUsdCents: number;
}

export interface PlanRow {
  planId: string;
  companyId: string;
  name: string;
  chargeAmountUsdCents: number;
  billingPeriod: 'month';
  overageChargeMode: 'postpay';
  thresholdAlertPercentage: string | null;
  rollover: boolean;
  balances: PlanBalanceRow[];
  createdAtMs: number;
}

/** An account's plan periods: renewed under the monthly day rule from `anchorAtMs`. */
export interface AccountPlanRow {
  accountId: string;
  companyId: string;
  planId: string;
  anchorAtMs: number;
  periodStartMs: number;
  nextRenewalAtMs: number;
}

export interface PlansReadTx {
  findPlan(companyId: string, planId: string): Promise<PlanRow | undefined>;
  listPlans(companyId: string, page: Page): Promise<PageResult<PlanRow> | undefined>;
  findAccountPlan(accountId: string): Promise<AccountPlanRow | undefined>;
}

export interface PlansTx extends PlansReadTx {
  /** Marks a (locked) balance as a plan balance: included amount and alert percentage. */
  setPlanBalance(
    accountId: string,
    denomination: string,
    included: number,
    alertPercentage: string | null,
  ): Promise<void>;
  setPlanAlerted(accountId: string, denomination: string, alerted: boolean): Promise<void>;
  insertPlan(row: PlanRow): Promise<void>;
  insertAccountPlan(row: AccountPlanRow): Promise<void>;
  /** Claims one account whose plan period ends by `nowMs` (PostgreSQL `FOR UPDATE SKIP LOCKED`). */
  claimDuePlanRenewal(nowMs: number): Promise<AccountPlanRow | undefined>;
  updateAccountPlanPeriod(accountId: string, periodStartMs: number, nextRenewalAtMs: number): Promise<void>;
}
