// Guarantees webhook URLs cannot reach loopback, private networks or cloud metadata, in any spelling, at registration
// or connect time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LookupAddress } from 'node:dns';
import {
  ADDRESS_REFUSED_CODE,
  type AddressClass,
  checkWebhookUrl,
  classifyAddress,
  createGuardedLookup,
  isPublicAddress,
  type Resolver,
} from '../../src/webhooks/url-policy.js';
import { closeDeliveryAgents, deliverOnce } from '../../src/webhooks/deliver.js';

const STRICT = { allowPrivate: false };
const LAX = { allowPrivate: true };

/** Loopback, private, unspecified, link-local, metadata, multicast and reserved hosts, many spellings. */
const NON_PUBLIC_URLS = [
  // loopback, IPv4 spellings a URL parser or inet_aton accepts
  'http://127.0.0.1/',
  'http://127.0.0.1:8080/hook',
  'http://127.1/',
  'http://127.0.1/',
  'http://2130706433/',
  'http://0x7f000001/',
  'http://017700000001/',
  'http://0177.0.0.1/',
  'http://0x7f.1/',
  'http://0x7F.0x0.0x0.0x1/',
  'http://127.000.000.001/',
  'http://00000177.1/',
  'http://127.0.0.1./',
  'http://127.0.0.1../',
  'http://%31%32%37.0.0.1/',
  'http://１２７.０.０.１/',
  'http://127.255.255.254/',
  'HTTP://127.0.0.1/',
  'http:/127.0.0.1/',
  'http:\\\\127.0.0.1\\',
  // loopback names
  'http://localhost/',
  'http://localhost./',
  'http://LOCALHOST/',
  'http://LocalHost.:3000/',
  'http://api.localhost/',
  'http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/',
  // loopback, IPv6 and embeddings
  'http://[::1]/',
  'http://[0:0:0:0:0:0:0:1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://[0:0:0:0:0:ffff:7f00:1]/',
  'http://[::127.0.0.1]/',
  'http://[64:ff9b::127.0.0.1]/',
  'http://[2002:7f00:1::]/',
  // unspecified
  'http://0/',
  'http://0.0.0.0/',
  'http://0x0/',
  'http://[::]/',
  // private
  'http://10.0.0.1/',
  'http://10.255.255.255/',
  'http://172.16.0.1/',
  'http://172.31.255.255/',
  'http://192.168.1.1/',
  'http://3232235777/',
  'http://0xc0a80101/',
  'http://100.64.0.1/',
  'http://100.127.255.255/',
  'http://[fc00::1]/',
  'http://[fd12:3456::1]/',
  'http://[::ffff:10.0.0.1]/',
  'http://[::ffff:c0a8:1]/',
  'http://[2002:c0a8:101::1]/',
  // link-local and cloud metadata
  'http://169.254.169.254/latest/meta-data/',
  'http://169.254.170.2/v2/credentials',
  'http://2852039166/',
  'http://0xa9fea9fe/',
  'http://0251.0376.0251.0376/',
  'http://[::ffff:169.254.169.254]/',
  'http://[::ffff:a9fe:a9fe]/',
  'http://[64:ff9b::a9fe:a9fe]/',
  'http://[fd00:ec2::254]/',
  'http://[fe80::1]/',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://METADATA.GOOGLE.INTERNAL./',
  'http://metadata/',
  'http://100.100.100.200/',
  // multicast, reserved, broadcast
  'http://224.0.0.1/',
  'http://239.255.255.250/',
  'http://240.0.0.1/',
  'http://255.255.255.255/',
  'http://[ff02::1]/',
  // names that only exist inside a network
  'http://intranet/',
  'http://printer.local/',
  'http://db.internal/',
  // documentation / special-purpose ranges
  'http://192.0.2.1/',
  'http://[2001:db8::1]/',
  'http://[2001::1]/',
];

const USERINFO_URLS = [
  'http://user:pass@example.com/',
  'http://user@example.com/',
  'https://:secret@example.com/',
  'http://127.0.0.1:80@example.com/',
  'https://example.com@127.0.0.1/',
];

const BAD_SCHEME_URLS = [
  'ftp://example.com/',
  'file:///etc/passwd',
  'gopher://example.com:70/_',
  'javascript:alert(1)',
  'data:text/plain,hi',
  'ws://example.com/',
  'dict://example.com:11211/',
];

const MALFORMED_URLS = [
  '',
  'not a url',
  'http://',
  '/relative/path',
  'http://[::1/',
  'http://a..b/',
  `https://example.com/${'a'.repeat(3000)}`,
];

