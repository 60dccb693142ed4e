// Guarantee: requests generated from /openapi.json with fixed, printed seeds — schema-valid ones and mutated ones
// (wrong types, huge and negative numbers, unknown and missing fields, long strings, invalid UTF-8, odd paths and
// queries, wrong methods and content types, truncated JSON, deep nesting, duplicate keys, broken framing over raw
// sockets) — never get a 5xx, every error is in the {"error":{"type","message"}} envelope, and a refused request
// changes nothing in the database.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { CLI_DIALECTS, type TestDatabase, freshDatabase } from '../cli/support.js';
import { report, rng, seed, size } from './support/config.js';
import { type Answer, isEnvelope, rawExchange, send } from './support/http.js';
import { judge } from './support/judge.js';
import { type Operation, arbitraryOf, fill, operationsOf } from './support/schema.js';
import { type ChildServer, startChildServer } from './support/server.js';
import { type Snapshotter, snapshotter } from './support/snapshot.js';
import { type Company, account, signUp } from './support/setup.js';

const REQUESTS = size(150, 5000);

interface Case {
  name: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  raw?: Buffer;
}

interface Context {
  db: TestDatabase;
  server: ChildServer;
  a: Company;
  b: Company;
  ids: Record<string, string>;
  ops: Operation[];
  snaps: Snapshotter;
}

const basicOf = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
/** `{"a":{"a":…1…}}` nested `n` deep, as text (JSON.stringify itself would overflow the stack). */
const deep = (n: number): string => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;

/** Runs the cases one by one: no 5xx, errors in the envelope, a refused one leaves every table as it was. */
async function runCases(ctx: Context, cases: Case[]) {
  const failures: string[] = [];
  const statuses: Record<string, number> = {};
  let current = await ctx.snaps.snap();
  for (const c of cases) {
    let a: Answer;
    try {
      a = await send(ctx.server.url, {
        method: c.method,
        path: c.path,
        headers: c.headers,
        ...(c.raw ? { raw: c.raw } : {}),
      });
    } catch (err) {
      failures.push(`${c.name}: connection error ${(err as Error).message}`);
      current = await ctx.snaps.snap();
      continue;
    }
    statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    const now = await ctx.snaps.snap();
    if (a.status >= 500) failures.push(`${c.name}: ${a.status} ${a.text.slice(0, 300)}`);
    // A HEAD answer has no body by HTTP's rules.
    if (a.status >= 400 && c.method !== 'HEAD' && !isEnvelope(a))
      failures.push(`${c.name}: ${a.status} outside the envelope: ${a.text}`);
    if (a.status >= 400) {
      const changed = Object.keys(now).filter((t) => now[t] !== current[t]);
      if (changed.length > 0) failures.push(`${c.name}: refused (${a.status}) but changed ${changed.join(', ')}`);
    }
    current = now;
  }
  return { failures, statuses };
}

function authFor(ctx: Context, op: Operation): Record<string, string> {
  if (op.security.includes('companyKey')) return { authorization: basicOf(ctx.a.companyId, ctx.a.apiKey) };
  if (op.security.includes('userPassword')) return { authorization: basicOf(ctx.a.email, ctx.a.password) };
  return {};
}

