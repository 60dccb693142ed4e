/**
 * SSRF protection for webhook URLs. A customer-chosen URL must never let the engine reach
 * its own loopback, the private network it runs in, or a cloud metadata service.
 *
 * Two layers, because neither is enough alone:
 * - `checkWebhookUrl` at registration (and again before each attempt) refuses URLs whose host
 *   is, in any spelling a URL parser or resolver accepts, a non-public address or name.
 * - `createGuardedLookup` at connect time checks the addresses a name actually resolves to,
 *   which defeats DNS rebinding and names like `127.0.0.1.nip.io`.
 *
 * Address classes: `public` is always allowed; `private` (loopback, RFC 1918, ULA, CGNAT,
 * unspecified, documentation and other special-purpose ranges) only with allowPrivate;
 * `forbidden` (cloud metadata, link-local where metadata services live, multicast, broadcast
 * and reserved) never, because no development setup needs them and they are the prize of
 * an SSRF attack.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { isIPv4, isIPv6, type LookupFunction } from 'node:net';

export type AddressClass = 'public' | 'private' | 'forbidden';

export interface UrlPolicyOptions {
  /** BILLING_WEBHOOK_ALLOW_PRIVATE=1: local development and tests may target private hosts. */
  allowPrivate: boolean;
}

/** The resolver the guarded lookup consults; `dns.lookup` unless a test injects another. */
export type Resolver = (
  hostname: string,
  options: LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

/** Error code of a connection refused because its address is not allowed. */
export const ADDRESS_REFUSED_CODE = 'ERR_WEBHOOK_ADDRESS_REFUSED';
/** Longer URLs are no legitimate endpoint; the bound also keeps stored rows small. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

const ALLOWED_PROTOCOLS = new Set(['http:', 'https:']);

// ---------------------------------------------------------------------------------------
// IPv4

type V4Range = readonly [base: string, prefixLength: number, cls: Exclude<AddressClass, 'public'>];

/** Forbidden entries come first: the first match wins and some sit inside private ranges. */
const IPV4_RANGES: readonly V4Range[] = [
  ['169.254.0.0', 16, 'forbidden'], // link-local, incl. 169.254.169.254 / 169.254.170.2 metadata
  ['100.100.100.200', 32, 'forbidden'], // Alibaba Cloud metadata (inside CGNAT)
  ['224.0.0.0', 4, 'forbidden'], // multicast
  ['240.0.0.0', 4, 'forbidden'], // reserved, incl. 255.255.255.255 broadcast
  ['0.0.0.0', 8, 'private'], // "this network"; connecting to 0.0.0.0 reaches the local host
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'private'], // carrier-grade NAT
  ['127.0.0.0', 8, 'private'], // loopback
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'private'], // IETF protocol assignments
  ['192.0.2.0', 24, 'private'], // TEST-NET-1
  ['192.88.99.0', 24, 'private'], // 6to4 relay anycast
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'private'], // benchmarking
  ['198.51.100.0', 24, 'private'], // TEST-NET-2
  ['203.0.113.0', 24, 'private'], // TEST-NET-3
];

/**
 * Parses every IPv4 spelling WHATWG URL and inet_aton accept: 1–4 parts, each decimal,
 * octal (leading 0) or hex (0x); the last part fills the remaining bytes (`127.1`,
 * `2130706433`, `0x7f.1`). Returns the address as an unsigned 32-bit integer.
 */
export function parseIPv4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length > 4) return null;
  const values = parts.map(parseIPv4Part);
  let result = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null || v === undefined) return null;
    const isLast = i === values.length - 1;
    const max = isLast ? 256 ** (5 - values.length) - 1 : 255;
    if (v > max) return null;
    result += isLast ? v : v * 256 ** (3 - i);
  }
  return result;
}

function parseIPv4Part(part: string): number | null {
  if (/^0x[0-9a-f]*$/i.test(part)) return part.length === 2 ? 0 : Number.parseInt(part.slice(2), 16);
  if (/^0[0-7]+$/.test(part)) return Number.parseInt(part, 8);
  if (/^(0|[1-9][0-9]*)$/.test(part)) return Number.parseInt(part, 10);
  return null;
}

function v4ToInt(dotted: string): number {
  const n = parseIPv4(dotted);
  if (n === null) throw new Error(`bad IPv4 table entry ${dotted}`);
  return n;
}

const IPV4_TABLE = IPV4_RANGES.map(([base, len, cls]) => ({ base: v4ToInt(base), len, cls }));

function inV4Range(ip: number, base: number, len: number): boolean {
  const size = 2 ** (32 - len);
  return Math.floor(ip / size) === Math.floor(base / size);
}

export function classifyIPv4(ip: number): AddressClass {
  for (const r of IPV4_TABLE) if (inV4Range(ip, r.base, r.len)) return r.cls;
  return 'public';
}

// ---------------------------------------------------------------------------------------
// IPv6

