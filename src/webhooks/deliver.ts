/**
 * One webhook delivery attempt. Retrying, scheduling and persistence live elsewhere; this
 * module only turns "POST these bytes to this URL" into a result value, safely:
 * the address is checked before and during connecting (SSRF), redirects are never followed
 * (a 3xx could point anywhere), only a bounded prefix of the response is read, and a hard
 * timeout bounds the whole attempt. Network problems are returned, never thrown, so a
 * misbehaving receiver cannot break the delivery loop.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import {
  ADDRESS_REFUSED_CODE,
  checkWebhookUrl,
  createGuardedLookup,
  isAddressAllowed,
  normalizeHost,
} from './url-policy.js';
import { DELIVERY_TIMEOUT_MS } from './notifications.js';

/** Enough of a response body to show in the deliveries list, small enough to store per attempt. */
export const DEFAULT_SNIPPET_BYTES = 1024;
/** Per-host connection cap: a slow receiver must not hold unbounded sockets. */
const MAX_SOCKETS_PER_HOST = 64;
const MAX_FREE_SOCKETS_PER_HOST = 16;
/** Idle keep-alive sockets are closed before typical server idle timeouts (often 60 s) bite. */
const IDLE_SOCKET_TIMEOUT_MS = 30_000;
const HTTP_GONE = 410;
const FRAMING_HEADERS = new Set(['content-length', 'transfer-encoding']);

export interface DeliverInput {
  url: string;
  headers: Readonly<Record<string, string>>;
  body: string | Buffer;
  timeoutMs?: number;
  /** BILLING_WEBHOOK_ALLOW_PRIVATE: permit loopback/private receivers (development, tests). */
  allowPrivate: boolean;
  snippetBytes?: number;
}

export interface DeliveryResult {
  /** The receiver answered 2xx. */
  ok: boolean;
  /** Null when no HTTP response arrived. */
  statusCode: number | null;
  latencyMs: number;
  /** The first `snippetBytes` bytes of the response body, decoded as UTF-8. */
  responseSnippet: string;
  /**
   * Null whenever an HTTP response arrived (its status says the rest). Otherwise one of
   * `timeout`, `url_refused: <reason>`, `address_refused`, `dns_error`, `connection_refused`,
   * `connection_reset`, `tls_error`, `network_error: <code>`.
   */
  error: string | null;
  /** 410 Gone: the receiver asks us to stop; callers may disable the subscription. */
  gone: boolean;
}

type Protocol = 'http:' | 'https:';

/**
 * Keep-alive agents, one per protocol AND per policy: pooled sockets are keyed by host:port
 * only, so a socket opened under allowPrivate must never be reused by a strict delivery.
 * Every new socket goes through the guarded lookup of its agent.
 */
const agents = new Map<string, http.Agent>();

function agentFor(protocol: Protocol, allowPrivate: boolean): http.Agent {
  const key = `${protocol}${allowPrivate ? 'private' : 'public'}`;
  let agent = agents.get(key);
  if (!agent) {
    const options: http.AgentOptions = {
      keepAlive: true,
      maxSockets: MAX_SOCKETS_PER_HOST,
      maxFreeSockets: MAX_FREE_SOCKETS_PER_HOST,
      timeout: IDLE_SOCKET_TIMEOUT_MS,
      scheduling: 'lifo',
      // Every new pooled connection resolves through the policy of its agent.
      lookup: createGuardedLookup({ allowPrivate }),
    };
    agent = protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    agents.set(key, agent);
  }
  return agent;
}

/** Closes pooled sockets (tests, graceful shutdown). */
export function closeDeliveryAgents(): void {
  for (const agent of agents.values()) agent.destroy();
  agents.clear();
}

export function deliverOnce(input: DeliverInput): Promise<DeliveryResult> {
  const startedAt = performance.now();
  const policy = { allowPrivate: input.allowPrivate };
  // Re-checked on every attempt: the policy may have tightened since registration.
  const checked = checkWebhookUrl(input.url, policy);
  if (!checked.ok) return Promise.resolve(networkFailure(startedAt, `url_refused: ${checked.reason}`));
  // net.connect never calls `lookup` for an IP literal, so the connect-time check of a
  // literal happens here, independently of the registration rules above.
  const host = normalizeHost(checked.url.hostname);
  if (isIP(host) !== 0 && !isAddressAllowed(host, policy)) {
    return Promise.resolve(networkFailure(startedAt, 'address_refused'));
  }
  return new Promise((resolve) => attempt(checked.url, input, startedAt, resolve));
}

