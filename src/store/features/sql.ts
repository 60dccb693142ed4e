/** Features, plan entries and overrides: the row mappers and the SQL both databases share (features/types.ts). */
import { FEATURES_PER_COMPANY_MAX, type FeatureKind } from '../../domain/entitlements.js';
import type { Page } from '../common.js';
import { SqlCore, num, numOrNull, strOrNull, type SqlRow } from '../sql-core.js';
import type { EntitlementRows, FeatureOverrideRow, FeatureRow, FeaturesTx } from './types.js';

const toFeature = (r: SqlRow): FeatureRow => ({
  companyId: String(r.company_id),
  key: String(r.feature_key),
  kind: String(r.kind) as FeatureKind,
  name: strOrNull(r.name),
  eventType: strOrNull(r.event_type),
  createdAtMs: num(r.created_at),
  updatedAtMs: num(r.updated_at),
});

const toOverride = (r: SqlRow): FeatureOverrideRow => ({
  accountId: String(r.account_id),
  companyId: String(r.company_id),
  feature: String(r.feature_key),
  enabled: Boolean(r.enabled),
  value: strOrNull(r.value),
  expiresAtMs: numOrNull(r.expires_at),
  updatedAtMs: num(r.updated_at),
});

/** A row of the entitlements union into its account's rows. */
function addRow(into: EntitlementRows, r: SqlRow): void {
  if (r.source === 'plan') into.plan.push({ feature: String(r.feature_key), value: strOrNull(r.value) });
  else into.overrides.push(toOverride(r));
}

/** The plan entries (through the account's plan) and the overrides of accounts, as one union. */
const ENTITLEMENT_UNION = (planWhere: string, overrideWhere: string) =>
  "SELECT 'plan' AS source, ap.account_id, ap.company_id, pf.feature_key, pf.value, NULL AS enabled, " +
  'NULL AS expires_at, 0 AS updated_at FROM account_plans ap JOIN plan_features pf ON pf.plan_id = ap.plan_id ' +
  `WHERE ${planWhere} UNION ALL SELECT 'override' AS source, account_id, company_id, feature_key, value, enabled, ` +
  `expires_at, updated_at FROM feature_overrides WHERE ${overrideWhere}`;

