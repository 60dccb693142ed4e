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
import ipaddr from 'ipaddr.js';

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
// Addresses: ipaddr.js names the special-purpose range an address is in; here each name gets its class.

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

/** Cloud metadata services inside ranges that are otherwise only private: refused even with allowPrivate. */
const METADATA_ADDRESSES = new Set([
  '100.100.100.200', // Alibaba Cloud (inside carrier-grade NAT)
  'fd00:ec2::254', // AWS over IPv6 (inside unique local)
]);

/** 240.0.0.0/4, reserved for future use: ipaddr.js files it with the documentation ranges; it is no receiver. */
const IPV4_FUTURE_USE = ipaddr.IPv4.parseCIDR('240.0.0.0/4');
/** NAT64's well-known prefix carries an IPv4 address; its local-use sibling (RFC 8215) is one network's own. */
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');
/** IPv4-compatible addresses (`::a.b.c.d`, deprecated); ipaddr.js calls them unicast. */
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');
/** Global unicast: the only IPv6 space that can be public; ipaddr.js calls any address it has no name for unicast. */
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');
/** IETF protocol assignments (RFC 2928): special-purpose, whatever ipaddr.js names its parts. */
const IETF_PROTOCOL_ASSIGNMENTS = ipaddr.IPv6.parseCIDR('2001::/23');

/** The IPv4 address in four bytes of an IPv6 address, from `offset`. */
function embeddedIPv4(ip: IPv6, offset: number): IPv4 {
  return new ipaddr.IPv4(ip.toByteArray().slice(offset, offset + 4));
}

function classifyIPv4(ip: IPv4): AddressClass {
  if (METADATA_ADDRESSES.has(ip.toString())) return 'forbidden';
  switch (ip.range()) {
    case 'unicast':
    case 'as112': // public anycast DNS (RFC 7534)
    case 'amt': // public anycast relays (RFC 7450)
      return 'public';
    case 'linkLocal': // 169.254.169.254 and 169.254.170.2 are metadata services
    case 'multicast':
    case 'broadcast':
      return 'forbidden';
    case 'reserved':
      return ip.match(IPV4_FUTURE_USE) ? 'forbidden' : 'private';
    default:
      // Unspecified (connecting to 0.0.0.0 reaches the local host), loopback, RFC 1918, carrier-grade NAT, and
      // any range a later ipaddr.js names.
      return 'private';
  }
}

function classifyIPv6(ip: IPv6): AddressClass {
  if (METADATA_ADDRESSES.has(ip.toString())) return 'forbidden';
  // A string: ipaddr.js returns more names than its type declares (deprecatedSiteLocal, discard, …).
  const range: string = ip.range();
  switch (range) {
    // Addresses that carry an IPv4 address are what it is: `[::ffff:7f00:1]` is loopback.
    case 'ipv4Mapped':
    case 'rfc6145': // IPv4-translated (SIIT)
      return classifyIPv4(embeddedIPv4(ip, 12));
    case 'rfc6052': // NAT64
      return ip.match(NAT64_WELL_KNOWN) ? classifyIPv4(embeddedIPv4(ip, 12)) : 'private';
    case '6to4': // 2002:<IPv4 gateway>::/48
      return classifyIPv4(embeddedIPv4(ip, 2));
    case 'linkLocal':
    case 'multicast':
      return 'forbidden';
    case 'as112v6': // public anycast DNS, but its 2001:4:112::/48 lies in the IETF assignments
      return ip.match(IETF_PROTOCOL_ASSIGNMENTS) ? 'private' : 'public';
    case 'unicast':
      if (ip.match(IPV4_COMPATIBLE)) {
        return classifyIPv4(embeddedIPv4(ip, 12)) === 'forbidden' ? 'forbidden' : 'private';
      }
      return ip.match(GLOBAL_UNICAST) ? 'public' : 'private';
    default:
      // Unspecified, loopback, unique local, site-local, Teredo (embeds addresses), documentation, benchmarking,
      // ORCHID, and any range a later ipaddr.js names.
      return 'private';
  }
}

/** Parses a literal address (dotted IPv4 or IPv6, brackets/zone allowed); null if not one. */
function parseAddress(text: string): IPv4 | IPv6 | null {
  const bare = stripBrackets(text).split('%')[0] ?? '';
  if (isIPv4(bare)) return ipaddr.IPv4.parse(bare);
  if (!isIPv6(bare)) return null;
  // ipaddr.js reads `::a.b.c.d` as the IPv4-mapped `::ffff:a.b.c.d`, another address; written with its
  // first group, `0::a.b.c.d`, it is read as itself.
  const v6 = /^::[0-9.]+$/.test(bare) ? `0${bare}` : bare;
  return ipaddr.IPv6.isValid(v6) ? ipaddr.IPv6.parse(v6) : null;
}

/** Classifies a literal address (dotted IPv4 or IPv6, brackets/zone allowed); null if not one. */
export function classifyAddress(ip: string): AddressClass | null {
  const parsed = parseAddress(ip);
  if (parsed === null) return null;
  return parsed instanceof ipaddr.IPv4 ? classifyIPv4(parsed) : classifyIPv6(parsed);
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
  // Spellings like `0x7f.1`, `2130706433` or `127.0.0.1..` that resolvers (inet_aton) read as IPv4.
  if (ipaddr.IPv4.isValid(host)) return classifyIPv4(ipaddr.IPv4.parse(host));
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
