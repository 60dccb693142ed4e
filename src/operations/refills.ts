/**
 * Refills of a balance: the auto-refill settings, the threshold refill decided after every
 * balance change (a balance effect, inside the change's transaction), the monthly refill started
 * from due schedule rows, and the mid-month increase of the monthly refill. Each refill is a
 * charge requested through the outbox; units arrive only when it succeeds (charges.ts). At most
 * one refill is in flight per balance.
 */
import { nextRefillAfter, recurringRefillDay, refillAt, refillDayOf } from '../domain/monthly.js';
import { fail } from '../domain/outcome.js';
import { balanceKey } from '../lib/keys.js';
import { parseModifyMidMonthAmounts, prorateMidMonth } from '../domain/proration.js';
import { countRefill, refillsInMonth, thresholdRefillDecision } from '../domain/refills.js';
import { monthStart } from '../domain/time.js';
import type { BalanceRow, ChargeRow, RefillStateChanges, Tx } from '../store/types.js';
import { attemptCharge } from './charge-attempts.js';
import { applyProration, recordChargeOutcome, requestCharge, type ProrationDetails } from './charges.js';
import type { Command, Deps } from './deps.js';
import { notifyBalance } from './notifications.js';
import type { BalanceEffect } from '../ledger/posting.js';

export interface AutoRefillInput {
  denomination?: string;
  amount?: number;
  usd_charge?: number;
  threshold?: number | null;
  refill_monthly?: boolean;
  refill_period?: 'monthly';
  /** Threshold refills allowed per UTC month (null: no cap). */
  max_refills_per_month?: number | null;
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
): Promise<Command<BalanceRow>> {
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
  return async (tx) => {
    if (!(await tx.accounts.findAccount(companyId, accountId)))
      fail('not_found', `no such account: ${accountId}`, 'account_id');
    const now = deps.clock.now();
    const b = (await deps.ledger.open(tx, [{ accountId, denomination }], now)).balance(accountId, denomination);
    if (!b) fail('not_found', `the account has no balance of denomination "${denomination}"`, 'denomination');
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
      // monthly worker starts it as soon as that one's outcome is recorded.
      refillNow = b.refillChargeId === null && !b.autoRefillPaused;
      schedule = {
        refillOnDay: refillDayOf(now),
        monthlyAnchorAtMs: now,
        nextRefillAtMs: refillNow ? refillAt(now, 1) : now,
      };
    }
    await tx.refills.updateRefillSettings(accountId, denomination, {
      refillThreshold: threshold,
      refillAmount: amount,
      refillUsdCents: usd,
      refillMonthly: monthly,
      refillMaxPerMonth: input.max_refills_per_month !== undefined ? input.max_refills_per_month : b.refillMaxPerMonth,
      ...schedule,
    });
    if (refillNow)
      await startRefill(
        tx,
        now,
        { ...b, refillAmount: amount, refillUsdCents: usd },
        { trigger: 'monthly', due_at_ms: now },
      );
    return (await tx.balances.findBalance(accountId, denomination))!;
  };
}

/**
 * Requests a refill charge for a locked balance and marks it in flight, with the rest of its refill state that
 * changes with it (the monthly schedule's next date, the threshold refills' count of the month) in the same write.
 */
async function startRefill(
  tx: Tx,
  nowMs: number,
  b: BalanceRow,
  details: Record<string, unknown>,
  state: Omit<RefillStateChanges, 'refillChargeId'> = {},
): Promise<void> {
  const charge = await requestCharge(tx, nowMs, {
    companyId: b.companyId,
    accountId: b.accountId,
    denomination: b.denomination,
    reason: 'refill',
    usdCents: b.refillUsdCents!,
    details: { units: b.refillAmount, ...details },
  });
  await tx.refills.updateRefillState(b.accountId, b.denomination, { ...state, refillChargeId: charge.chargeId });
}

/**
 * Threshold refill, decided in the transaction of every balance change: when the change
 * lowered `available` and left it below the threshold, one refill is requested, unless one is
 * already in flight or the refill is paused after repeated declines. Many events in one
 * request are one change, so they make one charge.
 */