export class FeaturesSql extends SqlCore implements FeaturesTx {
  async findFeature(companyId: string, key: string) {
    const r = await this.one('SELECT * FROM features WHERE company_id = ? AND feature_key = ?', [companyId, key]);
    return r && toFeature(r);
  }
  async findFeatures(companyId: string, keys: string[]) {
    if (keys.length === 0) return [];
    const [inKeys, params] = this.inList('feature_key', keys);
    return (await this.db.all(`SELECT * FROM features WHERE company_id = ? AND ${inKeys}`, [companyId, ...params])).map(
      toFeature,
    );
  }
  async listFeatures(companyId: string, page: Page) {
    const params: unknown[] = [companyId];
    let after = '';
    if (page.startingAfter !== undefined) {
      if ((await this.findFeature(companyId, page.startingAfter)) === undefined) return undefined;
      after = ' AND feature_key > ?';
      params.push(page.startingAfter);
    }
    const rows = await this.db.all(`SELECT * FROM features WHERE company_id = ?${after} ORDER BY feature_key LIMIT ?`, [
      ...params,
      page.limit + 1,
    ]);
    return { rows: rows.slice(0, page.limit).map(toFeature), hasMore: rows.length > page.limit };
  }
  async allFeatures(companyId: string) {
    const rows = await this.db.all('SELECT * FROM features WHERE company_id = ? ORDER BY feature_key LIMIT ?', [
      companyId,
      FEATURES_PER_COMPANY_MAX,
    ]);
    return rows.map(toFeature);
  }
  async findMeteredFeatures(companyId: string, types: string[]) {
    if (types.length === 0) return [];
    const [inTypes, params] = this.inList('event_type', types);
    const rows = await this.db.all(`SELECT * FROM features WHERE company_id = ? AND ${inTypes}`, [
      companyId,
      ...params,
    ]);
    return rows.map(toFeature);
  }
  async entitlementRows(accountId: string, feature?: string) {
    const one = feature === undefined ? '' : ' AND feature_key = ?';
    const rows = await this.db.all(
      ENTITLEMENT_UNION(
        `ap.account_id = ?${feature === undefined ? '' : ' AND pf.feature_key = ?'}`,
        `account_id = ?${one}`,
      ),
      feature === undefined ? [accountId, accountId] : [accountId, feature, accountId, feature],
    );
    const out: EntitlementRows = { plan: [], overrides: [] };
    for (const r of rows) addRow(out, r);
    return out;
  }
  async entitlementRowsOfAccounts(accountIds: string[], features: string[]) {
    const out = new Map<string, EntitlementRows>();
    if (accountIds.length === 0 || features.length === 0) return out;
    const [planAccounts, p1] = this.inList('ap.account_id', accountIds);
    const [planFeatures, p2] = this.inList('pf.feature_key', features);
    const [accounts, p3] = this.inList('account_id', accountIds);
    const [keys, p4] = this.inList('feature_key', features);
    const rows = await this.db.all(
      ENTITLEMENT_UNION(`${planAccounts} AND ${planFeatures}`, `${accounts} AND ${keys}`),
      [...p1, ...p2, ...p3, ...p4],
    );
    for (const r of rows) {
      const id = String(r.account_id);
      let rows = out.get(id);
      if (rows === undefined) {
        rows = { plan: [], overrides: [] };
        out.set(id, rows);
      }
      addRow(rows, r);
    }
    return out;
  }
  async featureInUse(companyId: string, key: string) {
    const r = await this.one(
      'SELECT 1 AS x FROM plan_features WHERE company_id = ? AND feature_key = ? UNION ALL ' +
        'SELECT 1 FROM feature_overrides WHERE company_id = ? AND feature_key = ? LIMIT 1',
      [companyId, key, companyId, key],
    );
    return r !== undefined;
  }

  async putFeature(f: FeatureRow) {
    await this.db.run(
      'INSERT INTO features (company_id, feature_key, kind, name, event_type, created_at, updated_at) ' +
        'VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (company_id, feature_key) DO UPDATE SET name = excluded.name, ' +
        'event_type = excluded.event_type, updated_at = excluded.updated_at',
      [f.companyId, f.key, f.kind, f.name, f.eventType, f.createdAtMs, f.updatedAtMs],
    );
  }
  async deleteFeature(companyId: string, key: string) {
    return (await this.db.run('DELETE FROM features WHERE company_id = ? AND feature_key = ?', [companyId, key])) > 0;
  }
  async putOverride(o: FeatureOverrideRow) {
    await this.db.run(
      'INSERT INTO feature_overrides (account_id, feature_key, company_id, enabled, value, expires_at, updated_at) ' +
        'VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (account_id, feature_key) DO UPDATE SET ' +
        'enabled = excluded.enabled, value = excluded.value, expires_at = excluded.expires_at, ' +
        'updated_at = excluded.updated_at',
      [o.accountId, o.feature, o.companyId, this.bool(o.enabled), o.value, o.expiresAtMs, o.updatedAtMs],
    );
  }
  async deleteOverride(accountId: string, feature: string) {
    const rows = await this.db.all(
      'DELETE FROM feature_overrides WHERE account_id = ? AND feature_key = ? RETURNING *',
      [accountId, feature],
    );
    return rows[0] && toOverride(rows[0]);
  }
  async endOverrides(nowMs: number, limit: number) {
    const rows = await this.db.all(
      'DELETE FROM feature_overrides WHERE (account_id, feature_key) IN (SELECT account_id, feature_key ' +
        `FROM feature_overrides WHERE expires_at <= ? ORDER BY expires_at LIMIT ?${this.skipLocked()}) RETURNING *`,
      [nowMs, limit],
    );
    return rows.map(toOverride);
  }
}
