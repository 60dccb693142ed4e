// Guarantee: the webhook signing secret and the company's Stripe key are stored encrypted
// (AES-256-GCM, sealed under a key id): neither the SQLite file (as `strings` would read it) nor the
// PostgreSQL rows contain them; rows written in plaintext before are sealed at the next start and
// still work; a sealed value opens only with its key and in its own row, and a wrong key is a clear
// error, never garbage.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { SecretBox, SecretBoxError, newSecretKeyText, parseSecretKeys } from '../../src/lib/secret-box.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { HTTP_DIALECTS, signUpCompany, startHarness, type Harness } from '../support/harness.js';
import { testSecretBox } from '../support/stores.js';
import { seedWebhookSubscription, serverOn, sharedDatabase } from '../support/webhooks.js';

const STRIPE_KEY = 'rk_test_secretAtRest0123456789abcdef';

describe('SecretBox', () => {
  const [current, old] = [newSecretKeyText(), newSecretKeyText()];
  const box = new SecretBox(parseSecretKeys(`${current},${old}`));
  const oldBox = new SecretBox(parseSecretKeys(old));

  test('seals with the current key id; opens with any configured key, in its own context only', () => {
    const sealed = box.seal('whsec_abc', 'webhook_secret:wh_1');
    assert.ok(!sealed.includes('whsec_abc'));
    assert.equal(SecretBox.keyIdOf(sealed), parseSecretKeys(current)[0]!.id);
    assert.notEqual(box.seal('whsec_abc', 'webhook_secret:wh_1'), sealed, 'a fresh IV each time');
    assert.equal(box.open(sealed, 'webhook_secret:wh_1'), 'whsec_abc');
    assert.equal(box.open(oldBox.seal('x', 'c'), 'c'), 'x', 'an old key still opens');
    assert.throws(() => box.open(sealed, 'webhook_secret:wh_2'), SecretBoxError, 'moved to another row');
    assert.equal(box.open('whsec_plain', 'c'), 'whsec_plain', 'a plaintext row from before is read as it is');
  });

  test('a wrong key is a clear error naming the key, not garbage', () => {
    const sealed = box.seal('secret', 'c');
    assert.throws(
      () => oldBox.open(sealed, 'c'),
      /sealed with key k[0-9a-f]{8}, which is not among the configured keys/,
    );
    const sameIdOtherKey = new SecretBox([{ id: SecretBox.keyIdOf(sealed)!, key: Buffer.alloc(32, 1) }]);
    assert.throws(() => sameIdOtherKey.open(sealed, 'c'), /does not open with the configured key/);
    const tampered = `${sealed.slice(0, -4)}AAAA`;
    assert.throws(() => box.open(tampered, 'c'), SecretBoxError);
    assert.throws(() => new SecretBox([], 'BILLING_SECRET_KEY is required').seal('x', 'c'), /is required/);
  });

  test('keys are id:base64 of 32 bytes; anything else is refused in plain words', () => {
    assert.throws(() => parseSecretKeys('k1:c2hvcnQ='), /is not 32 bytes in base64/);
    assert.throws(() => parseSecretKeys(`bad id!:${Buffer.alloc(32).toString('base64')}`), /the id must be/);
    const k = Buffer.alloc(32, 3).toString('base64');
    assert.throws(() => parseSecretKeys(`a:${k},a:${k}`), /appears twice/);
    assert.equal(parseSecretKeys(k)[0]!.id.length, 9, 'a bare key gets an id from its digest');
  });
});

/** Every value of every text column of the harness's PostgreSQL database, as one string. */
async function pgDump(h: Harness, companyId: string): Promise<string> {
  const c = new pg.Client({ connectionString: h.pgUrl });
  await c.connect();
  try {
    const hit = await c.query('SELECT 1 FROM companies WHERE company_id = $1', [companyId]);
    if (!hit.rowCount) throw new Error(`the harness's database does not hold ${companyId}`);
    let all = '';
    const tables = await c.query<{ t: string }>(
      'SELECT table_name AS t FROM information_schema.tables ' +
        "WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
    );
    for (const { t } of tables.rows) all += JSON.stringify((await c.query(`SELECT * FROM "${t}"`)).rows);
    return all;
  } finally {
    await c.end();
  }
}

