// Guarantee: without BILLING_WEBHOOK_ALLOW_PRIVATE=1 no spelling of a loopback, private, link-local or metadata address
// can be registered, and even a stored one is never connected to: a loopback listener sees zero connections.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import {
  HTTP_DIALECTS,
  assertError,
  createAccountWithBalance,
  signUpCompany,
  startHarness,
  type Harness,
} from '../support/harness.js';
import { runJobs } from '../support/webhooks.js';

interface Listener {
  port: number;
  connections: () => number;
  close: () => Promise<void>;
}

/** A bare TCP listener on loopback: counts connections, answers nothing. */
async function loopbackListener(host: string, port = 0): Promise<Listener | null> {
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    connections++;
    sockets.add(s);
    s.destroy();
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, resolve);
    });
  } catch {
    return null; // e.g. no IPv6 loopback in this sandbox
  }
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => connections,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Private-address spellings aimed at the listener's port. */
function corpus(port: number): string[] {
  const p = `:${port}`;
  return [
    `http://127.0.0.1${p}/hook`,
    `https://127.0.0.1${p}/hook`,
    `http://127.1${p}/`,
    `http://127.0.1${p}/`,
    `http://2130706433${p}/`,
    `http://0x7f000001${p}/`,
    `http://0x7f.0.0.1${p}/`,
    `http://0x7F.1${p}/`,
    `http://0177.0.0.1${p}/`,
    `http://017700000001${p}/`,
    `http://0177.1${p}/`,
    `http://127.000.000.001${p}/`,
    `http://127.0.0.1.${p}/`,
    `http://127.0.0.2${p}/`,
    `http://127.255.255.254${p}/`,
    `http://%31%32%37.0.0.1${p}/`,
    `http://127.0.0.1%2e${p}/`,
    `http://１２７.０.０.１${p}/`,
    `http://[::1]${p}/`,
    `http://[0:0:0:0:0:0:0:1]${p}/`,
    `http://[::ffff:127.0.0.1]${p}/`,
    `http://[::ffff:7f00:1]${p}/`,
    `http://[0:0:0:0:0:ffff:127.0.0.1]${p}/`,
    `http://[::127.0.0.1]${p}/`,
    `http://[64:ff9b::7f00:1]${p}/`,
    `http://[::ffff:0:7f00:1]${p}/`,
    `http://localhost${p}/`,
    `http://LOCALHOST.${p}/`,
    `http://api.localhost${p}/`,
    `http://localhost.localdomain${p}/`,
    `http://0.0.0.0${p}/`,
    `http://0${p}/`,
    `http://[::]${p}/`,
    `http://user@127.0.0.1${p}/`,
    `http://example.com@127.0.0.1${p}/`,
    `http://example.com:x@127.0.0.1${p}/`,
    'http://10.0.0.1/',
    'http://10.255.255.255/',
    'http://172.16.0.1/',
    'http://172.31.255.254/',
    'http://192.168.0.1/',
    'http://100.64.0.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://169.254.170.2/',
    'http://[fe80::1]/',
    'http://[fd00::1]/',
    'http://[fd00:ec2::254]/',
    'http://metadata.google.internal/',
    'http://metadata/',
    'http://intranet/',
    'http://printer.local/',
    'http://router.lan/',
    'http://0xa9fea9fe/',
    'http://2852039166/',
    'http://[::ffff:169.254.169.254]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://224.0.0.1/',
    'http://255.255.255.255/',
    'http://198.18.0.1/',
    'http://192.0.2.1/',
  ];
}

for (const dialect of HTTP_DIALECTS) {
  describe(`webhook SSRF protection (${dialect})`, () => {
    let h: Harness;
    let v4: Listener;
    let v6: Listener | null;
    before(async () => {
      h = await startHarness(dialect, { BILLING_WEBHOOK_ALLOW_PRIVATE: '0' });
      v4 = (await loopbackListener('127.0.0.1'))!;
      v6 = await loopbackListener('::1', v4.port);
    });
    after(async () => {
      await h.close();
      await v4.close();
      await v6?.close();
    });

    test('no private-address spelling is registered (400), and the loopback listener sees no connection', async () => {
      const co = await signUpCompany(h);
      const urls = corpus(v4.port);
      for (const url of urls) {
        for (const type of ['balance_change', 'threshold']) {
          const r = await h.request('POST', '/v1/webhooks', { auth: co.auth, body: { type, url } });
          assertError(r, 400, 'invalid_request');
          assert.equal(r.body.error.param, 'url', `${url}: ${r.text}`);
        }
      }
      assert.deepEqual((await h.request('GET', '/v1/webhooks', { auth: co.auth })).body.data, [], 'none registered');
      await createAccountWithBalance(h, co, 'tokens', 100);
      await runJobs(h, co.auth, 60);
      assert.equal(v4.connections(), 0);
      assert.equal(v6?.connections() ?? 0, 0);
    });

    test(
      'a stored private URL (registered under another ' + 'policy) is refused at send time, never connected to',
      async () => {
        const co = await signUpCompany(h);
        const nowMs = h.server.clock.now();
        const stored = [
          `http://127.0.0.1:${v4.port}/a`,
          `http://0x7f.1:${v4.port}/b`,
          `http://localhost:${v4.port}/c`,
          `http://[::1]:${v4.port}/d`,
        ];
        await h.store.write(async (tx) => {
          for (const [i, url] of stored.entries()) {
            await tx.webhooks.insertWebhookSubscription({
              webhookId: `wh_stored${i}${dialect}`,
              companyId: co.companyId,
              type: 'balance_change',
              url,
              threshold: null,
              secret: 'whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0',
              createdAtMs: nowMs,
              deletedAtMs: null,
              disabledAtMs: null,
              disabledReason: null,
            });
          }
        });
        await createAccountWithBalance(h, co, 'tokens', 100);
        await runJobs(h, co.auth);
        for (const [i] of stored.entries()) {
          const list = await h.request('GET', `/v1/webhooks/wh_stored${i}${dialect}/deliveries`, { auth: co.auth });
          assert.equal(list.status, 200, list.text);
          const [d] = list.body.data;
          assert.equal(d.status, 'pending');
          assert.equal(d.attempts.length, 1);
          assert.equal(d.attempts[0].status_code, null);
          assert.match(d.attempts[0].error, /^(url_refused|address_refused)/);
          const manual = await h.request('POST', `/v1/webhooks/deliveries/${d.callback_id}/retry`, { auth: co.auth });
          assert.equal(manual.status, 200, manual.text);
          assert.match(manual.body.data.attempts.at(-1).error, /^(url_refused|address_refused)/);
        }
        assert.equal(v4.connections(), 0);
        assert.equal(v6?.connections() ?? 0, 0);
      },
    );
  });
}