/** The requests, all drawn from the seed: the same seed, the same requests. */
function generate(ctx: Context, seedValue: number, count: number): Case[] {
  const ops = ctx.ops;
  const arb = fc
    .integer({ min: 0, max: ops.length - 1 })
    .chain((i) => fc.tuple(fc.constant(i), arbitraryOf(ops[i]!.body), fc.integer({ min: 0, max: 2 ** 31 - 1 })));
  return fc.sample(arb, { seed: seedValue, numRuns: count }).map(([i, body, r], n) => {
    const op = ops[i]!;
    const random = rng(r);
    const values: Record<string, string> = {};
    for (const p of op.pathParams) values[p] = random.int(3) === 0 ? `x${random.int(1e6)}` : (ctx.ids[p] ?? 'x');
    let path = fill(op.path, values);
    let method = op.method;
    const headers: Record<string, string> = { ...authFor(ctx, op) };
    let value: unknown = body;
    let raw: Buffer | undefined;
    const kinds = [
      'valid',
      'valid',
      'type',
      'number',
      'raw-number',
      'unknown-field',
      'drop',
      'long-string',
      'utf8',
      'content-type',
      'path',
      'query',
      'method',
      'truncated',
      'no-auth',
      'no-body',
    ] as const;
    const kind = random.pick(kinds);
    const slots = slotsOf(value);
    const slot = slots.length > 0 ? random.pick(slots) : undefined;
    switch (kind) {
      case 'type':
        if (slot) value = setAt(value, slot, random.pick([null, true, 'x', 7, [], {}, [1, 'a'], { z: 1 }, -1.5]));
        else value = random.pick([null, 'x', 7, []]);
        break;
      case 'number':
        if (slot)
          value = setAt(
            value,
            slot,
            random.pick([-1, -(2 ** 53) - 2, 2 ** 53 + 2, 1e308, -1e308, 0.5, 5e-324, 2 ** 63, -0]),
          );
        break;
      case 'raw-number': {
        // Any one number of the body (1e400 in a cost-overridden event's quantity once answered 500), or a
        // quantity put into the first event.
        const spelled = JSON.stringify(value ?? {}).replace(/^\[\{|"events":\[\{/, (m) => `${m}"quantity":0,`);
        const numbers = [...spelled.matchAll(/(-?\d+(\.\d+)?)(?=[,}\]])/g)].length;
        let n = random.int(Math.max(1, numbers));
        const text = spelled.replace(/(-?\d+(\.\d+)?)(?=[,}\]])/g, (m) =>
          n-- !== 0
            ? m
            : random.pick([
                '1e999999',
                '-1e999999',
                '1e400',
                '-1e400',
                '123456789012345678901234567890',
                '1.0000000000000000001',
                '-0',
              ]),
        );
        raw = Buffer.from(text);
        break;
      }
      case 'unknown-field':
        value =
          value !== null && typeof value === 'object' && !Array.isArray(value)
            ? { ...(value as object), [`zz${random.int(100)}`]: 1, __proto__x: { polluted: true } }
            : value;
        break;
      case 'drop':
        if (slot) value = setAt(value, slot, undefined);
        break;
      case 'long-string':
        if (slot) value = setAt(value, slot, 'é'.repeat(50_000 + random.int(50_000)));
        break;
      case 'utf8': {
        const text = JSON.stringify(value ?? {});
        const at = Math.max(1, text.indexOf('"') + 1);
        raw = Buffer.concat([
          Buffer.from(text.slice(0, at)),
          Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]),
          Buffer.from(text.slice(at)),
        ]);
        break;
      }
      case 'content-type':
        headers['content-type'] = random.pick([
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'application/json; charset=latin1',
          'application/xml',
          'application/json, text/plain',
          '',
        ]);
        break;
      case 'path':
        path = random.pick([
          path.replace(/\/[^/]+$/, '/%00'),
          path.replace(/\/[^/]+$/, '/..%2F..%2Fetc%2Fpasswd'),
          `${path}/`,
          `${path}//`,
          path.replace(/\/v1\//, '/v1//'),
          `${path}/${'a'.repeat(5000)}`,
          path.replace(/\/[^/]+$/, '/%E2%82'),
          path.replace(/\/[^/]+$/, '/%'),
          path.replace(/\/[^/]+$/, '/\u00e9\u4e2d'),
          `${path}?`,
          path.toUpperCase(),
        ]);
        break;
      case 'query':
        path += random.pick([
          '?limit=-1',
          '?limit=abc',
          '?limit=1e9',
          '?limit=1e400',
          '?limit=-1e400',
          '?limit=Infinity',
          '?limit=1&limit=2',
          '?starting_after[]=x',
          '?starting_after=%00',
          `?from=${'9'.repeat(40)}`,
          '?to=2026-13-45T99:99:99Z',
          '?window=fortnight',
          '?account_id=',
          '?gate_on_balance=maybe',
          `?type=${'%FF'.repeat(10)}`,
        ]);
        break;
      case 'method':
        method = random.pick(['PATCH', 'DELETE', 'PUT', 'POST', 'GET', 'OPTIONS', 'HEAD'].filter((m) => m !== method));
        break;
      case 'truncated': {
        const text = JSON.stringify(value ?? { a: 1 });
        raw = Buffer.from(text.slice(0, Math.max(1, random.int(text.length))));
        break;
      }
      case 'no-auth':
        delete headers.authorization;
        break;
      case 'no-body':
        value = undefined;
        break;
      default:
        break;
    }
    if (raw === undefined && value !== undefined && method !== 'GET' && method !== 'HEAD' && op.body !== undefined)
      raw = Buffer.from(JSON.stringify(value));
    if (raw !== undefined && method !== 'GET' && method !== 'HEAD') headers['content-type'] ??= 'application/json';
    else raw = undefined;
    if (headers['content-type'] === '') delete headers['content-type'];
    return { name: `#${n} ${kind} ${method} ${op.path}`, method, path, headers, ...(raw ? { raw } : {}) };
  });
}

