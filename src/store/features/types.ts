/**
 * Features and entitlements (contract "Features and entitlements"): a company's features, the features of its
 * plans (`plan_features`, read and written with the plan: plans/) and each account's overrides. An account's
 * plan entries and overrides are read in one statement (`entitlementRows`), whatever the number of features;
 * what they entitle it to at an instant is domain/entitlements.ts.
 */
import type { FeatureKind } from '../../domain/entitlements.js';
import type { Page, PageResult } from '../common.js';

export interface FeatureRow {
  companyId: string;
  key: string;
  kind: FeatureKind;
  name: string | null;
  /** metered: the event type it meters; else null. */
  eventType: string | null;
  createdAtMs: number;
  updatedAtMs: number;
}

/** A plan's entry for a feature: its value (config only) as JSON text, else null. */
export interface PlanFeatureRow {
  feature: string;
  value: string | null;
}

export interface FeatureOverrideRow {
  accountId: string;
  companyId: string;
  feature: string;
  enabled: boolean;
  /** config: the value it gives, as JSON text (null: the plan's). */
  value: string | null;
  expiresAtMs: number | null;
  updatedAtMs: number;
}

/** What entitles one account: its plan's entries and its overrides (expired ones included: the rules skip them). */
export interface EntitlementRows {
  plan: PlanFeatureRow[];
  overrides: FeatureOverrideRow[];
}

export interface FeaturesReadTx {
  findFeature(companyId: string, key: string): Promise<FeatureRow | undefined>;
  /** The company's features of these keys (those that exist; one statement). */
  findFeatures(companyId: string, keys: string[]): Promise<FeatureRow[]>;
  /** The company's features by key, paged by key. Undefined: unknown cursor. */
  listFeatures(companyId: string, page: Page): Promise<PageResult<FeatureRow> | undefined>;
  /** Every feature of the company, by key (at most FEATURES_PER_COMPANY_MAX). */
  allFeatures(companyId: string): Promise<FeatureRow[]>;
  /** The company's metered features of these event types. */
  findMeteredFeatures(companyId: string, types: string[]): Promise<FeatureRow[]>;
  /** One account's plan entries and overrides (of one feature, when given): one statement. */
  entitlementRows(accountId: string, feature?: string): Promise<EntitlementRows>;
  /** The plan entries and overrides of these features for these accounts, by account: one statement. */
  entitlementRowsOfAccounts(accountIds: string[], features: string[]): Promise<Map<string, EntitlementRows>>;
  /** Whether a plan or an override names the feature. */
  featureInUse(companyId: string, key: string): Promise<boolean>;
}

export interface FeaturesTx extends FeaturesReadTx {
  /** Inserts the feature, or changes its name and event type (its kind never changes: the caller checks). */
  putFeature(row: FeatureRow): Promise<void>;
  deleteFeature(companyId: string, key: string): Promise<boolean>;
  putOverride(row: FeatureOverrideRow): Promise<void>;
  /** Deletes the account's override of the feature; returns it (undefined: there was none). */
  deleteOverride(accountId: string, feature: string): Promise<FeatureOverrideRow | undefined>;
  /**
   * Deletes up to `limit` overrides ended by `nowMs` and returns them (PostgreSQL: skipping rows another
   * transaction holds), so that their end is notified once.
   */
  endOverrides(nowMs: number, limit: number): Promise<FeatureOverrideRow[]>;
}
