// Guarantee: SIGTERM drains. Under a load of 100-event ingest requests the server stops accepting,
// answers what it has in flight and exits 0 by itself; afterwards every acknowledged event is in
// the ledger, every unacknowledged request is there entirely or not at all, and the balances equal
// their transactions. An idle keep-alive connection (or one that never sent a byte) does not hold
// the process, and a drain that cannot finish is cut short at BILLING_SHUTDOWN_TIMEOUT_MS.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { after, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import { openStore } from '../../src/store/open.js';
import { CLI_DIALECTS, freshDatabase } from '../cli/support.js';
import { fundedAccount, startChild } from './support.js';

const EVENTS_PER_REQUEST = 100;
const CLIENTS = 8;
/** SIGTERM after this many acknowledged requests: the load is well under way. */
const ACKED_BEFORE_SIGTERM = 15;
const INITIAL = 10_000_000;
/** A bound on the loop: the server stops accepting long before. */
const REQUESTS_MAX = 5_000;

type Sent = { n: number; status: number | 'network-error' };

for (const dialect of CLI_DIALECTS) {
  describe(`shutdown (${dialect})`, () => {
    test('SIGTERM under 100-event ingest load: acknowledged events kept, the rest all or nothing', async () => {
      const db = await freshDatabase(dialect);
      after(() => db.drop());
      const child = await startChild({ DATABASE_URL: db.url, BILLING_SHUTDOWN_TIMEOUT_MS: '30000' });
      after(() => child.proc.kill('SIGKILL'));
      const acc = await fundedAccount(child.url, INITIAL);

      const sent: Sent[] = [];
      let next = 0;
      let acked = 0;
      let signalled = false;
      const body = (n: number) =>
        JSON.stringify(
          Array.from({ length: EVENTS_PER_REQUEST }, (_, j) => ({
            id: `r${n}-e${j}`,
            type: 'call',
            cost_override: { amount: 1, denomination: 'tokens' },
          })),
        );
      const client = async () => {
        for (;;) {
          const n = next++;
          if (n >= REQUESTS_MAX) throw new Error(`the server still answered after ${REQUESTS_MAX} requests`);
          try {
            const res = await fetch(`${child.url}/v1/accounts/${acc.accountId}/events`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: acc.auth },
              body: body(n),
            });
            await res.arrayBuffer();
            sent.push({ n, status: res.status });
            if (res.status !== 200 && !signalled) throw new Error(`ingest answered ${res.status}`);
            if (res.status === 200 && ++acked === ACKED_BEFORE_SIGTERM && !signalled) {
              signalled = true;
              child.proc.kill('SIGTERM');
            }
          } catch {
            // The server has stopped accepting: this request may or may not have been applied.
            sent.push({ n, status: 'network-error' });
            return;
          }
        }
      };
      await Promise.all(Array.from({ length: CLIENTS }, client));
      assert.equal(await child.exited, 0, child.stderr());
      assert.match(child.stderr(), /SIGTERM received; draining/);
      assert.match(child.stderr(), /stopped cleanly/);

      // A fresh server on the same database.
      const store = await openStore(db.url);
      const server = await startServer(loadConfig({ PORT: '0', LOG_LEVEL: 'fatal', BILLING_WORKERS: '0' }), { store });
      try {
        const rows = await db.sql('SELECT event_id FROM events WHERE company_id = ?', [acc.companyId]);
        const perRequest = new Map<number, number>();
        for (const r of rows) {
          const n = Number(/^r(\d+)-e\d+$/.exec(String(r.event_id))![1]);
          perRequest.set(n, (perRequest.get(n) ?? 0) + 1);
        }
        const ackedRequests = sent.filter((s) => s.status === 200);
        assert.ok(ackedRequests.length >= ACKED_BEFORE_SIGTERM);
        for (const s of ackedRequests)
          assert.equal(perRequest.get(s.n), EVENTS_PER_REQUEST, `acknowledged request ${s.n} is complete`);
        for (const s of sent.filter((x) => x.status !== 200))
          assert.ok([undefined, EVENTS_PER_REQUEST].includes(perRequest.get(s.n)), `request ${s.n}: all or nothing`);
        // Every other answer was an acknowledgement: no request failed while the server drained.
        assert.deepEqual(
          sent.filter((s) => s.status !== 200 && s.status !== 'network-error'),
          [],
        );
        const res = await fetch(`${server.url}/v1/accounts/${acc.accountId}/balance/tokens`, {
          headers: { authorization: acc.auth },
        });
        const balance = ((await res.json()) as { data: { amount: number } }).data;
        assert.equal(balance.amount, INITIAL - rows.length, 'each event cost one token');
        assert.deepEqual(
          await store.read((tx) => tx.transactions.auditLedger()),
          [],
          'balances equal their transactions',
        );
      } finally {
        await server.close();
        await store.close();
      }
    });
  });
}

/** Opens a raw connection; resolves once connected. */
async function rawSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const s = connect(Number(port), hostname);
  await once(s, 'connect');
  return s;
}

describe('shutdown with connections held open', () => {
  test('an idle keep-alive client and a silent socket do not keep the process alive', async () => {
    const db = await freshDatabase('sqlite');
    after(() => db.drop());
    // A long bound: exiting by the timeout would say so, and the test checks that it did not.
    const child = await startChild({ DATABASE_URL: db.url, BILLING_SHUTDOWN_TIMEOUT_MS: '600000' });
    after(() => child.proc.kill('SIGKILL'));

    const keepAlive = await rawSocket(child.url);
    keepAlive.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
    const [first] = (await once(keepAlive, 'data')) as [Buffer];
    assert.match(first.toString(), /^HTTP\/1\.1 200/);
    const silent = await rawSocket(child.url);
    const closed = Promise.all([once(keepAlive, 'close'), once(silent, 'close')]);
    keepAlive.on('error', () => {});
    silent.on('error', () => {});

    child.proc.kill('SIGTERM');
    assert.equal(await child.exited, 0, child.stderr());
    assert.match(child.stderr(), /stopped cleanly/);
    assert.doesNotMatch(child.stderr(), /did not finish/);
    await closed;
  });

  test('a drain that cannot finish is cut short at BILLING_SHUTDOWN_TIMEOUT_MS (exit 1, said in the log)', async () => {
    const db = await freshDatabase('sqlite');
    after(() => db.drop());
    const child = await startChild({ DATABASE_URL: db.url, BILLING_SHUTDOWN_TIMEOUT_MS: '300' });
    after(() => child.proc.kill('SIGKILL'));
    // A request whose body never finishes arriving stays in flight (until its request timeout, 60 s).
    const stuck = await rawSocket(child.url);
    stuck.on('error', () => {});
    stuck.write(
      'POST /v1/users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"na',
    );
    // Wait until the server has seen the request (the readiness answer goes through the same server).
    assert.equal((await fetch(`${child.url}/readyz`)).status, 200);
    child.proc.kill('SIGTERM');
    assert.equal(await child.exited, 1);
    assert.match(child.stderr(), /shutdown did not finish within BILLING_SHUTDOWN_TIMEOUT_MS \(300 ms\)/);
  });
});
