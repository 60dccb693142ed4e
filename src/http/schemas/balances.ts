/** Balances: creating one (with an optional initial grant), reading it, and manual adjustments. */
import { type Static, Type } from '@sinclair/typebox';
import {
  BalanceParams,
  companyAuth,
  DataBalance,
  errorResponses,
  Nullable,
  SafeInteger,
  Text,
  Timestamp,
} from './common.js';
import { nextExpiry } from '../../domain/grants.js';
import { available } from '../../domain/holds.js';
import { spendAt } from '../../domain/spend.js';
import { toIso } from '../../lib/clock.js';
import type { BalanceRow } from '../../store/types.js';

export const createBalanceSchema = {
  operationId: 'createBalance',
  tags: ['balances'],
  summary: 'Create a balance',
  description:
    'Optional initial `amount`: one grant of source `initial` (promotional, priority 50, never expires), recorded ' +
    'as a `grant` transaction. Already exists: 409.',
  security: companyAuth,
  params: BalanceParams,
  body: Type.Object(
    { amount: Type.Optional(SafeInteger({ minimum: 0, description: 'Initial grant, ≥ 0' })) },
    { additionalProperties: false, examples: [{ amount: 1000 }] },
  ),
  response: { 200: DataBalance, ...errorResponses(404, 409) },
};

export const getBalanceSchema = {
  operationId: 'getBalance',
  tags: ['balances'],
  summary: 'Get a balance',
  description: 'Holds older than one hour never show, even before the sweeper has cancelled them.',
  security: companyAuth,
  params: BalanceParams,
  response: { 200: DataBalance, ...errorResponses(404) },
};

export const adjustBalanceSchema = {
  operationId: 'createBalanceAdjustment',
  tags: ['balances'],
  summary: 'Manual credit (positive) or debit (negative)',
  description:
    'A credit is a grant of its own (source `adjustment`, promotional, priority 50, never expires) and repays any ' +
    'debt first; a debit takes units from the grants in drawing order (`drawn_from`), and what no grant covers ' +
    'makes the balance owe.',
  security: companyAuth,
  params: BalanceParams,
  body: Type.Object(
    {
      amount: SafeInteger({ description: 'Signed, non-zero' }),
      reason: Type.Optional(Text('Why; kept on the transaction')),
    },
    { additionalProperties: false, examples: [{ amount: -50, reason: 'support credit reversed' }] },
  ),
  response: { 200: DataBalance, ...errorResponses(404) },
};

export const setBalanceLimitsSchema = {
  operationId: 'setBalanceLimits',
  tags: ['balances'],
  summary: "Set a balance's spend limits",
  description:
    'Most units usage may take from the balance in a UTC day (`daily`) and a UTC month (`monthly`), counted when ' +
    "taken (the balance's `spend`). An events request that would take either window above its limit is refused " +
    'whole, whatever gate_on_balance says: 402 `spend_limit_reached` with `details: {denomination, window, limit, ' +
    "spend, resets_at}` (both passed: the day's); a settle is never refused. A field left out keeps its value; " +
    '`null` removes the limit. A limit below the spend already taken is accepted: usage is refused until the ' +
    'window resets.',
  security: companyAuth,
  params: BalanceParams,
  body: Type.Object(
    {
      daily: Type.Optional(Nullable(SafeInteger({ minimum: 0, description: 'Units per UTC day; null: no limit' }))),
      monthly: Type.Optional(Nullable(SafeInteger({ minimum: 0, description: 'Units per UTC month; null: no limit' }))),
    },
    { additionalProperties: false, examples: [{ daily: 5000, monthly: null }] },
  ),
  response: { 200: DataBalance, ...errorResponses(404) },
};

