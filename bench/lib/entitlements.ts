/**
 * Features, plans and overrides the benches set up (contract "Features and entitlements"), and the
 * entitlement checks they send: the `entitlements-1` scenario's small catalogue (set up through the API,
 * on funded accounts created on its plan) and the growth bench's (20 features and 5 plans by default,
 * created through the API; its million accounts are put on the plans, and given their overrides, by the
 * seeder, through the engine's seam).
 *
 * A metered feature's check is the pre-flight check of its usage, which needs a price for its event type
 * (the bench's events carry a `cost_override`, which a price does not change): the setup sets a unit price
 * of 1 `DENOMINATION` unit for each metered feature's event type that has none.
 */
import { mapConcurrent, type Tenant } from './api.js';
import { benchPrice } from './bodies.js';
import type { PacedRequest } from './paced.js';
import { EVENT_TYPE, SETUP_CONCURRENCY, type Pricing } from './options.js';

export type FeatureKind = 'boolean' | 'config' | 'metered';

export interface BenchFeature {
  key: string;
  kind: FeatureKind;
  /** metered: the event type it meters. */
  eventType?: string;
}

/** A plan's entry for a feature (`value` for config features only). */
export interface PlanEntry {
  feature: string;
  value?: unknown;
}

export interface BenchPlan {
  name: string;
  features: readonly PlanEntry[];
}

/** `PUT /v1/accounts/{id}/features/{key}`, the body's fields. */
export interface BenchOverride {
  feature: string;
  enabled: boolean;
  value?: unknown;
  /** Days from now; none: until removed. */
  expiresInDays?: number;
}

/**
 * The plans' one balance entry (a plan needs one): an empty balance of its own denomination, so that the
 * accounts' `DENOMINATION` balances are funded as in every other scenario, and no plan charge (0 cents).
 */
export const PLAN_DENOMINATION = 'plan_units';
const DAY_MS = 86_400_000;

// ---------------------------------------------------------------------------------------------
// entitlements-1

/** The scenario's features: three boolean, one config, one metered on the events' type. */
export const SCENARIO_FEATURES: readonly BenchFeature[] = [
  { key: 'sso', kind: 'boolean' },
  { key: 'audit_log', kind: 'boolean' },
  { key: 'beta', kind: 'boolean' },
  { key: 'seats', kind: 'config' },
  { key: 'calls', kind: 'metered', eventType: EVENT_TYPE },
];

/** Its plan, which every funded account of the scenario is created on. */
export const SCENARIO_PLAN: BenchPlan = {
  name: 'Bench Pro',
  features: [{ feature: 'sso' }, { feature: 'seats', value: { max_seats: 5 } }, { feature: 'calls' }],
};

/**
 * The overrides of the scenario's account `index`: one in four is given `audit_log` (not on the plan), one in
 * five more seats, one in ten loses `sso`, one in twenty loses `calls` for a day.
 */
export function scenarioOverrides(index: number): BenchOverride[] {
  const out: BenchOverride[] = [];
  if (index % 4 === 0) out.push({ feature: 'audit_log', enabled: true });
  if (index % 5 === 0) out.push({ feature: 'seats', enabled: true, value: { max_seats: 50 } });
  if (index % 10 === 3) out.push({ feature: 'sso', enabled: false });
  if (index % 20 === 7) out.push({ feature: 'calls', enabled: false, expiresInDays: 1 });
  return out;
}

/** The checks' keys in turn: half metered (the pre-flight check of 1–5 units), half boolean. */
export const SCENARIO_CHECK_KEYS = ['sso', 'calls', 'audit_log', 'calls', 'beta', 'calls'] as const;
const METERED_QUANTITIES = 5;

export function entitlementPath(accountId: string, key: string, quantity?: number): string {
  const q = quantity === undefined ? '' : `?quantity=${quantity}`;
  return `/v1/accounts/${encodeURIComponent(accountId)}/entitlements/${encodeURIComponent(key)}${q}`;
}

