/**
 * Auto-refill: the settings of a balance, the threshold refill decided after every balance
 * change (a balance effect, inside the change's transaction), and the monthly refill started
 * from due schedule rows. Each refill is a charge requested through the outbox; units arrive
 * only when it succeeds (charges.ts). At most one refill is in flight per balance.
 */
import { balanceKey } from '../domain/events.js';
import { nextRefillAfter, refillAt, refillDayOf } from '../domain/monthly.js';
import { fail } from '../domain/outcome.js';
import { thresholdRefillDecision } from '../domain/refill.js';
import type { BalanceRow, Tx } from '../store/types.js';
import { requestCharge } from './charges.js';
import type { Deps } from './deps.js';
import { lockBalanceMap, type BalanceEffect } from './ledger.js';

export interface AutoRefillInput {
  denomination?: string;
  amount?: number;
  usd_charge?: number;
  threshold?: number | null;
  refill_monthly?: boolean;
  refill_period?: 'monthly';
}

/**
 * Saves auto-refill settings; fields left out keep their values (`threshold: null` switches the
 * threshold refill off, `refill_monthly: false` the monthly one). Switching monthly on for a
 * balance that had none refills at once and anchors the day; changing the amounts of an
 * existing monthly refill takes effect at its next renewal (the day is kept).
 */
export async function putAutoRefill(
  deps: Deps,
  companyId: string,
  accountId: string,
  denomination: string,
  input: AutoRefillInput,
): Promise<BalanceRow> {
  if (input.denomination !== undefined && input.denomination !== denomination) {
    fail(
      'denomination_does_not_match_path',
      `the body names denomination "${input.denomination}" but the path "${denomination}"`,
      'denomination',
    );
  }
  if (input.refill_period !== undefined && input.refill_monthly === false) {
    fail(
      'refill_period_contradicts_refill_monthly',
      'refill_period "monthly" means refill_monthly: true',
      'refill_period',
    );
  }
  const monthlyWanted = input.refill_period === 'monthly' ? true : input.refill_monthly;
  return deps.store.write(async (tx) => {
    if (!(await tx.findAccount(companyId, accountId))) fail('not_found', `no such account: ${accountId}`, 'account_id');
    const key = balanceKey(accountId, denomination);
    const b = (await lockBalanceMap(tx, [{ accountId, denomination }])).get(key);
    if (!b) fail('not_found', `the account has no balance of denomination "${denomination}"`, 'denomination');
    const now = deps.clock.now();
    const amount = input.amount ?? b.refillAmount;
    const usd = input.usd_charge ?? b.refillUsdCents;
    const threshold = input.threshold !== undefined ? input.threshold : b.refillThreshold;
    const wasMonthly = b.refillMonthly;
    const monthly = monthlyWanted ?? wasMonthly;
    if ((threshold !== null || monthly) && (amount === null || usd === null)) {
      fail(
        'auto_refill_needs_amount_and_usd_charge',
        'auto-refill needs amount (units added per refill) and usd_charge (cents charged per refill)',
        amount === null ? 'amount' : 'usd_charge',
      );
    }
    let schedule = {
      refillOnDay: b.refillOnDay,
      monthlyAnchorAtMs: b.monthlyAnchorAtMs,
      nextRefillAtMs: b.nextRefillAtMs,
    };
    let refillNow = false;
    if (!monthly) schedule = { refillOnDay: null, monthlyAnchorAtMs: null, nextRefillAtMs: null };
    else if (!wasMonthly) {
      // Refill 0 of the new schedule is now. With a refill already in flight it stays due and the
      // monthly worker starts it as soon as that one is settled.
      refillNow = b.refillChargeId === null && !b.autoRefillPaused;
      schedule = {
        refillOnDay: refillDayOf(now),
        monthlyAnchorAtMs: now,
        nextRefillAtMs: refillNow ? refillAt(now, 1) : now,
      };
    }
    await tx.updateRefillSettings(accountId, denomination, {
      refillThreshold: threshold,
      refillAmount: amount,
      refillUsdCents: usd,
      refillMonthly: monthly,
      ...schedule,
    });
    if (refillNow)
      await startRefill(
        tx,
        now,
        { ...b, refillAmount: amount, refillUsdCents: usd },
        { trigger: 'monthly', due_at_ms: now },
      );
    return (await tx.findBalance(accountId, denomination))!;
  });
}

/** Requests a refill charge for a locked balance and marks it in flight. */
async function startRefill(
  tx: Tx,
  nowMs: number,
  b: BalanceRow,
  details: Record<string, unknown>,
  nextRefillAtMs?: number,
): Promise<void> {
  const charge = await requestCharge(tx, nowMs, {
    companyId: b.companyId,
    accountId: b.accountId,
    denomination: b.denomination,
    reason: 'refill',
    usdCents: b.refillUsdCents!,
    details: { units: b.refillAmount, ...details },
  });
  await tx.updateRefillState(b.accountId, b.denomination, {
    refillChargeId: charge.chargeId,
    ...(nextRefillAtMs !== undefined ? { nextRefillAtMs } : {}),
  });
}

/**
 * Threshold refill, decided in the transaction of every balance change: when the change
 * lowered `available` and left it below the threshold, one refill is requested, unless one is
 * already in flight or the refill is paused after repeated declines. Many events in one
 * request are one change, so they make one charge.
 */
export const thresholdRefillEffect: BalanceEffect = async ({ tx, nowMs }, changes) => {
  for (const { before, after } of changes) {
    if (after.refillThreshold === null) continue;
    const availableAfter = after.amount - after.pending;
    if (availableAfter >= before.amount - before.pending) continue;
    const decision = thresholdRefillDecision({
      available: availableAfter,
      threshold: after.refillThreshold,
      refillAmount: after.refillAmount,
      refillUsdCents: after.refillUsdCents,
      inFlight: after.refillChargeId !== null,
      paused: after.autoRefillPaused,
    });
    if (decision.refill) await startRefill(tx, nowMs, after, { trigger: 'threshold', available: availableAfter });
  }
};

/**
 * Starts the monthly refill of one claimed (locked, due, not in flight) balance and moves its
 * schedule to the next refill after the one due (never after "now", so missed months are not
 * skipped). A paused balance skips the month.
 */
export async function startDueMonthlyRefill(tx: Tx, nowMs: number, b: BalanceRow): Promise<void> {
  const due = b.nextRefillAtMs!;
  const next = nextRefillAfter(b.monthlyAnchorAtMs ?? due, due);
  const ready =
    b.refillMonthly &&
    b.refillAmount !== null &&
    b.refillAmount > 0 &&
    b.refillUsdCents !== null &&
    !b.autoRefillPaused;
  if (!ready) {
    await tx.updateRefillState(b.accountId, b.denomination, {
      nextRefillAtMs: b.refillMonthly ? next : null,
    });
    return;
  }
  await startRefill(tx, nowMs, b, { trigger: 'monthly', due_at_ms: due }, next);
}
