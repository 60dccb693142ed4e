/** Money movement: cards, auto-refill settings, mid-month increases, plans and charges. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { fail } from '../../domain/outcome.js';
import { DECLINES_BEFORE_PAUSE } from '../../domain/refill.js';
import { toIso } from '../../lib/clock.js';
import { putAutoRefill, type AutoRefillInput } from '../../operations/auto-refill.js';
import { attachCard } from '../../operations/cards.js';
import { listCharges } from '../../operations/charges.js';
import { PAGE_LIMIT_DEFAULT } from '../../operations/deps.js';
import { modifyMidMonth } from '../../operations/modify-mid-month.js';
import { createPlan, getPlan, listPlans } from '../../operations/plans.js';
import type { ChargeRow, PlanRow } from '../../store/types.js';
import type { RouteContext } from '../route-context.js';
import { requireCompany } from '../auth.js';
import { presentBalance, presentPage } from '../present.js';
import {
  Denomination,
  PageOf,
  PageQuery,
  SafeInteger,
  Timestamp,
  companyAuth,
  errorResponses,
} from '../schemas/common.js';

const AccountParams = Type.Object({ account_id: Type.String({ maxLength: 64 }) });
const BalanceParams = Type.Object({ account_id: Type.String({ maxLength: 64 }), denomination: Denomination });
const CompanyParams = Type.Object({ company_id: Type.String({ maxLength: 64 }) });
const DataBalance = Type.Object({ data: Type.Ref('Balance') });
const NullableString = Type.Union([Type.String(), Type.Null()]);

const Card = Type.Object({
  brand: Type.String(),
  last4: Type.String(),
  exp_month: Type.Integer(),
  exp_year: Type.Integer(),
});

const Charge = Type.Object({
  charge_id: Type.String({ description: 'ch_…; also the processor idempotency key' }),
  usd_amount: Type.Integer({ description: 'USD cents' }),
  status: Type.Union([
    Type.Literal('pending'),
    Type.Literal('succeeded'),
    Type.Literal('failed'),
    Type.Literal('requires_payment_method'),
  ]),
  reason: Type.Union([
    Type.Literal('refill'),
    Type.Literal('plan'),
    Type.Literal('overage'),
    Type.Literal('proration'),
  ]),
  denomination: Type.Union([Type.String(), Type.Null()], {
    description: 'The balance a refill or proration is for; null for plan and overage charges',
  }),
  failure_code: Type.Union([Type.String(), Type.Null()], {
    description: 'Why a charge failed or waits for a card, e.g. card_declined, no_card_on_file',
  }),
  created_at: Timestamp,
});

const PlanBalance = Type.Object({
  amount: Type.String({ description: 'Included amount per period (numeric string)' }),
  denomination: Type.String(),
  overage_charge_amount: Type.Integer({
    description: 'USD cents per unit beyond the included amount, charged postpay',
  }),
  overage_charge_denomination: Type.Literal('usd'),
});
const Plan = Type.Object({
  plan_id: Type.String({ description: 'p_…' }),
  name: Type.String(),
  charge_amount: Type.Integer({ description: 'USD cents per period' }),
  charge_denomination: Type.Literal('usd'),
  billing_period: Type.Literal('month'),
  overage_charge_mode: Type.Literal('postpay'),
  threshold_alert_percentage: NullableString,
  rollover: Type.Boolean(),
  balances: Type.Array(PlanBalance),
  created_at: Timestamp,
});
const PlanBody = Type.Object(
  {
    name: Type.Optional(Type.String({ description: 'Required' })),
    charge_amount: Type.Optional(Type.Integer({ description: 'Required: USD cents per period, ≥ 0' })),
    charge_denomination: Type.Optional(
      Type.Union([Type.String({ description: '"usd" or "USD" (default usd)' }), Type.Null()]),
    ),
    billing_period: Type.Optional(
      Type.Union([Type.String({ description: '"month" (default; "monthly" is accepted)' }), Type.Null()]),
    ),
    overage_charge_mode: Type.Optional(Type.Union([Type.String({ description: '"postpay" (default)' }), Type.Null()])),
    threshold_alert_percentage: Type.Optional(
      Type.Union([Type.String(), Type.Number(), Type.Null()], {
        description:
          'Decimal 0–100: a threshold webhook when a plan balance first drops below this % of its included amount in a period',
      }),
    ),
    rollover: Type.Optional(
      Type.Union([
        Type.Boolean({ description: 'Unused units carry into the next period (default false: reset)' }),
        Type.Null(),
      ]),
    ),
    balances: Type.Optional(
      Type.Array(
        Type.Object(
          {
            amount: Type.Optional(
              Type.Union([Type.String(), Type.Integer()], { description: 'Required: included units per period' }),
            ),
            denomination: Type.Optional(Type.String({ description: 'Required' })),
            overage_charge_amount: Type.Optional(
              Type.Integer({ description: 'Required: USD cents per unit of overage' }),
            ),
            overage_charge_denomination: Type.Optional(Type.Union([Type.String(), Type.Null()])),
          },
          { additionalProperties: false },
        ),
        { description: 'Required, at least one entry' },
      ),
    ),
  },
  { additionalProperties: false },
);

const AutoRefillFields = {
  amount: Type.Optional(SafeInteger({ minimum: 1, description: 'Units added per refill' })),
  usd_charge: Type.Optional(SafeInteger({ minimum: 0, description: 'USD cents charged per refill' })),
  threshold: Type.Optional(
    Type.Union([SafeInteger(), Type.Null()], {
      description: 'Refill when a change leaves available below this; null switches it off',
    }),
  ),
  refill_monthly: Type.Optional(Type.Boolean({ description: 'Monthly refill on or off' })),
  refill_period: Type.Optional(Type.Literal('monthly', { description: '"monthly" means refill_monthly: true' })),
};
const autoRefillDescription =
  'Fields left out keep their values. Threshold: after a change lowers `available` below `threshold`, the card is charged ' +
  '`usd_charge` and, only if that succeeds, `amount` is added (kind `refill`) and an `auto_refill` webhook is sent; one refill in flight per balance; ' +
  `a declined charge adds nothing and is retried on the next change; after ${DECLINES_BEFORE_PAUSE} declines in a row auto-refill pauses ` +
  '(`auto_refill_paused`) until a new card is attached. Saving settings does not itself start a threshold refill. ' +
  'Monthly: switching it on refills at once and anchors the day (UTC; days after the 28th move to the 1st of the second following month, then every 1st); ' +
  'changing amounts of an existing monthly refill takes effect at the next renewal. The response shows the balance when the settings were saved: ' +
  'refills happen in the background once their charge succeeds.';

function presentCharge(c: ChargeRow) {
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

function presentPlan(p: PlanRow) {
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

export function moneyRoutes(scope: FastifyInstance, ctx: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const { deps } = ctx;
  const config = { auth: 'company' as const };

  app.post(
    '/v1/accounts/:account_id/card',
    {
      config,
      schema: {
        tags: ['cards'],
        summary: 'Attach a card (replaces the previous one)',
        security: companyAuth,
        params: AccountParams,
        description:
          "When the account has no `processor_id`, the customer is created at the company's processor here, when the first card arrives " +
          "(not at account creation: no processor call ever runs inside a database transaction), and its id becomes the account's `processor_id`. " +
          'Sandbox tokens: tok_visa, tok_mastercard (attach and charge), tok_chargeCustomerFail (attaches, every charge declined), tok_chargeDeclined ' +
          '(declined here: 402 payment_failed); any other token is 400. 409 processor_customer_changed if PUT /v1/accounts/{account_id} changed `processor_id` while the card was being attached (nothing is saved; attach again). Attaching a card resets the decline streak and un-pauses auto-refill of every ' +
          'balance of the account, and charges that waited for a card (status requires_payment_method) are collected. A rejected card changes nothing.',
        body: Type.Object(
          {
            token: Type.String({
              minLength: 1,
              maxLength: 255,
              pattern: '^[A-Za-z0-9_-]+$',
              description: "Card token from the processor's card element",
            }),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ data: Card }), ...errorResponses(402, 404, 409, 503) },
      },
    },
    async (request) => {
      const card = await attachCard(deps, requireCompany(request), request.params.account_id, request.body.token);
      return { data: { brand: card.brand, last4: card.last4, exp_month: card.expMonth, exp_year: card.expYear } };
    },
  );

  const balanceAutoRefill = {
    config,
    schema: {
      tags: ['auto-refill'],
      summary: 'Set auto-refill of a balance',
      description: autoRefillDescription,
      security: companyAuth,
      params: BalanceParams,
      body: Type.Object(
        { denomination: Type.Optional(Denomination), ...AutoRefillFields },
        { additionalProperties: false },
      ),
      response: { 200: DataBalance, ...errorResponses(404) },
    },
  };
  for (const path of [
    '/v1/accounts/:account_id/balance/:denomination/autorefill',
    '/v1/accounts/:account_id/balance/:denomination/auto_refill',
  ]) {
    app.put(path, balanceAutoRefill, async (request) => {
      const { account_id, denomination } = request.params as { account_id: string; denomination: string };
      const b = await putAutoRefill(
        deps,
        requireCompany(request),
        account_id,
        denomination,
        request.body as AutoRefillInput,
      );
      return { data: presentBalance(b) };
    });
  }

  app.put(
    '/v1/accounts/:account_id/auto_refill',
    {
      config,
      schema: {
        tags: ['auto-refill'],
        summary: 'Set auto-refill of a balance (denomination in the body)',
        description: autoRefillDescription,
        security: companyAuth,
        params: AccountParams,
        body: Type.Object({ denomination: Denomination, ...AutoRefillFields }, { additionalProperties: false }),
        response: { 200: DataBalance, ...errorResponses(404) },
      },
    },
    async (request) => {
      const b = await putAutoRefill(
        deps,
        requireCompany(request),
        request.params.account_id,
        request.body.denomination,
        request.body,
      );
      return { data: presentBalance(b) };
    },
  );

  app.post(
    '/v1/accounts/:account_id/modifymidmonth',
    {
      config,
      schema: {
        tags: ['auto-refill'],
        summary: 'Increase the monthly refill now, prorated',
        description:
          'For increases only (`amount` must exceed the current refill_amount; decreases are scheduled with PUT …/autorefill). ' +
          'remaining = the balance amount clamped to [0, refill_amount]; its value = remaining × refill_usd_amount / refill_amount, rounded half up to a cent; ' +
          'charged = max(0, usd_charge − value). `dryrun`: only the quote. Otherwise the card is charged FIRST, synchronously, with the charge id as the ' +
          'processor idempotency key; only when it succeeds is the change applied in one transaction: remaining removed and amount added (one `proration` ' +
          'transaction), the refill settings replaced, monthly refill on, the refill day today under the monthly day rule. A declined charge (or no card) ' +
          'is 402 payment_failed and changes nothing but the record of the failed charge. `amount` in the response is the balance amount after the change.',
        security: companyAuth,
        params: AccountParams,
        body: Type.Object(
          {
            account_id: Type.Optional(Type.String({ maxLength: 64, description: 'Must match the path when given' })),
            denomination: Denomination,
            amount: Type.Union([SafeInteger({ minimum: 0 }), Type.String({ maxLength: 32 })], {
              description: 'New refill amount: integer or numeric string',
            }),
            usd_charge: Type.Union([SafeInteger({ minimum: 0 }), Type.String({ maxLength: 32 })], {
              description: 'New refill price, USD cents: integer or numeric string',
            }),
            dryrun: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            data: Type.Object({
              account_id: Type.String(),
              isdryrun: Type.Boolean(),
              amount: Type.Integer(),
              denomination: Type.String(),
              refill_amount: Type.Integer(),
              refill_day: Type.Integer(),
              refill_usd_amount: Type.Integer(),
              usd_amount_charged: Type.String({ description: 'USD cents, as a string' }),
            }),
          }),
          ...errorResponses(402, 404, 503),
        },
      },
    },
    async (request) => ({
      data: await modifyMidMonth(deps, requireCompany(request), request.params.account_id, request.body),
    }),
  );

  const createPlanRoute = {
    config,
    schema: {
      tags: ['plans'],
      summary: 'Create a plan',
      description:
        'An account created with `plan_id` gets one balance per entry holding the included amount and is charged `charge_amount` at once ' +
        '(with no card yet the charge is recorded `requires_payment_method` and collected when a card is attached). Every month under the day rule: ' +
        'overage (a negative balance) is charged at overage_charge_amount per unit, then the balance is reset to the included amount (`period_reset`) ' +
        'or, with `rollover`, the included amount is added to what is left (kind `grant`; a negative balance counts as 0 since its overage was charged), ' +
        'and charge_amount is charged again; an `auto_refill` webhook per balance. A declined plan or overage charge waits for a new card.',
      security: companyAuth,
      params: CompanyParams,
      body: PlanBody,
      response: { 200: Type.Object({ data: Plan }), ...errorResponses(404) },
    },
  };
  for (const path of ['/v1/companies/:company_id/plan', '/v1/companies/:company_id/plans']) {
    app.post(path, createPlanRoute, async (request) => {
      const companyId = requireCompany(request);
      if ((request.params as { company_id: string }).company_id !== companyId)
        fail('not_found', 'no such company', 'company_id');
      return { data: presentPlan(await createPlan(deps, companyId, request.body)) };
    });
  }

  app.get(
    '/v1/companies/:company_id/plans',
    {
      config,
      schema: {
        tags: ['plans'],
        summary: 'List plans, newest first',
        security: companyAuth,
        params: CompanyParams,
        querystring: PageQuery,
        response: { 200: PageOf(Plan), ...errorResponses(404) },
      },
    },
    async (request) => {
      const companyId = requireCompany(request);
      if (request.params.company_id !== companyId) fail('not_found', 'no such company', 'company_id');
      const page = await listPlans(deps, companyId, {
        limit: request.query.limit ?? PAGE_LIMIT_DEFAULT,
        startingAfter: request.query.starting_after,
      });
      return presentPage(page, presentPlan, (p) => p.planId);
    },
  );

  app.get(
    '/v1/plans/:plan_id',
    {
      config,
      schema: {
        tags: ['plans'],
        summary: 'Get a plan',
        security: companyAuth,
        params: Type.Object({ plan_id: Type.String({ maxLength: 64 }) }),
        response: { 200: Type.Object({ data: Plan }), ...errorResponses(404) },
      },
    },
    async (request) => ({ data: presentPlan(await getPlan(deps, requireCompany(request), request.params.plan_id)) }),
  );

  app.get(
    '/v1/accounts/:account_id/charges',
    {
      config,
      schema: {
        tags: ['charges'],
        summary: 'List the USD charges to the card, newest first',
        description:
          'Refills, plan charges, overage and proration. status: pending (requested, not yet answered by the processor), succeeded, failed, ' +
          'requires_payment_method (owed, waiting for a card).',
        security: companyAuth,
        params: AccountParams,
        querystring: PageQuery,
        response: { 200: PageOf(Charge), ...errorResponses(404) },
      },
    },
    async (request) => {
      const page = await listCharges(deps, requireCompany(request), request.params.account_id, {
        limit: request.query.limit ?? PAGE_LIMIT_DEFAULT,
        startingAfter: request.query.starting_after,
      });
      return presentPage(page, presentCharge, (c) => c.chargeId);
    },
  );
}
