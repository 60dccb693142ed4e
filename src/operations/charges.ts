/**
 * Charges to an account's card (refills, plan charges, overage, proration).
 *
 * A charge is decided inside the transaction that decides it: a `pending` charge row and a
 * `charge.<reason>` outbox row are written together, so a crash between deciding and charging
 * neither loses nor doubles it. The outbox worker (or, for a mid-month increase, the request
 * itself) calls the processor with the charge id as the idempotency key, then records the
 * charge's outcome in a second transaction: units are added only there, and only on success.
 * Recording locks the balance, then the charge row, and does nothing if another request or
 * worker recorded it first.
 */
import { afterChargeOutcome } from '../domain/refills.js';
import { refillAt, refillDayOf } from '../domain/monthly.js';
import { topupExpiresAt } from '../domain/topups.js';
import { fail } from '../domain/outcome.js';
import { backoffDelayMs } from '../lib/backoff.js';
import { newId } from '../lib/ids.js';
import { type Lots, prorate } from '../domain/grants.js';
import type {
  BalanceRow,
  ChargeReason,
  ChargeRow,
  ChargeStatus,
  Page,
  PageResult,
  TransactionRow,
  Tx,
} from '../store/types.js';
import { attemptCharge, type ChargeAttempt } from './charge-attempts.js';
import { watchCharge } from './charge-watch.js';
import type { Deps } from './deps.js';
import { unknownCursor } from './lookups.js';
import { balanceKey } from '../lib/keys.js';
import { costBasisOf, grantEntry, lotOf, newGrantRow } from '../ledger/grants.js';
import type { Posting } from '../ledger/posting.js';
import { notifyBalance } from './notifications.js';

export const CHARGE_TOPIC_PREFIX = 'charge.';
/** Longer than one processor call can take (30 s timeout, SDK retries included). */
export const CHARGE_LEASE_MS = 5 * 60_000;
/** Attempts while the processor is unreachable before a charge is given up as failed. */
export const CHARGE_ATTEMPTS_MAX = 12;
const CHARGE_RETRY_BASE_MS = 60_000;
const CHARGE_RETRY_MAX_MS = 60 * 60_000;

export interface NewCharge {
  companyId: string;
  accountId: string;
  denomination: string | null;
  reason: ChargeReason;
  usdCents: number;
  details: Record<string, unknown>;
  /** Default: a new id; a request that may be retried gives one derived from its Idempotency-Key. */
  chargeId?: string;
}

function chargeRow(nowMs: number, c: NewCharge, status: ChargeStatus, outboxId: string | null): ChargeRow {
  return {
    chargeId: c.chargeId ?? newId('ch'),
    companyId: c.companyId,
    accountId: c.accountId,
    denomination: c.denomination,
    reason: c.reason,
    usdCents: c.usdCents,
    status,
    processorRef: null,
    failureCode: null,
    failureMessage: null,
    details: c.details,
    transactionId: null,
    outboxId,
    grantId: null,
    receiptNumber: null,
    receiptAtMs: null,
    nextActionUrl: null,
    createdAtMs: nowMs,
    updatedAtMs: nowMs,
  };
}

/** A pending charge and the outbox row that carries it out, in the caller's transaction. */
export async function requestCharge(tx: Tx, nowMs: number, c: NewCharge, runAtMs: number = nowMs): Promise<ChargeRow> {
  const outboxId = newId('ob');
  const row = chargeRow(nowMs, c, 'pending', outboxId);
  await tx.charges.insertCharges([row]);
  await tx.outbox.insertOutbox([
    {
      outboxId,
      companyId: c.companyId,
      topic: `${CHARGE_TOPIC_PREFIX}${c.reason}`,
      payload: { charge_id: row.chargeId },
      runAtMs,
      createdAtMs: nowMs,
    },
  ]);
  return row;
}

/** A charge owed while no card is on file: recorded `requires_payment_method`, collected when a card is attached. */
export async function recordChargeAwaitingCard(tx: Tx, nowMs: number, c: NewCharge): Promise<ChargeRow> {
  const row = chargeRow(nowMs, c, 'requires_payment_method', null);
  await tx.charges.insertCharges([row]);
  return row;
}

