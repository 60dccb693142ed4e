/**
 * Auto-refill settings of a balance: one body and one description for its three spellings
 * (`…/balance/{denomination}/autorefill`, `…/balance/{denomination}/auto_refill` and
 * `…/auto_refill` with the denomination in the body).
 */
import { Type } from '@sinclair/typebox';
import { DECLINES_BEFORE_PAUSE } from '../../domain/refill.js';
import {
  AccountParams,
  BalanceParams,
  DataBalance,
  Denomination,
  SafeInteger,
  companyAuth,
  errorResponses,
} from './common.js';

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
  'Fields left out keep their values. Threshold: after a change lowers `available` below `threshold`, ' +
  'the card is charged `usd_charge` and, only if that succeeds, `amount` is added (kind `refill`) and an ' +
  '`auto_refill` webhook is sent; one refill in flight per balance; a declined charge adds nothing and is ' +
  `retried on the next change; after ${DECLINES_BEFORE_PAUSE} declines in a row auto-refill pauses ` +
  '(`auto_refill_paused`) until a new card is attached. Saving settings does not itself start a threshold ' +
  'refill. Monthly: switching it on refills at once and anchors the day (UTC; days after the 28th move to ' +
  'the 1st of the second following month, then every 1st); changing amounts of an existing monthly refill ' +
  'takes effect at the next renewal. The response shows the balance when the settings were saved: refills ' +
  'happen in the background once their charge succeeds.';

/** At `…/balance/{denomination}/autorefill` and `…/auto_refill`: the denomination is in the path. */
export const putBalanceAutoRefillSchema = {
  operationId: 'setBalanceAutoRefill',
  tags: ['auto-refill'],
  summary: 'Set auto-refill of a balance',
  description: autoRefillDescription,
  security: companyAuth,
  params: BalanceParams,
  body: Type.Object(
    { denomination: Type.Optional(Denomination), ...AutoRefillFields },
    { additionalProperties: false, examples: [{ threshold: 100, amount: 1000, usd_charge: 1000 }] },
  ),
  response: { 200: DataBalance, ...errorResponses(404) },
};

/** At `/v1/accounts/{account_id}/auto_refill`: the denomination is in the body. */
export const putAccountAutoRefillSchema = {
  operationId: 'setAccountAutoRefill',
  tags: ['auto-refill'],
  summary: 'Set auto-refill of a balance (denomination in the body)',
  description: autoRefillDescription,
  security: companyAuth,
  params: AccountParams,
  body: Type.Object(
    { denomination: Denomination, ...AutoRefillFields },
    {
      additionalProperties: false,
      examples: [{ denomination: 'tokens', amount: 1000, usd_charge: 900, refill_period: 'monthly' }],
    },
  ),
  response: { 200: DataBalance, ...errorResponses(404) },
};
