/**
 * Features and entitlements (contract "Features and entitlements"): what a feature is, and what an account is
 * entitled to at an instant from its plan's features and its own overrides. Pure: the store reads a plan's entries
 * and an account's overrides in one lookup; these rules decide, so that an override ends exactly at its
 * `expires_at` with no job (a read at or after it sees the plan's answer).
 *
 * - `boolean`: on or off; `config`: a JSON value (≤ 4 KB) the plan or the override gives; `metered`: usage of an
 *   event type, paid from balances: entitled, and the pre-flight check of the usage allowed.
 * - An override in force wins: `enabled: false` takes a plan's feature away, `enabled: true` grants it (with its
 *   own `value`, else the plan's); else the plan's feature; else none.
 */
import { failure, type Outcome } from './outcome.js';

export const FEATURE_KINDS = ['boolean', 'config', 'metered'] as const;
export type FeatureKind = (typeof FEATURE_KINDS)[number];

/** Most features a company has (the entitlements list reads them all). */
export const FEATURES_PER_COMPANY_MAX = 500;

/** Largest `config` value, as JSON text (UTF-8 bytes). */
export const CONFIG_VALUE_MAX_BYTES = 4096;

/** A feature as the rules need it. */
export interface FeatureRule {
  key: string;
  kind: FeatureKind;
  eventType: string | null;
}

/** A plan's entry for a feature: present, with its value (config only; else null). */
export interface PlanFeature {
  feature: string;
  value: unknown;
}

/** An account's override of a feature. */
export interface FeatureOverride {
  feature: string;
  enabled: boolean;
  /** config only: the value it gives (null: the plan's). */
  value: unknown;
  expiresAtMs: number | null;
}

export type EntitlementSource = 'plan' | 'override' | null;

/** What an account is entitled to of one feature, at an instant. */
export interface Entitlement {
  hasAccess: boolean;
  value: unknown;
  source: EntitlementSource;
  /** The override's end, when an override decides (else null). */
  expiresAtMs: number | null;
}

/** Whether an override is in force at `nowMs` (it ends exactly at its `expires_at`). */
export function inForce(o: FeatureOverride, nowMs: number): boolean {
  return o.expiresAtMs === null || nowMs < o.expiresAtMs;
}

/** The account's entitlement to `feature` at `nowMs`, from its plan's entry and its override (either may be absent). */
export function entitlementOf(
  feature: FeatureRule,
  plan: PlanFeature | undefined,
  override: FeatureOverride | undefined,
  nowMs: number,
): Entitlement {
  const config = feature.kind === 'config';
  if (override !== undefined && inForce(override, nowMs)) {
    const value = config && override.enabled ? (override.value ?? plan?.value ?? null) : null;
    return { hasAccess: override.enabled, value, source: 'override', expiresAtMs: override.expiresAtMs };
  }
  if (plan !== undefined)
    return { hasAccess: true, value: config ? plan.value : null, source: 'plan', expiresAtMs: null };
  return { hasAccess: false, value: null, source: null, expiresAtMs: null };
}

/** The JSON text of a config value, or the reason it is refused. */
export function configValueOf(value: unknown, param: string): Outcome<string> {
  const text = JSON.stringify(value);
  if (text === undefined) return failure('config_value_must_be_json', 'the value must be a JSON value', param);
  if (Buffer.byteLength(text, 'utf8') > CONFIG_VALUE_MAX_BYTES)
    return failure(
      'config_value_too_large',
      `a config value is at most ${CONFIG_VALUE_MAX_BYTES} bytes of JSON`,
      param,
    );
  return { ok: true, value: text };
}

/**
 * A value given for `feature` (on a plan's entry or an override): only a `config` feature takes one; a value on
 * any other is refused (400 naming `param`). Undefined and null: none.
 */
export function featureValueOf(kind: FeatureKind, value: unknown, param: string): Outcome<string | null> {
  if (value === undefined || value === null) return { ok: true, value: null };
  if (kind !== 'config')
    return failure(
      'value_only_for_config_features',
      `only a config feature takes a value (this one is ${kind})`,
      param,
    );
  return configValueOf(value, param);
}

/** What `PUT /v1/features/{key}` takes, as the schema has shaped it. */
export interface FeatureInput {
  kind: string;
  name?: string | null;
  event_type?: string | null;
}

/** A feature's kind and event type, or the field that makes it invalid. */
export function featureRuleOf(key: string, input: FeatureInput): Outcome<FeatureRule> {
  if (!(FEATURE_KINDS as readonly string[]).includes(input.kind))
    return failure('unknown_feature_kind', `kind must be one of ${FEATURE_KINDS.join(', ')}`, 'kind');
  const kind = input.kind as FeatureKind;
  const eventType = input.event_type ?? null;
  if (kind === 'metered' && eventType === null)
    return failure(
      'metered_feature_needs_event_type',
      'a metered feature needs the event_type it meters',
      'event_type',
    );
  if (kind !== 'metered' && eventType !== null)
    return failure('event_type_only_for_metered_features', 'only a metered feature has an event_type', 'event_type');
  return { ok: true, value: { key, kind, eventType } };
}
