/** Credit packs: a company's offers (company key), and their purchase in the customer portal (a portal token). */
import { Type } from '@sinclair/typebox';
import { AMOUNT_MAX } from '../../domain/money.js';
import { TOPUP_EXPIRES_IN_DAYS_MAX, TOPUP_OFFERS_MAX } from '../../domain/topups.js';
import { toIso } from '../../lib/clock.js';
import type { TopupOfferRow } from '../../store/types.js';
import { companyAuth, Denomination, errorResponses, Timestamp } from './common.js';

const OfferId = Type.String({
  ...Denomination,
  description: 'An offer id the company chooses: 1–64 characters of A–Z a–z 0–9 _ . : - (case-sensitive)',
});

const TopupOffer = Type.Object({
  offer_id: OfferId,
  denomination: Denomination,
  amount: Type.Integer({ minimum: 1, description: 'Units the purchase adds, as one paid grant' }),
  usd_charge: Type.Integer({ minimum: 1, description: 'USD cents charged' }),
  name: Type.String(),
  priority: Type.Integer({ minimum: 0, maximum: 100, description: "The grant's priority (drawing order)" }),
  expires_in_days: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
    description: 'The grant expires this many days after the purchase; null: never',
  }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const putTopupOfferSchema = {
  operationId: 'putTopupOffer',
  tags: ['credit packs'],
  summary: 'Create or replace a credit pack',
  description:
    'An offer the account’s customer can buy in the portal (with the `topup` scope): `amount` units of ' +
    '`denomination` for `usd_charge` cents, added as one paid grant (`source: "topup"`, `cost_basis` = ' +
    `usd_charge / amount, the offer's \`priority\`, expiring \`expires_in_days\` days after the purchase or never). ` +
    `At most ${TOPUP_OFFERS_MAX} per company. Changing an offer changes no purchase already made.`,
  security: companyAuth,
  params: Type.Object({ offer_id: OfferId }),
  body: Type.Object(
    {
      denomination: Denomination,
      amount: Type.Integer({ minimum: 1, maximum: AMOUNT_MAX }),
      usd_charge: Type.Integer({ minimum: 1, maximum: AMOUNT_MAX }),
      name: Type.String({ minLength: 1, maxLength: 100 }),
      priority: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
      expires_in_days: Type.Optional(
        Type.Union([Type.Integer({ minimum: 1, maximum: TOPUP_EXPIRES_IN_DAYS_MAX }), Type.Null()]),
      ),
    },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ data: TopupOffer }), ...errorResponses() },
};

export const listTopupOffersSchema = {
  operationId: 'listTopupOffers',
  tags: ['credit packs'],
  summary: "The company's credit packs, by offer id",
  description: `Every offer (at most ${TOPUP_OFFERS_MAX}), in offer id order.`,
  security: companyAuth,
  response: { 200: Type.Object({ data: Type.Array(TopupOffer) }), ...errorResponses() },
};

export const deleteTopupOfferSchema = {
  operationId: 'deleteTopupOffer',
  tags: ['credit packs'],
  summary: 'Delete a credit pack',
  description: 'It can no longer be bought; purchases already made keep their grants. Answers the deleted offer.',
  security: companyAuth,
  params: Type.Object({ offer_id: OfferId }),
  response: { 200: Type.Object({ data: TopupOffer }), ...errorResponses(404) },
};

const portalAuth = [{ portalToken: [] }];

export const listPortalTopupOffersSchema = {
  operationId: 'listPortalTopupOffers',
  tags: ['portal'],
  summary: 'The credit packs the portal’s customer can buy',
  description:
    'The company’s offers of a denomination the account has a balance of. Needs the `topup` scope (403 without).',
  security: portalAuth,
  response: { 200: Type.Object({ data: Type.Array(TopupOffer) }), ...errorResponses(403) },
};

export const createPortalTopupSchema = {
  operationId: 'createPortalTopup',
  tags: ['portal'],
  summary: 'Buy a credit pack with the account’s card, the customer present',
  description:
    'Charges the card now and, when the charge succeeds, adds the offer’s paid grant, once. Send an ' +
    'Idempotency-Key: a double click with one key is one charge and one grant; without a key, two clicks are ' +
    'two purchases. Declined: 402 payment_failed with details.charge_id, nothing added; no card: 402 ' +
    'payment_failed, nothing charged. An unknown (or deleted) offer, or one of a denomination the account has no ' +
    'balance of: 404 offer_id. Needs the `topup` scope (403 without).',
  security: portalAuth,
  body: Type.Object({ offer_id: OfferId }, { additionalProperties: false }),
  response: {
    201: Type.Object({
      data: Type.Object({
        charge_id: Type.String(),
        status: Type.Union([Type.Literal('succeeded'), Type.Literal('requires_action')]),
        grant_id: Type.Union([Type.String(), Type.Null()], { description: 'The grant added; null until it is' }),
        next_action_url: Type.Union([Type.String(), Type.Null()], {
          description: 'Where the customer completes the payment (requires_action); null otherwise',
        }),
      }),
    }),
    ...errorResponses(402, 403, 404),
  },
};

export function presentTopupOffer(o: TopupOfferRow) {
  return {
    offer_id: o.offerId,
    denomination: o.denomination,
    amount: o.amount,
    usd_charge: o.usdCents,
    name: o.name,
    priority: o.priority,
    expires_in_days: o.expiresInDays,
    created_at: toIso(o.createdAtMs),
    updated_at: toIso(o.updatedAtMs),
  };
}
