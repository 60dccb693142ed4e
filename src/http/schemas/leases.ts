/** Leases (contract "Leases"): open one on an account's balance, close it, read one and an account's list. */
import { Type } from '@sinclair/typebox';
import { LEASE_TTL_DEFAULT_S, LEASE_TTL_MAX_S, remainingOf } from '../../domain/leases.js';
import { AMOUNT_MAX } from '../../domain/money.js';
import { toIso } from '../../lib/clock.js';
import type { LeaseRow } from '../../store/types.js';
import {
  AccountParams,
  ClientEventId,
  companyAuth,
  Denomination,
  errorResponses,
  PageOf,
  PageQuery,
} from './common.js';

export const LeaseId = Type.String({ minLength: 1, maxLength: 64, description: 'A lease id, ls_…' });

export const Lease = Type.Object(
  {
    lease_id: LeaseId,
    id: Type.Union([Type.String(), Type.Null()], { description: 'The client id the lease was opened with, or null' }),
    account_id: Type.String(),
    denomination: Denomination,
    amount: Type.Integer({ description: 'Units held when it was opened' }),
    used: Type.Integer({ description: 'Units the events that named it took from it' }),
    remaining: Type.Integer({ description: 'Units it still holds (0 once closed or expired)' }),
    released: Type.Integer({ description: 'Units it gave back to the balance at close or expiry' }),
    status: Type.Union([Type.Literal('open'), Type.Literal('closed'), Type.Literal('expired')], {
      description: 'expired from expires_at on (its remaining released at that instant)',
    }),
    expires_at: Type.String({ format: 'date-time' }),
    created_at: Type.String({ format: 'date-time' }),
    closed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When it was closed, or expired (its expires_at); null while open',
    }),
  },
  {
    $id: 'Lease',
    title: 'Lease',
    examples: [
      {
        lease_id: 'ls_5TzK1pQ8aB3xY7',
        id: null,
        account_id: 'a_3kTQ9x0bM2',
        denomination: 'tokens',
        amount: 5000,
        used: 1200,
        remaining: 3800,
        released: 0,
        status: 'open',
        expires_at: '2026-11-23T10:05:00.000Z',
        created_at: '2026-11-23T10:00:00.000Z',
        closed_at: null,
      },
    ],
  },
);

const LeaseParams = Type.Object({ lease_id: LeaseId });

export const openLeaseSchema = {
  operationId: 'createAccountLease',
  tags: ['leases'],
  summary: 'Open a lease: hold units for decisions in the client’s own process',
  description:
    'Holds `amount` units of the balance like a pending event’s cost (drawn from its grants in drawing order: ' +
    '`pending` up, `available` down) until `expires_at` (`ttl_seconds`, default ' +
    `${LEASE_TTL_DEFAULT_S}, at most ${LEASE_TTL_MAX_S}) or until it is closed. Events that carry its ` +
    '`lease_id` take their cost from it first, then from the balance. The held amount counts as spend when the ' +
    'lease opens; what it gives back at close or expiry is subtracted (a spend alert of one event type counts ' +
    'only the part of its events’ cost a lease did not cover: the lease has no type). With `available` below ' +
    '`amount`: 402 ' +
    '`insufficient_balance`; with a spend limit the hold would pass: 402 `spend_limit_reached`; nothing held ' +
    'either way. An `id` seen before answers the same lease as it is now (201); the same `id` with another ' +
    'denomination or amount is 409. A balance the account does not have: 400 `no_balance_for_denomination`.',
  security: companyAuth,
  params: AccountParams,
  body: Type.Object(
    {
      denomination: Denomination,
      amount: Type.Integer({ minimum: 1, maximum: AMOUNT_MAX, description: 'Units to hold, ≥ 1' }),
      ttl_seconds: Type.Optional(
        Type.Integer({ minimum: 1, maximum: LEASE_TTL_MAX_S, description: `Default ${LEASE_TTL_DEFAULT_S}` }),
      ),
      id: Type.Optional({ ...ClientEventId, description: 'A client id: the same id again answers the same lease' }),
    },
    { additionalProperties: false, examples: [{ denomination: 'tokens', amount: 5000, ttl_seconds: 300 }] },
  ),
  response: {
    201: Type.Object({ data: Type.Ref('Lease') }, { description: 'The lease' }),
    ...errorResponses(402, 404, 409),
  },
};

export const closeLeaseSchema = {
  operationId: 'closeLease',
  tags: ['leases'],
  summary: 'Close a lease: release what it still holds',
  description:
    'Its remaining units go back to the balance at once (and out of the spend they were counted in). Closing a ' +
    'closed lease answers it again; an expired one is 409 `lease_expired` (its units were released at ' +
    '`expires_at`). Events that name it afterwards are charged to the balance as ordinary events.',
  security: companyAuth,
  params: LeaseParams,
  response: {
    200: Type.Object({ data: Type.Ref('Lease') }, { description: 'The lease, closed' }),
    ...errorResponses(404, 409),
  },
};

export const getLeaseSchema = {
  operationId: 'getLease',
  tags: ['leases'],
  summary: 'Get a lease',
  description:
    'As it is now: a lease whose `expires_at` has come is `expired`, its remaining released. Another company’s ' +
    'lease is 404, like one that does not exist.',
  security: companyAuth,
  params: LeaseParams,
  response: { 200: Type.Object({ data: Type.Ref('Lease') }, { description: 'The lease' }), ...errorResponses(404) },
};

export const listAccountLeasesSchema = {
  operationId: 'listAccountLeases',
  tags: ['leases'],
  summary: "An account's leases, newest first",
  description: 'Each as it is now; `status` keeps those of that status now (an open lease past expires_at is expired).',
  security: companyAuth,
  params: AccountParams,
  querystring: Type.Object(
    {
      ...PageQuery.properties,
      status: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('closed'), Type.Literal('expired')])),
    },
    { additionalProperties: false },
  ),
  response: { 200: PageOf(Type.Ref('Lease')), ...errorResponses(404) },
};

export function presentLease(l: LeaseRow) {
  return {
    lease_id: l.leaseId,
    id: l.clientId,
    account_id: l.accountId,
    denomination: l.denomination,
    amount: l.amount,
    used: l.used,
    remaining: remainingOf(l),
    released: l.released,
    status: l.status,
    expires_at: toIso(l.expiresAtMs),
    created_at: toIso(l.createdAtMs),
    closed_at: l.closedAtMs === null ? null : toIso(l.closedAtMs),
  };
}
