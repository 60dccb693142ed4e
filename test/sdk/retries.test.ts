// Guarantee: the TypeScript client's writes are safe to retry and its retries are the right ones. A POST whose
// answer is lost when the connection is cut (after the real server applied it) is sent again with the same
// Idempotency-Key and applied once; 429 and 503 are retried no sooner than their Retry-After; 409
// idempotency_key_in_use, 500, 502, 504, timeouts and refused connections are retried; no other 4xx is; an answer
// that is not JSON is a BillingError with its status and first bytes; a client missing its settings refuses to be
// built. Local scripted servers stand in for a proxy where the real server would never answer so.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { after, describe, test } from 'node:test';
import { Billing, BillingError, type BillingOptions } from '../../sdk/typescript/src/index.js';
import { HTTP_DIALECTS, createAccountWithBalance, signUpCompany, startHarness } from '../support/harness.js';
import { until } from '../support/wait.js';

/** What a scripted server answers: a status, headers and a body (JSON unless a string). */
interface Scripted {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Never answer (the client's timeout must end the attempt). */
  hang?: boolean;
}

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  arrivedAt: number;
  answeredAt: number;
}

/** An HTTP server that answers the script in order (its last entry from then on), recording every request. */
async function scriptedServer(script: Scripted[]): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const step = script[Math.min(seen.length, script.length - 1)]!;
      const record: Seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        arrivedAt: performance.now(),
        answeredAt: Number.NaN,
      };
      seen.push(record);
      if (step.hang) return;
      const text = typeof step.body === 'string' ? step.body : JSON.stringify(step.body ?? {});
      const type = typeof step.body === 'string' ? 'text/html' : 'application/json';
      record.answeredAt = performance.now();
      res.writeHead(step.status, { 'content-type': type, 'request-id': `req-${seen.length}`, ...step.headers });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const servers: { close(): Promise<void> }[] = [];
after(() => Promise.all(servers.map((s) => s.close())));

async function scripted(script: Scripted[]) {
  const s = await scriptedServer(script);
  servers.push(s);
  return s;
}

const client = (baseUrl: string, extra: Partial<BillingOptions> = {}) =>
  new Billing({ baseUrl, companyId: 'c_test', apiKey: 'sk_test', ...extra });

const error = (type: string, code: string) => ({ error: { type, code, message: `${code} (test)` } });
const ACCOUNT = {
  data: {
    account_id: 'a_1',
    name: null,
    email: null,
    metadata: null,
    processor_id: null,
    plan_id: null,
    created_at: '2026-01-01T00:00:00.000Z',
    balances: [],
  },
};

async function refusal(call: Promise<unknown>): Promise<BillingError> {
  try {
    await call;
  } catch (err) {
    assert.ok(err instanceof BillingError, `a BillingError, not ${String(err)}`);
    return err;
  }
  assert.fail('the call succeeded');
}

/** Node's timers count whole milliseconds: a wait of N ms may end up to 1 ms before N ms of performance.now(). */
const TIMER_GRANULARITY_MS = 1;

for (const status of [429, 503]) {
  test(`${status} with Retry-After: sent again no sooner than Retry-After, with the same key`, async () => {
    const s = await scripted([
      { status, headers: { 'retry-after': '1' }, body: error('rate_limited', 'rate_limited') },
      { status: 200, body: ACCOUNT },
    ]);
    const account = await client(s.url).accounts.create({ name: 'Bob' });
    assert.equal(account.account_id, 'a_1');
    assert.equal(s.seen.length, 2);
    const [first, second] = s.seen as [Seen, Seen];
    assert.ok(
      second.arrivedAt - first.answeredAt >= 1000 - TIMER_GRANULARITY_MS,
      `the retry came ${second.arrivedAt - first.answeredAt} ms after the ${status}, before its Retry-After (1 s)`,
    );
    assert.match(String(first.headers['idempotency-key']), /^ik_[0-9a-f]{32}$/);
    assert.equal(second.headers['idempotency-key'], first.headers['idempotency-key'], 'the key is reused');
    assert.equal(second.body, first.body);
  });
}

