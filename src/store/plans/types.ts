/**
 * Plans: a company's subscription plans (a monthly charge and the balances it includes), each
 * account's plan periods, and the plan columns of its balances (included amount, alert).
 */
import type { Page, PageResult } from '../common.js';
import type { PlanFeatureRow } from '../features/types.js';

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
  /** The features an account on the plan has (contract "Features and entitlements"), in the order given. */
  features: PlanFeatureRow[];
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
  /** The company's plan, locked (PostgreSQL `FOR UPDATE`) until the transaction ends. */
  lockPlan(companyId: string, planId: string): Promise<PlanRow | undefined>;
  /** Replaces the plan's features: one write, whatever the number of accounts on the plan. */
  replacePlanFeatures(plan: PlanRow, features: PlanFeatureRow[]): Promise<void>;
  insertAccountPlan(row: AccountPlanRow): Promise<void>;
  /** Claims one account whose plan period ends by `nowMs` (PostgreSQL `FOR UPDATE SKIP LOCKED`). */
  claimDuePlanRenewal(nowMs: number): Promise<AccountPlanRow | undefined>;
  updateAccountPlanPeriod(accountId: string, periodStartMs: number, nextRenewalAtMs: number): Promise<void>;
}
