/** Charges: the USD charges made to an account's card, and how to read their status. */
import { Type } from '@sinclair/typebox';
import { AccountParams, companyAuth, errorResponses, PageOf, PageQuery, Timestamp } from './common.js';
import { toIso } from '../../lib/clock.js';
import type { Receipt } from '../../operations/receipts.js';
import type { ChargeRow } from '../../store/types.js';

const Charge = Type.Object({
  charge_id: Type.String({ description: 'ch_…; also the processor idempotency key' }),
  usd_amount: Type.Integer({ description: 'USD cents' }),
  status: Type.Union([
    Type.Literal('pending'),
    Type.Literal('succeeded'),
    Type.Literal('failed'),
    Type.Literal('requires_payment_method'),
    Type.Literal('requires_action'),
  ]),
  reason: Type.Union([
    Type.Literal('refill'),
    Type.Literal('plan'),
    Type.Literal('overage'),
    Type.Literal('proration'),
    Type.Literal('topup'),
  ]),
  denomination: Type.Union([Type.String(), Type.Null()], {
    description: 'The balance a refill or proration is for; null for plan and overage charges',
  }),
  failure_code: Type.Union([Type.String(), Type.Null()], {
    description: 'Why a charge failed or waits for a card, e.g. card_declined, no_card_on_file',
  }),
  failure_reason: Type.Union([Type.Literal('declined'), Type.Literal('authentication_required'), Type.Null()], {
    description:
      'null unless the charge failed or waits for a card: authentication_required when the card asked for the ' +
      'customer (3-D Secure) and the customer was not there, declined for every other refusal',
  }),
  next_action_url: Type.Union([Type.String(), Type.Null()], {
    description: 'While the charge is requires_action: where the customer authenticates to complete it; else null',
  }),
  receipt_number: Type.Union([Type.String({ pattern: '^R-[1-9][0-9]*$' }), Type.Null()], {
    description:
      'R-1, R-2, R-3, … per company, in the order charges succeeded, without gap or repeat; every succeeded ' +
      'charge has one (a charge of 0 cents too), and only succeeded charges do. GET /v1/charges/{charge_id}/receipt',
  }),
  created_at: Timestamp,
});

export const listChargesSchema = {
  operationId: 'listCharges',
  tags: ['charges'],
  summary: 'List the USD charges to the card, newest first',
  description:
    'Refills, plan charges, overage, proration and top-ups. status: pending (requested, not yet answered by the ' +
    'processor), succeeded, failed, requires_payment_method (owed, waiting for a card), requires_action (a ' +
    'top-up waiting for the customer to authenticate at next_action_url).',
  security: companyAuth,
  params: AccountParams,
  querystring: PageQuery,
  response: { 200: PageOf(Charge), ...errorResponses(404) },
};

/** Why a failed (or card-waiting) charge was refused, as the contract names it. */
export function failureReasonOf(c: Pick<ChargeRow, 'status' | 'failureCode'>) {
  if (c.status !== 'failed' && c.status !== 'requires_payment_method') return null;
  return c.failureCode === 'authentication_required' ? ('authentication_required' as const) : ('declined' as const);
}

export const receiptNumberOf = (n: number | null) => (n === null ? null : `R-${n}`);

export function presentCharge(c: ChargeRow) {
  return {
    charge_id: c.chargeId,
    usd_amount: c.usdCents,
    status: c.status,
    reason: c.reason,
    denomination: c.denomination,
    failure_code: c.failureCode,
    failure_reason: failureReasonOf(c),
    next_action_url: c.nextActionUrl,
    receipt_number: receiptNumberOf(c.receiptNumber),
    created_at: toIso(c.createdAtMs),
  };
}

const ReceiptData = Type.Object({
  receipt_number: Type.String({ pattern: '^R-[1-9][0-9]*$' }),
  company: Type.Object({ company_id: Type.String(), name: Type.String() }),
  account: Type.Object({
    account_id: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    email: Type.Union([Type.String(), Type.Null()]),
  }),
  charge_id: Type.String(),
  usd_amount: Type.Integer({ description: 'USD cents' }),
  created_at: Type.String({ format: 'date-time', description: 'When the charge succeeded (the receipt was issued)' }),
  reason: Charge.properties.reason,
  grant: Type.Union(
    [
      Type.Object({
        grant_id: Type.String(),
        amount: Type.Integer(),
        denomination: Type.String(),
        category: Type.String(),
        expires_at: Type.Union([Timestamp, Type.Null()]),
      }),
      Type.Null(),
    ],
    { description: 'The grant the charge added (a refill, a proration); null for plan and overage charges' },
  ),
});

export function presentReceipt(r: Receipt) {
  const { charge, company, account, grant } = r;
  return {
    receipt_number: receiptNumberOf(charge.receiptNumber)!,
    company: { company_id: company.companyId, name: company.name },
    account: { account_id: account.accountId, name: account.name, email: account.email },
    charge_id: charge.chargeId,
    usd_amount: charge.usdCents,
    created_at: toIso(charge.receiptAtMs),
    reason: charge.reason,
    grant:
      grant === null
        ? null
        : {
            grant_id: grant.grantId,
            amount: grant.amount,
            denomination: grant.denomination,
            category: grant.category,
            expires_at: grant.expiresAtMs === null ? null : toIso(grant.expiresAtMs),
          },
  };
}

export const getReceiptSchema = {
  operationId: 'getReceipt',
  tags: ['charges'],
  summary: "A succeeded charge's receipt, as HTML to print or as JSON",
  description:
    'HTML ready to print (the default), or the receipt as JSON with `Accept: application/json`. Only a ' +
    "succeeded charge has a receipt: any other, or another company's, is 404 with param charge_id.",
  security: companyAuth,
  params: Type.Object({ charge_id: Type.String({ maxLength: 64 }) }),
  response: {
    200: {
      description: 'The receipt',
      content: {
        'application/json': { schema: Type.Object({ data: ReceiptData }) },
        'text/html': { schema: Type.String({ description: 'A printable page' }) },
      },
    },
    ...errorResponses(404),
  },
};
