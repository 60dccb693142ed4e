/**
 * Run before the test suite (`npm test`): when the tests are to use PostgreSQL (TEST_DIALECTS unset
 * or naming it), checks in a few seconds that it answers, and otherwise explains in one paragraph how
 * to start it or how to run without it, and exits 1, instead of a wall of connection failures.
 */
import pg from 'pg';
import { DATABASE_URL, DIALECTS } from './stores.js';

const CONNECT_TIMEOUT_MS = 3_000;

if (DIALECTS.includes('postgres')) {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  try {
    await client.connect();
    await client.query('SELECT 1');
    await client.end();
  } catch (err) {
    const where = DATABASE_URL.replace(/\/\/[^@/]*@/, '//…@');
    process.stderr.write(
      `\nThe tests need PostgreSQL at ${where} and cannot reach it (${(err as Error).message || String(err)}). ` +
        'Start one (for example `docker run -d -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust -e ' +
        'POSTGRES_DB=test postgres:16`), or point TEST_DATABASE_URL at yours, or run the suite on SQLite ' +
        'only with `npm run test:sqlite` (TEST_DIALECTS=sqlite: the tests that need PostgreSQL are skipped ' +
        'and say so).\n\n',
    );
    await client.end().catch(() => undefined);
    process.exit(1);
  }
}