test('409 idempotency_key_in_use, 500, 502 and 504 are retried; the caller’s own key is the one sent', async () => {
  for (const [status, code] of [
    [409, 'idempotency_key_in_use'],
    [500, 'internal'],
    [502, 'bad_gateway'],
    [504, 'gateway_timeout'],
  ] as const) {
    const s = await scripted([
      { status, headers: { 'retry-after': '0' }, body: error('conflict', code) },
      { status: 200, body: ACCOUNT },
    ]);
    const account = await client(s.url).accounts.update('a_1', { name: 'Bob' }, { idempotencyKey: `mine-${status}` });
    assert.equal(account.account_id, 'a_1', `${status} ${code}`);
    assert.deepEqual(
      s.seen.map((r) => [r.method, r.headers['idempotency-key']]),
      [
        ['PUT', `mine-${status}`],
        ['PUT', `mine-${status}`],
      ],
      `${status} ${code}: one retry, the same key`,
    );
  }
});

test('no other 4xx is retried: 400, 401, 402, 404, a 409 of another code; each thrown with its code', async () => {
  for (const [status, type, code] of [
    [400, 'invalid_request', 'no_price_for_event_type'],
    [401, 'authentication_required', 'authentication_required'],
    [402, 'insufficient_balance', 'insufficient_balance'],
    [404, 'not_found', 'not_found'],
    [409, 'conflict', 'idempotency_key_reused_with_different_request'],
  ] as const) {
    const s = await scripted([
      { status, body: error(type, code) },
      { status: 200, body: ACCOUNT },
    ]);
    const err = await refusal(client(s.url).events.ingest('a_1', [{ type: 'x' }]));
    assert.deepEqual([err.status, err.type, err.code, err.requestId], [status, type, code, 'req-1']);
    assert.equal(s.seen.length, 1, `${status} ${code} is not retried`);
  }
});

test('retries stop after maxRetries: the last answer is thrown', async () => {
  const s = await scripted([{ status: 503, headers: { 'retry-after': '0' }, body: error('x', 'not_ready') }]);
  const err = await refusal(client(s.url, { maxRetries: 1 }).accounts.retrieve('a_1'));
  assert.deepEqual([err.status, err.code], [503, 'not_ready']);
  assert.equal(s.seen.length, 2);
  const none = await scripted([{ status: 500, body: error('internal', 'internal') }]);
  await refusal(client(none.url, { maxRetries: 0 }).accounts.retrieve('a_1'));
  assert.equal(none.seen.length, 1, 'maxRetries 0: one attempt');
});

test('an answer that is not JSON (a proxy’s page) is a BillingError with its status and its first bytes', async () => {
  const page = `<html><body><h1>502 Bad Gateway</h1>${'x'.repeat(2000)}</body></html>`;
  const s = await scripted([{ status: 502, body: page }]);
  const err = await refusal(client(s.url, { maxRetries: 0 }).accounts.retrieve('a_1'));
  assert.deepEqual([err.status, err.type, err.code], [502, 'invalid_response', 'response_not_json']);
  assert.ok(err.body?.startsWith('<html><body><h1>502 Bad Gateway'), err.body);
  assert.ok((err.body ?? '').length < page.length, 'the first bytes, not the whole page');
  assert.match(err.message, /HTTP 502.*text\/html.*502 Bad Gateway/);

  const foreign = await scripted([{ status: 404, body: { message: 'no route (another server)' } }]);
  const other = await refusal(client(foreign.url).accounts.retrieve('a_1'));
  assert.deepEqual([other.status, other.type, other.code], [404, 'invalid_response', 'unexpected_error_body']);
  assert.match(other.message, /no route \(another server\)/);

  const ok = await scripted([{ status: 200, body: '<html>login page</html>' }]);
  const odd = await refusal(client(ok.url).accounts.retrieve('a_1'));
  assert.deepEqual([odd.status, odd.code, odd.body], [200, 'response_not_json', '<html>login page</html>']);
  assert.equal(ok.seen.length, 1, 'a 2xx is not retried');
});

