/**
 * A plain HTTP client on node:http with a keep-alive agent (no fetch: the load generator needs to see connection
 * errors as they are, and many sockets), plus what every scenario checks of an error answer.
 */
import assert from 'node:assert/strict';
import http from 'node:http';

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
  ms: number;
}

export interface Send {
  method: string;
  path: string;
  auth?: [string, string] | undefined;
  body?: unknown;
  /** Sent as is instead of JSON.stringify(body). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

export const basic = (auth: [string, string]): string =>
  `Basic ${Buffer.from(`${auth[0]}:${auth[1]}`).toString('base64')}`;

/** One request; rejects on a connection error or timeout (never on a status). */
export function send(baseUrl: string, s: Send, agent?: http.Agent): Promise<Answer> {
  const headers: Record<string, string> = { ...(s.headers ?? {}) };
  if (s.auth) headers.authorization = basic(s.auth);
  let payload: Buffer | undefined;
  if (s.raw !== undefined) payload = Buffer.isBuffer(s.raw) ? s.raw : Buffer.from(s.raw);
  else if (s.body !== undefined) payload = Buffer.from(JSON.stringify(s.body));
  if (payload !== undefined) {
    headers['content-type'] ??= 'application/json';
    headers['content-length'] = String(payload.length);
  }
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${baseUrl}${s.path}`,
      { method: s.method, headers, ...(agent ? { agent } : {}), timeout: s.timeoutMs ?? 30_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text === '' ? undefined : JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, ms: performance.now() - started });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(payload);
  });
}

/** The contract's error body: {"error":{"type","message",…}} and nothing else at the top. */
export function isEnvelope(a: { json: any }): boolean {
  const e = a.json?.error;
  return (
    a.json !== null &&
    typeof a.json === 'object' &&
    Object.keys(a.json).length === 1 &&
    e !== null &&
    typeof e === 'object' &&
    typeof e.type === 'string' &&
    typeof e.message === 'string'
  );
}

export function assertEnvelope(a: Answer, what: string): void {
  assert.ok(isEnvelope(a), `${what}: ${a.status} without the error envelope: ${a.text.slice(0, 300)}`);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** p50/p90/p99/max of a list of milliseconds, rounded to 0.1 ms. */
export function percentiles(ms: number[]): { n: number; p50: number; p90: number; p99: number; max: number } {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) =>
    s.length === 0 ? 0 : Math.round(s[Math.min(s.length - 1, Math.floor(q * s.length))]! * 10) / 10;
  return { n: s.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1) };
}

/**
 * Writes `bytes` on a fresh TCP connection and collects what comes back until the server closes it or
 * `waitMs` pass; `status` is parsed from the first response line (0: no answer).
 */
export async function rawExchange(
  port: number,
  bytes: Buffer | string,
  waitMs = 3_000,
): Promise<{ status: number; head: string; body: string; closed: boolean }> {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let closed = false;
    const finish = () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const head = split < 0 ? text : text.slice(0, split);
      let body = split < 0 ? '' : text.slice(split + 4);
      if (/transfer-encoding:\s*chunked/i.test(head)) body = dechunk(body);
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      socket.destroy();
      resolve({ status: m ? Number(m[1]) : 0, head, body, closed });
    };
    const timer = setTimeout(finish, waitMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
      finish();
    });
    socket.on('connect', () => socket.write(bytes));
  });
}

function dechunk(body: string): string {
  let out = '';
  let rest = body;
  for (;;) {
    const nl = rest.indexOf('\r\n');
    if (nl < 0) return out;
    const len = Number.parseInt(rest.slice(0, nl), 16);
    if (!Number.isFinite(len) || len === 0) return out;
    out += rest.slice(nl + 2, nl + 2 + len);
    rest = rest.slice(nl + 2 + len + 2);
  }
}
