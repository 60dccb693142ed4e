/** Usage read back: event lists (company, account) and usage by window (company, account). */
import { Type } from '@sinclair/typebox';
import { USAGE_GROUP_KEYS, USAGE_WINDOWS, USAGE_WINDOWS_MAX } from '../../domain/usage.js';
import { USAGE_ROWS_MAX } from '../../domain/usage.js';
import { AccountParams, Denomination, PageOf, PageQuery, companyAuth, errorResponses } from './common.js';

const Instant = (what: string) =>
  Type.String({ minLength: 1, maxLength: 64, description: `RFC 3339 date-time: ${what}` });

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

export const UsageGroup = Type.Object(
  {
    window_start: Type.String({ format: 'date-time' }),
    window_end: Type.String({ format: 'date-time', description: 'Exclusive' }),
    type: Type.Optional(Type.String({ description: 'With group_by type' })),
    denomination: Type.Optional(Type.String({ description: 'With group_by denomination' })),
    account_id: Type.Optional(Type.String({ description: 'With group_by account_id' })),
    events: Type.Integer({ description: 'How many complete events' }),
    quantity: Type.String({ description: 'The exact sum of their quantities, as a decimal string' }),
    cost: Type.Integer({ description: 'The sum of their final costs, in denomination units' }),
  },
  { $id: 'UsageGroup', title: 'UsageGroup' },
);

const WINDOW_PROSE = 'UTC calendar periods cut to [from, to); all is one window';

const usageQuery = {
  from: Instant('the start of the period (inclusive), on a whole UTC hour'),
  to: Instant('the end of the period (exclusive), on a whole UTC hour, after from'),
  window: Type.Optional(
    Type.String({
      maxLength: 16,
      description: `${USAGE_WINDOWS.join(' | ')} (default day): ${WINDOW_PROSE}`,
    }),
  ),
  group_by: Type.Optional(
    Type.String({
      maxLength: 64,
      description: `Comma-separated subset of ${USAGE_GROUP_KEYS.join(', ')} (default type,denomination)`,
    }),
  ),
  type: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'Comma-separated event types' })),
  denomination: Type.Optional(
    Type.String({ minLength: 1, maxLength: 2048, description: 'Comma-separated denominations' }),
  ),
};

const usageDescription =
  'Complete events counted by the UTC hour of their timestamp, at their final cost (an event settled to complete ' +
  'counts from that moment); pending, cancelled and expired events are not counted. Only groups with usage ' +
  'appear, ordered by window_start, then type, denomination and account id. Real time: an event counts as soon ' +
  `as its request has been answered. from and to must fall on whole UTC hours; at most ${USAGE_WINDOWS_MAX} ` +
  `windows and ${USAGE_ROWS_MAX} hourly rows per request, and from no older than BILLING_USAGE_RETENTION_DAYS ` +
  '(default 400): otherwise 400 saying the limit.';

export const usageSchema = {
  operationId: 'getUsage',
  tags: ['usage'],
  summary: "The company's usage by window",
  description: usageDescription,
  security: companyAuth,
  querystring: Type.Object(
    {
      ...PageQuery.properties,
      ...usageQuery,
      account_id: Type.Optional(Type.String({ maxLength: 64, description: "Only this account's usage" })),
    },
    { additionalProperties: false },
  ),
  response: { 200: PageOf(Type.Ref('UsageGroup')), ...errorResponses(404) },
};

export const accountUsageSchema = {
  operationId: 'getAccountUsage',
  tags: ['usage'],
  summary: "An account's usage by window",
  description: usageDescription,
  security: companyAuth,
  params: AccountParams,
  querystring: Type.Object({ ...PageQuery.properties, ...usageQuery }, { additionalProperties: false }),
  response: { 200: PageOf(Type.Ref('UsageGroup')), ...errorResponses(404) },
};