type Slot = (string | number)[];

function slotsOf(v: unknown, at: Slot = [], out: Slot[] = []): Slot[] {
  if (Array.isArray(v)) for (let i = 0; i < v.length; i++) slotsOf(v[i], [...at, i], out);
  else if (v !== null && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) {
      out.push([...at, k]);
      slotsOf(x, [...at, k], out);
    }
  else if (at.length > 0 && typeof at.at(-1) === 'number') out.push(at);
  return out;
}

function setAt(v: unknown, slot: Slot, value: unknown): unknown {
  const copy = structuredClone(v) as any;
  let o = copy;
  for (const k of slot.slice(0, -1)) o = o[k];
  if (value === undefined) delete o[slot.at(-1)!];
  else o[slot.at(-1)!] = value;
  return copy;
}

for (const dialect of CLI_DIALECTS) {
  describe(`fuzzing from /openapi.json (${dialect})`, () => {
    let ctx: Context;
    before(async () => {
      const db = await freshDatabase(dialect);
      const server = await startChildServer(db.url);
      const url = server.url;
      const a = await signUp(url, 'A');
      const b = await signUp(url, 'B');
      const acc = await account(url, a, 'tokens', 1_000_000);
      const hold = await send(url, {
        method: 'POST',
        path: `/v1/accounts/${acc}/events`,
        auth: a.auth,
        body: [{ id: 'fuzz-hold', type: 'x', state: 'pending', cost_override: { amount: 3, denomination: 'tokens' } }],
      });
      assert.equal(hold.status, 200, hold.text);
      // A spare key for DELETE …/api_keys/{key_id} to revoke (the fuzzer keeps using the first).
      const spare = await send(url, { method: 'POST', path: `/v1/companies/${a.companyId}/api_keys`, auth: a.auth });
      assert.equal(spare.status, 200, spare.text);
      const doc = (await send(url, { method: 'GET', path: '/openapi.json' })).json;
      ctx = {
        db,
        server,
        a,
        b,
        ops: operationsOf(doc),
        snaps: await snapshotter(db),
        ids: {
          account_id: acc,
          denomination: 'tokens',
          type: 'x',
          event_id: 'fuzz-hold',
          company_id: a.companyId,
          user_id: String(a.userId),
          key_id: spare.json.data.key_id,
          plan_id: 'plan_missing',
          webhook_id: 'wh_missing',
          callback_id: 'cl_missing',
        },
      };
    });
    after(async () => {
      await ctx.snaps.close();
      await ctx.server.kill9();
      await ctx.db.drop();
    });

    test(
      'schema-valid and mutated requests: no 5xx, every error in the envelope, ' + 'a refused one changes nothing',
      async (t) => {
        const s = seed(dialect === 'sqlite' ? 16_401 : 16_402);
        t.diagnostic(`seed ${s} (RELIABILITY_SEED=${s} replays these ${REQUESTS} requests)`);
        const cases = generate(ctx, s, REQUESTS);
        const { failures, statuses } = await runCases(ctx, cases);
        report(t, `fuzz-${dialect}`, { seed: s, requests: cases.length, statuses, failures: failures.length });
        assert.deepEqual(failures, []);
        assert.deepEqual(await judge(ctx.db), [], 'ledger audit');
      },
    );

    test('deep nesting: refused with 400 alone; another company’s requests in its groups all succeed', async (t) => {
      const auth = { authorization: basicOf(ctx.a.companyId, ctx.a.apiKey) };
      const acc = ctx.ids.account_id!;
      const poison = (n: number): Case[] => [
        {
          name: `events metadata ${n} deep`,
          method: 'POST',
          path: `/v1/accounts/${acc}/events`,
          headers: { ...auth, 'content-type': 'application/json' },
          raw: Buffer.from(`[{"type":"x","metadata":${deep(n)}}]`),
        },
        {
          name: `account metadata ${n} deep`,
          method: 'PUT',
          path: `/v1/accounts/${acc}`,
          headers: { ...auth, 'content-type': 'application/json' },
          raw: Buffer.from(`{"metadata":${deep(n)}}`),
        },
        {
          name: `new account metadata ${n} deep`,
          method: 'POST',
          path: `/v1/companies/${ctx.a.companyId}/accounts`,
          headers: { ...auth, 'content-type': 'application/json' },
          raw: Buffer.from(`{"name":"x","metadata":${deep(n)}}`),
        },
      ];
      const cases = [
        ...poison(3000),
        ...poison(10_000),
        {
          name: 'a body of 200,000 nested arrays',
          method: 'POST',
          path: `/v1/accounts/${acc}/events`,
          headers: { ...auth, 'content-type': 'application/json' },
          raw: Buffer.from(`${'['.repeat(200_000)}${']'.repeat(200_000)}`),
        },
      ];
      const { failures } = await runCases(ctx, cases);
      for (const c of cases) {
        const r = await send(ctx.server.url, { method: c.method, path: c.path, headers: c.headers, raw: c.raw! });
        if (r.status !== 400) failures.push(`${c.name}: ${r.status}, not 400`);
      }
      // A poisoned request must fail alone: B's ordinary events sent at the same time all succeed.
      const bAcc = await account(ctx.server.url, ctx.b, 'tokens', 1000);
      const mixed = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          i % 2 === 0
            ? send(ctx.server.url, { ...poison(10_000)[0]!, raw: poison(10_000)[0]!.raw! })
            : send(ctx.server.url, {
                method: 'POST',
                path: `/v1/accounts/${bAcc}/events`,
                auth: ctx.b.auth,
                body: [{ type: 'x', cost_override: { amount: 1, denomination: 'tokens' } }],
              }),
        ),
      );
      const bFailed = mixed.filter((r, i) => i % 2 === 1 && r.status !== 200).length;
      report(t, `fuzz-deep-${dialect}`, {
        cases: cases.length,
        failures: failures.length,
        other_company_failed: bFailed,
      });
      assert.deepEqual(failures, []);
      assert.equal(bFailed, 0, "another company's requests failed beside a poisoned one");
    });

    test('duplicate JSON keys are refused with 400 in the envelope and change nothing', async () => {
      const auth = { authorization: basicOf(ctx.a.companyId, ctx.a.apiKey), 'content-type': 'application/json' };
      const acc = ctx.ids.account_id!;
      const cases: Case[] = [
        {
          name: 'adjustment amount twice',
          method: 'POST',
          path: `/v1/accounts/${acc}/balance/tokens/adjustments`,
          headers: auth,
          raw: Buffer.from('{"amount":5,"amount":-3}'),
        },
        {
          name: 'event cost twice',
          method: 'POST',
          path: `/v1/accounts/${acc}/events`,
          headers: auth,
          raw: Buffer.from('[{"type":"x","cost_override":{"amount":1,"amount":900,"denomination":"tokens"}}]'),
        },
        {
          name: 'account name twice',
          method: 'PUT',
          path: `/v1/accounts/${acc}`,
          headers: auth,
          raw: Buffer.from('{"name":"a","name":"b"}'),
        },
      ];
      const { failures } = await runCases(ctx, cases);
      for (const c of cases) {
        const r = await send(ctx.server.url, { method: c.method, path: c.path, headers: c.headers, raw: c.raw! });
        if (r.status !== 400) failures.push(`${c.name}: ${r.status}, not 400`);
      }
      assert.deepEqual(failures, []);
    });

    test('broken framing and oversized headers over raw sockets: a 4xx in the envelope, nothing changed', async () => {
      const port = ctx.server.port;
      const auth = basicOf(ctx.a.companyId, ctx.a.apiKey);
      const path = `/v1/accounts/${ctx.ids.account_id}/balance/tokens/adjustments`;
      const head = (extra: string) =>
        `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\nContent-Type: application/json\r\n${extra}`;
      const BOTH_LENGTHS = 'Content-Length: 12\r\nTransfer-Encoding: chunked\r\n\r\n';
      const CHUNKED_BODY = 'c\r\n{"amount":1}\r\n0\r\n\r\n';
      const frames: Record<string, string> = {
        'Content-Length: abc': `${head('Content-Length: abc\r\n\r\n')}{"amount":1}`,
        'negative Content-Length': `${head('Content-Length: -5\r\n\r\n')}{"amount":1}`,
        'two Content-Lengths': `${head('Content-Length: 12\r\nContent-Length: 13\r\n\r\n')}{"amount":1}`,
        'bad chunk size': `${head('Transfer-Encoding: chunked\r\n\r\n')}zz\r\n{"amount":1}\r\n0\r\n\r\n`,
        'Content-Length and Transfer-Encoding': `${head(BOTH_LENGTHS)}${CHUNKED_BODY}`,
        'unknown Transfer-Encoding': `${head('Transfer-Encoding: gzip, chunked, foo\r\n\r\n')}0\r\n\r\n`,
        'bad method': `FOO ${path} HTTP/1.1\r\nHost: x\r\n\r\n`,
        'bad HTTP version': `GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n`,
        'space in header name': `GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n`,
        'control character in a header': `GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\u0001b\r\n\r\n`,
        'header over 16 KB':
          `GET /v1/accounts HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\n` +
          `Idempotency-Key: ${'k'.repeat(20_000)}\r\n\r\n`,
        'request line over 16 KB': `GET /v1/accounts?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      };
      const failures: string[] = [];
      let current = await ctx.snaps.snap();
      for (const [name, bytes] of Object.entries(frames)) {
        const r = await rawExchange(port, bytes);
        let json: unknown;
        try {
          json = JSON.parse(r.body);
        } catch {
          json = undefined;
        }
        if (r.status < 400 || r.status >= 500) failures.push(`${name}: status ${r.status}`);
        else if (!isEnvelope({ json })) failures.push(`${name}: ${r.status} outside the envelope: ${r.body}`);
        const now = await ctx.snaps.snap();
        const changed = Object.keys(now).filter((k) => now[k] !== current[k]);
        if (changed.length > 0) failures.push(`${name}: changed ${changed.join(', ')}`);
        current = now;
      }
      assert.deepEqual(failures, []);
    });
  });
}
