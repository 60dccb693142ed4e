// Guarantees: the growth bench seeds, through the engine's public interface, rows the server
// reads as its own — ids of the server's shape, a ledger the store's own audit finds exact,
// chains that continue from what the server itself wrote between two levels, balances lowered
// by exactly what `seededCost` says — and its flags and levels parse as documented. (Figures
// are the bench's business, not the tests'.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  bigAt,
  bigFitsSomewhere,
  growthLevels,
  parseGrowthOptions,
  QUICK_ACCOUNT_LEVELS,
  QUICK_BIG_ACCOUNT_TRANSACTIONS,
  QUICK_EVENT_LEVELS,
} from '../lib/growth-options.js';
import {
  ANY_TIME,
  EngineLedger,
  balanceEffects,
  groupWriter,
  ingestRequest,
  normalizeEvent,
  openStore,
  seedCompany,
  type NormalizedEvent,
  type Store,
} from '../lib/engine.js';
import { GROWTH_EXPIRY_FROM_DAYS, GROWTH_EXPIRY_TO_DAYS, DAY_MS, growthGrants } from '../lib/grants.js';
import { Seeder } from '../lib/growth-seed.js';
import { DENOMINATION, EVENT_TYPE, INITIAL_GRANT } from '../lib/options.js';

const ID_SHAPE = /^(a|ev|tx)_[0-9A-Za-z]{20}$/;

test('growth flags: --quick levels, explicit flags win, the big account must fit a level', () => {
  const quick = parseGrowthOptions(['--quick']);
  assert.deepEqual(quick.accountLevels, [...QUICK_ACCOUNT_LEVELS]);
  assert.deepEqual(quick.eventLevels, [...QUICK_EVENT_LEVELS]);
  assert.equal(quick.bigAccountTransactions, QUICK_BIG_ACCOUNT_TRANSACTIONS);
  const explicit = parseGrowthOptions([
    '--quick',
    '--accounts',
    '5000,100',
    '--events',
    '0,1_000',
    '--big-account-transactions',
    '10',
  ]);
  assert.deepEqual(explicit.accountLevels, [100, 5000]);
  assert.deepEqual(explicit.eventLevels, [0, 1000]);
  assert.throws(
    () => parseGrowthOptions(['--events', '0,10', '--big-account-transactions', '11']),
    /no --events level/,
  );
  assert.throws(() => parseGrowthOptions(['--accounts', '0']), /positive/);
  assert.equal(quick.grants, 3, 'the quick run seeds three grants per account too');
  assert.equal(parseGrowthOptions(['--grants', '1']).grants, 1);
  assert.throws(() => parseGrowthOptions(['--grants', '0']), /positive/);
  assert.throws(() => parseGrowthOptions(['--grants', '11']), /at most/);
  assert.deepEqual(growthLevels({ accountLevels: [1_000, 1_000_000], eventLevels: [0, 10_000_000] }), [
    { accounts: 1_000, events: 0 },
    { accounts: 1_000_000, events: 0 },
    { accounts: 1_000_000, events: 10_000_000 },
  ]);
  assert.equal(bigFitsSomewhere([0, 100, 150], 60), true);
  assert.equal(bigFitsSomewhere([0, 100, 150], 101), false);
  assert.equal(bigAt(60, false, 50), 0);
  assert.equal(bigAt(60, false, 100), 60);
  assert.equal(bigAt(60, true, 100), 0);
});

test('growth flags: 20 features and 5 plans by default, every 10th account overridden; --features 0 is none', () => {
  const defaults = parseGrowthOptions([]);
  assert.deepEqual([defaults.features, defaults.plans, defaults.overrideEvery], [20, 5, 10]);
  assert.deepEqual(parseGrowthOptions(['--quick']).features, 20, 'the quick run seeds them too');
  const some = parseGrowthOptions(['--features', '40', '--plans', '3', '--override-every', '0']);
  assert.deepEqual([some.features, some.plans, some.overrideEvery], [40, 3, 0]);
  const none = parseGrowthOptions(['--features', '0', '--plans', '3']);
  assert.deepEqual([none.features, none.plans, none.overrideEvery], [0, 0, 0]);
  assert.throws(() => parseGrowthOptions(['--features', '101']), /at most/);
  assert.throws(() => parseGrowthOptions(['--plans', '0']), /positive/);
  assert.throws(() => parseGrowthOptions(['--plans', '51']), /at most/);
  assert.throws(() => parseGrowthOptions(['--override-every', 'x']), /non-negative/);
});