test('no answer: a timeout and a refused connection are retried, then thrown as connection errors', async () => {
  const s = await scripted([{ status: 200, hang: true }]);
  const err = await refusal(
    client(s.url, { maxRetries: 1, timeoutMs: 200 }).balances.adjust('a_1', 't', { amount: 1 }),
  );
  assert.deepEqual([err.status, err.type, err.code], [0, 'connection_error', 'timeout']);
  assert.equal(s.seen.length, 2, 'the timed-out attempt was retried');
  assert.equal(s.seen[1]!.headers['idempotency-key'], s.seen[0]!.headers['idempotency-key']);

  const closed = net.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port } = closed.address() as AddressInfo;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const refused = await refusal(client(`http://127.0.0.1:${port}`, { maxRetries: 1 }).accounts.retrieve('a_1'));
  assert.deepEqual([refused.status, refused.type, refused.code], [0, 'connection_error', 'connection_failed']);
});

test('an abort by the caller ends the call at once with its reason, without retrying', async () => {
  const s = await scripted([{ status: 200, hang: true }]);
  const controller = new AbortController();
  const call = client(s.url).accounts.retrieve('a_1', { signal: controller.signal });
  await until('the request reaches the server', () => s.seen.length === 1);
  controller.abort(new Error('the user left'));
  await assert.rejects(call, /the user left/);
  assert.equal(s.seen.length, 1);
});

test('a client without baseUrl, companyId or apiKey is refused when it is built, naming what is missing', () => {
  assert.throws(
    () => new Billing({} as BillingOptions),
    (e: Error) => e instanceof TypeError && /baseUrl, companyId, apiKey are missing/.test(e.message),
  );
  assert.throws(
    () => new Billing({ baseUrl: 'http://127.0.0.1:8080', companyId: 'c_1', apiKey: '' }),
    /apiKey is missing/,
  );
  assert.throws(() => new Billing({ baseUrl: '127.0.0.1:8080', companyId: 'c_1', apiKey: 'sk_1' }), /baseUrl/);
  assert.throws(() => new Billing(undefined as unknown as BillingOptions), /options are required/);
});

/**
 * A TCP proxy in front of the real server that cuts the first connection carrying a POST as soon as the server
 * starts answering it: the server has applied the request, the client never sees the answer.
 */
async function cuttingProxy(target: string): Promise<{ url: string; requests: string[]; close(): Promise<void> }> {
  const { hostname, port } = new URL(target);
  const requests: string[] = [];
  const sockets = new Set<net.Socket>();
  let cut = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    let carriesPost = false;
    client.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      if (/^(GET|POST|PUT|PATCH|DELETE) /.test(text)) requests.push(text);
      if (text.startsWith('POST ')) carriesPost = true;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (carriesPost && !cut) {
        cut = true;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const keyOf = (raw: string) => /\r\nidempotency-key: ([^\r]+)\r\n/i.exec(raw)?.[1];

for (const dialect of HTTP_DIALECTS) {
  describe(`a write whose answer is lost is retried and applied once (${dialect})`, () => {
    test('the connection is cut after the server applied the events: the retry replays, nothing twice', async () => {
      const h = await startHarness(dialect);
      const proxy = await cuttingProxy(h.url);
      try {
        const co = await signUpCompany(h);
        const accountId = await createAccountWithBalance(h, co, 'tokens', 1000);
        const billing = new Billing({ baseUrl: proxy.url, companyId: co.companyId, apiKey: co.apiKey });
        // No event id: only the Idempotency-Key can tell the retry from a second request.
        const answer = await billing.events.ingest(accountId, [
          { type: 'call', cost_override: { amount: 7, denomination: 'tokens' } },
        ]);
        assert.equal(answer.events_submitted, 1);
        const posts = proxy.requests.filter((r) => r.startsWith('POST '));
        assert.equal(posts.length, 2, 'the POST was sent twice: once cut, once answered');
        assert.ok(keyOf(posts[0]!), 'with an Idempotency-Key');
        assert.equal(keyOf(posts[1]!), keyOf(posts[0]!), 'the same key both times');

        const direct = new Billing({ baseUrl: h.url, companyId: co.companyId, apiKey: co.apiKey });
        assert.equal((await direct.balances.retrieve(accountId, 'tokens')).amount, 993, 'deducted once');
        const events = await direct.events.list({ account_id: accountId });
        assert.deepEqual(
          events.data.map((e) => e.event_id),
          answer.event_ids,
          'one event recorded, the one the answer names',
        );
        await h.audit();
      } finally {
        await proxy.close();
        await h.close();
      }
    });
  });
}
