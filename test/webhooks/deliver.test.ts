// Guarantees one delivery attempt reports success only for a 2xx, never follows redirects, bounds what it reads and how
// long it waits.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { closeDeliveryAgents, deliverOnce, type DeliverInput } from '../../src/webhooks/deliver.js';
import { generateWebhookSecret, webhookHeaders } from '../../src/webhooks/signing.js';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Receiver {
  url: string;
  requests: Received[];
  connections: () => number;
  close: () => Promise<void>;
}

const servers: Receiver[] = [];
after(async () => {
  closeDeliveryAgents();
  await Promise.all(servers.map((s) => s.close()));
});

/** A local receiver; `respond` runs once the request body has been read. */
async function receiver(respond: (res: http.ServerResponse, req: Received) => void): Promise<Receiver> {
  const requests: Received[] = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(received);
      respond(res, received);
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const r: Receiver = {
    url: `http://127.0.0.1:${port}/hooks`,
    requests,
    connections: () => connections,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  servers.push(r);
  return r;
}

const BODY = JSON.stringify({ type: 'balance_change', callback_id: 'cb_test', balance: 100 });

function input(url: string, extra: Partial<DeliverInput> = {}): DeliverInput {
  return { url, headers: { 'content-type': 'application/json' }, body: BODY, allowPrivate: true, ...extra };
}

test('2xx is success; the receiver gets the body and verifiable Standard Webhooks headers', async () => {
  const rx = await receiver((res) => res.writeHead(200).end('thanks'));
  const secret = generateWebhookSecret();
  const headers = webhookHeaders({
    secret,
    msgId: 'cb_test',
    timestampSeconds: Math.floor(Date.now() / 1000),
    body: BODY,
  });
  const r = await deliverOnce(input(rx.url, { headers: { ...headers } }));
  assert.deepEqual(
    { ok: r.ok, statusCode: r.statusCode, error: r.error, gone: r.gone, snippet: r.responseSnippet },
    { ok: true, statusCode: 200, error: null, gone: false, snippet: 'thanks' },
  );
  assert.ok(r.latencyMs >= 0);
  const got = rx.requests[0];
  assert.ok(got);
  assert.equal(got.body, BODY);
  assert.equal(got.headers['webhook-id'], 'cb_test');
  assert.equal(got.headers['content-type'], 'application/json');
  assert.equal(got.headers['user-agent'], headers['user-agent']);
  const wire = Object.fromEntries(
    ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(got.headers[h])]),
  );
  assert.deepEqual(new Webhook(secret).verify(got.body, wire), JSON.parse(BODY));
});

test('500 is a failure and the response snippet is bounded to snippetBytes', async () => {
  const big = 'x'.repeat(1024 * 1024);
  const rx = await receiver((res) => res.writeHead(500, { 'content-type': 'text/plain' }).end(big));
  const r = await deliverOnce(input(rx.url, { snippetBytes: 100 }));
  assert.equal(r.ok, false);
  assert.equal(r.statusCode, 500);
  assert.equal(r.error, null);
  assert.equal(r.gone, false);
  assert.equal(r.responseSnippet, 'x'.repeat(100));
});

test('snippet never ends in half a UTF-8 character', async () => {
  const rx = await receiver((res) => res.writeHead(400).end('é'.repeat(10)));
  const r = await deliverOnce(input(rx.url, { snippetBytes: 5 }));
  assert.equal(r.statusCode, 400);
  assert.equal(r.responseSnippet, 'éé');
});

test('410 marks the subscription gone', async () => {
  const rx = await receiver((res) => res.writeHead(410).end('unsubscribed'));
  const r = await deliverOnce(input(rx.url));
  assert.deepEqual({ ok: r.ok, statusCode: r.statusCode, gone: r.gone }, { ok: false, statusCode: 410, gone: true });
});

test('a 302 redirect is a failure and is not followed', async () => {
  const target = await receiver((res) => res.writeHead(200).end('should not be reached'));
  const rx = await receiver((res) => res.writeHead(302, { location: target.url }).end());
  const r = await deliverOnce(input(rx.url));
  assert.equal(r.ok, false);
  assert.equal(r.statusCode, 302);
  assert.equal(rx.requests.length, 1);
  assert.equal(target.requests.length, 0);
  assert.equal(target.connections(), 0);
});

test('a receiver that never answers yields the error value "timeout"', async () => {
  const rx = await receiver(() => {
    /* never respond */
  });
  const r = await deliverOnce(input(rx.url, { timeoutMs: 200 }));
  assert.deepEqual(
    { ok: r.ok, statusCode: r.statusCode, error: r.error, gone: r.gone },
    { ok: false, statusCode: null, error: 'timeout', gone: false },
  );
});

test('a 2xx whose body stalls still counts: the status arrived in time', async () => {
  const rx = await receiver((res) => {
    res.writeHead(202);
    res.write('partial');
  });
  const r = await deliverOnce(input(rx.url, { timeoutMs: 200 }));
  assert.deepEqual(
    { ok: r.ok, statusCode: r.statusCode, error: r.error, snippet: r.responseSnippet },
    { ok: true, statusCode: 202, error: null, snippet: 'partial' },
  );
});

test('a closed port is returned as connection_refused, not thrown', async () => {
  const rx = await receiver((res) => res.end());
  await rx.close();
  const r = await deliverOnce(input(rx.url));
  assert.deepEqual(
    { ok: r.ok, statusCode: r.statusCode, error: r.error },
    { ok: false, statusCode: null, error: 'connection_refused' },
  );
});

test('non-http URLs are returned as url_refused, not thrown', async () => {
  const r = await deliverOnce(input('file:///etc/passwd'));
  assert.equal(r.ok, false);
  assert.match(r.error ?? '', /^url_refused: /);
});

test('keep-alive: consecutive deliveries to one receiver share a connection', async () => {
  const rx = await receiver((res) => res.writeHead(204).end());
  for (let i = 0; i < 5; i++) assert.equal((await deliverOnce(input(rx.url))).ok, true);
  assert.equal(rx.connections(), 1);
});
