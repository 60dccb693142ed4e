// Guarantee: oversized bodies are refused in the envelope and the server stays well; a flood from one company leaves
// another company's requests all answered (their latency is reported); idle and slow sockets neither stop /healthz
// nor stay open for ever; a large upload refused early is not read to its end.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { BODY_LIMIT_BYTES } from '../../src/http/app.js';
import { CLI_DIALECTS, type TestDatabase, freshDatabase } from '../cli/support.js';
import { report, size } from './support/config.js';
import { assertEnvelope, percentiles, send, sleep } from './support/http.js';
import { judge } from './support/judge.js';
import { closeTargets, sendRetried, targets } from './support/load.js';
import { type ChildServer, startChildServer } from './support/server.js';
import { type Company, account, signUp } from './support/setup.js';

const FLOOD_MS = size(4_000, 30_000);
const FLOOD_CONCURRENCY = 64;
const IDLE_SOCKETS = size(300, 2_000);
const SLOW_SOCKETS = size(20, 200);
/** How long the server may keep a socket that never completes a request (checked every second). */
const IDLE_WAIT_MS = size(35_000, 135_000);
const UPLOAD_MB = size(50, 200);

for (const dialect of CLI_DIALECTS) {
  describe(`limits (${dialect})`, () => {
    let db: TestDatabase;
    let server: ChildServer;
    let a: Company;
    let b: Company;
    let accA: string;
    let accB: string;
    before(async () => {
      db = await freshDatabase(dialect);
      // Short socket timeouts, so that idle and slow sockets are seen closed within IDLE_WAIT_MS.
      server = await startChildServer(db.url, {
        BILLING_HTTP_CONNECTION_TIMEOUT_MS: '10000',
        BILLING_HTTP_HEADERS_TIMEOUT_MS: '5000',
        BILLING_HTTP_REQUEST_TIMEOUT_MS: '10000',
        BILLING_HTTP_KEEP_ALIVE_TIMEOUT_MS: '5000',
      });
      a = await signUp(server.url, 'A');
      b = await signUp(server.url, 'B');
      accA = await account(server.url, a, 'tokens', 1_000_000_000);
      accB = await account(server.url, b, 'tokens', 1_000_000_000);
    });
    after(async () => {
      await server.kill9();
      await db.drop();
    });

    test('oversized bodies: 413 in the envelope, nothing applied, the server still answers', async () => {
      for (const bytes of [BODY_LIMIT_BYTES + 1, 3 * BODY_LIMIT_BYTES]) {
        const head = '[{"type":"x","cost_override":{"amount":1,"denomination":"tokens"},"metadata":{"pad":"';
        const events = `${head}${'p'.repeat(bytes - head.length - 4)}"}}]`;
        assert.equal(events.length, bytes);
        const r = await send(server.url, {
          method: 'POST',
          path: `/v1/accounts/${accA}/events`,
          auth: a.auth,
          raw: events,
        });
        assert.equal(r.status, 413, `${bytes} bytes: ${r.text.slice(0, 200)}`);
        assertEnvelope(r, `${bytes} bytes`);
      }
      const events = await send(server.url, { method: 'GET', path: `/v1/accounts/${accA}/events`, auth: a.auth });
      assert.deepEqual(events.json.data, []);
      assert.equal((await send(server.url, { method: 'GET', path: '/healthz' })).status, 200);
    });

    test(`a ${UPLOAD_MB} MB upload with bad credentials: answered, the connection closed before its end`, async () => {
      const total = UPLOAD_MB * 1024 * 1024;
      const chunk = Buffer.alloc(256 * 1024, 0x61);
      const socket = net.connect(server.port, '127.0.0.1');
      await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      let answer = '';
      let closed = false;
      socket.on('data', (d) => {
        answer += d;
      });
      socket.on('close', () => {
        closed = true;
      });
      socket.on('error', () => undefined);
      socket.write(
        `POST /v1/accounts/${accA}/events HTTP/1.1\r\nHost: x\r\n` +
          `Authorization: Basic ${Buffer.from('nobody:nothing').toString('base64')}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${total}\r\n\r\n`,
      );
      let written = 0;
      while (written < total && !closed && !socket.destroyed) {
        const ok = socket.write(chunk);
        written += chunk.length;
        if (!ok) await Promise.race([new Promise((r) => socket.once('drain', r)), sleep(2_000)]);
      }
      await sleep(500);
      socket.destroy();
      assert.match(answer, /^HTTP\/1\.1 4\d\d/, 'answered with a 4xx');
      assert.ok(written < total, `the server read all ${UPLOAD_MB} MB of a refused upload`);
    });

    test('a flood from one company: every request of another company is answered 200 (latency reported)', async (t) => {
      const tg = targets([server], FLOOD_CONCURRENCY + 4);
      const probe = async (ms: number) => {
        const times: number[] = [];
        const statuses: number[] = [];
        const until = Date.now() + ms;
        let i = 0;
        while (Date.now() < until) {
          const r = await send(server.url, {
            method: 'POST',
            path: `/v1/accounts/${accB}/events`,
            auth: b.auth,
            body: [{ id: `b-${ms}-${i++}`, type: 'x', cost_override: { amount: 1, denomination: 'tokens' } }],
          });
          times.push(r.ms);
          statuses.push(r.status);
          await sleep(20);
        }
        return { times, statuses };
      };
      const alone = await probe(Math.min(FLOOD_MS, 3_000));
      let flooding = true;
      const floodStatuses = new Map<number, number>();
      let floodEvents = 0;
      const flood = Array.from({ length: FLOOD_CONCURRENCY }, async (_, w) => {
        let i = 0;
        while (flooding) {
          const r = await sendRetried(
            tg,
            {
              method: 'POST',
              path: `/v1/accounts/${accA}/events`,
              auth: a.auth,
              body: Array.from({ length: 20 }, () => ({
                type: 'flood',
                cost_override: { amount: 1, denomination: 'tokens' },
              })),
              headers: { 'idempotency-key': `flood-${w}-${i++}` },
            },
            { deadlineMs: 30_000 },
          );
          const s = r.answer?.status ?? 0;
          floodStatuses.set(s, (floodStatuses.get(s) ?? 0) + 1);
          if (s === 200) floodEvents += 20;
          if (s === 429) await sleep(Number(r.answer!.headers['retry-after'] ?? 1) * 1000);
        }
      });
      let during: Awaited<ReturnType<typeof probe>>;
      try {
        await sleep(500);
        during = await probe(FLOOD_MS);
      } finally {
        flooding = false;
        await Promise.all(flood);
        closeTargets(tg);
      }
      report(t, `flood-${dialect}`, {
        flood_ms: FLOOD_MS,
        flood_concurrency: FLOOD_CONCURRENCY,
        flood_events_applied: floodEvents,
        flood_statuses: Object.fromEntries(floodStatuses),
        other_alone_ms: percentiles(alone.times),
        other_during_flood_ms: percentiles(during.times),
      });
      assert.deepEqual(
        [...alone.statuses, ...during.statuses].filter((s) => s !== 200),
        [],
        "the other company's requests",
      );
      assert.equal(floodStatuses.get(0) ?? 0, 0, 'flood requests never answered');
      assert.ok(![...floodStatuses.keys()].some((s) => s >= 500), 'no 5xx in the flood');
      assert.deepEqual(await judge(db), [], 'ledger audit');
    });

    if (dialect === CLI_DIALECTS[0]) {
      const openIdle = async (n: number): Promise<net.Socket[]> => {
        const out: net.Socket[] = [];
        for (let i = 0; i < n; i++) {
          const s = net.connect(server.port, '127.0.0.1');
          s.on('error', () => undefined);
          // Reads (and drops) what the server sends: a socket that never reads never sees the server's close.
          s.resume();
          out.push(s);
        }
        await Promise.all(out.map((s) => new Promise((r) => (s.connecting ? s.once('connect', r) : r(null)))));
        return out;
      };
      const slowloris = (n: number): { sockets: net.Socket[]; stop(): void } => {
        const sockets: net.Socket[] = [];
        const timers: NodeJS.Timeout[] = [];
        for (let i = 0; i < n; i++) {
          const s = net.connect(server.port, '127.0.0.1');
          s.on('error', () => undefined);
          s.resume();
          s.once('connect', () => {
            s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
            timers.push(setInterval(() => !s.destroyed && s.write('X-Slow: 1\r\n'), 1_000));
          });
          sockets.push(s);
        }
        return { sockets, stop: () => timers.forEach(clearInterval) };
      };

      test(`${IDLE_SOCKETS} idle and ${SLOW_SOCKETS} slow sockets: /healthz and others' reads answer`, async (t) => {
        const idle = await openIdle(IDLE_SOCKETS);
        const slow = slowloris(SLOW_SOCKETS);
        try {
          await sleep(1_500);
          const times: number[] = [];
          for (let i = 0; i < 10; i++) {
            const h = await send(server.url, { method: 'GET', path: '/healthz' });
            assert.equal(h.status, 200);
            const r = await send(server.url, { method: 'GET', path: `/v1/accounts/${accB}`, auth: b.auth });
            assert.equal(r.status, 200, r.text);
            times.push(h.ms, r.ms);
          }
          report(t, 'idle-sockets', { idle: IDLE_SOCKETS, slow: SLOW_SOCKETS, answers_ms: percentiles(times) });
        } finally {
          slow.stop();
          for (const s of [...idle, ...slow.sockets]) s.destroy();
        }
      });

      test(`idle and slow sockets are closed by the server (within ${IDLE_WAIT_MS / 1000} s)`, {
        timeout: IDLE_WAIT_MS + 60_000,
      }, async (t) => {
        const idle = await openIdle(IDLE_SOCKETS);
        const slow = slowloris(SLOW_SOCKETS);
        const all = [...idle, ...slow.sockets];
        let closed = 0;
        for (const s of all) s.once('close', () => closed++);
        const started = Date.now();
        try {
          while (closed < all.length && Date.now() - started < IDLE_WAIT_MS) await sleep(1_000);
          report(t, 'idle-sockets-closed', { sockets: all.length, closed, after_ms: Date.now() - started });
          assert.equal(closed, all.length, `sockets still open after ${IDLE_WAIT_MS} ms`);
        } finally {
          slow.stop();
          for (const s of all) s.destroy();
        }
      });
    }
  });
}
