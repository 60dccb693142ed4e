/** Credit grants: creating one on a balance, listing (per balance, per company), reading, PATCH and void. */
import { Type } from '@sinclair/typebox';
import {
  BalanceParams,
  companyAuth,
  Denomination,
  errorResponses,
  Instant,
  Metadata,
  PageOf,
  PageQuery,
  SafeInteger,
  Text,
  Timestamp,
} from './common.js';
import { GRANT_CATEGORIES, GRANT_SOURCES, GRANT_STATUSES } from '../../domain/grants.js';
import { toIso } from '../../lib/clock.js';
import type { GrantView } from '../../ledger/grants.js';

const DRAWING_ORDER =
  'Drawing order: `priority` ascending; `expires_at` ascending, never-expiring last; `promotional` before `paid`; ' +
  '`effective_at` ascending; `grant_id` ascending.';

const GrantName = Type.String({ minLength: 1, maxLength: 200, description: 'A name for people, ≤ 200 characters' });
const Priority = Type.Integer({ minimum: 0, maximum: 100, description: '0–100, lower drawn first; default 50' });

export const Grant = Type.Object(
  {
    grant_id: Type.String({ description: 'g_…' }),
    account_id: Type.String(),
    denomination: Type.String(),
    amount: Type.Integer({ minimum: 1, description: 'Units granted' }),
    remaining: Type.Integer({ minimum: 0, description: 'Units not yet used, held units included' }),
    held: Type.Integer({ minimum: 0, description: 'Units of `remaining` held by pending events' }),
    priority: Type.Integer({ minimum: 0, maximum: 100 }),
    category: Type.Union(GRANT_CATEGORIES.map((c) => Type.Literal(c))),
    cost_basis: Type.Union([Type.String(), Type.Null()], {
      description:
        "USD cents per unit, a decimal string: given with a paid grant; a refill's is `usd_charge` / `amount` to " +
        'six decimal places',
    }),
    name: Type.Union([Type.String(), Type.Null()]),
    metadata: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
    source: Type.Union(
      GRANT_SOURCES.map((s) => Type.Literal(s)),
      {
        description:
          'What made it: `grant` (this API), `initial` (a balance created with an amount), `adjustment` (a positive ' +
          "adjustment), `refill` (threshold), `monthly_refill`, `plan` (a plan period's included amount), " +
          '`proration` (the new amount of a mid-month increase), `topup` (a credit pack the customer bought)',
      },
    ),
    status: Type.Union(
      GRANT_STATUSES.map((s) => Type.Literal(s)),
      {
        description:
          '`scheduled` before `effective_at`; `active`; `depleted` (remaining 0); `expired` at and after ' +
          '`expires_at`; `voided`. Read at the instant of the request.',
      },
    ),
    effective_at: Timestamp,
    expires_at: Type.Union([Timestamp, Type.Null()], { description: 'null: never expires' }),
    created_at: Timestamp,
    voided_at: Type.Union([Timestamp, Type.Null()]),
  },
  {
    $id: 'Grant',
    title: 'Grant',
    description:
      'A lot of units on a balance with its own remainder, priority and validity. Every unit of a balance belongs ' +
      'to a grant; what no grant covers is debt (a negative amount), repaid first by units added later. ' +
      'Decisions where the contract is silent: a change of 0 units is no transaction (an expiry of a grant whose ' +
      'units are all used or held, a renewal that ends as many plan units as it starts); at one instant expiries ' +
      'apply before starts; units a settle gives back to an open grant while the balance owes repay the debt; a ' +
      'status follows the precedence voided > expired > scheduled > depleted > active (a used-up grant past its ' +
      "expiry reads `expired`); a plan period's grant is `paid` with no cost basis; if a read or an event reaches " +
      "a balance at its plan's renewal instant before the renewal runs, the plan grant's end is its own " +
      '`grant_expiry` and the `period_reset` then adds the new period (the balance ends the same).',
    examples: [
      {
        grant_id: 'g_0VcPromo9x2LmQ',
        account_id: 'a_3kTQ9x0bM2',
        denomination: 'tokens',
        amount: 1000,
        remaining: 400,
        held: 25,
        priority: 10,
        category: 'promotional',
        cost_basis: null,
        name: 'November promotion',
        metadata: null,
        source: 'grant',
        status: 'active',
        effective_at: '2026-11-01T00:00:00.000Z',
        expires_at: '2026-12-01T00:00:00.000Z',
        created_at: '2026-11-01T00:00:00.000Z',
        voided_at: null,
      },
    ],
  },
);

const DataGrant = Type.Object({ data: Type.Ref('Grant') });
const GrantParams = Type.Object({ grant_id: Type.String({ maxLength: 64 }) });
const StatusFilter = Type.String({
  maxLength: 100,
  description:
    'Comma-separated statuses (scheduled, active, depleted, expired, voided); default `scheduled,active`. ' +
    'Anything else: 400 unknown_grant_status.',
});