const PUBLIC_URLS = [
  'https://example.com/webhooks',
  'https://hooks.example.com:8443/a?b=c',
  'http://example.com./',
  'https://8.8.8.8/',
  'https://1.1.1.1/',
  'https://[2606:4700:4700::1111]/',
  'http://[64:ff9b::808:808]/',
  'https://xn--bcher-kva.example/',
  'http://172.32.0.1/',
  'http://100.128.0.1/',
  'http://11.0.0.1/',
  'https://evil.example#@127.0.0.1/',
];

test('corpus of non-public URL spellings is large enough to mean something', () => {
  assert.ok(NON_PUBLIC_URLS.length >= 40, `${NON_PUBLIC_URLS.length} spellings`);
});

test('non-public hosts are refused at registration in every spelling', () => {
  const accepted = NON_PUBLIC_URLS.filter((u) => checkWebhookUrl(u, STRICT).ok);
  assert.deepEqual(accepted, []);
});

test('user-info, non-http schemes and malformed URLs are refused, even with allowPrivate', () => {
  for (const opts of [STRICT, LAX]) {
    const accepted = [...USERINFO_URLS, ...BAD_SCHEME_URLS, ...MALFORMED_URLS].filter(
      (u) => checkWebhookUrl(u, opts).ok,
    );
    assert.deepEqual(accepted, [], `allowPrivate=${opts.allowPrivate}`);
  }
  const r = checkWebhookUrl('ftp://example.com/', STRICT);
  assert.equal(r.ok, false);
  if (!r.ok) assert.match(r.reason, /http/);
});

test('ordinary public URLs are accepted and returned parsed', () => {
  for (const u of PUBLIC_URLS) {
    const r = checkWebhookUrl(u, STRICT);
    assert.ok(r.ok, `${u}: ${r.ok ? '' : r.reason}`);
    assert.ok(r.url instanceof URL);
  }
});

test('allowPrivate admits loopback and private receivers, never metadata or link-local', () => {
  for (const u of [
    'http://127.0.0.1:3000/hook',
    'http://localhost:3000/',
    'http://[::1]:8080/',
    'http://10.0.0.5/',
    'http://receiver:8080/',
    'http://0x7f.1/',
  ]) {
    assert.ok(checkWebhookUrl(u, LAX).ok, u);
  }
  for (const u of [
    'http://169.254.169.254/',
    'http://[fd00:ec2::254]/',
    'http://metadata.google.internal/',
    'http://[fe80::1]/',
    'http://[::ffff:a9fe:a9fe]/',
  ]) {
    assert.equal(checkWebhookUrl(u, LAX).ok, false, u);
  }
});

test('isPublicAddress classifies resolved addresses', () => {
  for (const ip of [
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '2606:4700:4700::1111',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ]) {
    assert.equal(isPublicAddress(ip), true, ip);
  }
  for (const ip of [
    '127.0.0.1',
    '10.1.2.3',
    '192.168.0.1',
    '172.20.0.1',
    '100.64.0.1',
    '169.254.169.254',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    'fe80::1',
    'fe80::1%eth0',
    'fd00:ec2::254',
    'fc00::1',
    'ff02::1',
    '64:ff9b::7f00:1',
    '2002:7f00:1::',
    'not-an-ip',
    '',
  ]) {
    assert.equal(isPublicAddress(ip), false, ip);
  }
});

test('addresses at the edges of named ranges: embedded IPv4, metadata inside private ranges, odd IPv6 space', () => {
  const cases: [string, AddressClass][] = [
    ['100.100.100.200', 'forbidden'], // Alibaba Cloud metadata, inside carrier-grade NAT
    ['100.100.100.201', 'private'],
    ['240.0.0.1', 'forbidden'], // reserved for future use
    ['239.255.255.255', 'forbidden'],
    ['198.18.0.1', 'private'], // benchmarking
    ['203.0.113.9', 'private'], // documentation
    ['192.175.48.1', 'public'], // AS112 anycast DNS
    ['192.52.193.1', 'public'], // AMT relays
    ['::8.8.8.8', 'private'], // IPv4-compatible: never public, not the same as ::ffff:8.8.8.8
    ['::808:808', 'private'],
    ['::169.254.169.254', 'forbidden'],
    ['::ffff:8.8.8.8', 'public'],
    ['::ffff:0:808:808', 'public'], // IPv4-translated
    ['::ffff:0:a9fe:a9fe', 'forbidden'],
    ['64:ff9b:1::808:808', 'private'], // local-use NAT64
    ['2002:a9fe:a9fe::', 'forbidden'], // 6to4 around link-local
    ['2002:a00:1::', 'private'],
    ['2001::1', 'private'], // Teredo
    ['2001:4:112::1', 'private'], // AS112 inside the IETF protocol assignments
    ['2620:4f:8000::1', 'public'], // AS112 in global unicast
    ['3fff::1', 'private'], // documentation
    ['fec0::1', 'private'], // site-local
    ['fd00:ec2::253', 'private'],
    ['5f00::1', 'private'], // outside global unicast
    ['100::1', 'private'], // discard
    ['4000::1', 'private'],
    ['2a00:1450:4001::1', 'public'],
  ];
  assert.deepEqual(
    cases.map(([ip]) => [ip, classifyAddress(ip)]),
    cases,
  );
});

