// Guarantees: the benches' features, plans and overrides are what they say — the growth catalogue's tiers
// and overrides, the entitlements-1 checks (every account asked every key, half of them the metered
// feature's pre-flight check) — and the accounts the growth seeder puts on plans and gives overrides through
// the engine's seam are entitled, as the real HTTP API answers, to exactly what their plan and overrides say,
// on both databases. (Figures are the bench's business, not the tests'.)
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createTenant } from '../lib/api.js';
import {
  createFeatures,
  createPlans,
  growthCatalogue,
  growthOverrides,
  growthPlanOf,
  SCENARIO_CHECK_KEYS,
  SCENARIO_FEATURES,
  SCENARIO_PLAN,
  scenarioChecks,
  scenarioOverrides,
} from '../lib/entitlements.js';
import { loadConfig, newSecretKeyText, openStore, startServer, type Store } from '../lib/engine.js';
import { Seeder } from '../lib/growth-seed.js';
import { EVENT_TYPE } from '../lib/options.js';
import { scatter } from '../lib/scatter.js';

const BENCH_TEST_KEY = newSecretKeyText();
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

test('growth catalogue: kinds, tiers, the metered feature on the events type, overrides on distinct keys', () => {
  const c = growthCatalogue(20, 5);
  const kinds = (k: string) => c.features.filter((f) => f.kind === k).length;
  assert.deepEqual([kinds('boolean'), kinds('config'), kinds('metered')], [14, 4, 2]);
  assert.equal(c.features.filter((f) => f.eventType === EVENT_TYPE).length, 1, 'one metered feature meters ingest');
  assert.equal(new Set(c.features.map((f) => f.key)).size, 20);
  assert.deepEqual(
    c.plans.map((p) => p.features.length),
    [4, 8, 12, 16, 20],
  );
  for (const [p, plan] of c.plans.entries())
    for (const e of plan.features) {
      const kind = c.features.find((f) => f.key === e.feature)?.kind;
      assert.equal(e.value === undefined, kind !== 'config', `plan ${p}: a value for config features only`);
    }
  let withTwo = 0;
  for (let k = 0; k < 1_000; k++) {
    const overrides = growthOverrides(k, 10, c);
    assert.equal(overrides.length > 0, k % 10 === 0);
    assert.equal(new Set(overrides.map((o) => o.feature)).size, overrides.length, 'one override per feature');
    const listed = new Set(c.plans[growthPlanOf(k, 5)]?.features.map((e) => e.feature));
    const first = overrides[0];
    if (first !== undefined) assert.equal(first.enabled, !listed.has(first.feature), 'takes away, or gives');
    if (overrides.length === 2) {
      withTwo++;
      assert.equal(overrides[1]?.expiresInDays, 30);
    }
  }
  assert.equal(withTwo, 20);
  assert.deepEqual(growthOverrides(0, 0, c), []);
});

test('entitlements-1: the checks ask every account about every key, half of them metered', () => {
  const accounts = Array.from({ length: 100 }, (_, i) => `a_${i}`);
  const checks = scenarioChecks(accounts, scatter(accounts.length));
  assert.equal(checks.length, 600);
  const pairs = new Set<string>();
  for (const c of checks) {
    const m = /^\/v1\/accounts\/(a_\d+)\/entitlements\/([a-z_]+)(\?quantity=(\d))?$/.exec(c.path);
    assert.ok(m, c.path);
    pairs.add(`${m[1]} ${m[2]}`);
    assert.equal(c.expectFeature, m[2]);
    const metered = m[2] === 'calls';
    assert.equal(c.kind, metered ? 'metered' : 'boolean');
    assert.equal(c.expectBalance === true, metered);
    assert.equal(m[3] !== undefined, metered, 'a quantity on the metered checks only');
  }
  assert.equal(pairs.size, 100 * new Set(SCENARIO_CHECK_KEYS).size, 'every account asked every key');
  assert.equal(checks.filter((c) => c.kind === 'metered').length, 300);
  const alternating = checks
    .slice(0, 99)
    .every((c, i) => (c.kind === 'metered') !== (checks[i + 1]?.kind === 'metered'));
  assert.ok(alternating, 'within a pass, a boolean check and a metered one in turn');
  const keys = new Set(SCENARIO_FEATURES.map((f) => f.key));
  for (const e of SCENARIO_PLAN.features) assert.ok(keys.has(e.feature));
  for (let i = 0; i < 100; i++) for (const o of scenarioOverrides(i)) assert.ok(keys.has(o.feature));
  assert.equal(
    Array.from({ length: 100 }, (_, i) => scenarioOverrides(i).length).reduce((a, b) => a + b, 0),
    25 + 20 + 10 + 5,
  );
});

