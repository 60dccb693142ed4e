// Guarantee: /openapi.json is a complete document (Redocly's recommended rules and operation-description find
// nothing, every operation is named by the convention and described, documented headers and statuses are the ones
// sent), a client generated from it with openapi-typescript type-checks, and the alias spellings answer as their
// route.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { ERROR_TYPES } from '../../src/http/errors.js';
import { TAGS, swaggerOptions } from '../../src/http/openapi.js';
import {
  HTTP_DIALECTS,
  assertError,
  createAccountWithBalance,
  signUpCompany,
  startHarness,
  type Harness,
} from '../support/harness.js';

const run = promisify(execFile);
/** The repository: the tests' working directory (this file may run compiled elsewhere: support/suite.ts). */
const ROOT = resolve('.');
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
/** docs/ARCHITECTURE.md, "OpenAPI operation ids": verb, then the resource, camelCase. */
const OPERATION_ID = /^(get|list|create|update|set|delete|[a-z]+)[A-Z][A-Za-z]*$/;

type Json = Record<string, any>;
function operations(doc: Json): { method: string; path: string; op: Json }[] {
  const out: { method: string; path: string; op: Json }[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>))
    for (const [method, op] of Object.entries(item)) if (METHODS.includes(method)) out.push({ method, path, op });
  return out;
}

