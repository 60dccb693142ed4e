// Guarantee: /readyz is 200 while the database answers and 503 (in the error envelope) while it
// cannot be reached, and ready again once it can; /healthz stays 200 throughout. The machine's
// PostgreSQL is shared, so "down" is a TCP proxy in front of it that the test closes and reopens.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { type Server, type Socket, connect, createServer } from 'node:net';
import { after, test } from 'node:test';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import { PostgresStore } from '../../src/store/postgres.js';
import { PG_URL } from '../support/harness.js';
import { until } from '../support/wait.js';

/** Forwards 127.0.0.1:<port> to PostgreSQL; `stop` refuses new connections and cuts the open ones. */
class DbProxy {
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  port = 0;

  async start(): Promise<void> {
    const target = new URL(PG_URL);
    this.#server = createServer((client) => {
      const upstream = connect(Number(target.port || 5432), target.hostname);
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.on('error', () => {});
        s.on('close', () => this.#sockets.delete(s));
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    this.#server.listen(this.port, '127.0.0.1');
    await once(this.#server, 'listening');
    this.port = (this.#server.address() as { port: number }).port;
  }

  async stop(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    const closed = once(this.#server!, 'close');
    this.#server!.close();
    await closed;
  }
}

function waitForStatus(url: string, status: number): Promise<Response> {
  return until(`${url} answers ${status}`, async () => {
    const res = await fetch(url);
    return res.status === status && res;
  });
}

test('/readyz follows the database through a proxy that goes away and comes back (postgres)', async () => {
  const proxy = new DbProxy();
  await proxy.start();
  const url = new URL(PG_URL);
  url.host = `127.0.0.1:${proxy.port}`;
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const store = await PostgresStore.open({ connectionString: url.toString(), schema, poolSize: 2 });
  const server = await startServer(loadConfig({ PORT: '0', LOG_LEVEL: 'fatal', BILLING_WORKERS: '0' }), { store });
  after(async () => {
    await server.close();
    await store.close().catch(() => {});
    await proxy.stop().catch(() => {});
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await c.end();
  });

  assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
  await proxy.stop();
  const down = await waitForStatus(`${server.url}/readyz`, 503);
  const body = (await down.json()) as { error: { type: string; code: string; message: string } };
  assert.equal(body.error.type, 'service_unavailable');
  assert.equal(body.error.code, 'not_ready');
  assert.equal((await fetch(`${server.url}/healthz`)).status, 200, 'liveness does not depend on the database');
  await proxy.start();
  await waitForStatus(`${server.url}/readyz`, 200);
});
