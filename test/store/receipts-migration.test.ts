// Guarantee (issue "Customer portal, top-ups and receipts", migration 18), on SQLite and PostgreSQL: a database of
// the previous schema with charges in it opens on the new one with every succeeded charge numbered, … per
// company in the order the charges were made, no other charge numbered, and each company's counter at its last
// number, so that the next charge to succeed takes the number after it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CLI_DIALECTS, freshDatabase, type TestDatabase } from '../cli/support.js';
import { openStore } from '../../src/store/open.js';
import { oldCompanies, schemaBefore } from './migration-support.js';

const T0 = 1_700_000_000_000;

/** Two companies, an account each, and their charges in this order: [charge id, company, status]. */
const CHARGES: [string, string, string][] = [
  ['ch_1', 'c_a', 'succeeded'],
  ['ch_2', 'c_b', 'succeeded'],
  ['ch_3', 'c_a', 'failed'],
  ['ch_4', 'c_a', 'succeeded'],
  ['ch_5', 'c_a', 'pending'],
  ['ch_6', 'c_b', 'requires_payment_method'],
  ['ch_7', 'c_a', 'succeeded'],
];

async function oldCharges(db: TestDatabase): Promise<void> {
  await oldCompanies(db, ['c_a', 'c_b'], T0);
  for (const [i, [id, company, status]] of CHARGES.entries())
    await db.sql(
      'INSERT INTO charges (charge_id, company_id, account_id, denomination, reason, usd_cents, status, details, ' +
        'created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [id, company, `a_${company}`, null, 'plan', 100, status, '{}', T0 + i, T0 + 100 + i],
    );
}

for (const dialect of CLI_DIALECTS) {
  describe(`migration 18: receipts for the charges that succeeded before it (${dialect})`, () => {
    test('succeeded charges numbered per company in order; the counters carry on from there', async () => {
      const db = await freshDatabase(dialect);
      try {
        await schemaBefore(db, 18, T0);
        await oldCharges(db);
        const store = await openStore(db.url);
        try {
          const numbered = await store.read(async (tx) =>
            Promise.all(CHARGES.map(async ([id]) => (await tx.charges.findCharge(id))!)),
          );
          assert.deepEqual(
            numbered.map((c) => [c.chargeId, c.receiptNumber, c.receiptAtMs]),
            [
              ['ch_1', 1, T0 + 100],
              ['ch_2', 1, T0 + 101],
              ['ch_3', null, null],
              ['ch_4', 2, T0 + 103],
              ['ch_5', null, null],
              ['ch_6', null, null],
              ['ch_7', 3, T0 + 106],
            ],
          );
          assert.equal(await store.write((tx) => tx.charges.issueReceiptNumber('c_a')), 4);
          assert.equal(await store.write((tx) => tx.charges.issueReceiptNumber('c_b')), 2);
        } finally {
          await store.close();
        }
      } finally {
        await db.drop();
      }
    });
  });
}