/** Requests the charges of this account that waited for a card (the card was just attached). */
export async function collectChargesAwaitingCard(tx: Tx, nowMs: number, accountId: string): Promise<number> {
  const waiting = await tx.charges.lockChargesAwaitingCard(accountId);
  for (const c of waiting) {
    const outboxId = newId('ob');
    await tx.charges.updateCharge(c.chargeId, {
      status: 'pending',
      outboxId,
      failureCode: null,
      failureMessage: null,
      nextActionUrl: null,
      updatedAtMs: nowMs,
    });
    await tx.outbox.insertOutbox([
      {
        outboxId,
        companyId: c.companyId,
        topic: `${CHARGE_TOPIC_PREFIX}${c.reason}`,
        // A collection of its own at the processor (attemptCharge): the key of the first attempt is spent.
        payload: { charge_id: c.chargeId, attempt_key: outboxId },
        runAtMs: nowMs,
        createdAtMs: nowMs,
      },
    ]);
  }
  return waiting.length;
}

/** Carries out one requested charge (the worker's handler): attempt, then record the outcome. */
export async function carryOutCharge(
  deps: Deps,
  chargeId: string,
  attempts: number,
  attemptKey?: string,
): Promise<ChargeOutcome> {
  const charge = await deps.store.read((tx) => tx.charges.findCharge(chargeId));
  if (charge?.status !== 'pending') return { status: charge?.status ?? 'failed' };
  const attempt = await attemptCharge(deps, charge, attemptKey);
  return recordChargeOutcome(deps, chargeId, attempt, { mayRetry: true, attempts });
}

export interface ChargeOutcome {
  status: ChargeStatus;
  /** Set when the charge stays pending: try again then. */
  retryAtMs?: number;
  failureMessage?: string;
  /** The balance after a refill or proration was applied. */
  balance?: BalanceRow;
  /** The charge's outbox row was completed with the outcome, in the same transaction. */
  outboxCompleted?: boolean;
}

/**
 * Records the outcome of an attempt. `mayRetry`: an unreachable processor leaves the charge
 * pending for another attempt (worker); otherwise (a request waiting for the answer) it fails.
 */
export async function recordChargeOutcome(
  deps: Deps,
  chargeId: string,
  attempt: ChargeAttempt,
  opts: { mayRetry: boolean; attempts: number; customerAnswered?: boolean },
): Promise<ChargeOutcome> {
  return deps.store.write(async (tx) => {
    const now = deps.clock.now();
    const unlocked = await tx.charges.findCharge(chargeId);
    if (!unlocked) throw new Error(`charge ${chargeId} does not exist`);
    // Lock order everywhere: balances, then charges.
    const p = await deps.ledger.open(
      tx,
      unlocked.denomination !== null ? [{ accountId: unlocked.accountId, denomination: unlocked.denomination }] : [],
      now,
    );
    const charge = await tx.charges.lockCharge(chargeId);
    // A charge waiting for the customer (requires_action, or failed for want of them) ends only by their answer, or
    // that answer as the processor recorded it (charge-actions.ts: the return page, the job), once.
    const waiting = charge?.nextActionUrl != null && charge.status !== 'succeeded' && charge.status !== 'pending';
    const open = charge?.status === 'pending' || (waiting && opts.customerAnswered === true);
    if (!charge || !open) return { status: charge?.status ?? 'failed' };
    if (attempt.kind === 'requires_action') {
      // A processor that keeps the payment (Stripe): a job reads it until it ends; its row is the charge's from now on.
      const watchId = attempt.watch ? await watchCharge(tx, charge, now) : null;
      await tx.charges.updateCharge(chargeId, {
        status: 'requires_action',
        processorRef: attempt.processorRef,
        nextActionUrl: attempt.nextActionUrl,
        ...(watchId !== null ? { outboxId: watchId } : {}),
        updatedAtMs: now,
      });
      if (charge.outboxId !== null) await tx.outbox.completeOutbox(charge.outboxId, now);
      return { status: 'requires_action', outboxCompleted: charge.outboxId !== null };
    }
    if (attempt.kind === 'unavailable' && opts.mayRetry && opts.attempts < CHARGE_ATTEMPTS_MAX) {
      const delay = backoffDelayMs(opts.attempts, CHARGE_RETRY_BASE_MS, CHARGE_RETRY_MAX_MS);
      return { status: 'pending', retryAtMs: now + delay, failureMessage: attempt.message };
    }
    const outcome: Exclude<ChargeAttempt, { kind: 'unavailable' }> =
      attempt.kind === 'unavailable'
        ? { kind: 'rejected', code: 'processor_unavailable', message: attempt.message }
        : attempt;
    const recorded =
      outcome.kind === 'succeeded'
        ? await onSucceeded(p, charge, outcome.processorRef)
        : await onFailed(p, charge, outcome);
    // The worker's outbox row (or the watch of a charge that waited) is done in the same transaction (the worker then
    // writes nothing more).
    if (charge.outboxId === null) return recorded;
    await tx.outbox.completeOutbox(charge.outboxId, now);
    return { ...recorded, outboxCompleted: true };
  });
}