/**
 * The cycle of checks the open-loop generator sends: six passes over the accounts (scattered by `pick`); in
 * pass m, account j is asked key SCENARIO_CHECK_KEYS[(j + m) mod 6], so that every account is asked every key
 * and consecutive checks alternate between a boolean and the metered feature; the metered quantity is m mod 5
 * + 1.
 */
export function scenarioChecks(
  accounts: readonly string[],
  pick: (i: number) => number,
  features: readonly BenchFeature[] = SCENARIO_FEATURES,
): PacedRequest[] {
  const kinds = new Map(features.map((f) => [f.key, f.kind]));
  const keys = SCENARIO_CHECK_KEYS.length;
  const n = accounts.length;
  return Array.from({ length: n * keys }, (_, i) => {
    const j = i % n;
    const pass = Math.floor(i / n);
    const key = SCENARIO_CHECK_KEYS[(j + pass) % keys] as string;
    const accountId = accounts[pick(j)] as string;
    const kind = kinds.get(key) ?? 'boolean';
    const metered = kind === 'metered';
    const quantity = metered ? 1 + (pass % METERED_QUANTITIES) : undefined;
    return {
      path: entitlementPath(accountId, key, quantity),
      kind,
      expectFeature: key,
      ...(metered ? { expectBalance: true } : {}),
    };
  });
}

// ---------------------------------------------------------------------------------------------
// The growth bench's catalogue

/** Features of the growth bench's company by default, and its plans. */
export const DEFAULT_GROWTH_FEATURES = 20;
export const DEFAULT_GROWTH_PLANS = 5;
/** Every n-th account gets an override (every 5n-th a second one, ending in 30 days); 0: none. */
export const DEFAULT_OVERRIDE_EVERY = 10;
/** A plan lists at most this many features (the API's limit), so a catalogue holds at most as many. */
export const MAX_GROWTH_FEATURES = 100;
export const MAX_GROWTH_PLANS = 50;
const SECOND_OVERRIDE_FACTOR = 5;
const SECOND_OVERRIDE_SHIFT = 7;
const SECOND_OVERRIDE_DAYS = 30;

/** Feature f of a catalogue of `count`: of every ten, six boolean, two config, one metered, one boolean. */
export function growthFeature(f: number): BenchFeature {
  const key = `feature.${String(f).padStart(3, '0')}`;
  const slot = f % 10;
  if (slot === 6 || slot === 7) return { key, kind: 'config' };
  if (slot === 8) return { key, kind: 'metered', eventType: f === 8 ? EVENT_TYPE : `${EVENT_TYPE}.${f}` };
  return { key, kind: 'boolean' };
}

export interface GrowthCatalogue {
  features: BenchFeature[];
  plans: BenchPlan[];
}

/**
 * `features` features and `plans` tiers: plan p lists the first ⌈features·(p + 1)/plans⌉ features (the
 * last every one), a config feature with the value `{limit: 10·(p + 1)}`.
 */
export function growthCatalogue(features: number, plans: number): GrowthCatalogue {
  const all = Array.from({ length: features }, (_, f) => growthFeature(f));
  return {
    features: all,
    plans: Array.from({ length: plans }, (_, p) => ({
      name: `Tier ${p + 1}`,
      features: all
        .slice(0, Math.ceil((features * (p + 1)) / plans))
        .map((f) => (f.kind === 'config' ? { feature: f.key, value: { limit: 10 * (p + 1) } } : { feature: f.key })),
    })),
  };
}

/** The plan (its index) account `index` is on: round robin. */
export function growthPlanOf(index: number, plans: number): number {
  return index % plans;
}

/**
 * The overrides of account `index` (`every` 0: none). Every `every`-th account: feature (index / every) mod
 * n, taken away when its plan lists it, else given (a config one with a value); every 5·`every`-th one more,
 * given until 30 days from now, on another feature.
 */