// ---------------------------------------------------------------------------------------
// Connect time: nothing may reach a loopback receiver when private targets are not allowed.

async function countingListener(): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let connections = 0;
  const server = http.createServer((_req, res) => res.end('ok'));
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    connections: () => connections,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A resolver answering like an attacker's DNS would, with the given addresses for every name. */
function fixedResolver(addresses: LookupAddress[]): Resolver {
  return (_host, _opts, cb) => setImmediate(() => cb(null, addresses));
}

function requestVia(
  lookup: ReturnType<typeof createGuardedLookup>,
  port: number,
): Promise<NodeJS.ErrnoException | number> {
  return new Promise((resolve) => {
    const req = http.request(
      { hostname: 'hooks.attacker.example', port, method: 'POST', lookup, agent: false },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', resolve);
    req.end('{}');
  });
}

test('deliverOnce with allowPrivate=false never connects to a loopback receiver', async () => {
  const listener = await countingListener();
  try {
    const urls = [
      `http://localhost:${listener.port}/`,
      `http://LOCALHOST.:${listener.port}/`,
      `http://127.0.0.1:${listener.port}/`,
      `http://2130706433:${listener.port}/`,
      `http://0x7f.1:${listener.port}/`,
      `http://[::ffff:127.0.0.1]:${listener.port}/`,
    ];
    for (const url of urls) {
      const r = await deliverOnce({
        url,
        headers: { 'content-type': 'application/json' },
        body: '{}',
        allowPrivate: false,
      });
      assert.equal(r.ok, false, url);
      assert.equal(r.statusCode, null, url);
      assert.match(r.error ?? '', /^(url_refused|address_refused)/, url);
    }
    assert.equal(listener.connections(), 0);

    // Control: the same listener is reachable when private targets are allowed.
    const allowed = await deliverOnce({ url: urls[0]!, headers: {}, body: '{}', allowPrivate: true });
    assert.equal(allowed.ok, true);
    assert.equal(listener.connections(), 1);
  } finally {
    closeDeliveryAgents();
    await listener.close();
  }
});

test('guarded lookup refuses names that resolve (or rebind) to loopback, before connecting', async () => {
  const listener = await countingListener();
  try {
    const loopback = fixedResolver([{ address: '127.0.0.1', family: 4 }]);
    const mixed = fixedResolver([
      { address: '93.184.215.14', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ]);
    const mapped = fixedResolver([{ address: '::ffff:127.0.0.1', family: 6 }]);
    for (const resolver of [loopback, mixed, mapped]) {
      const outcome = await requestVia(createGuardedLookup(STRICT, resolver), listener.port);
      assert.ok(typeof outcome !== 'number', 'request must fail');
      assert.equal(outcome.code, ADDRESS_REFUSED_CODE);
    }
    assert.equal(listener.connections(), 0);

    // Control: with allowPrivate the same resolution connects, so the count above is meaningful.
    assert.equal(await requestVia(createGuardedLookup(LAX, loopback), listener.port), 200);
    assert.equal(listener.connections(), 1);
  } finally {
    await listener.close();
  }
});

test('guarded lookup honours the single-address callback form and passes public answers through', async () => {
  const resolver = fixedResolver([{ address: '93.184.215.14', family: 4 }]);
  const lookup = createGuardedLookup(STRICT, resolver);
  const single = await new Promise<[unknown, unknown, unknown]>((resolve) =>
    lookup('example.com', {}, (err, address, family) => resolve([err, address, family])),
  );
  assert.deepEqual(single, [null, '93.184.215.14', 4]);
  const all = await new Promise<[unknown, unknown]>((resolve) =>
    lookup('example.com', { all: true }, (err, addresses) => resolve([err, addresses])),
  );
  assert.deepEqual(all, [null, [{ address: '93.184.215.14', family: 4 }]]);
  const refused = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
    createGuardedLookup(STRICT, fixedResolver([{ address: '10.0.0.1', family: 4 }]))('example.com', {}, (err) =>
      resolve(err),
    ),
  );
  assert.equal(refused?.code, ADDRESS_REFUSED_CODE);
});
