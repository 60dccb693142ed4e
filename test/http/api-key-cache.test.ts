// Guarantee: a revoked API key is refused at once by the process that revoked it, and by every
// other process sharing the database once its key cache entry is older than BILLING_API_KEY_CACHE_MS.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HTTP_DIALECTS as DIALECTS, signUpCompany } from '../support/harness.js';
import { asHarness, serverOn, sharedDatabase, type TestServer } from '../support/webhooks.js';
import { until } from '../support/wait.js';

const CACHE_MS = 300;

for (const dialect of DIALECTS) {
  describe(`API key cache across processes (${dialect})`, () => {
    test('a key revoked on one server is refused by the other after the cache lifetime', async () => {
      const db = sharedDatabase(dialect);
      const env = { BILLING_API_KEY_CACHE_MS: String(CACHE_MS) };
      const servers: TestServer[] = [];
      try {
        servers.push(await serverOn(await db.open(), env), await serverOn(await db.open(), env));
        const [a, b] = servers as [TestServer, TestServer];
        const co = await signUpCompany(asHarness(a));
        const k = await a.request('POST', `/v1/companies/${co.companyId}/api_keys`, { auth: co.auth });
        assert.equal(k.status, 200, k.text);
        const key: [string, string] = [co.companyId, k.body.data.api_key];
        assert.equal(
          (await b.request('GET', '/v1/accounts', { auth: key })).status,
          200,
          'b has verified (and cached) the key',
        );

        const del = await a.request('DELETE', `/v1/companies/${co.companyId}/api_keys/${k.body.data.key_id}`, {
          auth: co.auth,
        });
        assert.equal(del.status, 200, del.text);
        assert.equal(
          (await a.request('GET', '/v1/accounts', { auth: key })).status,
          401,
          'the revoking server refuses it at once',
        );

        // Its cache entry goes stale CACHE_MS after b checked the key: from then on b refuses it (the bound on the
        // attempts, at least 20 s, is far past CACHE_MS).
        await until('the other server refuses it once its cache entry is stale', async () => {
          const status = (await b.request('GET', '/v1/accounts', { auth: key })).status;
          assert.ok(status === 200 || status === 401, `accepted while cached, then refused: ${status}`);
          return status === 401;
        });
        assert.equal(
          (await b.request('GET', '/v1/accounts', { auth: co.auth })).status,
          200,
          "the company's other key still works there",
        );
      } finally {
        for (const s of servers) await s.close();
        await db.drop();
      }
    });
  });
}
