// Guarantee: the HTTP edge cannot be held or broken by a client. Silent sockets are closed after the
// headers timeout while /healthz keeps answering; near the connection cap the idle ones make room;
// framing errors and oversized headers answer in the error envelope; an error answered before a
// large body was read closes the connection instead of reading the rest.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type Harness, signUpCompany, startHarness } from '../support/harness.js';

async function rawSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const s = connect(Number(port), hostname);
  s.on('error', () => {});
  await once(s, 'connect');
  return s;
}

/** Sends raw bytes and reads until the server closes the connection. */
async function exchange(url: string, bytes: string): Promise<string> {
  const s = await rawSocket(url);
  let got = '';
  s.on('data', (d) => {
    got += d;
  });
  s.write(bytes);
  await once(s, 'close');
  return got;
}

function envelope(response: string): { status: number; error: { type: string; message: string } } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1]);
  const body = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as {
    error: { type: string; message: string };
  };
  assert.equal(typeof body.error.type, 'string', response);
  assert.equal(typeof body.error.message, 'string', response);
  return { status, error: body.error };
}

describe('silent sockets and the connection cap', () => {
  test('sockets that never send a byte are closed by the server; /healthz answers meanwhile', async () => {
    const h = await startHarness('sqlite', {
      BILLING_HTTP_CONNECTION_TIMEOUT_MS: '500',
      BILLING_HTTP_HEADERS_TIMEOUT_MS: '300',
      BILLING_HTTP_REQUEST_TIMEOUT_MS: '600',
    });
    after(() => h.close());
    const silent: Socket[] = [];
    // Each reads (and drops) what it is sent: a socket that never reads never sees the server's close.
    for (let i = 0; i < 20; i++) silent.push((await rawSocket(h.url)).resume());
    // A socket may already have been closed while the others were connecting.
    const closed = Promise.all(silent.map((s) => (s.destroyed ? undefined : once(s, 'close'))));
    assert.equal((await fetch(`${h.url}/healthz`)).status, 200);
    await closed;
    assert.ok(silent.every((s) => s.destroyed));
    assert.equal((await fetch(`${h.url}/healthz`)).status, 200);
  });

  test('near the cap the longest-idle connections are closed to make room', async () => {
    const h = await startHarness('sqlite', { BILLING_HTTP_MAX_CONNECTIONS: '20' });
    after(() => h.close());
    const silent: Socket[] = [];
    for (let i = 0; i < 30; i++) silent.push(await rawSocket(h.url));
    // Every new connection past 90 % of the cap closed an older idle one: there is room for this.
    const res = await fetch(`${h.url}/healthz`, { headers: { connection: 'close' } });
    assert.equal(res.status, 200);
    await Promise.all(silent.slice(0, 10).map((s) => (s.destroyed ? undefined : once(s, 'close'))));
  });
});

describe('framing errors answer in the error envelope', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('sqlite');
  });
  after(() => h.close());

  const cases: [string, string, number][] = [
    ['headers over 16 KB', `GET /healthz HTTP/1.1\r\nHost: x\r\nIdempotency-Key: ${'k'.repeat(20_000)}\r\n\r\n`, 431],
    ['Content-Length: abc', 'POST /v1/users HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 400],
    [
      'a bad chunk size',
      'POST /v1/users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        'Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
      400,
    ],
    [
      'both Content-Length and Transfer-Encoding',
      'POST /v1/users HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n' +
        'Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
      400,
    ],
    ['a bad method', 'G(T /healthz HTTP/1.1\r\nHost: x\r\n\r\n', 400],
  ];
  for (const [name, bytes, status] of cases) {
    test(name, async () => {
      const r = envelope(await exchange(h.url, bytes));
      assert.equal(r.status, status);
      assert.equal(r.error.type, 'invalid_request');
    });
  }
});

describe('errors answered before a large body is read close the connection', () => {
  const TOTAL = 200 * 1024 * 1024;
  const CHUNK = Buffer.alloc(64 * 1024, 'a');

  /** Streams up to TOTAL bytes of body; returns the response text and how many bytes were written. */
  async function upload(url: string, head: string): Promise<{ response: string; written: number }> {
    const s = await rawSocket(url);
    let response = '';
    s.on('data', (d) => {
      response += d;
    });
    let closed = false;
    s.once('close', () => {
      closed = true;
    });
    s.write(head);
    let written = 0;
    while (!closed && written < TOTAL) {
      written += CHUNK.length;
      // The server closing the connection shows here as EPIPE or ECONNRESET: the upload ends.
      if (!s.write(CHUNK)) await Promise.race([once(s, 'drain'), once(s, 'close')]).catch(() => undefined);
    }
    if (!closed) await once(s, 'close').catch(() => undefined);
    return { response, written };
  }

  let h: Harness;
  let auth: string;
  before(async () => {
    h = await startHarness('sqlite');
    const co = await signUpCompany(h);
    auth = `Basic ${Buffer.from(`${co.companyId}:${co.apiKey}`).toString('base64')}`;
  });
  after(() => h.close());

  test('401: bad credentials on a 200 MB upload', async () => {
    const { response, written } = await upload(
      h.url,
      'POST /v1/events HTTP/1.1\r\nHost: x\r\n' +
        `Authorization: Basic ${Buffer.from('c_x:sk_bad').toString('base64')}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${TOTAL}\r\n\r\n`,
    );
    const r = envelope(response);
    assert.equal(r.status, 401);
    assert.match(response, /\r\nconnection: close\r\n/i);
    assert.ok(written < TOTAL / 4, `the connection was closed after ${written} of ${TOTAL} bytes`);
  });

  test('413: a body over the limit, sent chunked with good credentials', async () => {
    const { response, written } = await upload(
      h.url,
      `POST /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${TOTAL}\r\n\r\n`,
    );
    const r = envelope(response);
    assert.equal(r.status, 413);
    assert.equal(r.error.type, 'payload_too_large');
    assert.ok(written < TOTAL / 4, `the connection was closed after ${written} of ${TOTAL} bytes`);
  });
});