export const createGrantSchema = {
  operationId: 'createGrant',
  tags: ['grants'],
  summary: 'Grant units to a balance',
  description:
    'Adds a grant. Effective now (the default): its units join at once with one `grant` transaction of +amount, ' +
    'repaying any debt first (500 onto a balance of −200: balance 300, grant remaining 300). Scheduled: nothing ' +
    'moves until `effective_at`, when it joins with the same transaction, whether or not a background job ran. ' +
    'A balance that does not exist: 404.',
  security: companyAuth,
  params: BalanceParams,
  body: Type.Object(
    {
      amount: SafeInteger({ minimum: 1, description: 'Units, an integer ≥ 1' }),
      priority: Type.Optional(Priority),
      category: Type.Optional(
        Type.Union(
          GRANT_CATEGORIES.map((c) => Type.Literal(c)),
          { description: '`promotional` (default) or `paid`' },
        ),
      ),
      effective_at: Type.Optional(Instant('when the units join; default now, at most 366 days ahead')),
      expires_at: Type.Optional(
        Instant('when the unused units leave; after `effective_at` and after now; absent: never'),
      ),
      cost_basis: Type.Optional(
        Type.Union([Type.String({ maxLength: 40 }), Type.Number({ minimum: 0 })], {
          description: 'USD cents per unit, a decimal string ≥ 0; only with category `paid`',
        }),
      ),
      name: Type.Optional(GrantName),
      metadata: Type.Optional(Metadata),
    },
    {
      additionalProperties: false,
      examples: [{ amount: 1000, priority: 10, expires_at: '2026-12-01T00:00:00Z', name: 'November promotion' }],
    },
  ),
  response: { 201: DataGrant, ...errorResponses(404) },
};

export const listBalanceGrantsSchema = {
  operationId: 'listBalanceGrants',
  tags: ['grants'],
  summary: "List a balance's grants in drawing order",
  description: DRAWING_ORDER,
  security: companyAuth,
  params: BalanceParams,
  querystring: Type.Object(
    { ...PageQuery.properties, status: Type.Optional(StatusFilter) },
    { additionalProperties: false },
  ),
  response: { 200: PageOf(Type.Ref('Grant')), ...errorResponses(404) },
};

export const listGrantsSchema = {
  operationId: 'listGrants',
  tags: ['grants'],
  summary: "List the company's grants by expiry",
  description:
    'By `expires_at` (never-expiring last), then `grant_id`. Filters combine. `status` defaults to ' +
    "`scheduled,active`, as on a balance's list.",
  security: companyAuth,
  querystring: Type.Object(
    {
      ...PageQuery.properties,
      account_id: Type.Optional(Type.String({ maxLength: 64 })),
      denomination: Type.Optional(Denomination),
      category: Type.Optional(
        Type.Union(
          GRANT_CATEGORIES.map((c) => Type.Literal(c)),
          { description: 'Only `promotional` or only `paid` grants (e.g. the paid units still owed)' },
        ),
      ),
      status: Type.Optional(StatusFilter),
      expires_before: Type.Optional(Instant('only grants whose expires_at is before it (never-expiring ones are not)')),
    },
    { additionalProperties: false },
  ),
  response: { 200: PageOf(Type.Ref('Grant')), ...errorResponses(404) },
};

export const getGrantSchema = {
  operationId: 'getGrant',
  tags: ['grants'],
  summary: 'Get a grant',
  description: "Another company's grant: 404.",
  security: companyAuth,
  params: GrantParams,
  response: { 200: DataGrant, ...errorResponses(404) },
};

export const updateGrantSchema = {
  operationId: 'updateGrant',
  tags: ['grants'],
  summary: 'Change a grant',
  description:
    'Changes a scheduled or active grant; on any other status: 409 (`grant_expired`, `grant_depleted`, ' +
    '`grant_voided`). An `expires_at` at or before now expires it at once (one `grant_expiry` transaction of its ' +
    'unheld units); `null` makes it never expire; it must be after `effective_at`.',
  security: companyAuth,
  params: GrantParams,
  body: Type.Object(
    {
      priority: Type.Optional(Priority),
      expires_at: Type.Optional(Type.Union([Instant('the new expiry'), Type.Null()])),
      name: Type.Optional(Type.Union([GrantName, Type.Null()])),
      metadata: Type.Optional(Type.Union([Metadata, Type.Null()])),
    },
    { additionalProperties: false, examples: [{ priority: 5 }] },
  ),
  response: { 200: DataGrant, ...errorResponses(404, 409) },
};

export const voidGrantSchema = {
  operationId: 'voidGrant',
  tags: ['grants'],
  summary: 'Void a grant',
  description:
    'Its unheld remaining leaves with one `grant_void` transaction and it becomes `voided`; units held by pending ' +
    'events are voided when those events settle (what their final cost does not use). Voiding a voided grant ' +
    'answers the same record; an expired or depleted one: 409. A scheduled grant is voided with no transaction.',
  security: companyAuth,
  params: GrantParams,
  body: Type.Object(
    { reason: Type.Optional(Text('Why; kept on the grant_void transaction')) },
    { additionalProperties: false, examples: [{ reason: 'promotion withdrawn' }] },
  ),
  response: { 200: DataGrant, ...errorResponses(404, 409) },
};

export function presentGrant(g: GrantView) {
  return {
    grant_id: g.grantId,
    account_id: g.accountId,
    denomination: g.denomination,
    amount: g.amount,
    remaining: g.remaining,
    held: g.held,
    priority: g.priority,
    category: g.category,
    cost_basis: g.costBasis,
    name: g.name,
    metadata: g.metadata,
    source: g.source,
    status: g.status,
    effective_at: toIso(g.effectiveAtMs),
    expires_at: g.expiresAtMs === null ? null : toIso(g.expiresAtMs),
    created_at: toIso(g.createdAtMs),
    voided_at: g.voidedAtMs === null ? null : toIso(g.voidedAtMs),
  };
}
