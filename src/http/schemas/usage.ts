/** Usage read back: usage by window and group, of the company or of one account. */
import { toIso } from '../../lib/clock.js';
import type { UsageGroup as UsageGroupOf } from '../../domain/usage.js';
import { Type } from '@sinclair/typebox';
import { USAGE_GROUP_KEYS, USAGE_ROWS_MAX, USAGE_WINDOWS, USAGE_WINDOWS_MAX } from '../../domain/usage.js';
import { AccountParams, companyAuth, errorResponses, Instant, PageOf, PageQuery } from './common.js';

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

/** A usage group as the API answers it. */
export function presentUsage(g: UsageGroupOf) {
  return {
    window_start: toIso(g.windowStartMs),
    window_end: toIso(g.windowEndMs),
    ...(g.type !== undefined ? { type: g.type } : {}),
    ...(g.denomination !== undefined ? { denomination: g.denomination } : {}),
    ...(g.accountId !== undefined ? { account_id: g.accountId } : {}),
    events: g.events,
    quantity: g.quantity,
    cost: g.cost,
  };
}
