// Guarantee: the server serves the built console at `/` (index.html never cached, hashed assets cached for
// a year, compressed for browsers that accept it, any console path answering the page) while API, docs and
// system paths keep their own answers: unknown /v1 paths stay JSON 404s, and the console is not in the OpenAPI
// document.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { ensureConsoleBuilt } from '../support/console.js';
import { assertError, startHarness, type Harness } from '../support/harness.js';

const HTML = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

describe('console serving', () => {
  let h: Harness;
  before(async () => {
    await ensureConsoleBuilt();
    h = await startHarness('sqlite');
  });
  after(async () => h.close());

  test('/ and every console path answer index.html, never cached, with a strict CSP', async () => {
    for (const path of ['/', '/login', '/c/c_abc/accounts/a_1', '/verify-email?token=x']) {
      const r = await h.request('GET', path, { headers: HTML });
      assert.equal(r.status, 200, path);
      assert.match(r.headers.get('content-type') ?? '', /^text\/html/);
      assert.equal(r.headers.get('cache-control'), 'no-cache');
      assert.match(r.headers.get('content-security-policy') ?? '', /script-src 'self'/);
      assert.match(r.text, /<div id="app">/);
    }
  });

  test('hashed assets are immutable for a year and sent compressed when accepted', async () => {
    const page = await h.request('GET', '/', { headers: HTML });
    const assets = [...page.text.matchAll(/\/assets\/[^"]+\.(?:js|css)/g)].map((m) => m[0]);
    assert.ok(assets.length >= 2, page.text);
    for (const path of assets) {
      const plain = await fetch(h.url + path, { headers: { 'accept-encoding': 'identity' } });
      assert.equal(plain.status, 200, path);
      assert.equal(plain.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      const raw = Buffer.from(await plain.arrayBuffer());
      const gz = await fetch(h.url + path, { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(gz.headers.get('content-encoding'), 'gzip');
      assert.deepEqual(Buffer.from(await gz.arrayBuffer()), raw, 'the same file once decompressed');
    }
    const missing = await h.request('GET', '/assets/nope-123.js');
    assert.equal(missing.status, 404);
    assert.ok(readdirSync('console/dist/assets').length > 0);
  });

  test('API, docs and system paths keep their answers; unknown /v1 paths are JSON 404s even for browsers', async () => {
    assertError(await h.request('GET', '/v1/nope', { headers: HTML }), 404, 'not_found');
    assertError(await h.request('GET', '/v1/nope'), 404);
    const metrics = await h.request('GET', '/metrics', { headers: HTML });
    assert.match(metrics.text, /^# HELP /m, '/metrics is the Prometheus text, not the console');
    assertError(await h.request('GET', '/v1/metrics', { headers: HTML }), 404);
    assertError(await h.request('GET', '/favicon.ico', { headers: { accept: 'image/*' } }), 404);
    assertError(await h.request('POST', '/login', { body: {} }), 404);
    assert.equal((await h.request('GET', '/healthz', { headers: HTML })).body.status, 'ok');
    const docs = await h.request('GET', '/docs/', { headers: HTML });
    assert.match(docs.text, /swagger/i);
    const doc = await h.request('GET', '/openapi.json', { headers: HTML });
    const paths = Object.keys(doc.body.paths);
    assert.ok(paths.includes('/v1/accounts'));
    assert.deepEqual(
      paths.filter((p) => !p.startsWith('/v1/') && !['/healthz', '/readyz', '/metrics', '/openapi.json'].includes(p)),
      [],
    );
  });
});
