// Guarantee: no malformed, oversized, wrongly typed or unknown-field request gets a 5xx or
// changes anything; each gets the contract's error body and a 4xx.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  HTTP_DIALECTS,
  createAccountWithBalance,
  signUpCompany,
  startHarness,
  type Harness,
} from '../support/harness.js';

for (const dialect of HTTP_DIALECTS) {
  describe(`hostile input (${dialect})`, () => {
    let h: Harness;
    let co: Awaited<ReturnType<typeof signUpCompany>>;
    let acc: string;
    before(async () => {
      h = await startHarness(dialect);
      co = await signUpCompany(h);
      acc = await createAccountWithBalance(h, co, 'tokens', 1000);
    });
    after(async () => h.close());

    const ev = (extra: Record<string, unknown> = {}) => ({
      type: 'x',
      cost_override: { amount: 1, denomination: 'tokens' },
      ...extra,
    });
    const override1 = () => ({ cost_override: { amount: 1, denomination: 'tokens' } });
    const deep = (n: number): unknown => (n === 0 ? 1 : { a: deep(n - 1) });

    test('every hostile event request is a 4xx with an error body and changes nothing', async () => {
      const path = `/v1/accounts/${acc}/events`;
      const cases: { name: string; raw?: string; body?: unknown; headers?: Record<string, string>; status?: number }[] =
        [
          { name: 'malformed JSON', raw: '{"events": [' },
          { name: 'truncated unicode', raw: '[{"type":"\\ud800"' },
          { name: 'not JSON at all', raw: 'type=x&amount=1' },
          { name: 'JSON null', raw: 'null' },
          { name: 'JSON number', raw: '42' },
          { name: 'JSON string', raw: '"events"' },
          { name: 'empty array', body: [] },
          { name: 'empty object', body: {} },
          { name: 'too many events', body: Array.from({ length: 1001 }, () => ev()) },
          { name: 'unknown field', body: [ev({ amount: 5 })] },
          {
            name: 'unknown field in cost_override',
            body: [ev({ cost_override: { amount: 1, denomination: 'tokens', currency: 'usd' } })],
          },
          { name: 'unknown top-level field', body: { events: [ev()], extra: true } },
          { name: 'missing type', body: [{ cost_override: { amount: 1, denomination: 'tokens' } }] },
          { name: 'type wrong type', body: [ev({ type: 7 })] },
          { name: 'type empty', body: [ev({ type: '' })] },
          { name: 'type too long', body: [ev({ type: 'x'.repeat(10_000) })] },
          { name: 'quantity as string', body: [ev({ quantity: '10' })] },
          { name: 'quantity negative', body: [ev({ quantity: -1 })] },
          { name: 'quantity boolean', body: [ev({ quantity: true })] },
          { name: 'amount fractional', body: [ev({ cost_override: { amount: 1.5, denomination: 'tokens' } })] },
          { name: 'amount negative', body: [ev({ cost_override: { amount: -100, denomination: 'tokens' } })] },
          { name: 'amount as string', body: [ev({ cost_override: { amount: '1', denomination: 'tokens' } })] },
          {
            name: 'amount beyond 2^53',
            raw: `[{"type":"x","cost_override":{"amount":9007199254740993,"denomination":"tokens"}}]`,
          },
          { name: 'amount 1e308', raw: `[{"type":"x","cost_override":{"amount":1e308,"denomination":"tokens"}}]` },
          {
            name: 'both override spellings',
            body: [ev({ cost_override_amount: 1, cost_override_denomination: 'tokens' })],
          },
          { name: 'flat amount without denomination', body: [{ type: 'x', cost_override_amount: 1 }] },
          { name: 'denomination with space', body: [ev({ cost_override: { amount: 1, denomination: 'to kens' } })] },
          { name: 'state unknown', body: [ev({ state: 'settled' })] },
          { name: 'metadata not an object', body: [ev({ metadata: 'x' })] },
          { name: 'metadata array', body: [ev({ metadata: [1, 2] })] },
          { name: 'client id too long', body: [ev({ id: 'i'.repeat(129) })] },
          { name: 'client id empty', body: [ev({ id: '' })] },
          { name: 'gate flag as string', body: { events: [ev()], gate_on_balance: 'yes' } },
          { name: 'gate query not boolean', body: [ev()], status: 400 },
          {
            name: '__proto__ pollution',
            raw: '[{"type":"x","cost_override":{"amount":1,"denomination":"tokens"},"__proto__":{"admin":true}}]',
          },
          {
            name: 'constructor pollution',
            raw:
              '[{"type":"x","cost_override":{"amount":1,"denomination":"tokens"},' +
              '"constructor":{"prototype":{"admin":true}}}]',
          },
          { name: 'wrong content type', raw: '[]', headers: { 'content-type': 'text/plain' }, status: 415 },
          {
            name: 'form content type',
            raw: 'a=1',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            status: 415,
          },
          { name: 'oversized body', raw: `[${'"x",'.repeat(1_100_000)}"x"]`, status: 413 },
          { name: 'NUL in type', raw: '[{"type":"a\\u0000b","cost_override":{"amount":1,"denomination":"tokens"}}]' },
          {
            name: 'NUL in metadata key',
            raw: '[{"type":"x","metadata":{"k\\u0000":1},"cost_override":{"amount":1,"denomination":"tokens"}}]',
          },
          { name: 'unknown price type', body: [{ type: 'never-priced' }] },
          { name: 'unknown balance', body: [ev({ cost_override: { amount: 1, denomination: 'gold' } })] },
          { name: 'price × quantity overflow', body: [{ type: 'huge', quantity: 1e300 }] },
        ];
      await h.request('PUT', '/v1/prices/huge', {
        auth: co.auth,
        body: { denomination: 'tokens', unit_amount: '1000' },
      });
      for (const c of cases) {
        const query = c.name === 'gate query not boolean' ? '?gate_on_balance=maybe' : '';
        const r = await h.request('POST', path + query, {
          auth: co.auth,
          ...(c.raw !== undefined ? { raw: c.raw } : {}),
          ...(c.body !== undefined ? { body: c.body } : {}),
          ...(c.headers ? { headers: c.headers } : {}),
        });
        assert.ok(r.status >= 400 && r.status < 500, `${c.name}: status ${r.status} ${r.text.slice(0, 200)}`);
        if (c.status) assert.equal(r.status, c.status, c.name);
        assert.equal(typeof r.body?.error?.type, 'string', `${c.name}: ${r.text.slice(0, 200)}`);
        assert.equal(typeof r.body?.error?.message, 'string', c.name);
        assert.ok(!/at .*\.ts:\d+/.test(r.text), `${c.name}: no stack trace`);
      }
      const b = await h.request('GET', `/v1/accounts/${acc}/balance/tokens`, { auth: co.auth });
      assert.equal(b.body.data.amount, 1000, 'nothing was recorded');
      const tx = await h.request('GET', `/v1/accounts/${acc}/transactions`, { auth: co.auth });
      assert.equal(tx.body.data.length, 1);
      await h.audit();
    });

    test('hostile requests elsewhere: paths, queries, headers, other routes', async () => {
      const cases: [
        string,
        string,
        { body?: unknown; raw?: string; headers?: Record<string, string>; auth?: [string, string] | null },
      ][] = [
        ['GET', `/v1/accounts/${acc}/transactions?limit=abc`, {}],
        ['GET', `/v1/accounts/${acc}/transactions?limit=-1`, {}],
        ['GET', `/v1/accounts/${acc}/transactions?limit=1e3`, {}],
        ['GET', `/v1/accounts/${acc}/transactions?starting_after=tx_nope`, {}],
        ['GET', `/v1/accounts/${acc}/transactions?denomination=../../etc`, {}],
        ['GET', `/v1/accounts/${acc}/transactions?unknown=1`, {}],
        ['GET', `/v1/accounts/${'a'.repeat(300)}`, {}],
        ['GET', '/v1/accounts/%00', {}],
        ['GET', '/v1/nothing-here', {}],
        ['DELETE', '/v1/accounts', {}],
        ['POST', `/v1/accounts/${acc}/balance/tokens/adjustments`, { body: { amount: 9007199254740992 } }],
        ['POST', `/v1/accounts/${acc}/balance/tokens/adjustments`, { body: { amount: '5' } }],
        ['POST', `/v1/accounts/${acc}/balance/tokens/adjustments`, { body: {} }],
        ['PUT', '/v1/prices/p', { body: { denomination: 'tokens', unit_amount: '-1' } }],
        ['PUT', '/v1/prices/p', { body: { denomination: 'tokens', unit_amount: '1e5' } }],
        ['PUT', '/v1/prices/p', { body: { denomination: 'tokens', unit_amount: `0.${'1'.repeat(30)}` } }],
        ['PUT', '/v1/prices/p', { body: { denomination: 'tokens', unit_amount: ' 1' } }],
        ['PUT', '/v1/prices/p', { body: { denomination: 'tokens', unit_amount: 'NaN' } }],
        ['PUT', `/v1/accounts/${acc}`, { body: { metadata: null } }],
        ['PUT', `/v1/accounts/${acc}`, { body: { account_id: 'a_other' } }],
        ['PUT', '/v1/events/x', { body: { state: 'pending' } }],
        ['POST', '/v1/users', { body: { name: 'x', email: 'not-an-email', password: 'abcdefgh' }, auth: null }],
        ['POST', '/v1/users', { body: { name: 'x', email: 'a@b.c', password: 'abcdefgh', admin: true }, auth: null }],
        ['POST', '/v1/users', { raw: '{"name":"x","email":"a@b.c","password":"abcdefgh"', auth: null }],
        ['GET', '/v1/accounts', { headers: { authorization: 'Basic !!!notbase64' }, auth: null }],
        ['GET', '/v1/accounts', { headers: { authorization: 'Bearer abc' }, auth: null }],
        ['GET', '/v1/accounts', { headers: { authorization: `Basic ${'A'.repeat(5000)}` }, auth: null }],
        [
          'POST',
          `/v1/accounts/${acc}/balance/tokens/adjustments`,
          { body: { amount: 1 }, headers: { 'idempotency-key': 'k'.repeat(300) } },
        ],
        ['POST', '/v1/test_clock/advance', { body: { seconds: -5 } }],
        ['POST', '/v1/test_clock/advance', { body: { to: 'yesterday' } }],
        ['POST', '/v1/test_clock/advance', { body: { seconds: 1, to: '2030-01-01T00:00:00Z' } }],
      ];
      for (const [method, path, o] of cases) {
        const r = await h.request(method, path, {
          ...(o.auth === null ? {} : { auth: o.auth ?? co.auth }),
          ...(o.body !== undefined ? { body: o.body } : {}),
          ...(o.raw !== undefined ? { raw: o.raw } : {}),
          ...(o.headers ? { headers: o.headers } : {}),
        });
        assert.ok(
          r.status >= 400 && r.status < 500,
          `${method} ${path.slice(0, 80)}: ${r.status} ${r.text.slice(0, 200)}`,
        );
        assert.equal(typeof r.body?.error?.type, 'string', `${method} ${path.slice(0, 80)}: ${r.text.slice(0, 200)}`);
      }
      const b = await h.request('GET', `/v1/accounts/${acc}/balance/tokens`, { auth: co.auth });
      assert.equal(b.body.data.amount, 1000);
      await h.audit();
    });

    test('a duplicated JSON key is refused (400), not stored as either value', async () => {
      const before = await h.request('GET', `/v1/accounts/${acc}/balance/tokens`, { auth: co.auth });
      const r = await h.request('POST', `/v1/accounts/${acc}/events`, {
        auth: co.auth,
        raw: '[{"type":"x","id":"dup-key","cost_override":{"amount":1,"denomination":"tokens","amount":3}}]',
      });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.error.code, 'json_key_appears_twice');
      assert.equal((await h.request('GET', '/v1/events/dup-key', { auth: co.auth })).status, 404);
      const b = await h.request('GET', `/v1/accounts/${acc}/balance/tokens`, { auth: co.auth });
      assert.equal(b.body.data.amount, before.body.data.amount, 'nothing charged');
      await h.audit();
    });

    test('a number beyond a double (1e400) is a 400 naming its field, anywhere, and fails no one else', async () => {
      const events = `/v1/accounts/${acc}/events`;
      const override = '"cost_override":{"amount":1,"denomination":"tokens"}';
      const cases: [string, string, string, string][] = [
        ['POST', events, `[{"type":"x","quantity":1e400,${override}}]`, 'events[0].quantity'],
        ['POST', events, `{"events":[{"type":"x",${override}},{"type":"x","quantity":1e400}]}`, 'events[1].quantity'],
        ['POST', events, `[{"type":"x","quantity":-1e400,${override}}]`, 'events[0].quantity'],
        ['POST', events, `[{"type":"x","metadata":{"n":[1,1e999]},${override}}]`, 'events[0].metadata.n[1]'],
        [
          'POST',
          events,
          '[{"type":"x","cost_override":{"amount":1e400,"denomination":"tokens"}}]',
          'events[0].cost_override.amount',
        ],
        [
          'POST',
          '/v1/events',
          `{"account_id":"${acc}","events":[{"type":"x","quantity":1e400,${override}}]}`,
          'events[0].quantity',
        ],
        ['PUT', '/v1/prices/inf', '{"denomination":"tokens","unit_amount":1e400}', 'unit_amount'],
        ['POST', `/v1/accounts/${acc}/balance/tokens/adjustments`, '{"amount":1e400}', 'amount'],
        ['PUT', `/v1/accounts/${acc}`, '{"metadata":{"big":1e400}}', 'metadata.big'],
        ['POST', '/v1/test_clock/advance', '{"seconds":1e400}', 'seconds'],
      ];
      const before = await h.request('GET', `/v1/accounts/${acc}/balance/tokens`, { auth: co.auth });
      for (const [method, path, raw, param] of cases) {
        // Each refused request races valid ones, as in one group commit: they all still commit.
        const [r, ...others] = await Promise.all([
          h.request(method, path, { auth: co.auth, raw }),
          ...Array.from({ length: 4 }, () =>
            h.request('POST', events, { auth: co.auth, body: [{ type: 'x', quantity: 2, ...override1() }] }),
          ),
        ]);
        assert.equal(r.status, 400, `${raw}: ${r.text}`);
        assert.equal(r.body.error.code, 'invalid_request', raw);
        assert.equal(r.body.error.param, param, raw);
        assert.match(r.body.error.message, /finite number/, raw);
        for (const o of others) assert.equal(o.status, 200, o.text);
      }
      const after = await h.request('GET', `/v1/accounts/${acc}/balance/tokens`, { auth: co.auth });
      assert.equal(
        after.body.data.amount,
        before.body.data.amount - cases.length * 4,
        'only the valid events were recorded',
      );
      const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
      const [from, to] = [hour - 3_600_000, hour + 7_200_000].map((t) => new Date(t).toISOString());
      const usage = await h.request('GET', `/v1/accounts/${acc}/usage?from=${from}&to=${to}&window=all&type=x`, {
        auth: co.auth,
      });
      assert.equal(usage.status, 200, usage.text);
      for (const q of ['limit=1e400', 'limit=-1e400', 'limit=Infinity']) {
        const r = await h.request('GET', `/v1/accounts/${acc}/transactions?${q}`, { auth: co.auth });
        assert.equal(r.status, 400, `${q}: ${r.text}`);
        assert.equal(r.body.error.param, 'limit', q);
      }
      await h.audit();
    });

    test('nested metadata within the limit is stored and returned intact; deeper is 400', async () => {
      const r = await h.request('POST', `/v1/accounts/${acc}/events`, {
        auth: co.auth,
        body: [ev({ id: 'deep', metadata: deep(4) as Record<string, unknown> })],
      });
      assert.equal(r.status, 200, r.text);
      const e = await h.request('GET', '/v1/events/deep', { auth: co.auth });
      assert.deepEqual(e.body.data.metadata, deep(4));
      const deeper = await h.request('POST', `/v1/accounts/${acc}/events`, {
        auth: co.auth,
        body: [ev({ id: 'deeper', metadata: deep(50) as Record<string, unknown> })],
      });
      assert.equal(deeper.status, 400, deeper.text);
      assert.equal(deeper.body.error.type, 'invalid_request');
    });
  });
}