export const Balance = Type.Object(
  {
    account_id: Type.String(),
    denomination: Type.String(),
    amount: Type.Integer({ description: "Posted amount; equals the sum of the balance's transactions" }),
    pending: Type.Integer({ description: 'Held by events in state pending' }),
    available: Type.Integer({ description: 'amount − pending' }),
    refill_threshold: Nullable(Type.Integer()),
    refill_amount: Nullable(Type.Integer()),
    refill_usd_amount: Nullable(Type.Integer({ description: 'USD cents' })),
    refill_on_day: Nullable(Type.String({ description: 'Day of month of the monthly refill, e.g. "15" or "1"' })),
    // --- money movement
    refill_monthly: Type.Boolean({ description: 'Monthly refill switched on' }),
    next_refill_at: Type.Union([Timestamp, Type.Null()], { description: 'When the next monthly refill is due' }),
    auto_refill_paused: Type.Boolean({
      description: 'Auto-refill stopped after 3 declined charges in a row, until a new card is attached',
    }),
    consecutive_declines: Type.Integer({ description: 'Declined refill charges in a row' }),
    max_refills_per_month: Nullable(
      Type.Integer({ description: 'Most threshold refills started in a UTC month (null: no cap)' }),
    ),
    // --- credit grants
    next_expiry: Type.Union(
      [
        Type.Object({ expires_at: Timestamp, amount: Type.Integer({ description: 'Unheld units that expire then' }) }),
        Type.Null(),
      ],
      { description: "The soonest expiry among the balance's grants: when, and how many unheld units leave then" },
    ),
    // --- spend and its limits
    spend: Type.Object(
      {
        day: Type.Integer({ description: 'Units usage took in the current UTC day' }),
        month: Type.Integer({ description: 'Units usage took in the current UTC month' }),
      },
      {
        description:
          'Units taken by usage, counted when taken: holds when held, what a settle gives back, a cancel or an ' +
          'expiry releases subtracted from the window it was taken in; adjustments, expiries, voids and plan ' +
          'resets are not spend',
      },
    ),
    limits: Type.Object(
      {
        daily: Nullable(Type.Integer({ description: 'Most units usage may take in a UTC day (null: no limit)' })),
        monthly: Nullable(Type.Integer({ description: 'Most units usage may take in a UTC month (null: no limit)' })),
      },
      { description: 'An events request that would take a window above its limit is refused: 402 spend_limit_reached' },
    ),
  },
  {
    $id: 'Balance',
    title: 'Balance',
    examples: [
      {
        account_id: 'a_3kTQ9x0bM2',
        denomination: 'tokens',
        amount: 1000,
        pending: 25,
        available: 975,
        refill_threshold: 100,
        refill_amount: 1000,
        refill_usd_amount: 1000,
        refill_on_day: null,
        refill_monthly: false,
        next_refill_at: null,
        auto_refill_paused: false,
        consecutive_declines: 0,
        max_refills_per_month: null,
        next_expiry: { expires_at: '2026-12-01T00:00:00.000Z', amount: 400 },
        spend: { day: 120, month: 2400 },
        limits: { daily: 5000, monthly: null },
      },
    ],
  },
);

export type BalanceJson = Static<typeof Balance>;

/** A balance as the API shows it at `nowMs` (its spend windows as of then: an ended window reads 0). */
export function presentBalance(b: BalanceRow, nowMs: number) {
  const spend = spendAt(b.spend, nowMs);
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
    max_refills_per_month: b.refillMaxPerMonth,
    next_expiry: nextExpiryOf(b),
    spend: { day: spend.day, month: spend.month },
    limits: { daily: b.limits.daily, monthly: b.limits.monthly },
  };
}

/** The balance's soonest expiry, from its live grants as stored (reads apply what is due first). */
function nextExpiryOf(b: BalanceRow) {
  const next = nextExpiry({ amount: b.amount, pending: b.pending, grants: b.grants }, Number.MIN_SAFE_INTEGER);
  return next === null ? null : { expires_at: toIso(next.expiresAtMs), amount: next.amount };
}