function elapsedMs(startedAt: number): number {
  return Math.round(performance.now() - startedAt);
}

function networkFailure(startedAt: number, error: string): DeliveryResult {
  return { ok: false, statusCode: null, latencyMs: elapsedMs(startedAt), responseSnippet: '', error, gone: false };
}

function attempt(url: URL, input: DeliverInput, startedAt: number, resolve: (r: DeliveryResult) => void): void {
  const body = typeof input.body === 'string' ? Buffer.from(input.body, 'utf8') : input.body;
  const snippet = new SnippetReader(input.snippetBytes ?? DEFAULT_SNIPPET_BYTES);
  let statusCode: number | null = null;
  let settled = false;

  const finish = (result: DeliveryResult): void => {
    if (settled) return;
    settled = true;
    clearTimeout(deadline);
    resolve(result);
  };
  // Once a status line arrived, that status is the outcome, whatever happens to the body.
  const finishWithResponse = (): void => finish(responseResult(statusCode ?? 0, snippet.text(), startedAt));
  const finishWithError = (error: string): void =>
    statusCode === null ? finish(networkFailure(startedAt, error)) : finishWithResponse();

  const req = buildRequest(url, input.allowPrivate, body.length, input.headers);
  // One deadline for DNS, connect, TLS, headers and the snippet: a receiver that trickles
  // bytes must not hold the worker longer than the contract's 10 s.
  const deadline = setTimeout(() => {
    finishWithError('timeout');
    req.destroy();
  }, input.timeoutMs ?? DELIVERY_TIMEOUT_MS);

  req.on('error', (err: NodeJS.ErrnoException) => finishWithError(describeNetworkError(err)));
  req.on('response', (res) => {
    statusCode = res.statusCode ?? 0;
    res.on('data', (chunk: Buffer) => {
      if (snippet.push(chunk) || res.complete) return;
      finishWithResponse();
      // The rest would be read for nothing; dropping the socket is cheaper than draining it.
      res.destroy();
    });
    res.on('end', finishWithResponse);
    res.on('error', finishWithResponse);
    res.on('close', finishWithResponse);
  });
  req.end(body);
}

function buildRequest(
  url: URL,
  allowPrivate: boolean,
  contentLength: number,
  headers: Readonly<Record<string, string>>,
): http.ClientRequest {
  const protocol = url.protocol as Protocol;
  const host = normalizeHost(url.hostname);
  return (protocol === 'https:' ? https : http).request({
    protocol,
    hostname: host,
    port: url.port || undefined,
    path: `${url.pathname}${url.search}`,
    method: 'POST',
    headers: { ...withoutFramingHeaders(headers), 'content-length': String(contentLength) },
    agent: agentFor(protocol, allowPrivate),
    // Also set per request, so the check holds even if the agent were swapped out.
    lookup: createGuardedLookup({ allowPrivate }),
    // Verify the certificate against the receiver's name (SNI), never a resolved address.
    servername: protocol === 'https:' && isIP(host) === 0 ? host : undefined,
  });
}

/** We frame the body ourselves; a caller's Content-Length in another case would duplicate it. */
function withoutFramingHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !FRAMING_HEADERS.has(name.toLowerCase())));
}

function responseResult(status: number, responseSnippet: string, startedAt: number): DeliveryResult {
  return {
    ok: status >= 200 && status < 300,
    statusCode: status,
    latencyMs: elapsedMs(startedAt),
    responseSnippet,
    error: null,
    gone: status === HTTP_GONE,
  };
}

/** Keeps the first `limit` bytes of a body; `push` says whether more are wanted. */
class SnippetReader {
  private readonly chunks: Buffer[] = [];
  private received = 0;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): boolean {
    const room = this.limit - this.received;
    if (room > 0) this.chunks.push(chunk.subarray(0, room));
    this.received += chunk.length;
    return this.received < this.limit;
  }

  /** write() without end() drops a multi-byte character cut at the limit. */
  text(): string {
    return new StringDecoder('utf8').write(Buffer.concat(this.chunks));
  }
}

function describeNetworkError(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case ADDRESS_REFUSED_CODE:
      return 'address_refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
    case 'EAI_NODATA':
      return 'dns_error';
    case 'ECONNREFUSED':
      return 'connection_refused';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'connection_reset';
    default:
      if (err.code?.startsWith('ERR_TLS') || err.code?.includes('CERT') || err.code?.startsWith('ERR_SSL')) {
        return 'tls_error';
      }
      return `network_error: ${err.code ?? err.message}`;
  }
}
