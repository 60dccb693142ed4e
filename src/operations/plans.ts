/**
 * Plans: create, list and read; applying a plan to a new account (one balance per entry with
 * its included amount, the first charge); renewing a plan account at the end of each monthly
 * period (postpay overage, reset or rollover, the charge again); and the first drop of a plan
 * balance below `threshold_alert_percentage` in a period, recorded on the balance and notified.
 */
import { renewPlan } from '../domain/grants.js';
import { addExact } from '../domain/money.js';
import { nextRefillAfter, refillAt } from '../domain/monthly.js';
import { fail } from '../domain/outcome.js';
import { type PlanInput, parsePlan, renewPlanBalance, thresholdAlertCrossed } from '../domain/plans.js';
import { newId } from '../lib/ids.js';
import { balanceKey } from '../lib/keys.js';
import { lotsOf, type PostedEntry } from '../ledger/entries.js';
import { grantEntry, type GrantSpec, lotOf, newGrantRow } from '../ledger/grants.js';
import type { Ledger } from '../ledger/ledger.js';
import type { BalanceEffect } from '../ledger/posting.js';
import type { AccountPlanRow, AccountRow, BalanceRow, Page, PageResult, PlanRow, Tx } from '../store/types.js';
import { planFeatureRows } from './features.js';
import { recordChargeAwaitingCard, requestCharge, type NewCharge } from './charges.js';
import type { Command, Deps } from './deps.js';
import { unknownCursor } from './lookups.js';
import { notifyBalance } from './notifications.js';

export async function createPlan(deps: Deps, companyId: string, body: unknown): Promise<Command<PlanRow>> {
  const parsed = parsePlan(body);
  if (!parsed.ok) fail(parsed.reason, planMessage(parsed.reason), parsed.param);
  const p = parsed.plan;
  return async (tx) => {
    const features = await planFeatureRows(tx, companyId, (body as PlanInput).features ?? []);
    const row: PlanRow = {
      planId: newId('p'),
      companyId,
      name: p.name,
      chargeAmountUsdCents: p.chargeAmountUsdCents,
      billingPeriod: p.billingPeriod,
      overageChargeMode: p.overageChargeMode,
      thresholdAlertPercentage: p.thresholdAlertPercentage?.text ?? null,
      rollover: p.rollover,
      balances: p.balances.map((b) => ({
        denomination: b.denomination,
        amount: b.amount,
        overageUnitUsdCents: b.overageUnitUsdCents,
      })),
      features,
      createdAtMs: deps.clock.now(),
    };
    await tx.plans.insertPlan(row);
    return row;
  };
}

/** The reason code already reads as a sentence; the message says it with spaces. */
function planMessage(reason: string): string {
  const text = reason.replaceAll('_', ' ');
  if (reason === 'unknown_billing_period') return 'billing_period must be "month"';
  if (reason === 'plan_needs_at_least_one_balance') return 'a plan needs at least one entry in balances';
  return text;
}

export async function getPlan(deps: Deps, companyId: string, planId: string): Promise<PlanRow> {
  const plan = await deps.store.read((tx) => tx.plans.findPlan(companyId, planId));
  if (!plan) fail('not_found', `no such plan: ${planId}`, 'plan_id');
  return plan;
}

export async function listPlans(deps: Deps, companyId: string, page: Page): Promise<PageResult<PlanRow>> {
  return (await deps.store.read((tx) => tx.plans.listPlans(companyId, page))) ?? unknownCursor();
}

/**
 * Applies a plan to an account just inserted in this transaction: one balance per entry holding
 * the included amount (a `grant`), the period schedule anchored now, and the first charge. A new
 * account has no card yet, so that charge waits for one (`requires_payment_method`).
 */
export async function applyPlanToNewAccount(
  ledger: Ledger,
  tx: Tx,
  nowMs: number,
  account: AccountRow,
  planId: string,
): Promise<BalanceRow[]> {
  const plan = await tx.plans.findPlan(account.companyId, planId);
  if (!plan) fail('unknown_plan', `no such plan: ${planId}`, 'plan_id');
  const accountId = account.accountId;
  for (const e of plan.balances) {
    await tx.balances.insertBalance({
      accountId,
      companyId: account.companyId,
      denomination: e.denomination,
      amount: 0,
      pending: 0,
      refillThreshold: null,
      refillAmount: null,
      refillUsdCents: null,
      refillOnDay: null,
      createdAtMs: nowMs,
    });
    await tx.plans.setPlanBalance(accountId, e.denomination, e.amount, plan.thresholdAlertPercentage);
  }
  const p = await ledger.open(
    tx,
    plan.balances.map((e) => ({ accountId, denomination: e.denomination })),
    nowMs,
  );
  const nextRenewalAtMs = refillAt(nowMs, 1);
  await p.post(
    plan.balances
      .filter((e) => e.amount > 0)
      .map((e) =>
        grantEntry(
          { companyId: account.companyId, accountId, denomination: e.denomination },
          planGrantSpec(e.amount, plan.rollover ? null : nextRenewalAtMs, nowMs),
          nowMs,
          'grant',
          `plan ${plan.planId}: included amount`,
        ),
      ),
  );
  await tx.plans.insertAccountPlan({
    accountId,
    companyId: account.companyId,
    planId,
    anchorAtMs: nowMs,
    periodStartMs: nowMs,
    nextRenewalAtMs,
  });
  if (plan.chargeAmountUsdCents > 0) {
    await recordChargeAwaitingCard(tx, nowMs, planCharge(account.companyId, accountId, plan, nowMs));
  }
  return [...p.balances.values()];
}