export const thresholdRefillEffect: BalanceEffect = async (p, changes) => {
  const { tx, nowMs } = p;
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
      maxPerMonth: after.refillMaxPerMonth,
      refillsThisMonth: refillsInMonth(after.refillsInMonth, nowMs),
    });
    if (decision.refill) {
      await startRefill(
        tx,
        nowMs,
        after,
        { trigger: 'threshold', available: availableAfter },
        { refillsInMonth: countRefill(after.refillsInMonth, nowMs) },
      );
    } else if (decision.reason === 'refill_capped_for_month' && after.refillCappedMonthStartMs !== monthStart(nowMs)) {
      // Once a month per balance: the refills the cap stops are not attempted, and say so once.
      await notifyBalance(p, 'refill_capped', after, {
        max_refills_per_month: after.refillMaxPerMonth,
        refills_this_month: refillsInMonth(after.refillsInMonth, nowMs),
      });
      await tx.refills.updateRefillState(after.accountId, after.denomination, {
        refillCappedMonthStartMs: monthStart(nowMs),
      });
    }
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
    await tx.refills.updateRefillState(b.accountId, b.denomination, {
      nextRefillAtMs: b.refillMonthly ? next : null,
    });
    return;
  }
  await startRefill(tx, nowMs, b, { trigger: 'monthly', due_at_ms: due }, { nextRefillAtMs: next });
}

// ---------------------------------------------------------------------------------------
// Mid-month increase of a balance's monthly refill (contract "Mid-month increase"). The card is
// charged before anything changes, synchronously, so that a declined card leaves everything as
// it was (402):
//
// 1. price the change from committed data (pure rule: domain/proration.ts); a dry run ends here;
// 2. write a pending `proration` charge whose details say what to apply, with a recovery outbox
//    row due only after PRORATION_RECOVERY_DELAY_MS;
// 3. call the processor with the charge id as idempotency key;
// 4. record the outcome in one transaction: on success the proration is applied (remaining units
//    removed, new amount added, one `proration` transaction; refill settings replaced; refill day
//    today) and the recovery row completed; on failure the charge is marked failed and nothing else changes.
//
// If the process dies between 3 and 4, the recovery row makes the charge worker call the
// processor again with the same key (no second charge) and apply what was paid for. A request with
// an Idempotency-Key gives its charge an id derived from the key: when the request dies after step 2
// and is retried, the retry finds that charge and finishes it (3 and 4, or only reads what the worker
// applied) instead of pricing and charging again.
// The units removed are recomputed from the balance at the moment of applying, so events
// recorded meanwhile are honoured; the price stays the one quoted.

/** How long a mid-month charge is left to the request before the worker recovers it. */
export const PRORATION_RECOVERY_DELAY_MS = 10 * 60_000;

export interface ModifyMidMonthInput {
  account_id?: string;
  denomination: string;
  amount: number | string;
  usd_charge: number | string;
  dryrun?: boolean;
}

export interface ModifyMidMonthResult {
  account_id: string;
  isdryrun: boolean;
  amount: number;
  denomination: string;
  refill_amount: number;
  refill_day: number;
  refill_usd_amount: number;
  usd_amount_charged: string;
}

/**
 * The balance a mid-month increase changes, as it is now (the ledger's view: what the quote prices;
 * 404s; refused without a monthly refill), and whether a card is on file.
 */
async function increasedBalance(
  deps: Deps,
  companyId: string,
  accountId: string,
  denomination: string,
): Promise<{ balance: BalanceRow; hasCard: boolean }> {
  const nowMs = deps.clock.now();
  const { balance, hasCard } = await deps.store.read(async (tx) => {
    if (!(await tx.accounts.findAccount(companyId, accountId)))
      fail('not_found', `no such account: ${accountId}`, 'account_id');
    const key = { accountId, denomination };
    return {
      balance: (await deps.ledger.view(tx, [key], nowMs)).get(balanceKey(accountId, denomination)),
      hasCard: (await tx.cards.findCard(accountId)) !== undefined,
    };
  });
  if (!balance) fail('not_found', `the account has no balance of denomination "${denomination}"`, 'denomination');
  // An increase of the monthly refill needs one: it is never switched on as a side effect.
  if (!balance.refillMonthly) {
    fail(
      'monthly_refill_not_enabled',
      `the balance "${denomination}" has no monthly refill to increase; enable one first with PUT ` +
        `/v1/accounts/{account_id}/balance/{denomination}/autorefill {"refill_monthly": true, "amount", "usd_charge"}`,
      'denomination',
    );
  }
  return { balance, hasCard };
}

/** The increase priced (domain/proration.ts), or its refusal as the API's. */
function priceIncrease(balance: BalanceRow, parsed: { amount: number; usdCents: number }) {
  const priced = prorateMidMonth({
    refillAmount: balance.refillAmount,
    refillUsdCents: balance.refillUsdCents,
    balanceAmount: balance.amount,
    newAmount: parsed.amount,
    newUsdCents: parsed.usdCents,
  });
  if (!priced.ok) {
    if (priced.reason === 'amount_must_exceed_current_refill_amount') {
      fail(
        priced.reason,
        `modifymidmonth is for increases only: amount must exceed ` +
          `the current refill_amount (${balance.refillAmount ?? 0}); ` +
          `schedule a decrease for the next renewal with PUT ` +
          `/v1/accounts/{account_id}/balance/{denomination}/autorefill`,
        'amount',
      );
    }
    fail(priced.reason, 'the balance would exceed the largest amount allowed', 'amount');
  }
  return priced;
}

