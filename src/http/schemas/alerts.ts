/** Alerts: created on a balance of an account, listed (per account; the company's triggered ones), read, deleted. */
import { Type } from '@sinclair/typebox';
import {
  AccountParams,
  companyAuth,
  Denomination,
  errorResponses,
  Nullable,
  PageOf,
  PageQuery,
  SafeInteger,
  Text,
  Timestamp,
} from './common.js';
import { ALERTS_PER_ACCOUNT_MAX } from '../../domain/alerts.js';
import { toIso } from '../../lib/clock.js';
import type { AlertView } from '../../operations/alerts.js';

const RULES =
  '`metric: "available"`: triggered while the balance\'s `available` is below `threshold` (any integer), resolved ' +
  'when it is back at or above it. `metric: "spend"` with `window` `day` or `month` (UTC): triggered once the ' +
  "window's spend (the balance's `spend`; with `event_type`, only that type's usage) reaches `threshold` (≥ 1), " +
  'resolved when the next window starts. A status is decided at creation and in the transaction of every change ' +
  'of the balance; each change of status writes one `alert_triggered` or `alert_resolved` notification in that ' +
  'transaction (a request crossing several alerts: one each; one crossing and coming back: none). A spend ' +
  'alert of an ended window reads `ok` at once; its `alert_resolved` is written by the next change of the balance ' +
  'or by the background job, never both.';

export const Alert = Type.Object(
  {
    alert_id: Type.String({ description: 'al_…' }),
    account_id: Type.String(),
    denomination: Type.String(),
    metric: Type.Union([Type.Literal('available'), Type.Literal('spend')]),
    threshold: Type.Integer(),
    window: Type.Union([Type.Literal('day'), Type.Literal('month'), Type.Null()], {
      description: 'spend alerts; null for available',
    }),
    event_type: Nullable(Type.String({ description: "spend alerts: only this type's usage counts" })),
    name: Nullable(Type.String()),
    status: Type.Union([Type.Literal('ok'), Type.Literal('triggered')], { description: 'At the instant of the read' }),
    value: Type.Integer({ description: 'The metric now: available, or the current window’s spend' }),
    triggered_at: Type.Union([Timestamp, Type.Null()], { description: 'The last time it was triggered' }),
    resolved_at: Type.Union([Timestamp, Type.Null()], { description: 'The last time it was resolved' }),
    created_at: Timestamp,
  },
  {
    $id: 'Alert',
    title: 'Alert',
    description:
      `An alert on one balance of an account (at most ${ALERTS_PER_ACCOUNT_MAX} per account). ${RULES} ` +
      'Decisions where the contract is silent: a spend alert of one `event_type` created mid-window starts from ' +
      "that type's complete usage already recorded in the window (the hourly rollups) and counts the type's spend " +
      'as taken from then on; deleting an alert notifies nothing; `resolved_at` is kept beside `triggered_at` ' +
      '(the last crossing either way).',
    examples: [
      {
        alert_id: 'al_0VcLow9x2LmQ',
        account_id: 'a_3kTQ9x0bM2',
        denomination: 'tokens',
        metric: 'spend',
        threshold: 5000,
        window: 'day',
        event_type: null,
        name: 'daily burn',
        status: 'triggered',
        value: 5120,
        triggered_at: '2026-11-27T14:03:10.000Z',
        resolved_at: null,
        created_at: '2026-11-01T00:00:00.000Z',
      },
    ],
  },
);

const DataAlert = Type.Object({ data: Type.Ref('Alert') });
const AlertParams = Type.Object({ alert_id: Type.String({ maxLength: 64 }) });

export const createAlertSchema = {
  operationId: 'createAlert',
  tags: ['alerts'],
  summary: 'Create an alert on a balance',
  description:
    `${RULES} An alert created already triggered sends \`alert_triggered\` at once. A balance that does not exist: ` +
    `404. The ${ALERTS_PER_ACCOUNT_MAX + 1}st alert of an account: 400 \`too_many_alerts\`.`,
  security: companyAuth,
  params: AccountParams,
  body: Type.Object(
    {
      denomination: Denomination,
      metric: Type.String({ maxLength: 64, description: '`available` or `spend`' }),
      threshold: SafeInteger({ description: 'available: any integer; spend: ≥ 1' }),
      window: Type.Optional(
        Nullable(Type.String({ maxLength: 64, description: 'spend alerts: `day` or `month` (UTC); required' })),
      ),
      event_type: Type.Optional(Nullable(Text("spend alerts: only this event type's usage counts"))),
      name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200, description: '≤ 200 characters' }))),
    },
    {
      additionalProperties: false,
      examples: [{ denomination: 'tokens', metric: 'spend', threshold: 5000, window: 'day', name: 'daily burn' }],
    },
  ),
  response: { 201: DataAlert, ...errorResponses(404) },
};

export const listAlertsSchema = {
  operationId: 'listAlerts',
  tags: ['alerts'],
  summary: "List an account's alerts",
  description: 'Newest first, each with its status and value at the instant of the request.',
  security: companyAuth,
  params: AccountParams,
  querystring: PageQuery,
  response: { 200: PageOf(Type.Ref('Alert')), ...errorResponses(404) },
};

export const listTriggeredAlertsSchema = {
  operationId: 'listTriggeredAlerts',
  tags: ['alerts'],
  summary: "List the company's triggered alerts",
  description: 'Every alert of the company triggered at the instant of the request, newest first.',
  security: companyAuth,
  querystring: PageQuery,
  response: { 200: PageOf(Type.Ref('Alert')), ...errorResponses() },
};

export const getAlertSchema = {
  operationId: 'getAlert',
  tags: ['alerts'],
  summary: 'Get an alert',
  description: "Its status and value at the instant of the request. Another company's alert: 404.",
  security: companyAuth,
  params: AlertParams,
  response: { 200: DataAlert, ...errorResponses(404) },
};

export const deleteAlertSchema = {
  operationId: 'deleteAlert',
  tags: ['alerts'],
  summary: 'Delete an alert',
  description: "Nothing is notified. Another company's alert, or one already deleted: 404.",
  security: companyAuth,
  params: AlertParams,
  response: {
    200: Type.Object({ alerts_deleted: Type.String({ description: 'The id of the alert deleted' }) }),
    ...errorResponses(404),
  },
};

export function presentAlert(v: AlertView) {
  const a = v.row;
  return {
    alert_id: a.alertId,
    account_id: a.accountId,
    denomination: a.denomination,
    metric: a.metric,
    threshold: a.threshold,
    window: a.window,
    event_type: a.eventType,
    name: a.name,
    status: v.status,
    value: v.value,
    triggered_at: v.triggeredAtMs === null ? null : toIso(v.triggeredAtMs),
    resolved_at: v.resolvedAtMs === null ? null : toIso(v.resolvedAtMs),
    created_at: toIso(a.createdAtMs),
  };
}
