// Guarantee (contract "Customer portal, top-ups and receipts"): receipt numbers count, … per company with
// no gap and no repeat, whichever process records a charge's success and whatever dies on the way. Two server
// processes on one PostgreSQL database, charge workers running in both: 20 accounts drop below their auto-refill
// threshold at once (events through both processes), and the 20 refill charges are carried out by whichever worker
// claims them. Then the same with a `kill -9` of one process while the charges are in flight (a charge transaction
// it had open rolls back with the number it took) and its restart.
//
// Judged from the database: 20 succeeded refill charges, their receipt numbers exactly 1 … 20; the ledger audit
// (with the money movement: one refill per succeeded charge) is clean.
import assert from 'node:assert/strict';
import { type TestContext, describe, test } from 'node:test';
import pg from 'pg';
import { freshDatabase, type TestDatabase } from '../cli/support.js';
import { POSTGRES_ONLY_SKIP } from '../support/stores.js';
import { until } from '../support/wait.js';
import { report } from './support/config.js';
import { type Answer, send } from './support/http.js';
import { judge } from './support/judge.js';
import { type ChildServer, startChildServer } from './support/server.js';
import { signUp } from './support/setup.js';
import { CHARGE_LEASE_MS } from '../../src/operations/charges.js';

const CHARGES = 20;

function ok(a: Answer, status: number, what: string): Answer {
  assert.equal(a.status, status, `${what}: ${a.status} ${a.text.slice(0, 300)}`);
  return a;
}

async function succeeded(client: pg.Client): Promise<number> {
  const r = await client.query("SELECT COUNT(*) AS n FROM charges WHERE status = 'succeeded'");
  return Number(r.rows[0].n);
}

async function raceRun(t: TestContext, withKill: boolean) {
  const db: TestDatabase = await freshDatabase('postgres');
  const servers: ChildServer[] = [];
  const watcher = new pg.Client({ connectionString: db.url });
  try {
    const env = { BILLING_WORKERS: '1', BILLING_WORKER_INTERVAL_MS: '20', BILLING_PG_POOL_SIZE: '8' };
    servers.push(await startChildServer(db.url, env), await startChildServer(db.url, env));
    const [a] = servers as [ChildServer, ChildServer];
    const url = (i: number) => servers[i % 2]!.url;
    const co = await signUp(a.url);
    const accounts = await Promise.all(
      Array.from({ length: CHARGES }, async (_, i) => {
        const acc = ok(
          await send(url(i), {
            method: 'POST',
            path: `/v1/companies/${co.companyId}/accounts`,
            auth: co.auth,
            body: { name: `receipts ${i}` },
          }),
          200,
          'account',
        ).json.data.account_id as string;
        const calls = [
          { method: 'POST', path: `/v1/accounts/${acc}/balance/tokens`, body: { amount: 600 } },
          { method: 'POST', path: `/v1/accounts/${acc}/card`, body: { token: 'tok_visa' } },
          {
            method: 'PUT',
            path: `/v1/accounts/${acc}/balance/tokens/autorefill`,
            body: { threshold: 500, amount: 1000, usd_charge: 100 + i },
          },
        ];
        for (const c of calls) ok(await send(url(i), { ...c, auth: co.auth }), 200, c.path);
        return acc;
      }),
    );
    await watcher.connect();
    // Every account below its threshold at once, half through each process: 20 refill charges to carry out.
    // Each event has a client id: sent again (after a kill), it is the same event, never a second one.
    const drop = (i: number, through: string) =>
      send(through, {
        method: 'POST',
        path: `/v1/accounts/${accounts[i]}/events`,
        auth: co.auth,
        body: [{ id: `drop-${i}`, type: 'use', cost_override: { amount: 200, denomination: 'tokens' } }],
      });
    const drops = accounts.map((_, i) => drop(i, url(i + 1)).catch(() => null));
    let killedAfter: number | null = null;
    if (withKill) {
      await until('a first charge recorded', async () => (await succeeded(watcher)) >= 1, { everyMs: 2 });
      await a.kill9();
      killedAfter = await succeeded(watcher);
      await a.restart();
    }
    for (const [i, r] of (await Promise.all(drops)).entries()) {
      if (r?.status === 200) continue;
      assert.ok(withKill, `drop ${i}: ${r?.status} ${r?.text}`);
      ok(await drop(i, servers[1]!.url), 200, 'drop sent again');
    }
    if (withKill) {
      // A charge the killed process had claimed stays leased to it for CHARGE_LEASE_MS: both clocks past it, so
      // that the workers take it up again (each advance also runs what is due).
      for (const x of servers)
        ok(
          await send(x.url, {
            method: 'POST',
            path: '/v1/test_clock/advance',
            auth: co.auth,
            body: { seconds: CHARGE_LEASE_MS / 1000 + 1 },
          }),
          200,
          'advance past the lease',
        );
    }
    await until(`${CHARGES} charges succeeded`, async () => (await succeeded(watcher)) === CHARGES, { everyMs: 20 });

    const rows = (
      await watcher.query(
        "SELECT company_id, receipt_number, status, reason FROM charges WHERE status = 'succeeded' " +
          'ORDER BY receipt_number',
      )
    ).rows;
    const numbers = rows.map((r) => Number(r.receipt_number));
    const problems: string[] = [];
    if (JSON.stringify(numbers) !== JSON.stringify(Array.from({ length: CHARGES }, (_, i) => i + 1)))
      problems.push(`receipt numbers ${JSON.stringify(numbers)}`);
    if (rows.some((r) => r.company_id !== co.companyId || r.reason !== 'refill'))
      problems.push('a succeeded charge that is not one of the refills');
    const counter = await watcher.query('SELECT last_number FROM receipt_counters WHERE company_id = $1', [
      co.companyId,
    ]);
    if (Number(counter.rows[0]?.last_number) !== CHARGES) problems.push(`counter at ${counter.rows[0]?.last_number}`);
    problems.push(...(await judge(db)));
    report(t, withKill ? 'receipts-race-kill' : 'receipts-race', {
      charges: CHARGES,
      kill: withKill,
      succeeded_when_killed: killedAfter,
      problems: problems.length,
    });
    return problems;
  } finally {
    await watcher.end().catch(() => undefined);
    for (const x of servers) await x.kill9();
    await db.drop();
  }
}

describe('receipt numbers on two PostgreSQL processes', { skip: POSTGRES_ONLY_SKIP }, () => {
  test(`${CHARGES} refill charges recorded at once by both processes' workers: R-1 … R-${CHARGES}`, {
    timeout: 300_000,
  }, async (t) => {
    assert.deepEqual(await raceRun(t, false), []);
  });

  test('kill -9 of a process while the charges are in flight: still R-1 … R-20, no gap, no repeat', {
    timeout: 300_000,
  }, async (t) => {
    assert.deepEqual(await raceRun(t, true), []);
  });
});