async function onSucceeded(p: Posting, charge: ChargeRow, processorRef: string | null): Promise<ChargeOutcome> {
  const { tx, nowMs } = p;
  // What the charge paid for is applied first; its receipt number is taken last, so that the counter row is the
  // last lock the transaction takes (balances, the charge, then the counter: no cycle).
  let applied: { balance: BalanceRow; transactionId: string; grantId: string } | undefined;
  if (charge.reason === 'refill') applied = await applyRefill(p, charge);
  else if (charge.reason === 'topup') applied = await applyTopup(p, charge);
  else if (charge.reason === 'proration') {
    const d = charge.details as unknown as ProrationDetails;
    applied = await applyProration(p, charge.accountId, charge.denomination!, d);
  }
  await tx.charges.updateCharge(charge.chargeId, {
    status: 'succeeded',
    processorRef,
    ...(applied ? { transactionId: applied.transactionId, grantId: applied.grantId } : {}),
    receiptNumber: await tx.charges.issueReceiptNumber(charge.companyId),
    receiptAtMs: nowMs,
    nextActionUrl: null,
    updatedAtMs: nowMs,
  });
  return applied ? { status: 'succeeded', balance: applied.balance } : { status: 'succeeded' };
}

async function onFailed(
  p: Posting,
  charge: ChargeRow,
  outcome: Extract<ChargeAttempt, { kind: 'declined' | 'rejected' }>,
): Promise<ChargeOutcome> {
  const { tx, nowMs } = p;
  // Failed for want of the customer: they may still complete it there, and what it was for is then applied.
  const action = outcome.kind === 'declined' ? outcome : undefined;
  const watchId = action?.nextActionUrl !== undefined && action.watch ? await watchCharge(tx, charge, nowMs) : null;
  const failure = {
    failureCode: outcome.code,
    failureMessage: outcome.message,
    nextActionUrl: action?.nextActionUrl ?? null,
    ...(action?.processorRef !== undefined ? { processorRef: action.processorRef } : {}),
    ...(watchId !== null ? { outboxId: watchId } : {}),
    updatedAtMs: nowMs,
  };
  // Plan and overage charges are owed: a declined card leaves them waiting for a new card.
  const status: ChargeStatus =
    (charge.reason === 'plan' || charge.reason === 'overage') && outcome.kind === 'declined'
      ? 'requires_payment_method'
      : 'failed';
  await tx.charges.updateCharge(charge.chargeId, { status, ...failure });
  // Counted once: a charge that waited for the customer was counted when it first failed.
  if (charge.reason === 'refill' && charge.status === 'pending') {
    const b = p.balance(charge.accountId, charge.denomination!);
    if (b) {
      // A request the processor refuses (e.g. below its minimum amount) would be refused again on
      // every change, so it counts toward the pause like a decline; only an outage does not.
      const streak = afterChargeOutcome(
        b.consecutiveDeclines,
        outcome.code === 'processor_unavailable' ? 'processor_error' : 'declined',
      );
      await tx.refills.updateRefillState(b.accountId, b.denomination, {
        ...(b.refillChargeId === charge.chargeId ? { refillChargeId: null } : {}),
        consecutiveDeclines: streak.consecutiveDeclines,
        autoRefillPaused: streak.paused || b.autoRefillPaused,
      });
    }
  }
  return { status, failureMessage: outcome.message };
}

/** Adds a paid refill's units to its locked balance and notifies `auto_refill`. */
async function applyRefill(
  p: Posting,
  charge: ChargeRow,
): Promise<{ balance: BalanceRow; transactionId: string; grantId: string }> {
  const { tx } = p;
  const denomination = charge.denomination!;
  const key = balanceKey(charge.accountId, denomination);
  const b = p.balances.get(key);
  if (!b) throw new Error(`refill ${charge.chargeId}: balance ${key} is gone`);
  const units = Number(charge.details.units);
  if (!Number.isSafeInteger(units) || units <= 0)
    throw new Error(`refill ${charge.chargeId}: bad units ${String(charge.details.units)}`);
  // The in-flight marker is cleared first, so the balance row the effects see after the refill is current.
  await tx.refills.updateRefillState(b.accountId, denomination, {
    ...(b.refillChargeId === charge.chargeId ? { refillChargeId: null } : {}),
    consecutiveDeclines: afterChargeOutcome(b.consecutiveDeclines, 'succeeded').consecutiveDeclines,
  });
  const entry = grantEntry(
    b,
    {
      amount: units,
      source: charge.details.trigger === 'monthly' ? 'monthly_refill' : 'refill',
      category: 'paid',
      costBasis: costBasisOf(charge.usdCents, units),
    },
    p.nowMs,
    'refill',
    `charge ${charge.chargeId}`,
  );
  const posted = await p.post([entry]);
  const balance = posted.balances.get(key)!;
  await notifyBalance(p, 'auto_refill', balance);
  const grantId = entry.grant.grantId;
  return { balance, transactionId: openingOf(posted.transactions, grantId), grantId };
}

