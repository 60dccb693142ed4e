// Guarantee: the key list shows when each key was last used (null: never), recorded from the test clock
// at most once a minute per key, and the list answers after this server's writes of those uses.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { HTTP_DIALECTS, signUpCompany, startHarness, type Harness } from '../support/harness.js';

for (const dialect of HTTP_DIALECTS) {
  describe(`API keys: last_used_at (${dialect})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(dialect);
    });
    after(async () => h.close());
    afterEach(async () => h.audit());

    test('a used key is listed with the time of its use, an unused one with null; once a minute', async () => {
      const co = await signUpCompany(h);
      // Reads and moves the server's test clock without touching co's keys.
      const clockCo = await signUpCompany(h, 'Clock');
      const owner: [string, string] = [co.email, co.password];
      const created = await h.request('POST', `/v1/companies/${co.companyId}/api_keys`, { auth: owner });
      assert.equal(created.status, 200, created.text);
      const unusedId: string = created.body.data.key_id;

      const lastUsed = async (auth = owner): Promise<Record<string, string | null>> => {
        const list = await h.request('GET', `/v1/companies/${co.companyId}/api_keys`, { auth });
        assert.equal(list.status, 200, list.text);
        return Object.fromEntries(
          (list.body.data as { key_id: string; last_used_at: string | null }[]).map((k) => [k.key_id, k.last_used_at]),
        );
      };
      const fresh = await lastUsed();
      assert.equal(Object.keys(fresh).length, 2);
      assert.deepEqual(Object.values(fresh), [null, null], 'a new key has never been used');
      const usedId = Object.keys(fresh).find((id) => id !== unusedId)!;

      const clock = async (seconds?: number): Promise<string> => {
        const r =
          seconds === undefined
            ? await h.request('GET', '/v1/test_clock', { auth: clockCo.auth })
            : await h.request('POST', '/v1/test_clock/advance', { auth: clockCo.auth, body: { seconds } });
        assert.equal(r.status, 200, r.text);
        return r.body.data.now;
      };
      const use = async () => assert.equal((await h.request('GET', '/v1/accounts', { auth: co.auth })).status, 200);

      const t0 = await clock();
      await use();
      assert.deepEqual(await lastUsed(), { [usedId]: t0, [unusedId]: null });

      await clock(30);
      await use();
      assert.deepEqual(await lastUsed(), { [usedId]: t0, [unusedId]: null }, 'within the minute: not written again');

      const t1 = await clock(30);
      await use();
      assert.deepEqual(await lastUsed(), { [usedId]: t1, [unusedId]: null }, 'a minute later: written');

      // A use by a refused request still counts: the key authenticated it.
      const t2 = await clock(60);
      const refused = await h.request('GET', '/v1/accounts/a_missing', { auth: co.auth });
      assert.equal(refused.status, 404, refused.text);
      assert.deepEqual(await lastUsed(co.auth), { [usedId]: t2, [unusedId]: null }, 'listed by the key itself');
    });
  });
}
