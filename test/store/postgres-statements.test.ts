/**
 * PostgreSQL only: statements are prepared per connection, so a migration that changes a
 * table's columns under a running process (a rolling deploy) must not leave that process failing
 * with "cached plan must not change result type"; every text column compares as bytes; and the
 * array literals batch writes send are read back as the arrays they were built from.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { integerText, pgArrayLiteral } from '../../src/store/postgres/exec.js';
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
    const find = () => t.store.read((tx) => tx.accounts.findAccount(s.companyId, s.accountId));
    const findInTx = () => t.store.write((tx) => tx.accounts.findAccount(s.companyId, s.accountId));
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
            (await one.store.read((tx) => tx.accounts.findAccount(s.companyId, s.accountId)))?.accountId,
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

  test('property: an array literal reads back as the array it was built from (strings, nulls, numbers)', async () => {
    const text = fc.oneof(
      fc.string({ unit: 'binary' }).filter((v) => !v.includes('\u0000')),
      fc.constantFrom('NULL', 'null', '"', '\\', '\\"', '{a,b}', ' padded ', '', 'a"b\\c', 'ev_0Ab9'),
      fc.constant(null),
    );
    const plain = fc.stringMatching(/^[\w.:-]{0,24}$/);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.array(text, { maxLength: 12 }), fc.array(plain, { maxLength: 12 })),
        async (values) => {
          const [row] = await t.query('SELECT ?::text[] AS a', [pgArrayLiteral(values)]);
          assert.deepEqual(row!.a, values);
        },
      ),
      { numRuns: 300 },
    );
    const integer = fc.oneof(
      fc.maxSafeInteger(),
      fc.integer(),
      fc.constantFrom(0, -0, 2 ** 30, 2 ** 30 - 1, -(2 ** 30), 1e9, -1e9, 1e9 - 1, 2 ** 53 - 1, -(2 ** 53 - 1)),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(integer, fc.constant(null)), { maxLength: 12 }), async (values) => {
        const [row] = await t.query('SELECT ?::bigint[]::text[] AS a', [pgArrayLiteral(values)]);
        assert.deepEqual(
          row!.a,
          values.map((v) => (v === null ? null : String(v))),
        );
      }),
      { numRuns: 300 },
    );
    const [floats] = await t.query('SELECT ?::float8[] AS a', [pgArrayLiteral([0.5, -1.25, 1e21, 3e-7, 2 ** 53 + 2])]);
    assert.deepEqual(floats!.a, [0.5, -1.25, 1e21, 3e-7, 2 ** 53 + 2]);
  });
  test('property: integerText writes every number as String does', () => {
    fc.assert(
      fc.property(fc.oneof(fc.maxSafeInteger(), fc.double(), fc.integer()), (v) => {
        assert.equal(integerText(v), String(v));
      }),
      { numRuns: 5000 },
    );
  });
});
