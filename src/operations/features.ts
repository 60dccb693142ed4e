/**
 * Features and entitlements (contract "Features and entitlements"): a company's features, the features of its
 * plans, each account's overrides, and what an account is entitled to now. The rules are domain/entitlements.ts;
 * an account's plan entries and overrides are read in one statement, and a metered feature's check is the
 * pre-flight check of its usage (`checkGroup`, the ledger's view) in the same read. Every change of what an
 * account or a plan entitles writes its `entitlements_change` notification in its transaction.
 */
import {
  type Entitlement,
  entitlementOf,
  FEATURES_PER_COMPANY_MAX,
  type FeatureInput,
  type FeatureOverride,
  featureRuleOf,
  featureValueOf,
  type PlanFeature,
} from '../domain/entitlements.js';
import { type IngestRequest, normalizeEvent } from '../domain/events.js';
import { fail, failure, type Outcome, OutcomeError } from '../domain/outcome.js';
import { parseRfc3339 } from '../domain/time.js';
import type { Ledger } from '../ledger/ledger.js';
import type {
  EntitlementRows,
  FeatureOverrideRow,
  FeatureRow,
  Page,
  PageResult,
  PlanFeatureRow,
  PlanRow,
  ReadTx,
  Tx,
} from '../store/types.js';
import { AccountOwners } from './account-owners.js';
import type { Command, Deps } from './deps.js';
import { checkGroup } from './events.js';
import { ownedAccount, unknownCursor } from './lookups.js';
import { notifyCompany } from './notifications.js';

// ---------------------------------------------------------------------------------------------
// Features

function noFeature(key: string): never {
  fail('not_found', `no such feature: ${key}`, 'feature');
}

/** Creates the feature, or changes its name (and a metered one's event type); its kind never changes (409). */
export async function putFeature(
  deps: Deps,
  companyId: string,
  key: string,
  input: FeatureInput,
): Promise<Command<FeatureRow>> {
  const rule = featureRuleOf(key, input);
  if (!rule.ok) fail(rule.reason, rule.message, rule.param);
  return async (tx) => {
    const nowMs = deps.clock.now();
    const existing = await tx.features.findFeature(companyId, key);
    if (existing !== undefined && existing.kind !== rule.value.kind)
      fail('feature_kind_cannot_change', `feature "${key}" is ${existing.kind}; its kind cannot change`, 'kind');
    if (existing === undefined && (await tx.features.allFeatures(companyId)).length >= FEATURES_PER_COMPANY_MAX)
      fail('too_many_features', `a company has at most ${FEATURES_PER_COMPANY_MAX} features`, 'feature');
    const row: FeatureRow = {
      companyId,
      key,
      kind: rule.value.kind,
      name: input.name ?? null,
      eventType: rule.value.eventType,
      createdAtMs: existing?.createdAtMs ?? nowMs,
      updatedAtMs: nowMs,
    };
    await tx.features.putFeature(row);
    return row;
  };
}

export async function getFeature(deps: Deps, companyId: string, key: string): Promise<FeatureRow> {
  return (await deps.store.read((tx) => tx.features.findFeature(companyId, key))) ?? noFeature(key);
}

export async function listFeatures(deps: Deps, companyId: string, page: Page): Promise<PageResult<FeatureRow>> {
  return (await deps.store.read((tx) => tx.features.listFeatures(companyId, page))) ?? unknownCursor();
}

/** Deletes a feature no plan and no override names (else 409). */
export async function deleteFeature(companyId: string, key: string): Promise<Command<string>> {
  return async (tx) => {
    if ((await tx.features.findFeature(companyId, key)) === undefined) noFeature(key);
    if (await tx.features.featureInUse(companyId, key))
      fail('feature_in_use', `feature "${key}" is named by a plan or an override; remove it there first`, 'feature');
    await tx.features.deleteFeature(companyId, key);
    return key;
  };
}

// ---------------------------------------------------------------------------------------------
// Plans' features