/** What the server's load does between two levels: one complete event of `cost` on the account. */
async function serverDebit(store: Store, companyId: string, accountId: string, cost: number): Promise<void> {
  const n = normalizeEvent(
    { type: EVENT_TYPE, cost_override: { amount: cost, denomination: DENOMINATION } },
    0,
    ANY_TIME,
  );
  assert.ok(n.ok);
  const events: NormalizedEvent[] = [n.value];
  const write = groupWriter(new EngineLedger(balanceEffects()));
  const [outcome] = await store.write((tx) => write(tx, Date.now(), [ingestRequest(companyId, accountId, events)]));
  assert.equal(outcome?.ok, true);
}

test('seeding: the server reads the rows, its audit finds them exact, seededCost is what each lost', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'growth-seed-test-'));
  const store = await openStore(`sqlite:${join(dir, 'seed.sqlite')}`);
  try {
    const companyId = await seedCompany(store, 'growth test');
    const seeder = new Seeder(companyId, 700, 250, 50, () => undefined);
    await seeder.seedAccounts(store, 30, 'a');
    await seeder.seedEvents(store, 0, 'a');
    await seeder.seedAccounts(store, 90, 'b');
    // The load of a measured level: the next level's chains must continue from it.
    const population = seeder.population();
    await serverDebit(store, companyId, population[1] as string, 1_000);
    await serverDebit(store, companyId, seeder.bigAccountId as string, 7);
    await seeder.seedEvents(store, 1_000, 'c'); // 750 spread over 90 accounts + 250 on the big account
    await seeder.seedEvents(store, 1_500, 'd'); // 500 more, spread

    assert.equal(population.length, 90);
    assert.equal(seeder.bigSeededTransactions(), 250);
    assert.deepEqual(await store.read((tx) => tx.transactions.auditLedger()), []);
    const accounts = await store.read((tx) => tx.accounts.listAccounts(companyId, { limit: 100 }));
    assert.equal(accounts?.rows.length, 91);
    assert.equal(accounts?.rows[accounts.rows.length - 1]?.accountId, seeder.bigAccountId, 'the oldest account');
    for (const [index, accountId] of population.entries()) {
      const balance = await store.read((tx) => tx.balances.findBalance(accountId, DENOMINATION));
      const load = index === 1 ? 1_000 : 0;
      assert.equal(balance?.amount, INITIAL_GRANT - seeder.seededCost(index) - load, `spread account ${index}`);
      assert.match(accountId, ID_SHAPE);
    }
    assert.ok(seeder.seededCost(0) > 0);
    const big = await store.read((tx) => tx.balances.findBalance(seeder.bigAccountId as string, DENOMINATION));
    assert.equal(big?.amount, INITIAL_GRANT - seeder.bigSeededCost() - 7);
    const page = await store.read((tx) =>
      tx.transactions.listTransactions(seeder.bigAccountId as string, DENOMINATION, { limit: 100 }),
    );
    assert.equal(page?.rows.length, 100);
    assert.equal(page?.hasMore, true);
    const newest = page?.rows[0];
    assert.equal(newest?.kind, 'usage');
    assert.match(newest?.transactionId ?? '', ID_SHAPE);
    const event = await store.read((tx) => tx.events.findEvent(companyId, newest?.eventId as string));
    assert.equal(event?.state, 'complete');
    assert.equal(event?.costAmount, -(newest?.amount ?? 0));
    assert.equal(event?.accountId, seeder.bigAccountId);
    const sampled = seeder.sampledEvents();
    assert.equal(sampled.length, 50);
    for (const id of sampled) assert.match(id, ID_SHAPE);
    const first = await store.read((tx) =>
      tx.transactions.listTransactions(population[2] as string, undefined, { limit: 100 }),
    );
    const grant = first?.rows[first.rows.length - 1];
    assert.equal(grant?.kind, 'grant');
    assert.equal(grant?.amount, INITIAL_GRANT);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

const ALL_STATUSES = ['scheduled', 'active', 'depleted', 'expired', 'voided'] as const;

test('seeding grants: a balance holds its grants, its history draws them in order, Σ remaining = amount', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'growth-grants-test-'));
  const store = await openStore(`sqlite:${join(dir, 'grants.sqlite')}`);
  try {
    const companyId = await seedCompany(store, 'growth grants test');
    // 800 events of 5–6 units on the big account (4,400): more than its first-drawn grant holds.
    const seeder = new Seeder(companyId, 50, 800, 10, () => undefined, 3);
    const before = Date.now();
    await seeder.seedAccounts(store, 20, 'a');
    const after = Date.now();
    await seeder.seedEvents(store, 1_200, 'b');
    assert.equal(seeder.seededGrants, 21 * 3);
    assert.deepEqual(await store.read((tx) => tx.transactions.auditLedger()), []);

    const nowMs = Date.now();
    const all = await store.read((tx) =>
      tx.grants.listGrants(companyId, { statuses: ALL_STATUSES, nowMs }, { limit: 100 }),
    );
    assert.equal(all?.rows.length, seeder.seededGrants);
    for (const g of all?.rows ?? []) {
      assert.match(g.grantId, /^g_[0-9A-Za-z]{20}$/);
      if (g.source === 'initial') {
        assert.equal(g.expiresAtMs, null);
        continue;
      }
      assert.equal(g.source, 'grant');
      assert.ok((g.expiresAtMs as number) >= before + GROWTH_EXPIRY_FROM_DAYS * DAY_MS, 'expires a day ahead at least');
      assert.ok((g.expiresAtMs as number) <= after + GROWTH_EXPIRY_TO_DAYS * DAY_MS, 'within 60 days');
      assert.equal(g.costBasis !== null, g.category === 'paid');
    }

    const ids = [seeder.bigAccountId as string, ...seeder.population()];
    for (const [index, accountId] of ids.entries()) {
      const b = await store.read((tx) => tx.balances.findBalance(accountId, DENOMINATION));
      const cost = index === 0 ? seeder.bigSeededCost() : seeder.seededCost(index - 1);
      assert.equal(b?.amount, seeder.granted(index) - cost, `account ${index}`);
      const remaining = (b?.grants ?? []).reduce((sum, g) => sum + g.remaining, 0);
      assert.equal(remaining, b?.amount, `account ${index}: its live grants hold the balance`);
      const expiries = (b?.grants ?? []).flatMap((g) => (g.expiresAtMs === null ? [] : [g.expiresAtMs]));
      assert.equal(b?.grantsDueAtMs, Math.min(...expiries), `account ${index}: the soonest expiry is due first`);
    }

    // The big account's history used up the grant drawn first (priority 30) and part of the next.
    const big = seeder.bigAccountId as string;
    const [first, second] = growthGrants(0, 3, 0).sort((a, b) => a.priority - b.priority);
    assert.ok(seeder.bigSeededCost() > (first?.amount as number));
    assert.ok(seeder.bigSeededCost() < (first?.amount as number) + (second?.amount as number));
    const depleted = await store.read((tx) => tx.grants.listGrantsOfBalance(big, DENOMINATION, ['depleted'], nowMs));
    assert.equal(depleted.length, 1);
    assert.equal(depleted[0]?.remaining, 0, 'a used-up grant has left the lots with its final figures');
    assert.equal(depleted[0]?.amount, first?.amount);
    const lots = (await store.read((tx) => tx.balances.findBalance(big, DENOMINATION)))?.grants ?? [];
    assert.equal(lots.length, 2);
    const drawnNext = lots.find((g) => g.priority === second?.priority);
    assert.equal(drawnNext?.remaining, (first?.amount as number) + (second?.amount as number) - seeder.bigSeededCost());
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
