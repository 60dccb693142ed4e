/**
 * Usage events: the ingest bodies (an array, `{events}`, or `{account_id, events}`), reads, lists
 * and settling; the event record and its presenter.
 */
import { Type } from '@sinclair/typebox';
import { EVENTS_PER_REQUEST_MAX } from '../../domain/events.js';
import {
  AccountParams,
  ClientEventId,
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
import { toIso } from '../../lib/clock.js';
import type { EventRow } from '../../store/types.js';

const CostOverride = Type.Object(
  {
    amount: SafeInteger({ minimum: 0, description: 'Whole units ≥ 0' }),
    denomination: Denomination,
  },
  { additionalProperties: false, description: 'The cost to charge, stated by the caller' },
);

const EventBody = Type.Object(
  {
    type: Text('Kind of event, chosen by the company'),
    id: Type.Optional(ClientEventId),
    quantity: Type.Optional(
      Type.Number({ minimum: 0, description: "Default 1; cost = quantity × the type's unit_amount, rounded up" }),
    ),
    cost_override: Type.Optional(CostOverride),
    cost_override_amount: Type.Optional(
      SafeInteger({ minimum: 0, description: 'Flat spelling of cost_override.amount' }),
    ),
    cost_override_denomination: Type.Optional(Denomination),
    metadata: Type.Optional(Metadata),
    state: Type.Optional(
      Type.Union(
        [Type.Literal('pending'), Type.Literal('complete'), Type.Literal('completed'), Type.Literal('cancelled')],
        { description: 'Default complete; completed = complete' },
      ),
    ),
    gate_on_balance: Type.Optional(
      Type.Boolean({ description: 'Refuse the whole request (402) if a balance it draws from has available < 0' }),
    ),
    lease_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'A lease of this account and balance (ls_…): the cost is taken from what it still holds first, the rest ' +
          'from the balance. A lease no longer open: the balance alone. Not on a pending event (400); an unknown ' +
          "lease, another account's or one of another denomination: 400 naming the event. Not content: a client " +
          'id sent again naming another lease (or none) is the same event, accepted without a second deduction.',
      }),
    ),
    timestamp: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'RFC 3339 date-time: when the usage happened (default: when it is recorded). At most 5 minutes in the ' +
          'future and BILLING_EVENT_MAX_AGE_DAYS (default 35) in the past, else 400 naming the event. Usage is ' +
          'counted in the hour of this time; the cost is deducted when the event is recorded. A client id replayed ' +
          'with another timestamp is different content (409).',
        examples: ['2026-11-23T10:00:00Z'],
      }),
    ),
  },
  { additionalProperties: false },
);

/** The events of one ingest request, as validated: at least one, at most EVENTS_PER_REQUEST_MAX. */
export const EventList = Type.Array(EventBody, { minItems: 1, maxItems: EVENTS_PER_REQUEST_MAX });

const Gate = Type.Optional(
  Type.Boolean({
    description: 'Refuse the whole request (402 insufficient_balance) if a balance it draws from has available < 0',
  }),
);

const LeaseOfAll = Type.Optional(
  Type.String({ minLength: 1, maxLength: 64, description: 'The lease_id of every event that names none' }),
);

const IngestResponse = Type.Object(
  {
    events_submitted: Type.Integer(),
    event_ids: Type.Array(Type.String(), { description: 'In request order: the client id where given, else ev_…' }),
  },
  {
    description: 'The events were recorded (all of them), durably',
    examples: [{ events_submitted: 2, event_ids: ['ev_5TzK1pQ8', 'req-7f3a'] }],
  },
);

const ingestDescription =
  `All or nothing, at most ${EVENTS_PER_REQUEST_MAX} events. Committed durably before the answer. ` +
  'A repeated client id with identical content is accepted again without a second deduction; with different ' +
  'content it is 409. Missing price or balance: 400 naming the event index. A request that would take a ' +
  "balance's spend above one of its limits is refused whole, whatever gate_on_balance says: 402 " +
  '`spend_limit_reached` with `details: {denomination, window, limit, spend, resets_at}`.';

export const ingestSchema = {
  operationId: 'createAccountEvents',
  tags: ['events'],
  summary: 'Record usage events (an array, or {events})',
  description: ingestDescription,
  security: companyAuth,
  params: Type.Object({ account_id: Type.String({ maxLength: 64 }) }),
  querystring: Type.Object({ gate_on_balance: Gate }, { additionalProperties: false }),
  body: Type.Union(
    [
      EventList,
      Type.Object({ events: EventList, gate_on_balance: Gate, lease_id: LeaseOfAll }, { additionalProperties: false }),
    ],
    {
      examples: [
        [
          { type: 'api_call', quantity: 3 },
          {
            id: 'req-7f3a',
            type: 'llm_tokens',
            cost_override: { amount: 25, denomination: 'tokens' },
            state: 'pending',
          },
        ],
      ],
    },
  ),
  response: { 200: IngestResponse, ...errorResponses(402, 404, 409, 413, 415) },
};

