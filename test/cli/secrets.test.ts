// Guarantee: the keys of secrets at rest. A SQLite file database without BILLING_SECRET_KEY gets a
// key file beside it (owner-only, said on standard error) and its secrets sealed under it;
// `billing secrets rotate` re-encrypts every stored secret with the current key, after which the
// old key is no longer needed; a wrong key is a plain error naming the key needed, not garbage;
// PostgreSQL in production refuses to start without BILLING_SECRET_KEY.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { describe, test } from 'node:test';
import { SecretBox, newSecretKeyText, parseSecretKeys } from '../../src/lib/secret-box.js';
import { CLI_DIALECTS, PG_URL, SERVER_ENTRY, STACK_LINE, billing, freshDatabase, runNode } from './support.js';

const PASSWORD = 'a long password';
const STRIPE_KEY = 'rk_test_rotateMe0123456789';

/** Every stored processor key, as the database holds it. */
async function storedKeys(db: Awaited<ReturnType<typeof freshDatabase>>): Promise<string[]> {
  const rows = await db.sql('SELECT processor_api_key AS k FROM companies WHERE processor_api_key IS NOT NULL');
  return rows.map((r) => String(r.k));
}

async function stripeCompany(env: Record<string, string>, email: string): Promise<string> {
  const u = await billing(['user', 'create', '--email', email, '--name', 'Ops'], env, `${PASSWORD}\n`);
  assert.equal(u.code, 0, u.stderr);
  const c = await billing(
    ['company', 'create', '--owner-email', email, '--name', 'S', '--processor', 'stripe'].concat([
      '--processor-api-key',
      STRIPE_KEY,
      '--json',
    ]),
    env,
  );
  assert.equal(c.code, 0, c.stderr);
  return (JSON.parse(c.stdout) as { company_id: string }).company_id;
}

test('SQLite without BILLING_SECRET_KEY: a 0600 key file beside the database, said on stderr', async (t) => {
  const db = await freshDatabase('sqlite');
  t.after(() => db.drop());
  const env = { DATABASE_URL: db.url };
  const file = `${db.url.slice('sqlite:'.length)}.secret-key`;
  const first = await billing(['user', 'create', '--email', 'k@example.com', '--name', 'K'], env, `${PASSWORD}\n`);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stderr, /generated a secret key .* into .*billing\.sqlite\.secret-key \(mode 600\)/);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const companyId = await stripeCompany(env, 'k2@example.com');
  const [stored] = await storedKeys(db);
  const box = new SecretBox(parseSecretKeys(readFileSync(file, 'utf8')));
  assert.equal(box.open(stored!, `processor_api_key:${companyId}`), STRIPE_KEY, 'sealed with the file’s key');
  const bytes = readFileSync(db.url.slice('sqlite:'.length)).toString('latin1');
  assert.ok(!bytes.includes(STRIPE_KEY), 'not in the database file');
});

describe('billing secrets rotate', { concurrency: true }, () => {
  for (const dialect of CLI_DIALECTS) {
    test(`re-encrypts with the current key; the old one is then not needed (${dialect})`, async (t) => {
      const db = await freshDatabase(dialect);
      t.after(() => db.drop());
      const oldKey = newSecretKeyText();
      const newKey = (await billing(['secrets', 'new-key'], {})).stdout.trim();
      assert.doesNotThrow(() => parseSecretKeys(newKey), 'new-key prints a usable key');
      const [oldId, newId] = [parseSecretKeys(oldKey)[0]!.id, parseSecretKeys(newKey)[0]!.id];
      const base = { DATABASE_URL: db.url, BILLING_DB_CONNECT_TIMEOUT_MS: '0' };
      const companyId = await stripeCompany({ ...base, BILLING_SECRET_KEY: oldKey }, 'r@example.com');
      assert.deepEqual((await storedKeys(db)).map(SecretBox.keyIdOf), [oldId]);

      const wrong = await billing(['secrets', 'rotate'], { ...base, BILLING_SECRET_KEY: newKey });
      assert.equal(wrong.code, 1, 'without the old key, nothing can be re-encrypted');
      assert.match(wrong.stderr, new RegExp(`sealed with key ${oldId}, which is not among the configured keys`));
      assert.doesNotMatch(wrong.stderr, STACK_LINE);

      const both = { ...base, BILLING_SECRET_KEY: `${newKey},${oldKey}` };
      const rotated = await billing(['secrets', 'rotate', '--json'], both);
      assert.equal(rotated.code, 0, rotated.stderr);
      const report = JSON.parse(rotated.stdout) as { key_id: string; kinds: { name: string; written: number }[] };
      assert.equal(report.key_id, newId);
      assert.equal(report.kinds.find((k) => k.name === 'processor keys')?.written, 1);
      const [stored] = await storedKeys(db);
      assert.equal(SecretBox.keyIdOf(stored!), newId);
      const onlyNew = new SecretBox(parseSecretKeys(newKey));
      assert.equal(onlyNew.open(stored!, `processor_api_key:${companyId}`), STRIPE_KEY);
      const again = await billing(['secrets', 'rotate', '--json'], both);
      assert.equal(
        JSON.parse(again.stdout).kinds.find((k: { name: string }) => k.name === 'processor keys').written,
        0,
      );
    });
  }
});

test('a server with the wrong key refuses to start, naming the key it needs', async (t) => {
  const db = await freshDatabase('sqlite');
  t.after(() => db.drop());
  const key = newSecretKeyText();
  await stripeCompany({ DATABASE_URL: db.url, BILLING_SECRET_KEY: key }, 'w@example.com');
  const r = await runNode(SERVER_ENTRY, [], {
    DATABASE_URL: db.url,
    PORT: '0',
    BILLING_SECRET_KEY: newSecretKeyText(),
  });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /configuration error/);
  assert.match(r.stderr, new RegExp(`sealed with key ${parseSecretKeys(key)[0]!.id}, which is not among`));
  assert.doesNotMatch(r.stderr, STACK_LINE);
});

if (CLI_DIALECTS.includes('postgres')) {
  test('PostgreSQL in production without BILLING_SECRET_KEY: a configuration error, no start', async () => {
    // A database that does not exist: the refusal comes before the database is touched.
    const url = new URL(PG_URL);
    url.pathname = '/no_such_database_secret_key_check';
    const r = await runNode(SERVER_ENTRY, [], { DATABASE_URL: url.toString(), PORT: '0', NODE_ENV: 'production' });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /BILLING_SECRET_KEY is required with PostgreSQL in production/);
    assert.doesNotMatch(r.stderr, STACK_LINE);
  });
}