/** A purchase's success, in `recordChargeOutcome`'s posting: the offer's paid grant, as the charge recorded it. */
async function applyTopup(
  p: Posting,
  charge: ChargeRow,
): Promise<{ balance: BalanceRow; transactionId: string; grantId: string }> {
  const key = balanceKey(charge.accountId, charge.denomination!);
  const b = p.balances.get(key);
  if (!b) throw new Error(`top-up ${charge.chargeId}: balance ${key} is gone`);
  const d = charge.details as { amount: number; priority: number; expires_in_days: number | null; name: string };
  const entry = grantEntry(
    b,
    {
      amount: d.amount,
      source: 'topup',
      category: 'paid',
      costBasis: costBasisOf(charge.usdCents, d.amount),
      priority: d.priority,
      expiresAtMs: topupExpiresAt(d.expires_in_days, p.nowMs),
      name: d.name,
    },
    p.nowMs,
    'grant',
    `charge ${charge.chargeId}`,
  );
  const posted = await p.post([entry]);
  const balance = posted.balances.get(key)!;
  const grantId = entry.grant.grantId;
  return { balance, transactionId: openingOf(posted.transactions, grantId), grantId };
}

/** The id of the transaction that opened `grantId`. */
function openingOf(transactions: TransactionRow[], grantId: string): string {
  const t = transactions.find((x) => x.grantId === grantId && x.amount !== 0);
  if (!t) throw new Error(`grant ${grantId} was not opened`);
  return t.transactionId;
}

/** What a mid-month increase changes, kept on its charge so that whoever records the charge's success applies it. */
export interface ProrationDetails {
  amount: number;
  usd_charge: number;
  /** The instant of the request: the new refill day and the start of the new monthly schedule. */
  anchor_at_ms: number;
}

/**
 * Applies a mid-month increase to a locked balance: the unused units of the previous refill
 * (the amount clamped to [0, refill_amount], read now) are removed and the new amount added,
 * as one `proration` transaction; the refill becomes the new one, monthly, anchored at the request.
 */
export async function applyProration(
  p: Posting,
  accountId: string,
  denomination: string,
  d: ProrationDetails,
): Promise<{ balance: BalanceRow; transactionId: string; grantId: string }> {
  const key = balanceKey(accountId, denomination);
  const b = p.balances.get(key);
  if (!b) throw new Error(`proration: balance ${key} is gone`);
  const { tx } = p;
  await tx.refills.updateRefillSettings(accountId, denomination, {
    refillThreshold: b.refillThreshold,
    refillAmount: d.amount,
    refillUsdCents: d.usd_charge,
    refillMonthly: true,
    refillOnDay: refillDayOf(d.anchor_at_ms),
    monthlyAnchorAtMs: d.anchor_at_ms,
    nextRefillAtMs: refillAt(d.anchor_at_ms, 1),
    refillMaxPerMonth: b.refillMaxPerMonth,
  });
  const grant = newGrantRow(
    b,
    { amount: d.amount, source: 'proration', category: 'paid', costBasis: costBasisOf(d.usd_charge, d.amount) },
    p.nowMs,
  );
  const posted = await p.post([
    {
      accountId,
      denomination,
      grant,
      reason: `mid-month increase to ${d.amount}`,
      apply: (lots: Lots) =>
        prorate(lots, Math.min(Math.max(lots.amount, 0), b.refillAmount ?? 0), lotOf(grant), p.nowMs),
    },
  ]);
  const grantId = grant.grantId;
  return { balance: posted.balances.get(key)!, transactionId: openingOf(posted.transactions, grantId), grantId };
}

export async function listCharges(
  deps: Deps,
  companyId: string,
  accountId: string,
  page: Page,
): Promise<PageResult<ChargeRow>> {
  const result = await deps.store.read(async (tx) => {
    if (!(await tx.accounts.findAccount(companyId, accountId)))
      fail('not_found', `no such account: ${accountId}`, 'account_id');
    return tx.charges.listCharges(accountId, page);
  });
  return result ?? unknownCursor();
}
