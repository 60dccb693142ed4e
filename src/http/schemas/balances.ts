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
    // --- credit grants
    next_expiry: Type.Union(
      [
        Type.Object({ expires_at: Timestamp, amount: Type.Integer({ description: 'Unheld units that expire then' }) }),
        Type.Null(),
      ],
      { description: "The soonest expiry among the balance's grants: when, and how many unheld units leave then" },
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
        next_expiry: { expires_at: '2026-12-01T00:00:00.000Z', amount: 400 },
      },
    ],
  },
);

export type BalanceJson = Static<typeof Balance>;

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
    next_expiry: nextExpiryOf(b),
  };
}

/** The balance's soonest expiry, from its live grants as stored (reads apply what is due first). */
function nextExpiryOf(b: BalanceRow) {
  const next = nextExpiry({ amount: b.amount, pending: b.pending, grants: b.grants }, Number.MIN_SAFE_INTEGER);
  return next === null ? null : { expires_at: toIso(next.expiresAtMs), amount: next.amount };
}
