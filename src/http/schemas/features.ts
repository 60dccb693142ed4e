/** Features (a company's), accounts' overrides of them, and what an account is entitled to. */
import { Type } from '@sinclair/typebox';
import { toIso } from '../../lib/clock.js';
import type { EntitlementCheck, EntitlementView } from '../../operations/features.js';
import type { FeatureRow } from '../../store/types.js';
import {
  AccountParams,
  companyAuth,
  Denomination,
  errorResponses,
  Instant,
  Nullable,
  PageOf,
  PageQuery,
  Text,
  Timestamp,
} from './common.js';

const FeatureKey = Type.String({
  ...Denomination,
  description: 'A feature key: 1–64 characters of A–Z a–z 0–9 _ . : - (case-sensitive)',
});
const FeatureParams = Type.Object({ key: FeatureKey });
const AccountFeatureParams = Type.Object({ ...AccountParams.properties, key: FeatureKey });
const Kind = Type.Union([Type.Literal('boolean'), Type.Literal('config'), Type.Literal('metered')], {
  description:
    '`boolean`: on or off; `config`: a JSON value (≤ 4 KB) the plan or an override gives, e.g. `{"max_seats": 5}`; ' +
    '`metered`: usage of `event_type`, paid from balances as usual',
});

export const Feature = Type.Object(
  {
    key: Type.String(),
    kind: Kind,
    name: Nullable(Type.String()),
    event_type: Nullable(Type.String({ description: 'metered: the event type it meters' })),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  {
    $id: 'Feature',
    title: 'Feature',
    description:
      'Something a plan includes or an override grants. Decisions where the contract is silent: at most 500 ' +
      'features per company; a metered feature keeps its key when its event_type changes.',
    examples: [
      {
        key: 'gpt4',
        kind: 'metered',
        name: 'GPT-4',
        event_type: 'gpt4_tokens',
        created_at: '2026-11-01T00:00:00.000Z',
        updated_at: '2026-11-01T00:00:00.000Z',
      },
    ],
  },
);

const Entitlement = Type.Object({
  feature: Type.String(),
  kind: Kind,
  has_access: Type.Boolean(),
  value: Type.Unknown({ description: "config: the value in force (the override's, else the plan's); else null" }),
  source: Type.Union([Type.Literal('plan'), Type.Literal('override'), Type.Null()], {
    description: 'What decides: an override in force, else the plan, else nothing (null: no access)',
  }),
  expires_at: Type.Union([Timestamp, Type.Null()], { description: 'When the override that decides ends' }),
});

const EntitlementCheckSchema = Type.Object({
  ...Entitlement.properties,
  reason: Type.Union(
    [
      Type.Literal('entitled'),
      Type.Literal('not_entitled'),
      Type.Literal('insufficient_balance'),
      Type.Literal('spend_limit_reached'),
    ],
    { description: 'Why has_access is what it is' },
  ),
  balance: Type.Optional(
    Type.Object(
      { denomination: Type.String(), available: Type.Integer(), available_after: Type.Integer() },
      { description: 'metered, with a price: the balance the usage draws from, now and after it' },
    ),
  ),
});

const DataFeature = Type.Object({ data: Type.Ref('Feature') });

export const putFeatureSchema = {
  operationId: 'putFeature',
  tags: ['features'],
  summary: 'Create or change a feature',
  description:
    'Creates the feature, or changes its name (and a metered one’s event_type). Changing the `kind` of an ' +
    'existing feature: 409 `feature_kind_cannot_change`. A metered feature needs `event_type`; no other takes one.',
  security: companyAuth,
  params: FeatureParams,
  body: Type.Object(
    {
      kind: Type.String({ maxLength: 64, description: '`boolean`, `config` or `metered`' }),
      name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
      event_type: Type.Optional(Nullable(Text('metered: the event type it meters (required)'))),
    },
    { additionalProperties: false, examples: [{ kind: 'metered', name: 'GPT-4', event_type: 'gpt4_tokens' }] },
  ),
  response: { 200: DataFeature, ...errorResponses(409) },
};

export const listFeaturesSchema = {
  operationId: 'listFeatures',
  tags: ['features'],
  summary: "List the company's features",
  description: 'By key; the cursor is a key of this list.',
  security: companyAuth,
  querystring: PageQuery,
  response: { 200: PageOf(Type.Ref('Feature')), ...errorResponses() },
};

export const getFeatureSchema = {
  operationId: 'getFeature',
  tags: ['features'],
  summary: 'Get a feature',
  description: 'An unknown key (or another company’s): 404 with `param: "feature"`.',
  security: companyAuth,
  params: FeatureParams,
  response: { 200: DataFeature, ...errorResponses(404) },
};

export const deleteFeatureSchema = {
  operationId: 'deleteFeature',
  tags: ['features'],
  summary: 'Delete a feature',
  description: 'While a plan or an override names it: 409 `feature_in_use`.',
  security: companyAuth,
  params: FeatureParams,
  response: {
    200: Type.Object({ features_deleted: Type.String({ description: 'The key of the feature deleted' }) }),
    ...errorResponses(404, 409),
  },
};

export const setOverrideSchema = {
  operationId: 'setFeatureOverride',
  tags: ['features'],
  summary: 'Override a feature for one account',
  description:
    '`enabled: false` takes a plan’s feature away; `enabled: true` grants it (a config feature with `value`, ' +
    'else the plan’s). Until `expires_at` (after now; absent: until removed): a read at or after it sees the ' +
    "plan's answer, and an `entitlements_change` `{account_id, feature}` is sent then, as on every set and removal.",
  security: companyAuth,
  params: AccountFeatureParams,
  body: Type.Object(
    {
      enabled: Type.Boolean(),
      value: Type.Optional(Type.Unknown({ description: 'config features only: a JSON value of at most 4 KB' })),
      expires_at: Type.Optional(Nullable(Instant('when the override ends; after now'))),
    },
    { additionalProperties: false, examples: [{ enabled: true, expires_at: '2026-12-01T00:00:00Z' }] },
  ),
  response: { 200: Type.Object({ data: Entitlement }), ...errorResponses(404) },
};

export const removeOverrideSchema = {
  operationId: 'removeFeatureOverride',
  tags: ['features'],
  summary: "Remove an account's override of a feature",
  description: 'The plan decides again (the answer is the entitlement now). No override: 404.',
  security: companyAuth,
  params: AccountFeatureParams,
  response: { 200: Type.Object({ data: Entitlement }), ...errorResponses(404) },
};

export const listEntitlementsSchema = {
  operationId: 'listEntitlements',
  tags: ['features'],
  summary: "An account's entitlements",
  description:
    'Every feature of the company, as the account is entitled to it now, by key. A metered feature’s ' +
    '`has_access` here is the entitlement alone; its check (`GET …/entitlements/{key}`) also asks the balance.',
  security: companyAuth,
  params: AccountParams,
  response: { 200: Type.Object({ data: Type.Array(Entitlement) }), ...errorResponses(404) },
};

export const checkEntitlementSchema = {
  operationId: 'checkEntitlement',
  tags: ['features'],
  summary: 'May the account use a feature now?',
  description:
    'Exact at once after any change, on every process (no cache). A metered feature needs the entitlement and ' +
    'the pre-flight check of `[{type: event_type, quantity}]` allowed (`reason` `insufficient_balance` or ' +
    '`spend_limit_reached` otherwise) and answers `balance` (none when no price costs its event type: its events ' +
    'then need a cost_override). An unknown account: 404 `param: "account_id"`; an ' +
    'unknown feature: 404 `param: "feature"`.',
  security: companyAuth,
  params: AccountFeatureParams,
  querystring: Type.Object(
    {
      quantity: Type.Optional(
        Type.Number({ minimum: 0, description: 'metered: the usage to check (default 1), a number ≥ 0' }),
      ),
    },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ data: EntitlementCheckSchema }), ...errorResponses(404) },
};

export function presentFeature(f: FeatureRow) {
  return {
    key: f.key,
    kind: f.kind,
    name: f.name,
    event_type: f.eventType,
    created_at: toIso(f.createdAtMs),
    updated_at: toIso(f.updatedAtMs),
  };
}

export function presentEntitlement(e: EntitlementView) {
  return {
    feature: e.feature.key,
    kind: e.feature.kind,
    has_access: e.hasAccess,
    value: e.value,
    source: e.source,
    expires_at: e.expiresAtMs === null ? null : toIso(e.expiresAtMs),
  };
}

export function presentEntitlementCheck(e: EntitlementCheck) {
  return {
    ...presentEntitlement(e),
    reason: e.reason,
    ...(e.balance === null
      ? {}
      : {
          balance: {
            denomination: e.balance.denomination,
            available: e.balance.available,
            available_after: e.balance.availableAfter,
          },
        }),
  };
}