export const checkSchema = {
  operationId: 'checkAccountEvents',
  tags: ['events'],
  summary: 'What would these events cost, and can the account afford them? (writes nothing)',
  description:
    'Takes the body of POST /v1/accounts/{account_id}/events and answers what that call would do on the state ' +
    'as it is now, writing nothing: the cost of each event (a repeated client id costs 0: it would not be ' +
    'deducted again) and each balance drawn from, available before and after. `allowed` is false when the ' +
    'request would take a spend limit\'s window above its limit (`reason: "spend_limit_reached"`: the events call ' +
    'would answer 402 spend_limit_reached, whatever gate_on_balance says) or any available_after would be below 0 ' +
    '(`reason: "insufficient_balance"`); both: `spend_limit_reached`; otherwise `reason` is null. A body the ' +
    'events call would refuse with 400 or 404 is refused the same way; gate_on_balance does not refuse here ' +
    '(allowed says it). An Idempotency-Key is not needed and is ignored.',
  security: companyAuth,
  params: Type.Object({ account_id: Type.String({ maxLength: 64 }) }),
  querystring: Type.Object({ gate_on_balance: Gate }, { additionalProperties: false }),
  body: ingestSchema.body,
  response: {
    200: Type.Object(
      {
        data: Type.Object({
          allowed: Type.Boolean(),
          reason: Type.Union([Type.Literal('spend_limit_reached'), Type.Literal('insufficient_balance'), Type.Null()], {
            description: 'Why `allowed` is false (null when it is true)',
          }),
          events: Type.Array(
            Type.Object({
              index: Type.Integer(),
              cost: Type.Object({ amount: Type.Integer(), denomination: Type.Union([Type.String(), Type.Null()]) }),
            }),
          ),
          balances: Type.Array(
            Type.Object({
              denomination: Type.String(),
              available: Type.Integer(),
              available_after: Type.Integer(),
            }),
          ),
        }),
      },
      {
        description: 'What the events call would do',
        examples: [
          {
            data: {
              allowed: true,
              reason: null,
              events: [{ index: 0, cost: { amount: 12, denomination: 'tokens' } }],
              balances: [{ denomination: 'tokens', available: 900, available_after: 888 }],
            },
          },
        ],
      },
    ),
    ...errorResponses(404, 413, 415),
  },
};

/** At `/v1/events`: the account is named in the body. */
export const ingestWithAccountSchema = {
  operationId: 'createEvents',
  tags: ['events'],
  summary: 'Record usage events, account in the body',
  description: ingestDescription,
  security: companyAuth,
  querystring: Type.Object({ gate_on_balance: Gate }, { additionalProperties: false }),
  body: Type.Object(
    {
      account_id: Type.String({ minLength: 1, maxLength: 64 }),
      events: EventList,
      gate_on_balance: Gate,
      lease_id: LeaseOfAll,
    },
    {
      additionalProperties: false,
      examples: [{ account_id: 'a_3kTQ9x0bM2', events: [{ type: 'api_call', quantity: 3 }], gate_on_balance: true }],
    },
  ),
  response: { 200: IngestResponse, ...errorResponses(402, 404, 409, 413, 415) },
};

const EventParams = Type.Object({ event_id: Type.String({ minLength: 1, maxLength: 128 }) });

export const getEventSchema = {
  operationId: 'getEvent',
  tags: ['events'],
  summary: 'Get an event',
  description:
    'By the id the events call answered: the client `id` when one was given, else the generated ev_…. A ' +
    'pending event whose hold has expired (one hour after it was recorded) is cancelled by this read first and ' +
    "answered `cancelled`. Another company's event is 404, like one that does not exist.",
  security: companyAuth,
  params: EventParams,
  response: { 200: Type.Object({ data: Type.Ref('Event') }, { description: 'The event' }), ...errorResponses(404) },
};

export const settleEventSchema = {
  operationId: 'settleEvent',
  tags: ['events'],
  summary: 'Settle a pending event',
  description:
    'complete (optionally at a final cost that replaces the held one) or cancelled. Settling an event that is ' +
    'not pending is 409, except repeating its current state (with no cost_override or the same final cost), ' +
    'which is a no-op; the same state with another final cost is 409 event_completed_at_another_cost.',
  security: companyAuth,
  params: EventParams,
  body: Type.Object(
    {
      state: Type.Union([Type.Literal('complete'), Type.Literal('completed'), Type.Literal('cancelled')]),
      cost_override: Type.Optional(CostOverride),
    },
    {
      additionalProperties: false,
      examples: [{ state: 'complete', cost_override: { amount: 30, denomination: 'tokens' } }],
    },
  ),
  response: {
    200: Type.Object({ data: Type.Ref('Event') }, { description: 'The event, settled' }),
    ...errorResponses(404, 409),
  },
};