/** Expands any valid IPv6 text (incl. `::`, embedded dotted IPv4) to 16 bytes. */
export function parseIPv6(text: string): Uint8Array | null {
  if (!isIPv6(text)) return null;
  let hex = text;
  const lastColon = hex.lastIndexOf(':');
  if (hex.includes('.', lastColon)) {
    const v4 = parseIPv4(hex.slice(lastColon + 1));
    if (v4 === null) return null;
    hex = `${hex.slice(0, lastColon + 1)}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`;
  }
  const [headText, tailText] = hex.split('::');
  const head = headText ? headText.split(':') : [];
  const tail = tailText ? tailText.split(':') : [];
  const zeros = tailText === undefined ? 0 : 8 - head.length - tail.length;
  const groups = [...head, ...Array<string>(zeros).fill('0'), ...tail];
  if (groups.length !== 8) return null;
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    const v = Number.parseInt(g, 16);
    bytes[2 * i] = v >> 8;
    bytes[2 * i + 1] = v & 0xff;
  });
  return bytes;
}

type V6Rule = {
  prefix: Uint8Array;
  len: number;
  cls: Exclude<AddressClass, 'public'> | 'embedded-v4' | 'compat-v4';
};

function v6Rule(prefix: string, len: number, cls: V6Rule['cls']): V6Rule {
  const bytes = parseIPv6(prefix);
  if (!bytes) throw new Error(`bad IPv6 table entry ${prefix}`);
  return { prefix: bytes, len, cls };
}

/**
 * First match wins. `embedded-v4` ranges carry an IPv4 address in their last 32 bits
 * (6to4 is special-cased) and are classified by it: `[::ffff:7f00:1]` is loopback.
 * `compat-v4` addresses are never public, and forbidden if what they embed is.
 */
const IPV6_RULES: readonly V6Rule[] = [
  v6Rule('::', 128, 'private'), // unspecified
  v6Rule('::1', 128, 'private'), // loopback
  v6Rule('::ffff:0:0', 96, 'embedded-v4'), // IPv4-mapped
  v6Rule('::ffff:0:0:0', 96, 'embedded-v4'), // IPv4-translated (SIIT)
  v6Rule('64:ff9b::', 96, 'embedded-v4'), // NAT64 well-known prefix
  v6Rule('64:ff9b:1::', 48, 'private'), // local-use NAT64
  v6Rule('::', 96, 'compat-v4'), // IPv4-compatible: deprecated, at best private
  v6Rule('fd00:ec2::254', 128, 'forbidden'), // AWS metadata over IPv6 (inside ULA)
  v6Rule('fe80::', 10, 'forbidden'), // link-local
  v6Rule('ff00::', 8, 'forbidden'), // multicast
  v6Rule('fc00::', 7, 'private'), // unique local
  v6Rule('fec0::', 10, 'private'), // deprecated site-local
  v6Rule('2001::', 23, 'private'), // IETF protocol assignments, incl. Teredo (embeds addresses)
  v6Rule('2001:db8::', 32, 'private'), // documentation
  v6Rule('3fff::', 20, 'private'), // documentation
];

function matchesPrefix(addr: Uint8Array, prefix: Uint8Array, len: number): boolean {
  const fullBytes = Math.floor(len / 8);
  for (let i = 0; i < fullBytes; i++) if (addr[i] !== prefix[i]) return false;
  const bits = len % 8;
  if (bits === 0) return true;
  const mask = (0xff << (8 - bits)) & 0xff;
  return ((addr[fullBytes] ?? 0) & mask) === ((prefix[fullBytes] ?? 0) & mask);
}

function v4At(addr: Uint8Array, offset: number): number {
  return (
    (addr[offset] ?? 0) * 2 ** 24 +
    ((addr[offset + 1] ?? 0) << 16) +
    ((addr[offset + 2] ?? 0) << 8) +
    (addr[offset + 3] ?? 0)
  );
}

export function classifyIPv6(addr: Uint8Array): AddressClass {
  for (const r of IPV6_RULES) {
    if (!matchesPrefix(addr, r.prefix, r.len)) continue;
    if (r.cls === 'embedded-v4') return classifyIPv4(v4At(addr, 12));
    if (r.cls === 'compat-v4') return classifyIPv4(v4At(addr, 12)) === 'forbidden' ? 'forbidden' : 'private';
    return r.cls;
  }
  // 6to4 (2002::/16) carries its IPv4 gateway in bytes 2..5.
  if (addr[0] === 0x20 && addr[1] === 0x02) return classifyIPv4(v4At(addr, 2));
  // Only global unicast (2000::/3) is public; everything else is special-purpose.
  return ((addr[0] ?? 0) & 0xe0) === 0x20 ? 'public' : 'private';
}

