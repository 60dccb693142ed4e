// Guarantee: a LeasePool of the TypeScript client, under a gateway's load against the real server (SQLite and
// PostgreSQL), decides every request in its own process and the server's ledger agrees with it exactly: Σ units
// taken = Σ costs of the events recorded = what each balance lost; nothing stays pending; no event is recorded twice
// (counts match, ids unique); every event's cost was covered by a lease; every lease ends closed or expired; and an
// account whose balance runs out mid-run is refused from then on and never goes below 0. The load: 10,000 decisions
// a second (paced by timers) for LEASE_POOL_SECONDS (default 30) over 6 accounts, 1–5 units each, every decision
// allowed recording one event a few ms later, as a gateway would after serving the request. Throughput and requests
// per decision are reported (t.diagnostic), never asserted.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import { Billing, type FetchLike, type LeaseFailure, LeasePool } from '../../sdk/typescript/src/index.js';
import {
  HTTP_DIALECTS,
  type Harness,
  createAccountWithBalance,
  signUpCompany,
  startHarness,
} from '../support/harness.js';

const SECONDS = Number(process.env.LEASE_POOL_SECONDS ?? 30);
const RATE = 10_000;
const RICH_ACCOUNTS = 5;
const RICH_START = 10_000_000;
/** About 5,000 units a second are asked of each account: this runs out in about a third of the run. */
const POOR_START = 1_500 * SECONDS;
/** About 2 s of an account's usage: the next lease is opened with 0.4 s to spare. */
const LEASE_AMOUNT = 10_000;
const HOUR = 3_600_000;

/** Each account's figures, as the load saw them. */
interface Tally {
  start: number;
  taken: number;
  recorded: number;
  refused: number;
}

for (const dialect of HTTP_DIALECTS) {
  describe(`LeasePool under a gateway's load against the real server (${dialect})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(dialect);
    });
    after(async () => h.close());

    test(`${RATE} decisions/s for ${SECONDS} s: the ledger agrees with every local decision`, async (t) => {
      const co = await signUpCompany(h);
      const requests = { events: 0, leases: 0, close: 0, other: 0 };
      const counting: FetchLike = (input, init) => {
        const kind = /\/(events|leases|close)$/.exec(new URL(input.url).pathname)?.[1] as 'events' | undefined;
        requests[kind ?? 'other']++;
        return fetch(input, init);
      };
      const billing = new Billing({ baseUrl: h.url, companyId: co.companyId, apiKey: co.apiKey, fetch: counting });
      const rich = await Promise.all(
        Array.from({ length: RICH_ACCOUNTS }, () => createAccountWithBalance(h, co, 'tokens', RICH_START)),
      );
      const poor = await createAccountWithBalance(h, co, 'tokens', POOR_START);
      const accounts = [...rich, poor];
      const tally = new Map<string, Tally>(
        accounts.map((a) => [a, { start: a === poor ? POOR_START : RICH_START, taken: 0, recorded: 0, refused: 0 }]),
      );
      const failures: LeaseFailure[] = [];
      const pool = new LeasePool(billing, {
        amount: LEASE_AMOUNT,
        ttlSeconds: 120,
        onError: (f) => failures.push(f),
      });

      const decide = () => {
        const account = accounts[Math.floor(Math.random() * accounts.length)]!;
        const units = 1 + Math.floor(Math.random() * 5);
        const n = tally.get(account)!;
        const take = pool.tryTake(account, 'tokens', units);
        if (take === null) {
          n.refused++;
          return;
        }
        n.taken += units;
        setTimeout(
          () => {
            take.record([{ type: 'call', cost_override: { amount: units, denomination: 'tokens' } }]);
            n.recorded++;
          },
          Math.floor(Math.random() * 5),
        );
      };
      const total = RATE * SECONDS;
      const began = performance.now();
      await new Promise<void>((resolve) => {
        let done = 0;
        const tick = () => {
          const due = Math.min(total, Math.floor(((performance.now() - began) * RATE) / 1000));
          for (; done < due; done++) decide();
          if (done >= total) resolve();
          else setTimeout(tick, 1);
        };
        tick();
      });
      const loadMs = performance.now() - began;
      const closed = await pool.close();
      const allMs = performance.now() - began;

      assert.deepEqual(
        failures.filter((f) => f.dropped),
        [],
        'no batch refused',
      );
      assert.ok(
        closed.every((l) => l.status !== 'open'),
        'every lease the pool still had is closed',
      );
      const clock = await h.request('GET', '/v1/test_clock', { auth: co.auth });
      const nowMs = Date.parse(clock.body.data.now);
      const from = new Date(Math.floor(nowMs / HOUR) * HOUR - HOUR).toISOString();
      const to = new Date(Math.floor(nowMs / HOUR) * HOUR + 2 * HOUR).toISOString();
      let allowed = 0;
      for (const account of accounts) {
        const n = tally.get(account)!;
        allowed += n.recorded;
        const b = await billing.balances.retrieve(account, 'tokens');
        assert.deepEqual([b.amount, b.pending], [n.start - n.taken, 0], `${account}: start − Σ taken, nothing pending`);
        assert.ok(b.amount >= 0, `${account} never overspent`);
        let used = 0;
        for await (const l of billing.leases.list(account)) {
          assert.notEqual(l.status, 'open', `lease ${l.lease_id} was left open`);
          used += l.used;
        }
        assert.equal(used, n.taken, `${account}: every event's cost was covered by a lease`);
        const usage = await billing.usage.query({
          account_id: account,
          from,
          to,
          window: 'all',
          group_by: 'account_id',
        });
        const [u] = usage.data;
        assert.deepEqual(
          [usage.data.length, u?.events, u?.cost],
          [1, n.recorded, n.taken],
          `${account}: Σ costs recorded = Σ units taken, one event per decision allowed`,
        );
      }

      // The account that ran out: refused from then on, never below 0, and every event once, read back one by one.
      const p = tally.get(poor)!;
      assert.ok(p.refused > 0 && p.taken <= POOR_START, `the poor account was refused (${p.refused} times)`);
      const ids = new Set<string>();
      let costs = 0;
      for await (const e of billing.events.list({ account_id: poor, limit: 100 })) {
        assert.ok(!ids.has(e.event_id), `event ${e.event_id} recorded twice`);
        ids.add(e.event_id);
        costs += e.cost.amount;
      }
      assert.deepEqual([ids.size, costs], [p.recorded, p.taken]);
      for await (const tx of billing.transactions.list(poor, { limit: 100 }))
        assert.ok(tx.balance_after >= 0, `the balance went below 0: ${JSON.stringify(tx)}`);
      await h.audit();

      const sent = requests.events + requests.leases + requests.close;
      t.diagnostic(
        `${dialect}: ${total} decisions in ${(loadMs / 1000).toFixed(1)} s ` +
          `(${Math.round(total / (loadMs / 1000))}/s), ` +
          `${allowed} allowed; all sent and closed ${((allMs - loadMs) / 1000).toFixed(1)} s after the load`,
      );
      t.diagnostic(
        `${dialect}: requests ${sent} (events ${requests.events}, opens ${requests.leases}, ` +
          `closes ${requests.close}): ` +
          `${(sent / total).toFixed(4)} per decision; poor account: ${p.taken} of ${POOR_START} taken, ` +
          `${p.refused} refused; the others refused ${rich.map((a) => tally.get(a)!.refused).join(', ')}`,
      );
    });
  });
}