export const Cost = Type.Object({ amount: Type.Integer(), denomination: Type.String() });

export const Event = Type.Object(
  {
    event_id: Type.String({ description: 'The client id where one was given, else ev_…' }),
    account_id: Type.String(),
    type: Type.String(),
    quantity: Type.Number(),
    cost: Cost,
    price_model: Type.Union([Type.Literal('unit'), Type.Literal('graduated'), Type.Literal('package'), Type.Null()], {
      description:
        'The model of the price that gave the cost; null when a cost_override gave it (or the event was recorded ' +
        'before price models)',
    }),
    metadata: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
    state: Type.Union([Type.Literal('pending'), Type.Literal('complete'), Type.Literal('cancelled')]),
    timestamp: Type.String({
      format: 'date-time',
      description: "When the usage happened: the request's timestamp, else when the event was recorded",
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
    expires_at: Type.Optional(
      Type.String({ format: 'date-time', description: 'While pending: when the hold is cancelled automatically' }),
    ),
    lease_id: Type.Optional(Type.String({ description: 'The lease the event named, where it named one' })),
  },
  {
    $id: 'Event',
    title: 'Event',
    examples: [
      {
        event_id: 'req-7f3a',
        account_id: 'a_3kTQ9x0bM2',
        type: 'api_call',
        quantity: 1,
        cost: { amount: 25, denomination: 'tokens' },
        price_model: 'unit',
        metadata: null,
        state: 'pending',
        timestamp: '2026-11-23T10:00:00.000Z',
        created_at: '2026-11-23T10:00:00.000Z',
        updated_at: '2026-11-23T10:00:00.000Z',
        expires_at: '2026-11-23T11:00:00.000Z',
      },
    ],
  },
);

/** The answer to an accepted events request (and the body its Idempotency-Key replays). */
export function presentIngest(eventsSubmitted: number, eventIds: string[]) {
  return { events_submitted: eventsSubmitted, event_ids: eventIds };
}

export function presentEvent(e: EventRow) {
  return {
    event_id: e.eventId,
    account_id: e.accountId,
    type: e.type,
    quantity: e.quantity,
    cost: { amount: e.costAmount, denomination: e.denomination },
    price_model: e.priceModel,
    metadata: e.metadata,
    state: e.state,
    timestamp: toIso(e.occurredAtMs),
    created_at: toIso(e.createdAtMs),
    updated_at: toIso(e.updatedAtMs),
    ...(e.state === 'pending' && e.expiresAtMs !== null ? { expires_at: toIso(e.expiresAtMs) } : {}),
    ...(e.leaseId !== null ? { lease_id: e.leaseId } : {}),
  };
}

const eventFilters = {
  type: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'Only events of this type' })),
  state: Type.Optional(
    Type.String({ enum: ['pending', 'complete', 'cancelled'], description: 'Only events in this state' }),
  ),
  denomination: Type.Optional(Denomination),
  from: Type.Optional(Instant('only events whose timestamp is at or after it')),
  to: Type.Optional(Instant('only events whose timestamp is before it')),
};

const listEventsDescription =
  'Newest timestamp first (ties: newest recorded first), paged like every list. An event is listed as soon as ' +
  'the request that recorded it has been answered, on every server process. Pending events whose hold expired ' +
  'are cancelled before the list is read.';

export const listEventsSchema = {
  operationId: 'listEvents',
  tags: ['events'],
  summary: "List the company's events",
  description: listEventsDescription,
  security: companyAuth,
  querystring: Type.Object(
    {
      ...PageQuery.properties,
      ...eventFilters,
      account_id: Type.Optional(Type.String({ maxLength: 64, description: "Only this account's events" })),
    },
    { additionalProperties: false },
  ),
  response: { 200: PageOf(Type.Ref('Event')), ...errorResponses(404) },
};

export const listAccountEventsSchema = {
  operationId: 'listAccountEvents',
  tags: ['events'],
  summary: "List an account's events",
  description: listEventsDescription,
  security: companyAuth,
  params: AccountParams,
  querystring: Type.Object({ ...PageQuery.properties, ...eventFilters }, { additionalProperties: false }),
  response: { 200: PageOf(Type.Ref('Event')), ...errorResponses(404) },
};
