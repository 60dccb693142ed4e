// Guarantee: GET /v1/accounts?q= finds a company's accounts by name or email (contains, ASCII case-insensitive),
// account id (prefix) or a top-level metadata string value (exact), pages like the list, and never another's.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { HTTP_DIALECTS, assertError, signUpCompany, startHarness, type Harness } from '../support/harness.js';

for (const dialect of HTTP_DIALECTS) {
  describe(`account search (${dialect})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(dialect);
    });
    after(async () => h.close());

    test('name, email, id prefix and metadata value; paged; scoped to the company', async () => {
      const co = await signUpCompany(h);
      const other = await signUpCompany(h, 'Other');
      const create = async (c: typeof co, body: Record<string, unknown>) => {
        const r = await h.request('POST', `/v1/companies/${c.companyId}/accounts`, { auth: c.auth, body });
        assert.equal(r.status, 200, r.text);
        return r.body.data.account_id as string;
      };
      const ada = await create(co, { name: 'Ada Lovelace', email: 'ada@example.com', metadata: { crm: 'CRM-42' } });
      const grace = await create(co, { name: 'Grace Hopper', email: 'grace@navy.example', metadata: { n: 42 } });
      const bob = await create(co, { name: 'Bob', metadata: { nested: { crm: 'CRM-7' }, tier: 'gold' } });
      await create(co, { name: 'Ada Byron', email: 'byron@example.com' });
      const stranger = await create(other, { name: 'Ada Other', metadata: { crm: 'CRM-42' } });
      const search = async (q: string, extra = '') => {
        const r = await h.request('GET', `/v1/accounts?q=${encodeURIComponent(q)}${extra}`, { auth: co.auth });
        assert.equal(r.status, 200, r.text);
        return r.body as { data: { account_id: string; name: string }[]; has_more: boolean; next_cursor: string };
      };
      const ids = async (q: string) => (await search(q)).data.map((a) => a.name);

      assert.deepEqual(
        await ids('ada'),
        ['Ada Byron', 'Ada Lovelace'],
        'name contains, case-insensitive, newest first',
      );
      assert.deepEqual(await ids('LOVELACE'), ['Ada Lovelace']);
      assert.deepEqual(await ids('navy.example'), ['Grace Hopper'], 'email contains');
      assert.deepEqual(await ids(grace.slice(0, 8)).then((n) => n.includes('Grace Hopper')), true, 'id prefix');
      assert.deepEqual(await ids(grace), ['Grace Hopper'], 'whole id');
      assert.deepEqual(await ids(grace.slice(2)), [], 'an id matches by prefix only');
      assert.deepEqual(await ids('CRM-42'), ['Ada Lovelace'], "metadata value, exact; never another company's");
      assert.deepEqual(await ids('crm-42'), [], 'metadata values match exactly (case too)');
      assert.deepEqual(await ids('CRM'), [], 'metadata values match whole, not in part');
      assert.deepEqual(await ids('gold'), ['Bob'], 'a top-level string value');
      assert.deepEqual(await ids('CRM-7'), [], 'nested values are not searched');
      assert.deepEqual(await ids('42'), [], 'numbers are not string values');
      assert.deepEqual(await ids('crm'), [], 'keys are not searched');
      assert.deepEqual(await ids('%'), [], 'no wildcard');
      assert.deepEqual(await ids('_'), [], 'no wildcard (the ids contain _ but do not start with it)');
      assert.ok(!(await ids('Ada')).includes('Ada Other'));

      // Paging: one at a time through the two Adas.
      const first = await search('ada', '&limit=1');
      assert.deepEqual([first.data.map((a) => a.name), first.has_more], [['Ada Byron'], true]);
      const second = await search('ada', `&limit=1&starting_after=${first.next_cursor}`);
      assert.deepEqual([second.data.map((a) => a.name), second.has_more], [['Ada Lovelace'], false]);
      // A cursor is any account of the company, even one the query does not match.
      const afterBob = await search('ada', `&starting_after=${bob}`);
      assert.deepEqual(
        afterBob.data.map((a) => a.account_id),
        [ada],
      );
      assertError(
        await h.request('GET', `/v1/accounts?q=ada&starting_after=${stranger}`, { auth: co.auth }),
        400,
        'invalid_request',
      );
      assertError(await h.request('GET', '/v1/accounts?q=', { auth: co.auth }), 400, 'invalid_request');
      const all = await h.request('GET', '/v1/accounts', { auth: co.auth });
      assert.equal(all.body.data.length, 4, 'without q: every account');
    });
  });
}
