// Guarantees: the plain-SQL limit (bench/baselines/plain-sql.ts) runs its transactions on a fresh PostgreSQL
// database through the store-only protocol, reports them as its own row (`plain SQL, N events/tx`), and checks its
// ledger: every balance equal to its start less its ledger rows and less what its committed transactions took.
import assert from 'node:assert/strict';
import { dirname, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_POSTGRES_URL } from '../lib/options.js';
import { createBenchDatabase } from '../lib/postgres.js';
import { plainSqlPhaseName } from '../lib/report.js';
import { runStoreOnly } from '../lib/storeonly.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

for (const events of [1, 100]) {
  test(`plain SQL, ${events} event(s) per transaction: committed, counted, ledger exact`, async () => {
    const db = await createBenchDatabase(ADMIN_POSTGRES_URL);
    try {
      const run = await runStoreOnly({
        baseline: 'plain-sql',
        db: 'postgres',
        databaseUrl: db.url,
        databaseProcesses: undefined,
        eventsPerTransaction: events,
        lanes: 3,
        accounts: 7,
        grants: 1,
        grantUnits: 1,
        pgPoolSize: 3,
        durationS: 1,
        warmupS: 0.2,
        cwd: ROOT,
        entry: 'bench/baselines/plain-sql.ts',
        logDir: mkdtempSync(join(tmpdir(), 'plain-sql-')),
        track: () => async () => {},
      });
      const f = run.figures;
      assert.equal(f.baseline, 'plain-sql');
      assert.ok(f.transactions > 0, 'transactions committed');
      assert.equal(f.events, f.transactions * events);
      assert.equal(f.errors, 0, f.errorSamples.join('; '));
      assert.deepEqual(f.ledger, { accountsChecked: 7, findings: [] });
      assert.equal(run.result.phase, plainSqlPhaseName(events));
      assert.equal(run.result.connections, 3);
    } finally {
      await db.drop();
    }
  });
}
