/**
 * PostgreSQL only: statements are prepared per connection, so a migration that changes a
 * table's columns under a running process (a rolling deploy) must not leave that process failing
 * with "cached plan must not change result type"; and every text column compares as bytes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { POSTGRES_ONLY_SKIP, openTestStore, seedCompanyAndAccount, type TestStore } from '../support/stores.js';

describe('postgres prepared statements', { skip: POSTGRES_ONLY_SKIP }, () => {
  let t: TestStore;

  before(async () => {
    t = await openTestStore('postgres', { poolSize: 2 });
  });
  after(async () => {
    await t.cleanup();
  });

  test('every text column of the schema compares as bytes (collation "C")', async () => {
    const rows = await t.query(
      `SELECT table_name, column_name, collation_name FROM information_schema.columns
       WHERE table_schema = current_schema() AND data_type = 'text' AND table_name <> 'schema_migrations'`,
    );
    assert.ok(rows.length > 50, `${rows.length} text columns`);
    assert.deepEqual(
      rows.filter((r) => r.collation_name !== 'C'),
      [],
    );
  });
  test('a column added under running connections: reads and writes answer as before', async () => {
    const s = await seedCompanyAndAccount(t.store);
    const find = () => t.store.read((tx) => tx.findAccount(s.companyId, s.accountId));
    const findInTx = () => t.store.write((tx) => tx.findAccount(s.companyId, s.accountId));
    // Prepare `SELECT * FROM accounts …` on both connections of the pool.
    for (let i = 0; i < 3; i++) {
      const all = await Promise.all([find(), find(), findInTx(), findInTx()]);
      for (const a of all) assert.equal(a?.accountId, s.accountId);
    }

    await t.query('ALTER TABLE accounts ADD COLUMN added_by_a_later_migration TEXT');

    const reads = await Promise.all([find(), find(), find()]);
    for (const a of reads) assert.equal(a?.accountId, s.accountId);
    const writes = await Promise.all([findInTx(), findInTx(), findInTx()]);
    for (const a of writes) assert.equal(a?.accountId, s.accountId);
  });

  for (const preparedStatements of [true, false]) {
    test(
      `preparedStatements: ${preparedStatements} — the connection ${preparedStatements ? 'keeps' : 'holds no'} named ` +
        `statements`,
      async () => {
        const one = await openTestStore('postgres', { poolSize: 1, preparedStatements });
        try {
          const s = await seedCompanyAndAccount(one.store);
          assert.equal(
            (await one.store.read((tx) => tx.findAccount(s.companyId, s.accountId)))?.accountId,
            s.accountId,
          );
          // One connection in the pool: this query runs on the connection the store just used.
          const named = await one.query('SELECT name FROM pg_prepared_statements');
          if (preparedStatements) assert.ok(named.length >= 2, `${named.length} prepared statement(s)`);
          else assert.deepEqual(named, []);
        } finally {
          await one.cleanup();
        }
      },
    );
  }
});