async function freshStore(
  dialect: 'sqlite' | 'postgres',
): Promise<{ store: Store; url: string; drop(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'growth-entitlements-test-'));
    const url = `sqlite:${join(dir, 'entitlements.sqlite')}`;
    return { store: await openStore(url), url, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const schema = `bench_ent_${randomBytes(6).toString('hex')}`;
  return {
    store: await openStore(PG_URL, { pgSchema: schema }),
    url: PG_URL,
    drop: async () => {
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      try {
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await admin.end();
      }
    },
  };
}

interface Entitlement {
  feature: string;
  has_access: boolean;
  source: 'plan' | 'override' | null;
  value: unknown;
}

for (const dialect of ['sqlite', 'postgres'] as const)
  test(`seeded plans and overrides (${dialect}): the API answers what plan and overrides say`, async () => {
    const { store, url: databaseUrl, drop } = await freshStore(dialect);
    const server = await startServer(
      loadConfig({ ...process.env, DATABASE_URL: databaseUrl, PORT: '0', BILLING_SECRET_KEY: BENCH_TEST_KEY }),
      { store },
    );
    try {
      const tenant = await createTenant(server.url);
      const catalogue = growthCatalogue(10, 3);
      await createFeatures(tenant, catalogue.features, 'override');
      const planIds = await createPlans(tenant, catalogue.plans);
      const seeder = new Seeder(tenant.companyId, 7, 0, 1, () => undefined);
      seeder.entitlements = { planIds, catalogue, overrideEvery: 2 };
      await seeder.seedAccounts(store, 30, 'a');
      const accounts = [seeder.bigAccountId as string, ...seeder.population()];
      let overrides = 0;
      for (const [k, accountId] of accounts.entries()) {
        const own = growthOverrides(k, 2, catalogue);
        overrides += own.length;
        const plan = catalogue.plans[growthPlanOf(k, planIds.length)];
        const res = await fetch(`${server.url}/v1/accounts/${encodeURIComponent(accountId)}/entitlements`, {
          headers: { authorization: tenant.authorization },
        });
        const body = (await res.json()) as { data: Entitlement[] };
        assert.equal(res.status, 200, JSON.stringify(body));
        assert.equal(body.data.length, catalogue.features.length);
        for (const e of body.data) {
          const o = own.find((x) => x.feature === e.feature);
          const entry = plan?.features.find((x) => x.feature === e.feature);
          const expected = o !== undefined ? o.enabled : entry !== undefined;
          const source = o !== undefined ? 'override' : entry !== undefined ? 'plan' : null;
          assert.equal(e.has_access, expected, `account ${k}, ${e.feature}`);
          assert.equal(e.source, source, `account ${k}, ${e.feature}`);
          if (expected && catalogue.features.find((f) => f.key === e.feature)?.kind === 'config')
            assert.deepEqual(e.value, o?.value ?? entry?.value, `account ${k}, ${e.feature}: the value in force`);
        }
      }
      assert.equal(seeder.seededOverrides, overrides);
      // The metered feature's check is the pre-flight check against the account's funded balance.
      const metered = catalogue.features.find((f) => f.eventType === EVENT_TYPE);
      assert.ok(metered);
      const res = await fetch(
        `${server.url}/v1/accounts/${encodeURIComponent(accounts[2] as string)}/entitlements/${metered.key}?quantity=3`,
        { headers: { authorization: tenant.authorization } },
      );
      const check = (await res.json()) as { data: { balance?: { available: number; available_after: number } } };
      assert.equal(res.status, 200, JSON.stringify(check));
      assert.equal((check.data.balance?.available ?? 0) - (check.data.balance?.available_after ?? 0), 3);
      assert.deepEqual(await store.read((tx) => tx.transactions.auditLedger()), []);
    } finally {
      await server.close();
      await drop();
    }
  });