/** A plan's list of features as given, checked against the company's features (400 naming the entry). */
export async function planFeatureRows(
  tx: ReadTx,
  companyId: string,
  input: readonly { feature: string; value?: unknown }[],
  param = 'features',
): Promise<PlanFeatureRow[]> {
  const out: PlanFeatureRow[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < input.length; i++) {
    const { feature, value } = input[i]!;
    const at = `${param}[${i}]`;
    if (seen.has(feature)) fail('feature_listed_twice', `feature "${feature}" is listed twice`, `${at}.feature`);
    seen.add(feature);
    const f = await tx.features.findFeature(companyId, feature);
    if (f === undefined) fail('unknown_feature', `no such feature: ${feature}`, `${at}.feature`);
    const v = featureValueOf(f.kind, value, `${at}.value`);
    if (!v.ok) throw new OutcomeError(v);
    out.push({ feature, value: v.value });
  }
  return out;
}

/**
 * Replaces a plan's features (the plan locked): one write for every account on it. One `entitlements_change`
 * `{plan_id, feature}` per feature whose presence or value the new list changes.
 */
export async function replacePlanFeatures(
  deps: Deps,
  companyId: string,
  planId: string,
  input: readonly { feature: string; value?: unknown }[],
): Promise<Command<PlanRow>> {
  return async (tx) => {
    const plan = await tx.plans.lockPlan(companyId, planId);
    if (plan === undefined) fail('not_found', `no such plan: ${planId}`, 'plan_id');
    const features = await planFeatureRows(tx, companyId, input);
    const before = new Map(plan.features.map((f) => [f.feature, f.value]));
    const after = new Map(features.map((f) => [f.feature, f.value]));
    const changed = [...new Set([...before.keys(), ...after.keys()])].filter(
      (k) => before.has(k) !== after.has(k) || before.get(k) !== after.get(k),
    );
    await tx.plans.replacePlanFeatures(plan, features);
    const nowMs = deps.clock.now();
    for (const feature of changed)
      await notifyCompany(tx, companyId, 'entitlements_change', nowMs, { plan_id: planId, feature });
    return { ...plan, features };
  };
}

// ---------------------------------------------------------------------------------------------
// Entitlements

/** What an account is entitled to of one feature now, with the feature. */
export interface EntitlementView extends Entitlement {
  feature: FeatureRow;
}

/** The plan entry and the override of one feature among an account's rows. */
function entitlementIn(f: FeatureRow, rows: EntitlementRows, nowMs: number): Entitlement {
  const p = rows.plan.find((x) => x.feature === f.key);
  const o = rows.overrides.find((x) => x.feature === f.key);
  const plan: PlanFeature | undefined = p && {
    feature: p.feature,
    value: p.value === null ? null : JSON.parse(p.value),
  };
  const override: FeatureOverride | undefined = o && {
    feature: o.feature,
    enabled: o.enabled,
    value: o.value === null ? null : JSON.parse(o.value),
    expiresAtMs: o.expiresAtMs,
  };
  return entitlementOf(f, plan, override, nowMs);
}

/** Every feature of the company, as the account is entitled to it now (by key). */
export async function listEntitlements(deps: Deps, companyId: string, accountId: string): Promise<EntitlementView[]> {
  const nowMs = deps.clock.now();
  return deps.store.read(async (tx) => {
    await ownedAccount(tx, companyId, accountId);
    const [features, rows] = await Promise.all([
      tx.features.allFeatures(companyId),
      tx.features.entitlementRows(accountId),
    ]);
    return features.map((feature) => ({ feature, ...entitlementIn(feature, rows, nowMs) }));
  });
}

export type EntitlementReason = 'entitled' | 'not_entitled' | 'insufficient_balance' | 'spend_limit_reached';

/** The answer of one feature's check: the entitlement, why, and for a metered feature the balance it draws from. */
export interface EntitlementCheck extends EntitlementView {
  reason: EntitlementReason;
  balance: { denomination: string; available: number; availableAfter: number } | null;
}