/** Classifies a literal address (dotted IPv4 or IPv6, brackets/zone allowed); null if not one. */
export function classifyAddress(ip: string): AddressClass | null {
  const bare = stripBrackets(ip).split('%')[0] ?? '';
  if (isIPv4(bare)) return classifyIPv4(v4ToInt(bare));
  const v6 = parseIPv6(bare);
  return v6 ? classifyIPv6(v6) : null;
}

/** Used at connect time: true only for globally routable unicast addresses. */
export function isPublicAddress(ip: string): boolean {
  return classifyAddress(ip) === 'public';
}

function classAllowed(cls: AddressClass, { allowPrivate }: UrlPolicyOptions): boolean {
  return cls === 'public' || (cls === 'private' && allowPrivate);
}

/** Connect-time check of a literal or resolved address; anything unparseable is refused. */
export function isAddressAllowed(ip: string, opts: UrlPolicyOptions): boolean {
  const cls = classifyAddress(ip);
  return cls !== null && classAllowed(cls, opts);
}

// ---------------------------------------------------------------------------------------
// Host names

/** Names of cloud metadata services; refused even with allowPrivate. */
const METADATA_HOSTNAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
]);

/** Suffixes reserved for local networks; they never name a public receiver. */
const PRIVATE_NAME_SUFFIXES = ['localhost', 'local', 'localdomain', 'internal', 'home.arpa', 'lan'];

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** Lower-cased, without brackets or trailing dots (`LOCALHOST.` and `localhost` are one host). */
export function normalizeHost(host: string): string {
  return stripBrackets(host).toLowerCase().replace(/\.+$/, '');
}

/**
 * Classifies a host as written in a URL or passed to a resolver. Names that are not special
 * are `public` here; their addresses are checked when connecting.
 */
export function classifyHost(rawHost: string): AddressClass {
  const host = normalizeHost(rawHost);
  const literal = classifyAddress(host);
  if (literal) return literal;
  // Spellings like `0x7f.1` or `127.0.0.1..` that resolvers read as IPv4.
  const v4 = parseIPv4(host);
  if (v4 !== null) return classifyIPv4(v4);
  if (METADATA_HOSTNAMES.has(host)) return 'forbidden';
  // A single-label name is resolved through search domains, i.e. inside the network.
  if (!host.includes('.')) return 'private';
  if (PRIVATE_NAME_SUFFIXES.some((s) => host === s || host.endsWith(`.${s}`))) return 'private';
  return 'public';
}

export function isHostAllowed(host: string, opts: UrlPolicyOptions): boolean {
  return classAllowed(classifyHost(host), opts);
}

function refusalReason(cls: AddressClass): string {
  return cls === 'forbidden'
    ? 'url host is a link-local, metadata, multicast or reserved address'
    : 'url host is a loopback, private or otherwise non-public address';
}

// ---------------------------------------------------------------------------------------
// Registration check

export function checkWebhookUrl(raw: string, opts: UrlPolicyOptions): UrlCheck {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) {
    return { ok: false, reason: `url is longer than ${MAX_WEBHOOK_URL_LENGTH} characters` };
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'url is not a valid absolute URL' };
  }
  if (!ALLOWED_PROTOCOLS.has(url.protocol)) return { ok: false, reason: 'url must use http or https' };
  // Credentials would be sent to the receiver and stored in plain text; `a@b` also misleads readers.
  if (url.username !== '' || url.password !== '') {
    return { ok: false, reason: 'url must not contain user information' };
  }
  const host = normalizeHost(url.hostname);
  if (host === '' || (!host.includes(':') && host.split('.').includes(''))) {
    return { ok: false, reason: 'url host is empty or malformed' };
  }
  const cls = classifyHost(host);
  return classAllowed(cls, opts) ? { ok: true, url } : { ok: false, reason: refusalReason(cls) };
}

// ---------------------------------------------------------------------------------------
// Connect-time check

export function addressRefusedError(host: string, address: string | null): NodeJS.ErrnoException {
  const what = address ? `address ${address}` : 'host';
  const err: NodeJS.ErrnoException = new Error(`webhook ${what} of ${host} is not allowed`);
  err.code = ADDRESS_REFUSED_CODE;
  return err;
}

/**
 * A `lookup` for net.connect / http.request that resolves the name and refuses the connection
 * if ANY resolved address is not allowed. The check runs on the addresses the socket will use,
 * so a name that resolves publicly at registration and privately later (rebinding) still fails.
 * Note that net skips `lookup` for IP literals; callers must check those themselves.
 */
export function createGuardedLookup(opts: UrlPolicyOptions, resolve: Resolver = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    if (!isHostAllowed(hostname, opts)) {
      callback(addressRefusedError(hostname, null), '');
      return;
    }
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const refused = addresses.find((a) => !isAddressAllowed(a.address, opts));
      if (refused) return callback(addressRefusedError(hostname, refused.address), '');
      const first = addresses[0];
      if (!first) return callback(addressRefusedError(hostname, null), '');
      if (options.all) return callback(null, addresses);
      return callback(null, first.address, first.family);
    });
  };
}
