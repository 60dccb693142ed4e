// Guarantees: the growth bench seeds rows the server reads as its own — ids of the server's
// shape, computed identically by the SQL and by JavaScript, unique; a ledger the server's own
// audit finds exact; balances lowered by exactly what `seededCost` says — and its flags and
// levels parse as documented. (Figures are the bench's business, not the tests'.)
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
} from '../../bench/lib/growth-options.js';
import { idOf, idSql, openSqliteRunner, Seeder } from '../../bench/lib/growth-seed.js';
import { DENOMINATION, INITIAL_GRANT } from '../../bench/lib/options.js';
import { SqliteStore } from '../../src/store/sqlite.js';

const ID_SHAPE = /^(a|ev|tx)_[0-9A-Za-z]{16}$/;

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

test("seeded ids: the SQL and JavaScript agree, the shape is the server's, no two are equal", async () => {
  const runner = openSqliteRunner(':memory:', 'seed');
  try {
    const ordinals = [0, 1, 2, 61, 62, 3843, 1_000_000, 1_000_000_000, 2_999_999_999];
    for (const n of ordinals) {
      const [row] = await runner.all<{ id: string }>(`SELECT ${idSql('sqlite', 'ev', String(n), 12345)} AS id`);
      assert.equal(row?.id, idOf('ev', n, 12345));
      assert.match(row?.id ?? '', ID_SHAPE);
    }
    const ids = new Set(Array.from({ length: 50_000 }, (_, n) => idOf('tx', n * 7 + 3, 987_654_321)));
    assert.equal(ids.size, 50_000);
  } finally {
    await runner.close();
  }
});

test('seeding: the server reads the rows, its audit finds the ledger exact, seededCost is what each balance lost', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'growth-seed-test-'));
  const file = join(dir, 'seed.sqlite');
  try {
    const created = new SqliteStore(file); // the server's migrations
    await created.close();
    const runner = openSqliteRunner(file, 'seed');
    await runner.run(
      "INSERT INTO users (name, email, password_hash, email_verified, created_at) VALUES ('u', 'u@example.com', 'x', 0, 0)",
    );
    await runner.run(
      "INSERT INTO companies (company_id, name, owner_user_id, processor, created_at) VALUES ('c_test', 'c', 1, 'sandbox', 0)",
    );
    const seeder = new Seeder('c_test', { account: 11, event: 22, transaction: 33 }, 700, 250, () => undefined);
    await seeder.seedAccounts([runner], 30, 'a');
    await seeder.seedEvents([runner], 0, 'a');
    await seeder.seedAccounts([runner], 90, 'b');
    await seeder.seedEvents([runner], 1_000, 'c'); // 750 spread over 90 accounts + 250 on the big account
    await seeder.seedEvents([runner], 1_500, 'd'); // 500 more, spread
    const population = (await runner.all<{ account_id: string }>('SELECT account_id FROM accounts ORDER BY seq')).map(
      (r) => r.account_id,
    );
    await runner.close();

    assert.equal(population.length, 91);
    assert.equal(population[0], seeder.bigAccountId);
    assert.equal(seeder.bigSeededTransactions(), 250);
    const store = new SqliteStore(file);
    try {
      assert.deepEqual(await store.read((tx) => tx.auditLedger()), []);
      for (const [index, accountId] of population.slice(1).entries()) {
        const balance = await store.read((tx) => tx.findBalance(accountId, DENOMINATION));
        assert.equal(balance?.amount, INITIAL_GRANT - seeder.seededCost(index), `spread account ${index}`);
        assert.match(accountId, ID_SHAPE);
      }
      const big = await store.read((tx) => tx.findBalance(seeder.bigAccountId as string, DENOMINATION));
      assert.equal(big?.amount, INITIAL_GRANT - seeder.bigSeededCost());
      const page = await store.read((tx) =>
        tx.listTransactions(seeder.bigAccountId as string, DENOMINATION, { limit: 100 }),
      );
      assert.equal(page?.rows.length, 100);
      assert.equal(page?.hasMore, true);
      const newest = page?.rows[0];
      assert.equal(newest?.kind, 'usage');
      assert.match(newest?.transactionId ?? '', ID_SHAPE);
      const event = await store.read((tx) => tx.findEvent('c_test', newest?.eventId as string));
      assert.equal(event?.state, 'complete');
      assert.equal(event?.costAmount, -(newest?.amount ?? 0));
      assert.equal(event?.accountId, seeder.bigAccountId);
      const counts = await store.read((tx) => tx.listTransactions(population[1] as string, undefined, { limit: 100 }));
      const grant = counts?.rows[counts.rows.length - 1];
      assert.equal(grant?.kind, 'grant');
      assert.equal(grant?.amount, INITIAL_GRANT);
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