/** One check of a group read of entitlement checks (`GET /v1/accounts/{id}/entitlements/{key}?quantity=`). */
export interface EntitlementCheckRequest {
  companyId: string;
  accountId: string;
  key: string;
  quantity: number;
}

/** How the server answers entitlement checks: several in one read (src/ingest/group-commits.ts). */
export interface EntitlementChecks {
  checkEntitlement(req: EntitlementCheckRequest): Promise<Outcome<EntitlementCheck>>;
}

/**
 * May each account use the feature now? Entitled (its plan or an override), and for a metered feature the
 * pre-flight check of `quantity` units of its event type allowed (checkGroup, the ledger's view, in this read).
 * The checks of a group cost the same statements as one: the accounts' owners (none once remembered), the
 * features, the plan entries and overrides of those accounts and features (one union), these three at once, then
 * one `checkGroup` for the metered ones. An unknown account is 404 `account_id`; an unknown feature of a known
 * account, 404 `feature`.
 */
export async function checkEntitlementGroup(
  ledger: Ledger,
  usage: Pick<Deps['usage'], 'eventMaxAgeMs'>,
  tx: ReadTx,
  nowMs: number,
  requests: readonly EntitlementCheckRequest[],
  owners: AccountOwners = new AccountOwners(),
): Promise<Outcome<EntitlementCheck>[]> {
  const unique = <T>(xs: T[]) => [...new Set(xs)];
  const accountIds = unique(requests.map((r) => r.accountId));
  const companies = unique(requests.map((r) => r.companyId));
  // Three statements at once (on PostgreSQL, three connections of the pool: one round trip's wait). The plan
  // entries and overrides are read for every account asked; those of an account the company does not own are
  // never looked at.
  const [ownersOf, featureRows, rowsOf] = await Promise.all([
    owners.of(tx, accountIds),
    Promise.all(
      companies.map((c) =>
        tx.features.findFeatures(c, unique(requests.filter((r) => r.companyId === c).map((r) => r.key))),
      ),
    ),
    tx.features.entitlementRowsOfAccounts(accountIds, unique(requests.map((r) => r.key))),
  ]);
  const features = new Map<string, FeatureRow>();
  companies.forEach((c, i) => {
    for (const f of featureRows[i]!) features.set(`${c}\u0000${f.key}`, f);
  });
  const featureOf = (r: EntitlementCheckRequest) => features.get(`${r.companyId}\u0000${r.key}`);
  const out: Outcome<EntitlementCheck>[] = [];
  // The metered checks, each the pre-flight check of its usage: one checkGroup for all of them.
  const metered: { at: number; ent: Entitlement; usage: IngestRequest }[] = [];
  for (const r of requests) {
    const feature = featureOf(r);
    if (ownersOf.get(r.accountId) !== r.companyId) {
      out.push(failure('not_found', `no such account: ${r.accountId}`, 'account_id'));
      continue;
    }
    if (feature === undefined) {
      out.push(failure('not_found', `no such feature: ${r.key}`, 'feature'));
      continue;
    }
    const ent = entitlementIn(feature, rowsOf.get(r.accountId) ?? { plan: [], overrides: [] }, nowMs);
    out.push({
      ok: true,
      value: { feature, ...ent, reason: ent.hasAccess ? 'entitled' : 'not_entitled', balance: null },
    });
    if (feature.kind !== 'metered') continue;
    const event = normalizeEvent({ type: feature.eventType!, quantity: r.quantity }, 0, {
      nowMs,
      maxAgeMs: usage.eventMaxAgeMs,
    });
    if (!event.ok) {
      out[out.length - 1] = { ...event, param: 'quantity' };
      continue;
    }
    const check = { companyId: r.companyId, accountId: r.accountId, events: [event.value], gate: false };
    metered.push({ at: out.length - 1, ent, usage: { ...check, eventIds: ['ev_entitlement_check'] } });
  }
  if (metered.length === 0) return out;
  const checked = await checkGroup(
    ledger,
    tx,
    nowMs,
    metered.map((m) => m.usage),
    owners,
  );
  metered.forEach(({ at, ent }, i) => {
    const answer = checked[i]!;
    const view = (out[at] as { ok: true; value: EntitlementCheck }).value;
    if (!answer.ok) {
      // Not entitled: that is the answer, whatever the usage would do. Entitled to a type no price costs (its events
      // need a cost_override): nothing to ask a balance.
      if (ent.hasAccess && answer.reason !== 'no_price_for_event_type') out[at] = answer;
      return;
    }
    const b = answer.value.balances[0];
    view.balance = b === undefined ? null : b;
    const reason = answer.value.reason;
    if (ent.hasAccess && reason !== null) out[at] = { ok: true, value: { ...view, hasAccess: false, reason } };
  });
  return out;
}