export async function modifyMidMonth(
  deps: Deps,
  companyId: string,
  accountId: string,
  input: ModifyMidMonthInput,
  /** The charge's id, derived from the request's Idempotency-Key (http/idempotency.ts operationId). */
  chargeId?: string,
): Promise<ModifyMidMonthResult> {
  if (input.account_id !== undefined && input.account_id !== accountId) {
    fail(
      'account_id_does_not_match_path',
      `the body names account ${input.account_id} but the path ${accountId}`,
      'account_id',
    );
  }
  const parsed = parseModifyMidMonthAmounts(input);
  if (!parsed.ok)
    fail(parsed.reason, `${parsed.param} must be a whole number ≥ 0 (an integer or a string of digits)`, parsed.param);
  const { denomination } = input;
  const now = deps.clock.now();
  const result = (amount: number, isdryrun: boolean, charged: number, anchorMs = now): ModifyMidMonthResult => ({
    account_id: accountId,
    isdryrun,
    amount,
    denomination,
    refill_amount: parsed.amount,
    refill_day: recurringRefillDay(anchorMs),
    refill_usd_amount: parsed.usdCents,
    usd_amount_charged: String(charged),
  });
  if (chargeId !== undefined && input.dryrun !== true) {
    const earlier = await deps.store.read((tx) => tx.charges.findCharge(chargeId));
    if (earlier?.reason === 'proration' && earlier.companyId === companyId && earlier.accountId === accountId) {
      return finishCharge(deps, earlier, (after) => {
        const details = earlier.details as unknown as ProrationDetails;
        return result(after, false, earlier.usdCents, details.anchor_at_ms);
      });
    }
  }
  const { balance, hasCard } = await increasedBalance(deps, companyId, accountId, denomination);
  const priced = priceIncrease(balance, parsed);
  if (input.dryrun === true) return result(priced.newBalanceAmount, true, priced.chargedUsdCents);

  const details: ProrationDetails = { amount: parsed.amount, usd_charge: parsed.usdCents, anchor_at_ms: now };
  if (priced.chargedUsdCents === 0) {
    // Nothing to charge: the change is applied at once.
    const applied = await deps.store.write(async (tx) => {
      const p = await deps.ledger.open(tx, [{ accountId, denomination }], () => deps.clock.now());
      if (!p.balance(accountId, denomination))
        fail('not_found', `the account has no balance of denomination "${denomination}"`, 'denomination');
      return applyProration(p, accountId, denomination, details);
    });
    return result(applied.balance.amount, false, 0);
  }
  if (!hasCard)
    fail(
      'no_card_on_file',
      `the card must be charged ${priced.chargedUsdCents} cents but the account has no card; attach one with POST ` +
        `/v1/accounts/{account_id}/card`,
    );

  const charge = await deps.store.write((tx) =>
    requestCharge(
      tx,
      now,
      {
        companyId,
        accountId,
        denomination,
        reason: 'proration',
        usdCents: priced.chargedUsdCents,
        details: { ...details },
        ...(chargeId !== undefined ? { chargeId } : {}),
      },
      now + PRORATION_RECOVERY_DELAY_MS,
    ),
  );
  return finishCharge(deps, charge, (after) => result(after, false, priced.chargedUsdCents));
}

/**
 * Steps 3 and 4 for a pending charge; for one already recorded (by the worker, or by the request
 * before it died) only its outcome. Declined: 402 and nothing changed.
 */
async function finishCharge(
  deps: Deps,
  charge: ChargeRow,
  answer: (balanceAmount: number) => ModifyMidMonthResult,
): Promise<ModifyMidMonthResult> {
  let status = charge.status;
  let failure = charge.failureMessage;
  let balance: BalanceRow | undefined;
  if (status === 'pending') {
    const attempt = await attemptCharge(deps, charge);
    const recorded = await recordChargeOutcome(deps, charge.chargeId, attempt, { mayRetry: false, attempts: 1 });
    status = recorded.status;
    failure = recorded.failureMessage ?? null;
    balance = recorded.balance;
  }
  if (status !== 'succeeded') {
    fail(
      'charge_declined',
      `the charge of ${charge.usdCents} cents failed (${failure ?? status}); nothing was changed`,
    );
  }
  // Settled by the recovery worker first (a very slow processor), or before a retry: read what it applied.
  const key = { accountId: charge.accountId, denomination: charge.denomination! };
  const after =
    balance ??
    (await deps.store.read((tx) => deps.ledger.view(tx, [key], deps.clock.now()))).get(
      balanceKey(key.accountId, key.denomination),
    )!;
  return answer(after.amount);
}
