/** Store rows → the API's JSON records. */
import { available } from '../domain/holds.js';
import { toIso } from '../lib/clock.js';
import type {
  AccountRow,
  ApiKeyRow,
  BalanceRow,
  CardRow,
  ChargeRow,
  EventRow,
  PlanRow,
  PriceRow,
  TransactionRow,
  UserRow,
  WebhookSubscriptionRow,
} from '../store/types.js';
import { splitName } from '../operations/identity.js';
import type { DeliveryView } from '../operations/webhooks.js';

export function presentBalance(b: BalanceRow) {
  return {
    account_id: b.accountId,
    denomination: b.denomination,
    amount: b.amount,
    pending: b.pending,
    available: available(b.amount, b.pending),
    refill_threshold: b.refillThreshold,
    refill_amount: b.refillAmount,
    refill_usd_amount: b.refillUsdCents,
    refill_on_day: b.refillOnDay,
    // --- money movement
    refill_monthly: b.refillMonthly ?? false,
    next_refill_at: b.nextRefillAtMs == null ? null : toIso(b.nextRefillAtMs),
    auto_refill_paused: b.autoRefillPaused ?? false,
    consecutive_declines: b.consecutiveDeclines ?? 0,
  };
}

export function presentAccount(a: AccountRow, balances: BalanceRow[]) {
  return {
    account_id: a.accountId,
    name: a.name,
    email: a.email,
    metadata: a.metadata,
    processor_id: a.processorId,
    plan_id: a.planId,
    created_at: toIso(a.createdAtMs),
    balances: balances.map(presentBalance),
  };
}

export function presentEvent(e: EventRow) {
  return {
    event_id: e.eventId,
    account_id: e.accountId,
    type: e.type,
    quantity: e.quantity,
    cost: { amount: e.costAmount, denomination: e.denomination },
    metadata: e.metadata,
    state: e.state,
    timestamp: toIso(e.occurredAtMs),
    created_at: toIso(e.createdAtMs),
    updated_at: toIso(e.updatedAtMs),
    ...(e.state === 'pending' && e.expiresAtMs !== null ? { expires_at: toIso(e.expiresAtMs) } : {}),
  };
}

export function presentTransaction(t: TransactionRow) {
  return {
    transaction_id: t.transactionId,
    account_id: t.accountId,
    denomination: t.denomination,
    amount: t.amount,
    balance_after: t.balanceAfter,
    kind: t.kind,
    ...(t.eventId !== null ? { event_id: t.eventId } : {}),
    ...(t.reason !== null ? { reason: t.reason } : {}),
    created_at: toIso(t.createdAtMs),
  };
}

export function presentPrice(p: PriceRow) {
  return { type: p.type, denomination: p.denomination, unit_amount: p.unitAmount, updated_at: toIso(p.updatedAtMs) };
}

export function presentUser(u: UserRow, dateField: 'createDate' | 'signUpDate') {
  const { firstName, lastName } = splitName(u.name);
  return {
    id: u.id,
    firstName,
    lastName,
    email: u.email,
    dateOfBirth: u.dateOfBirth,
    emailVerified: u.emailVerified,
    [dateField]: toIso(u.createdAtMs).slice(0, 10),
  };
}

export function presentApiKey(k: ApiKeyRow) {
  return {
    key_id: k.keyId,
    prefix: k.prefix,
    created_at: toIso(k.createdAtMs),
    revoked_at: k.revokedAtMs === null ? null : toIso(k.revokedAtMs),
    last_used_at: k.lastUsedAtMs === null ? null : toIso(k.lastUsedAtMs),
  };
}

export function presentCard(c: CardRow) {
  return { brand: c.brand, last4: c.last4, exp_month: c.expMonth, exp_year: c.expYear };
}

export function presentCharge(c: ChargeRow) {
  return {
    charge_id: c.chargeId,
    usd_amount: c.usdCents,
    status: c.status,
    reason: c.reason,
    denomination: c.denomination,
    failure_code: c.failureCode,
    created_at: toIso(c.createdAtMs),
  };
}

export function presentPlan(p: PlanRow) {
  return {
    plan_id: p.planId,
    name: p.name,
    charge_amount: p.chargeAmountUsdCents,
    charge_denomination: 'usd' as const,
    billing_period: p.billingPeriod,
    overage_charge_mode: p.overageChargeMode,
    threshold_alert_percentage: p.thresholdAlertPercentage,
    rollover: p.rollover,
    balances: p.balances.map((b) => ({
      amount: String(b.amount),
      denomination: b.denomination,
      overage_charge_amount: b.overageUnitUsdCents,
      overage_charge_denomination: 'usd' as const,
    })),
    created_at: toIso(p.createdAtMs),
  };
}

const isoOrNull = (ms: number | null): string | null => (ms === null ? null : toIso(ms));

export function presentWebhook(w: WebhookSubscriptionRow) {
  return {
    webhook_id: w.webhookId,
    type: w.type,
    url: w.url,
    threshold: w.threshold,
    created_at: toIso(w.createdAtMs),
    disabled_at: isoOrNull(w.disabledAtMs),
    disabled_reason: w.disabledReason,
  };
}

/** A new subscription: the only time its signing secret is shown. */
export function presentCreatedWebhook(w: WebhookSubscriptionRow) {
  return {
    webhook_id: w.webhookId,
    type: w.type,
    url: w.url,
    threshold: w.threshold,
    secret: w.secret,
    created_at: toIso(w.createdAtMs),
  };
}

export function presentDelivery({ delivery: d, attempts }: DeliveryView) {
  return {
    callback_id: d.callbackId,
    webhook_id: d.webhookId,
    type: d.type,
    status: d.status,
    payload: JSON.parse(d.payload) as unknown,
    created_at: toIso(d.createdAtMs),
    next_attempt_at: d.status === 'pending' ? isoOrNull(d.nextAttemptAtMs) : null,
    delivered_at: isoOrNull(d.deliveredAtMs),
    last_error: d.lastError,
    attempts: attempts.map((a) => ({
      attempted_at: toIso(a.attemptedAtMs),
      status_code: a.statusCode,
      latency_ms: a.latencyMs,
      response_snippet: a.responseSnippet,
      error: a.error,
      success: a.statusCode !== null && a.statusCode >= 200 && a.statusCode < 300,
      manual: a.manual,
    })),
  };
}

/** A page of rows and the cursor to the next one. */
export function presentPage<R, J>(page: { rows: R[]; hasMore: boolean }, present: (r: R) => J, idOf: (r: R) => string) {
  const last = page.rows[page.rows.length - 1];
  return {
    data: page.rows.map(present),
    has_more: page.hasMore,
    next_cursor: page.hasMore && last !== undefined ? idOf(last) : null,
  };
}