/** What `PUT /v1/accounts/{id}/features/{key}` takes. */
export interface OverrideInput {
  enabled: boolean;
  value?: unknown;
  expires_at?: string | null;
}

/** Sets the account's override of a feature (until `expires_at`, if given: after now) and notifies it. */
export async function setOverride(
  deps: Deps,
  companyId: string,
  accountId: string,
  key: string,
  input: OverrideInput,
): Promise<Command<EntitlementView>> {
  let expiresAtMs: number | null = null;
  if (input.expires_at !== undefined && input.expires_at !== null) {
    const ms = parseRfc3339(input.expires_at);
    if (ms === null) fail('invalid_timestamp', 'expires_at must be an RFC 3339 date-time', 'expires_at');
    expiresAtMs = ms;
  }
  return async (tx) => {
    await ownedAccount(tx, companyId, accountId);
    const nowMs = deps.clock.now();
    const feature = (await tx.features.findFeature(companyId, key)) ?? noFeature(key);
    const value = featureValueOf(feature.kind, input.value, 'value');
    if (!value.ok) throw new OutcomeError(value);
    if (expiresAtMs !== null && expiresAtMs <= nowMs)
      fail('override_expires_in_the_past', 'expires_at must be after now', 'expires_at');
    const row: FeatureOverrideRow = {
      accountId,
      companyId,
      feature: key,
      enabled: input.enabled,
      value: value.value,
      expiresAtMs,
      updatedAtMs: nowMs,
    };
    await tx.features.putOverride(row);
    await notifyCompany(tx, companyId, 'entitlements_change', nowMs, { account_id: accountId, feature: key });
    return { feature, ...entitlementIn(feature, await tx.features.entitlementRows(accountId, key), nowMs) };
  };
}

/** Removes the account's override of a feature (404 when it has none) and notifies it: the plan decides again. */
export async function removeOverride(
  deps: Deps,
  companyId: string,
  accountId: string,
  key: string,
): Promise<Command<EntitlementView>> {
  return async (tx) => {
    await ownedAccount(tx, companyId, accountId);
    const nowMs = deps.clock.now();
    const feature = (await tx.features.findFeature(companyId, key)) ?? noFeature(key);
    if ((await tx.features.deleteOverride(accountId, key)) === undefined)
      fail('not_found', `the account has no override of feature "${key}"`, 'feature');
    await notifyCompany(tx, companyId, 'entitlements_change', nowMs, { account_id: accountId, feature: key });
    return { feature, ...entitlementIn(feature, await tx.features.entitlementRows(accountId, key), nowMs) };
  };
}

/** Most overrides one run of the job ends; it loops until none is due. */
const END_BATCH_MAX = 200;

/**
 * The job: overrides whose `expires_at` has come are deleted, each with its `entitlements_change` in the same
 * transaction (a read already ignores them from that instant). Deleted by one statement that returns them: an
 * override two processes race for is ended, and notified, once.
 */
export async function endOverrides(tx: Tx, nowMs: number): Promise<number> {
  const ended = await tx.features.endOverrides(nowMs, END_BATCH_MAX);
  for (const o of ended)
    await notifyCompany(tx, o.companyId, 'entitlements_change', nowMs, { account_id: o.accountId, feature: o.feature });
  return ended.length;
}