for (const dialect of HTTP_DIALECTS) {
  describe(`secrets at rest (${dialect})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(dialect);
    });
    after(async () => h.close());

    test('neither the webhook secret nor the Stripe key is in the database; both still work', async () => {
      const co = await signUpCompany(h);
      const stripe = await h.request('POST', '/v1/companies', {
        auth: [co.email, co.password],
        body: { name: 'Striped', processor: 'stripe', processor_api_key: STRIPE_KEY },
        headers: { 'idempotency-key': 'company-with-stripe' },
      });
      assert.equal(stripe.status, 200, stripe.text);
      const createWebhook = () =>
        h.request('POST', '/v1/webhooks', {
          auth: co.auth,
          body: { type: 'balance_change', url: 'http://127.0.0.1:9/hook' },
          headers: { 'idempotency-key': 'webhook-1' },
        });
      const wh = await createWebhook();
      assert.equal(wh.status, 200, wh.text);
      const whsec: string = wh.body.data.secret;
      assert.match(whsec, /^whsec_/);
      const replay = await createWebhook();
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(replay.body, wh.body, 'the replayed answer (stored sealed) shows the same secret');

      const stored = await h.store.read(async (tx) => [
        ...(await tx.webhooks.listWebhookSecrets(null, 100)),
        ...(await tx.identity.listProcessorApiKeys(null, 100)),
      ]);
      const mine = stored.filter((s) => s.id === wh.body.data.webhook_id || s.id === stripe.body.data.company_id);
      assert.equal(mine.length, 2);
      for (const s of mine) assert.ok(SecretBox.isSealed(s.value), s.value);
      const box = testSecretBox();
      assert.equal(
        box.open(mine.find((s) => s.id.startsWith('wh'))!.value, `webhook_secret:${wh.body.data.webhook_id}`),
        whsec,
      );

      let everything: string;
      if (dialect === 'sqlite') {
        // What `strings` reads: the database file and its write-ahead log, as bytes.
        const file = (h.store as SqliteStore).filename;
        everything = [file, `${file}-wal`]
          .filter((f) => existsSync(f))
          .map((f) => readFileSync(f).toString('latin1'))
          .join('');
        assert.ok(everything.includes(co.companyId), 'the scan reads the data');
      } else {
        everything = await pgDump(h, co.companyId);
      }
      assert.ok(!everything.includes(whsec.slice('whsec_'.length)), 'the webhook secret is not stored in the clear');
      assert.ok(!everything.includes(STRIPE_KEY), 'the Stripe key is not stored in the clear');
      assert.ok(!everything.includes(co.apiKey) && !everything.includes(stripe.body.data.api_key), 'nor API keys');
      assert.ok(everything.includes('sbx1.test.'), 'sealed under the key id');
    });
  });

  test(`rows stored in plaintext before encryption are sealed at start and still open (${dialect})`, async () => {
    const db = sharedDatabase(dialect);
    try {
      const store = await db.open();
      await seedWebhookSubscription(store); // wh_1 with the plaintext secret whsec_AAAA
      await store.write(async (tx) => {
        const owner = await tx.identity.findUserByEmail('u@example.com');
        await tx.identity.insertCompany({
          companyId: 'c_2',
          name: 'Old',
          ownerUserId: owner!.id,
          processor: 'stripe',
          processorApiKey: STRIPE_KEY,
          createdAtMs: 0,
        });
      });
      const s = await serverOn(store);
      try {
        const [row] = await store.read((tx) => tx.webhooks.listWebhookSecrets(null, 10));
        assert.equal(row!.id, 'wh_1');
        assert.ok(SecretBox.isSealed(row!.value), row!.value);
        assert.equal(testSecretBox().open(row!.value, 'webhook_secret:wh_1'), 'whsec_AAAA');
        const [key] = await store.read((tx) => tx.identity.listProcessorApiKeys(null, 10));
        assert.equal(key!.id, 'c_2');
        assert.ok(SecretBox.isSealed(key!.value), key!.value);
        assert.equal(testSecretBox().open(key!.value, 'processor_api_key:c_2'), STRIPE_KEY);
      } finally {
        await s.close();
      }
      // A start with another key refuses, naming the key the rows need.
      const other = await db.open();
      await assert.rejects(serverOn(other, { BILLING_SECRET_KEY: newSecretKeyText() }), (err: Error) =>
        /sealed with key test, which is not among the configured keys/.test(err.message),
      );
      await other.close().catch(() => {});
    } finally {
      await db.drop();
    }
  });
}