describe('OpenAPI document: complete and lint-clean', () => {
  let h: Harness;
  let doc: Json;
  before(async () => {
    h = await startHarness('sqlite', { BILLING_TEST_CLOCK: '1' });
    doc = (await h.request('GET', '/openapi.json')).body;
  });
  after(async () => h.close());

  test("Redocly's recommended rules, and operation-description as an error, report no problem at all", async () => {
    // `recommended` leaves operation-description off: every operation must say what a user of it must know.
    const config = await createConfig({ extends: ['recommended'], rules: { 'operation-description': 'error' } });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: '/openapi.json', config });
    const listed = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    assert.deepEqual(listed, []);
  });

  test('every operation: a unique operationId by the convention, a description, a declared tag, security', () => {
    const ids = new Set<string>();
    const declared = new Map((doc.tags as { name: string; description: string }[]).map((t) => [t.name, t]));
    assert.deepEqual(
      [...declared.keys()],
      TAGS.map((t) => t.name),
    );
    for (const { method, path, op } of operations(doc)) {
      const where = `${method.toUpperCase()} ${path}`;
      assert.match(op.operationId ?? '', OPERATION_ID, `${where}: operationId`);
      assert.ok(!ids.has(op.operationId), `${where}: operationId ${op.operationId} used twice`);
      ids.add(op.operationId);
      assert.ok(op.tags?.length === 1 && declared.get(op.tags[0])?.description, `${where}: one declared tag`);
      assert.ok(Array.isArray(op.security), `${where}: security stated`);
      assert.ok(typeof op.description === 'string' && op.description.trim() !== '', `${where}: description`);
      for (const [status, r] of Object.entries(op.responses as Record<string, Json>))
        assert.ok(r.description && r.description !== 'Default Response', `${where} ${status}: described`);
    }
    for (const id of ['createAccount', 'listAccounts', 'listAccountEvents', 'createEvents', 'settleEvent'])
      assert.ok(ids.has(id), id);
    for (const [path, method] of [
      ['/healthz', 'get'],
      ['/openapi.json', 'get'],
      ['/v1/users', 'post'],
    ] as const)
      assert.deepEqual(doc.paths[path][method].security, [], `${path} is public`);
    assert.deepEqual(doc.paths['/v1/accounts'].get.security, [{ companyKey: [] }]);
    assert.deepEqual(doc.servers, [{ url: '/', description: 'This server' }]);
    const configured = swaggerOptions({ version: '1', publicUrl: 'https://billing.example.com' });
    assert.deepEqual(configured.openapi?.servers, [{ url: 'https://billing.example.com', description: 'This server' }]);
  });

  test('Idempotency-Key on every POST, PUT, PATCH, DELETE; error type an enum; 429 with its headers', () => {
    const mutating = operations(doc).filter((o) => o.method !== 'get');
    assert.ok(mutating.length > 20);
    for (const { method, path, op } of mutating) {
      const where = `${method.toUpperCase()} ${path}`;
      assert.ok(
        op.parameters.some((p: Json) => p.$ref === '#/components/parameters/IdempotencyKey'),
        `${where}: Idempotency-Key`,
      );
      const success = Object.keys(op.responses).find((s) => s.startsWith('2'))!;
      assert.ok(op.responses[success].headers['Idempotent-Replayed'], `${where}: Idempotent-Replayed`);
    }
    assert.equal(doc.components.parameters.IdempotencyKey.name, 'Idempotency-Key');
    assert.deepEqual(doc.components.schemas.Error.properties.error.properties.type.enum, [...ERROR_TYPES]);
    // Password and company-key routes may answer 429 with Retry-After (failed password attempts, per-company
    // limits); sign-up is limited per address by the plugin that also sends the X-RateLimit-* headers.
    for (const [path, method] of [
      ['/v1/users', 'post'],
      ['/v1/companies', 'post'],
      ['/v1/users/{user_id}', 'get'],
      ['/v1/companies/{company_id}/api_keys', 'get'],
      ['/v1/accounts', 'get'],
    ] as const) {
      const r = doc.paths[path][method].responses;
      assert.ok(r['429']?.headers['Retry-After'], `${method} ${path}: 429 with Retry-After`);
    }
    assert.ok(
      doc.paths['/v1/users'].post.responses['200'].headers['X-RateLimit-Remaining'],
      'sign-up: rate-limit headers',
    );
    assert.equal(doc.paths['/healthz'].get.responses['429'], undefined, 'not rate-limited: no 429');
  });

  test('the documented headers are the ones sent: rate-limit headers, Retry-After, Idempotent-Replayed', async () => {
    const tight = await startHarness('sqlite', { BILLING_SIGNUP_LIMIT_PER_MINUTE: '1' });
    try {
      const body = { name: 'Ada Lovelace', email: 'rl@example.com', password: 'correct horse battery' };
      const first = await tight.request('POST', '/v1/users', { body, headers: { 'idempotency-key': 'k1' } });
      assert.equal(first.status, 200, first.text);
      assert.equal(first.headers.get('x-ratelimit-limit'), '1');
      assert.equal(first.headers.get('x-ratelimit-remaining'), '0');
      assert.match(first.headers.get('x-ratelimit-reset') ?? '', /^\d+$/);
      const second = await tight.request('POST', '/v1/users', { body: { ...body, email: 'rl2@example.com' } });
      assertError(second, 429, 'rate_limited');
      assert.match(second.headers.get('retry-after') ?? '', /^\d+$/);
    } finally {
      await tight.close();
    }
  });

  test('the aliases are not in the document: each is listed in x-aliases of its operation', () => {
    assert.equal(doc.paths['/events'], undefined);
    assert.equal(doc.paths['/v1/companies/{company_id}/plans'].post, undefined);
    assert.equal(doc.paths['/v1/accounts/{account_id}/balance/{denomination}/auto_refill'], undefined);
    assert.deepEqual(doc.paths['/v1/events'].post['x-aliases'], ['/events']);
    assert.deepEqual(doc.paths['/v1/companies/{company_id}/plan'].post['x-aliases'], [
      '/v1/companies/{company_id}/plans',
    ]);
    assert.ok(
      doc.paths['/v1/accounts/{account_id}/balance/{denomination}/autorefill'].put['x-aliases'].includes(
        '/v1/accounts/{account_id}/balance/{denomination}/auto_refill',
      ),
    );
  });

  test('a client generated with openapi-typescript and openapi-fetch type-checks a small flow', async () => {
    // Inside the repository (its git-ignored test-results/) so that `openapi-fetch` resolves from its node_modules.
    await mkdir(join(ROOT, 'test-results'), { recursive: true });
    const dir = await mkdtemp(join(ROOT, 'test-results', 'openapi-client-'));
    try {
      await writeFile(join(dir, 'openapi.json'), JSON.stringify(doc));
      const generator = join(ROOT, 'node_modules', '.bin', 'openapi-typescript');
      await run(generator, [join(dir, 'openapi.json'), '-o', join(dir, 'schema.d.ts')], { cwd: dir });
      await writeFile(join(dir, 'flow.ts'), FLOW);
      await writeFile(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            noEmit: true,
            skipLibCheck: false,
            types: [],
            lib: ['ES2022', 'DOM'],
          },
          files: ['flow.ts', 'schema.d.ts'],
        }),
      );
      const tsc = join(ROOT, 'node_modules', '.bin', 'tsc');
      const ok = await run(tsc, ['-p', join(dir, 'tsconfig.json')], { cwd: dir }).then(
        () => '',
        (e: { stdout?: string; stderr?: string }) => `${e.stdout ?? ''}${e.stderr ?? ''}`,
      );
      assert.equal(ok, '', 'the flow type-checks');
      // And a mistake is caught: the generated types are not `any`.
      await writeFile(
        join(dir, 'flow.ts'),
        `${FLOW}\nexport const wrong: number = (null as unknown as Account).name;\n`,
      );
      const bad = await run(tsc, ['-p', join(dir, 'tsconfig.json')], { cwd: dir }).then(
        () => '',
        (e: { stdout?: string }) => e.stdout ?? 'failed',
      );
      assert.match(bad, /error TS2322/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** A small flow a client of the API writes: an account, a balance, events, a settle, a page of events. */
const FLOW = `import createClient from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type Account = components['schemas']['Account'];

export async function flow(baseUrl: string, companyId: string, apiKey: string): Promise<number> {
  const client = createClient<paths>({
    baseUrl,
    headers: { authorization: 'Basic ' + btoa(companyId + ':' + apiKey) },
  });
  const created = await client.POST('/v1/companies/{company_id}/accounts', {
    params: { path: { company_id: companyId } },
    body: { name: 'Ada', metadata: { crm_id: '42' } },
  });
  if (created.error) throw new Error(created.error.error.type + ': ' + created.error.error.message);
  const account: Account = created.data.data;
  await client.POST('/v1/accounts/{account_id}/balance/{denomination}', {
    params: { path: { account_id: account.account_id, denomination: 'tokens' }, header: { 'Idempotency-Key': 'b1' } },
    body: { amount: 1000 },
  });
  const recorded = await client.POST('/v1/accounts/{account_id}/events', {
    params: { path: { account_id: account.account_id } },
    body: [{ id: 'req-1', type: 'api_call', cost_override: { amount: 5, denomination: 'tokens' }, state: 'pending' }],
  });
  const ids: string[] = recorded.data?.event_ids ?? [];
  const settled = await client.PUT('/v1/events/{event_id}', {
    params: { path: { event_id: ids[0] ?? 'req-1' } },
    body: { state: 'complete' },
  });
  const state: 'pending' | 'complete' | 'cancelled' | undefined = settled.data?.data.state;
  const page = await client.GET('/v1/accounts/{account_id}/events', {
    params: { path: { account_id: account.account_id }, query: { limit: 10 } },
  });
  const found = await client.GET('/v1/accounts', { params: { query: { q: 'ada' } } });
  void state;
  return (page.data?.data.length ?? 0) + (found.data?.data.length ?? 0);
}
`;

for (const dialect of HTTP_DIALECTS) {
  describe(`alias spellings answer as their route (${dialect})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(dialect);
    });
    after(async () => h.close());

    test("the guide's paths without /v1, auto_refill and /plans", async () => {
      const co = await signUpCompany(h);
      const acc = await createAccountWithBalance(h, co, 'tokens', 100);
      const over = { cost_override: { amount: 3, denomination: 'tokens' } };
      const viaEvents = await h.request('POST', '/events', {
        auth: co.auth,
        body: { account_id: acc, events: [{ type: 'x', ...over }] },
      });
      assert.equal(viaEvents.status, 200, viaEvents.text);
      assert.equal(viaEvents.body.events_submitted, 1);
      const viaAccount = await h.request('POST', `/accounts/${acc}/events?gate_on_balance=true`, {
        auth: co.auth,
        body: [{ type: 'x', ...over }],
      });
      assert.equal(viaAccount.status, 200, viaAccount.text);
      const refill = await h.request('PUT', `/accounts/${acc}/auto_refill`, {
        auth: co.auth,
        body: { denomination: 'tokens', threshold: 10, amount: 50, usd_charge: 50 },
      });
      assert.equal(refill.status, 200, refill.text);
      assert.equal(refill.body.data.refill_threshold, 10);
      const balanceLevel = await h.request('PUT', `/v1/accounts/${acc}/balance/tokens/auto_refill/`, {
        auth: co.auth,
        body: { threshold: 20 },
      });
      assert.equal(balanceLevel.body.data.refill_threshold, 20, balanceLevel.text);
      // The card route runs its own validation: a missing token is its 400, not a 404.
      assertError(
        await h.request('POST', `/accounts/${acc}/card`, { auth: co.auth, body: {} }),
        400,
        'invalid_request',
      );
      const card = await h.request('POST', `/accounts/${acc}/card`, { auth: co.auth, body: { token: 'tok_visa' } });
      assert.equal(card.status, 200, card.text);
      // Credentials are checked on aliases exactly as on the route.
      assertError(await h.request('POST', '/events', { body: { account_id: acc, events: [{ type: 'x' }] } }), 401);
      const plan = {
        name: 'Pro',
        charge_amount: 100,
        balances: [{ amount: 10, denomination: 'tokens', overage_charge_amount: 1 }],
      };
      const viaPlans = await h.request('POST', `/v1/companies/${co.companyId}/plans`, { auth: co.auth, body: plan });
      assert.equal(viaPlans.status, 200, viaPlans.text);
      assert.match(viaPlans.body.data.plan_id, /^p_/);
      // One Idempotency-Key across spellings: the alias replays the canonical route's answer.
      const key = { 'idempotency-key': `alias-${dialect}` };
      const body = { account_id: acc, events: [{ type: 'x', ...over }] };
      const a = await h.request('POST', '/v1/events', { auth: co.auth, body, headers: key });
      const b = await h.request('POST', '/events', { auth: co.auth, body, headers: key });
      assert.equal(b.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(b.body, a.body);
      const bal = await h.request('GET', `/v1/accounts/${acc}/balance/tokens`, { auth: co.auth });
      assert.equal(bal.body.data.amount, 100 - 3 * 3, 'three events applied, the replay not');
      // Only the listed spellings: other paths without /v1 stay unknown.
      assertError(await h.request('GET', `/accounts/${acc}`, { auth: co.auth }), 404, 'not_found');
      await h.audit();
    });
  });
}