/** A plan period's grant: paid, expiring at the next renewal (never, with rollover). */
function planGrantSpec(amount: number, expiresAtMs: number | null, effectiveAtMs: number): GrantSpec {
  return { amount, source: 'plan', category: 'paid', effectiveAtMs, expiresAtMs };
}

function planCharge(companyId: string, accountId: string, plan: PlanRow, periodStartMs: number): NewCharge {
  return {
    companyId,
    accountId,
    denomination: null,
    reason: 'plan',
    usdCents: plan.chargeAmountUsdCents,
    details: { plan_id: plan.planId, period_start_ms: periodStartMs },
  };
}

/** A charge of the account: requested now when a card is on file, else recorded to wait for one. */
async function chargeOrAwaitCard(tx: Tx, nowMs: number, hasCard: boolean, c: NewCharge): Promise<void> {
  if (hasCard) await requestCharge(tx, nowMs, c);
  else await recordChargeAwaitingCard(tx, nowMs, c);
}

/**
 * Ends the period of one claimed plan account (due at `nextRenewalAtMs`): per plan balance, the
 * overage (a negative amount) is priced postpay and the balance reset to the included amount
 * (`period_reset`) or, with rollover, given it on top; one overage charge for all balances, the
 * plan charge again, an `auto_refill` notification per balance, and the next period scheduled
 * from the due instant (so missed periods are renewed one by one, none skipped).
 */
export async function renewPlanPeriod(ledger: Ledger, tx: Tx, nowMs: number, ap: AccountPlanRow): Promise<void> {
  const due = ap.nextRenewalAtMs;
  const next = nextRefillAfter(ap.anchorAtMs, due);
  const plan = await tx.plans.findPlan(ap.companyId, ap.planId);
  if (!plan) throw new Error(`plan ${ap.planId} of account ${ap.accountId} is gone`);
  const accountId = ap.accountId;
  // What is due is applied only up to the renewal instant: the renewal applies the rest, so that the
  // plan's grant ends inside the one period_reset transaction (domain renewPlan).
  const p = await ledger.open(
    tx,
    plan.balances.map((e) => ({ accountId, denomination: e.denomination })),
    nowMs,
    { asOfMs: due - 1 },
  );
  const entries: PostedEntry[] = [];
  const overage: { denomination: string; units: number; usd_cents: number }[] = [];
  let overageCents = 0;
  for (const e of plan.balances) {
    const key = balanceKey(accountId, e.denomination);
    const b = p.balances.get(key);
    if (!b) continue;
    const grant =
      e.amount > 0 ? newGrantRow(b, planGrantSpec(e.amount, plan.rollover ? null : next, due), nowMs) : null;
    const step = renewPlan(lotsOf(b), { grant: grant && lotOf(grant), rollover: plan.rollover }, due, nowMs);
    const r = renewPlanBalance({
      balanceAmount: -step.debt,
      includedAmount: e.amount,
      overageUnitUsdCents: e.overageUnitUsdCents,
      rollover: plan.rollover,
    });
    if (!r.ok) throw new Error(`plan renewal of ${key}: ${r.reason}`);
    if (r.overageUsdCents > 0) {
      overage.push({ denomination: e.denomination, units: r.overageUnits, usd_cents: r.overageUsdCents });
      overageCents = addExact(overageCents, r.overageUsdCents);
    }
    entries.push({
      accountId,
      denomination: e.denomination,
      reason: `plan ${plan.planId}: new period`,
      ...(grant ? { grant } : {}),
      apply: () => step,
    });
    if (b.planAlerted) await tx.plans.setPlanAlerted(accountId, e.denomination, false);
  }
  const after = (await p.post(entries)).balances;
  const hasCard = (await tx.cards.findCard(accountId)) !== undefined;
  if (overageCents > 0) {
    await chargeOrAwaitCard(tx, nowMs, hasCard, {
      companyId: ap.companyId,
      accountId,
      denomination: null,
      reason: 'overage',
      usdCents: overageCents,
      details: { plan_id: plan.planId, period_start_ms: ap.periodStartMs, period_end_ms: due, balances: overage },
    });
  }
  if (plan.chargeAmountUsdCents > 0)
    await chargeOrAwaitCard(tx, nowMs, hasCard, planCharge(ap.companyId, accountId, plan, due));
  for (const e of plan.balances) {
    const b = after.get(balanceKey(accountId, e.denomination));
    if (b) await notifyBalance(p, 'auto_refill', b);
  }
  await tx.plans.updateAccountPlanPeriod(accountId, due, next);
}

/**
 * The first drop of a plan balance below `threshold_alert_percentage` of its included amount in
 * a period: recorded on the balance (`plan_alerted`, reset at renewal) and notified
 * (`threshold`), in the transaction of the change.
 */
export const planThresholdAlertEffect: BalanceEffect = async (p, changes) => {
  for (const { before, after } of changes) {
    const included = after.planIncluded;
    const percentage = after.planAlertPercentage;
    if (included === null || percentage === null || after.planAlerted) continue;
    if (
      !thresholdAlertCrossed({
        before: before.amount,
        after: after.amount,
        includedAmount: included,
        percentage,
        alreadyAlertedThisPeriod: false,
      })
    )
      continue;
    await p.tx.plans.setPlanAlerted(after.accountId, after.denomination, true);
    await notifyBalance(p, 'threshold', after, { threshold_alert_percentage: percentage });
  }
};
