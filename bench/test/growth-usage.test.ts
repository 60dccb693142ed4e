// Guarantees: the growth seeder fills the usage rollups as the ingest path would, so that the
// usage the real HTTP API answers for a seeded store equals the sum over the seeded events it
// holds (by day and type for the company, by day for one account), and the server's own ingest
// afterwards adds to the same rows. (Figures are the bench's business, not the tests'.)
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createTenant } from '../lib/api.js';
import { loadConfig, newSecretKeyText, openStore, startServer, type EventRow, type Store } from '../lib/engine.js';
import { Seeder, USAGE_SPAN_DAYS } from '../lib/growth-seed.js';

/** PostgreSQL needs a key for the secrets at rest; any key of this test run does. */
const BENCH_TEST_KEY = newSecretKeyText();
import { DENOMINATION, EVENT_TYPE } from '../lib/options.js';

const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

interface UsageItem {
  window_start: string;
  type?: string;
  denomination?: string;
  account_id?: string;
  events: number;
  quantity: string;
  cost: number;
}

/** Every complete event of the company, read back through the store's event list. */
async function storedEvents(store: Store, companyId: string): Promise<EventRow[]> {
  const out: EventRow[] = [];
  let startingAfter: string | undefined;
  for (;;) {
    const page = await store.read((tx) => tx.events.listEvents(companyId, {}, { limit: 500, startingAfter }));
    assert.ok(page);
    out.push(...page.rows);
    if (!page.hasMore) return out.filter((e) => e.state === 'complete');
    startingAfter = page.rows[page.rows.length - 1]?.eventId;
  }
}

/** Sums by UTC day (and type, denomination), as `window=day` counts them. */
function byDay(events: EventRow[]): Map<string, { events: number; quantity: number; cost: number }> {
  const sums = new Map<string, { events: number; quantity: number; cost: number }>();
  for (const e of events) {
    const day = new Date(Math.floor(e.occurredAtMs / DAY_MS) * DAY_MS).toISOString();
    const key = `${day} ${e.type} ${e.denomination}`;
    const s = sums.get(key) ?? { events: 0, quantity: 0, cost: 0 };
    s.events += 1;
    s.quantity += e.quantity;
    s.cost += e.costAmount;
    sums.set(key, s);
  }
  return sums;
}

async function usage(baseUrl: string, authorization: string, path: string): Promise<UsageItem[]> {
  const res = await fetch(`${baseUrl}${path}`, { headers: { authorization } });
  const body = (await res.json()) as { data: UsageItem[]; has_more: boolean };
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.has_more, false);
  return body.data;
}

function answered(items: UsageItem[]): Map<string, { events: number; quantity: number; cost: number }> {
  // A window cut at `from` starts there: compare by the UTC day it lies in.
  return new Map(
    items.map((i) => [
      `${new Date(Math.floor(Date.parse(i.window_start) / DAY_MS) * DAY_MS).toISOString()} ${i.type} ${
        i.denomination ?? DENOMINATION
      }`,
      { events: i.events, quantity: Number(i.quantity), cost: i.cost },
    ]),
  );
}

/** A fresh store of `dialect` (PostgreSQL: its own schema) and how to remove it. */
async function freshStore(
  dialect: 'sqlite' | 'postgres',
): Promise<{ store: Store; url: string; drop(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'growth-usage-test-'));
    const url = `sqlite:${join(dir, 'usage.sqlite')}`;
    return { store: await openStore(url), url, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const schema = `bench_usage_${randomBytes(6).toString('hex')}`;
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

for (const dialect of ['sqlite', 'postgres'] as const)
  test(`seeded usage (${dialect}): the API answers the sum over the seeded events, company and accounts`, async () => {
    const { store, url: databaseUrl, drop } = await freshStore(dialect);
    const server = await startServer(
      loadConfig({ ...process.env, DATABASE_URL: databaseUrl, PORT: '0', BILLING_SECRET_KEY: BENCH_TEST_KEY }),
      { store },
    );
    try {
      const tenant = await createTenant(server.url);
      const seeder = new Seeder(tenant.companyId, 300, 400, 10, () => undefined);
      await seeder.seedAccounts(store, 25, 'a');
      await seeder.seedEvents(store, 1_200, 'b'); // 400 on the big account, 800 spread over 25
      await seeder.seedEvents(store, 1_500, 'c'); // a second level adds to the same rollup rows

      const events = await storedEvents(store, tenant.companyId);
      assert.equal(events.length, 1_500);
      const nowMs = Date.now();
      const oldest = Math.min(...events.map((e) => e.occurredAtMs));
      assert.ok(nowMs - oldest <= USAGE_SPAN_DAYS * DAY_MS + 60_000, 'history within the span');
      assert.ok(nowMs - oldest >= (USAGE_SPAN_DAYS - 1) * DAY_MS, 'history spread over the span');
      const from = new Date(Math.floor((nowMs - (USAGE_SPAN_DAYS + 1) * DAY_MS) / HOUR_MS) * HOUR_MS).toISOString();
      const to = new Date((Math.floor(nowMs / HOUR_MS) + 1) * HOUR_MS).toISOString();
      const range = `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;

      const company = await usage(
        server.url,
        tenant.authorization,
        `/v1/usage?${range}&window=day&group_by=type,denomination&limit=100`,
      );
      assert.ok(company.length >= USAGE_SPAN_DAYS, `one group a day at least, got ${company.length}`);
      assert.deepEqual(answered(company), byDay(events));
      const total = company.reduce((n, i) => n + i.events, 0);
      assert.equal(total, 1_500);

      for (const accountId of [seeder.bigAccountId as string, seeder.population()[3] as string]) {
        const own = events.filter((e) => e.accountId === accountId);
        assert.ok(own.length > 0);
        const items = await usage(
          server.url,
          tenant.authorization,
          `/v1/accounts/${encodeURIComponent(accountId)}/usage?${range}&window=day&limit=100`,
        );
        assert.deepEqual(answered(items), byDay(own), `account ${accountId}`);
      }

      // The server's ingest adds to the rollup the seeder filled.
      const accountId = seeder.population()[0] as string;
      const res = await fetch(`${server.url}/v1/accounts/${encodeURIComponent(accountId)}/events`, {
        method: 'POST',
        headers: { authorization: tenant.authorization, 'content-type': 'application/json' },
        body: JSON.stringify({
          events: [{ type: EVENT_TYPE, cost_override: { amount: 3, denomination: DENOMINATION } }],
        }),
      });
      assert.equal(res.status, 200, await res.text());
      const after = await usage(
        server.url,
        tenant.authorization,
        `/v1/usage?${range}&window=all&group_by=type&limit=100`,
      );
      assert.deepEqual(
        after.map((i) => [i.type, i.events, i.cost]),
        [[EVENT_TYPE, 1_501, events.reduce((n, e) => n + e.costAmount, 0) + 3]],
      );
    } finally {
      await server.close();
      await drop();
    }
  });