export function growthOverrides(index: number, every: number, catalogue: GrowthCatalogue): BenchOverride[] {
  const n = catalogue.features.length;
  if (every <= 0 || n === 0 || index % every !== 0) return [];
  const plan = catalogue.plans.length === 0 ? undefined : catalogue.plans[growthPlanOf(index, catalogue.plans.length)];
  const listed = new Set(plan?.features.map((e) => e.feature) ?? []);
  const given = (f: BenchFeature): BenchOverride =>
    f.kind === 'config'
      ? { feature: f.key, enabled: true, value: { limit: 1_000 } }
      : { feature: f.key, enabled: true };
  const first = catalogue.features[Math.floor(index / every) % n] as BenchFeature;
  const out = [listed.has(first.key) ? { feature: first.key, enabled: false } : given(first)];
  if (index % (every * SECOND_OVERRIDE_FACTOR) === 0) {
    const second = catalogue.features[(Math.floor(index / every) + SECOND_OVERRIDE_SHIFT) % n] as BenchFeature;
    if (second.key !== first.key) out.push({ ...given(second), expiresInDays: SECOND_OVERRIDE_DAYS });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Setup through the API

/** Creates the features, and a unit price for each metered feature's event type (`pricing` says EVENT_TYPE's). */
export async function createFeatures(
  tenant: Tenant,
  features: readonly BenchFeature[],
  pricing: Pricing,
): Promise<void> {
  for (const f of features)
    await tenant.api.call('PUT', `/v1/features/${encodeURIComponent(f.key)}`, {
      kind: f.kind,
      ...(f.eventType === undefined ? {} : { event_type: f.eventType }),
    });
  const types = new Set(features.flatMap((f) => (f.eventType === undefined ? [] : [f.eventType])));
  for (const type of types) {
    // EVENT_TYPE keeps the price `--pricing` gave it; with cost overrides it has none, and gets this one.
    if (type === EVENT_TYPE && pricing !== 'override') continue;
    await tenant.api.call('PUT', `/v1/prices/${encodeURIComponent(type)}`, benchPrice('unit'));
  }
}

/** Creates the plans (no charge; an empty PLAN_DENOMINATION balance); returns their ids in order. */
export async function createPlans(tenant: Tenant, plans: readonly BenchPlan[]): Promise<string[]> {
  const ids: string[] = [];
  for (const p of plans) {
    const made = await tenant.api.call<{ data: { plan_id: string } }>(
      'POST',
      `/v1/companies/${encodeURIComponent(tenant.companyId)}/plan`,
      {
        name: p.name,
        charge_amount: 0,
        balances: [{ amount: 0, denomination: PLAN_DENOMINATION, overage_charge_amount: 0 }],
        features: p.features,
      },
    );
    ids.push(made.data.plan_id);
  }
  return ids;
}

/** The body of `PUT /v1/accounts/{id}/features/{key}` for an override, `nowMs` being now. */
export function overrideBody(o: BenchOverride, nowMs: number): Record<string, unknown> {
  return {
    enabled: o.enabled,
    ...(o.value === undefined ? {} : { value: o.value }),
    ...(o.expiresInDays === undefined ? {} : { expires_at: new Date(nowMs + o.expiresInDays * DAY_MS).toISOString() }),
  };
}

/** Sets each account's overrides (`overridesOf(index)`) through the API; returns how many were set. */
export async function setOverrides(
  tenant: Tenant,
  accounts: readonly string[],
  overridesOf: (index: number) => readonly BenchOverride[],
): Promise<number> {
  const nowMs = Date.now();
  const counts = await mapConcurrent(accounts, SETUP_CONCURRENCY, async (accountId, index) => {
    const overrides = overridesOf(index);
    for (const o of overrides)
      await tenant.api.call(
        'PUT',
        `/v1/accounts/${encodeURIComponent(accountId)}/features/${encodeURIComponent(o.feature)}`,
        overrideBody(o, nowMs),
      );
    return overrides.length;
  });
  return counts.reduce((a, b) => a + b, 0);
}
