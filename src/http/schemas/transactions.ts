/** Transactions: an account's ledger rows, one per change of a balance amount; the record and its presenter. */
import { Type } from '@sinclair/typebox';
import {
  AccountParams,
  companyAuth,
  Denomination,
  errorResponses,
  PageOf,
  PageQuery,
  SafeInteger,
  Timestamp,
} from './common.js';
import { toIso } from '../../lib/clock.js';
import type { TransactionRow } from '../../store/types.js';

export const listTransactionsSchema = {
  operationId: 'listTransactions',
  tags: ['transactions'],
  summary: 'List transactions, newest first',
  description: 'Every change of a balance amount is one transaction; amount = the sum of its transactions.',
  security: companyAuth,
  params: AccountParams,
  querystring: Type.Object(
    { ...PageQuery.properties, denomination: Type.Optional(Denomination) },
    { additionalProperties: false },
  ),
  response: { 200: PageOf(Type.Ref('Transaction')), ...errorResponses(404) },
};

export const Transaction = Type.Object(
  {
    transaction_id: Type.String({ description: 'tx_…' }),
    account_id: Type.String(),
    denomination: Type.String(),
    amount: SafeInteger({ description: 'Signed change of the balance amount' }),
    balance_after: Type.Integer(),
    kind: Type.Union(
      ['usage', 'grant', 'refill', 'adjustment', 'proration', 'period_reset', 'grant_expiry', 'grant_void'].map((k) =>
        Type.Literal(k),
      ),
    ),
    event_id: Type.Optional(Type.String()),
    reason: Type.Optional(Type.String()),
    grant_id: Type.Optional(
      Type.String({
        description:
          'The grant this transaction opened (`grant`, `refill`, `adjustment`, `proration`, `period_reset`) or ' +
          'closed ' +
          '(`grant_expiry`, `grant_void`)',
      }),
    ),
    drawn_from: Type.Optional(
      Type.Array(Type.Object({ grant_id: Type.String(), amount: Type.Integer({ minimum: 1 }) }), {
        description:
          'On a transaction that took units away (usage, a debit, a proration): the grants they came from, in ' +
          'drawing order. Units no grant covered are not listed: they made the balance owe (debt).',
      }),
    ),
    created_at: Timestamp,
  },
  {
    $id: 'Transaction',
    title: 'Transaction',
    examples: [
      {
        transaction_id: 'tx_9sLq2M4n',
        account_id: 'a_3kTQ9x0bM2',
        denomination: 'tokens',
        amount: -25,
        balance_after: 975,
        kind: 'usage',
        event_id: 'req-7f3a',
        drawn_from: [{ grant_id: 'g_0VcPromo9x2LmQ', amount: 25 }],
        created_at: '2026-11-23T10:00:00.000Z',
      },
    ],
  },
);

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
    ...(t.grantId !== null ? { grant_id: t.grantId } : {}),
    ...(t.drawnFrom !== null
      ? { drawn_from: t.drawnFrom.map((d) => ({ grant_id: d.grantId, amount: d.amount })) }
      : {}),
    created_at: toIso(t.createdAtMs),
  };
}
