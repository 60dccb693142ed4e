// Guarantees: the `leases` scenario of `npm run bench` (lib/leases.ts, lib/lease-gateway.ts) runs against the real
// server (a child process, as the bench runs it) on SQLite and PostgreSQL and reports its rows: the latency of
// `lease.tryTake(1)`, of `pool.tryTake(…)` and of the timer alone over their calls; the lease pool's gateway and the
// check per decision (through the client library, and from autocannon), each with its decisions and its HTTP
// requests counted by kind (the checks' one per decision), and unpaced the ratios of their decisions/s; the
// exactness check passed (Σ taken = Σ event costs = Σ leases used, balances = start − taken, pending 0), and the
// bench's own ledger check agrees; `--gateway-rate` paces the gateways. The exactness check names every kind of
// difference (it cannot pass vacuously). Figures are the bench's business, not the tests'.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createTenant } from '../lib/api.js';
import { startChild } from '../lib/children.js';
import { REPO_ROOT } from '../lib/entry.js';
import {
  AUTOCANNON_CHECK_PHASE,
  CHECK_PHASE,
  exactnessProblems,
  GATEWAY_ACCOUNTS,
  POOL_PHASE,
  timeCalls,
  TRYTAKE_CALLS,
  TRYTAKE_TARGET_P99_US,
} from '../lib/leases.js';
import { Ledger } from '../lib/ledger.js';
import { ADMIN_POSTGRES_URL, parseOptions, SCENARIO_NAMES } from '../lib/options.js';
import { createBenchDatabase } from '../lib/postgres.js';
import { postgresProcesses } from '../lib/procstats.js';
import { formatLeases } from '../lib/report.js';
import { runScenario, type ScenarioContext } from '../lib/scenarios.js';

const PG_ADMIN_URL = process.env.BENCH_PG_URL ?? ADMIN_POSTGRES_URL;
/** The paced run's rate: decisions per second of each gateway. */
const PACED_RATE = 3_000;
/** A slice of decisions the lease pool's gateway may run ahead of its schedule. */
const SLICE = 1_000;

test('--only leases, --gateway-rate: the scenario is selectable, and its gateways run flat out by default', () => {
  assert.ok(SCENARIO_NAMES.includes('leases'));
  assert.deepEqual(parseOptions(['--only', 'leases']).only, ['leases']);
  assert.equal(parseOptions([]).gatewayRate, undefined);
  assert.equal(parseOptions(['--gateway-rate', '5000']).gatewayRate, 5000);
  for (const bad of ['0', '-1', 'fast', '20000000'])
    assert.throws(() => parseOptions(['--gateway-rate', bad]), /--gateway-rate/, bad);
});

test('tryTake timing: every call timed after the warm-up, the refusals counted', () => {
  let left = 1_500;
  const f = timeCalls('countdown', () => left-- > 0, 1_000);
  assert.equal(f.calls, 1_000);
  assert.equal(f.warmupCalls, 1_000);
  assert.equal(f.refused, 500, 'the last 500 calls found nothing left');
  assert.ok(f.latencyUs.p50 >= 0 && f.latencyUs.p99 >= f.latencyUs.p50 && f.latencyUs.p99_9 >= f.latencyUs.p99);
});

test('the exactness check names each difference, and none when the server agrees', () => {
  const expected = { start: 1_000, taken: 30, recorded: 10 };
  const exact = {
    amount: 970,
    pending: 0,
    available: 970,
    leasesUsed: 30,
    leasesOpen: 0,
    usageEvents: 10,
    usageCost: 30,
  };
  assert.deepEqual(exactnessProblems('a_1', expected, exact), []);
  const cases: [Partial<typeof exact>, RegExp][] = [
    [{ usageCost: 31 }, /10 events costing 31 recorded, 10 costing 30 taken/],
    [{ usageEvents: 11 }, /11 events costing 30 recorded/],
    [{ leasesUsed: 29 }, /leases used 29 units, 30 were taken/],
    [{ leasesOpen: 1 }, /1 leases still open/],
    [{ amount: 969, available: 969 }, /amount 969, expected 1000 − 30/],
    [{ pending: 5, available: 965 }, /pending 5/],
  ];
  for (const [change, message] of cases) {
    const problems = exactnessProblems('a_1', expected, { ...exact, ...change });
    assert.equal(problems.length, 1, JSON.stringify(change));
    assert.match(problems[0] as string, message);
    assert.match(problems[0] as string, /^account a_1: /);
  }
});

interface Storage {
  databaseUrl: string;
  processes: (() => number[]) | undefined;
  drop(): Promise<void>;
}

async function storage(dialect: 'sqlite' | 'postgres', dir: string): Promise<Storage> {
  if (dialect === 'sqlite')
    return { databaseUrl: `sqlite:${join(dir, 'leases.sqlite')}`, processes: undefined, drop: async () => {} };
  const db = await createBenchDatabase(PG_ADMIN_URL);
  return { databaseUrl: db.url, processes: () => postgresProcesses(db.name), drop: () => db.drop() };
}

for (const [dialect, flags] of [
  ['sqlite', []],
  ['postgres', ['--gateway-rate', String(PACED_RATE)]],
] as const)
  test(`leases on ${dialect}${flags.length > 0 ? ', paced' : ''}: its rows, the exactness check passed`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-leases-test-'));
    const store = await storage(dialect, dir);
    const server = await startChild({
      label: `leases-${dialect}`,
      cwd: REPO_ROOT,
      entry: 'src/main.ts',
      env: {
        DATABASE_URL: store.databaseUrl,
        LOG_LEVEL: 'warn',
        BILLING_SECRET_KEY: `bench:${randomBytes(32).toString('base64')}`,
      },
      logDir: dir,
    });
    try {
      const options = parseOptions(['--only', 'leases', '--duration', '1', '--warmup', '0.5', ...flags]);
      const tenant = await createTenant(server.baseUrl);
      const logged: string[] = [];
      const ctx: ScenarioContext = {
        db: dialect,
        servers: [server],
        tenant,
        ledger: new Ledger(),
        options,
        databaseProcesses: store.processes,
        auditAccounts: [],
        setup: { accounts: 0, seconds: 0 },
        log: (m) => logged.push(m),
      };
      const result = await runScenario(ctx, 'leases');
      assert.equal(result.setupAccounts, GATEWAY_ACCOUNTS);
      assert.deepEqual(
        result.phases.map((p) => [p.scenario, p.phase]),
        [
          ['leases', POOL_PHASE],
          ['leases', CHECK_PHASE],
          ['leases', AUTOCANNON_CHECK_PHASE],
        ],
      );
      const [pool, check, autocannon] = result.phases.map((p) => p.leases);
      assert.ok(pool !== undefined && check !== undefined && autocannon !== undefined);
      assert.equal(pool.targetP99Us, TRYTAKE_TARGET_P99_US);
      assert.deepEqual(
        pool.tryTake?.map((f) => [f.call, f.calls, f.refused]),
        [
          ['lease.tryTake(1)', TRYTAKE_CALLS, 0],
          ["pool.tryTake(account, 'tokens', 1)", TRYTAKE_CALLS, 0],
          ['process.hrtime.bigint() pair alone', TRYTAKE_CALLS, 0],
        ],
      );
      for (const f of pool.tryTake ?? []) assert.ok(f.latencyUs.p99 > 0 && Number.isFinite(f.latencyUs.p99_9));

      // The lease pool's gateway: decisions allowed, events sent in batches, every one of them exact on the server.
      const g = pool.gateway;
      assert.ok(g.decisions > 0 && g.allowed > 0, JSON.stringify(g));
      assert.equal(g.accounts, GATEWAY_ACCOUNTS);
      assert.ok((g.requestsByKind.events ?? 0) > 0, 'events were sent in the window');
      assert.equal(
        g.requests,
        Object.values(g.requestsByKind).reduce((a, b) => a + b, 0),
      );
      assert.ok(g.decisionUs !== undefined && g.closeS !== undefined && g.backlogWaitPercent !== undefined);
      assert.ok(g.acceptedPerS !== undefined && g.acceptedPerS > 0);
      assert.deepEqual(pool.exactness?.problems, [], 'the server agrees with every local decision');
      assert.ok((pool.exactness?.events ?? 0) >= g.allowed);
      assert.equal(result.phases[0]?.non2xx, 0);

      // The baselines: one check request per decision, nothing else, from the client library and from autocannon.
      for (const [i, c] of [check.gateway, autocannon.gateway].entries()) {
        const row = result.phases[i + 1]!;
        assert.ok(c.decisions > 0, JSON.stringify(c));
        assert.deepEqual(Object.keys(c.requestsByKind), ['check']);
        assert.ok(c.requests >= c.decisions && c.requests <= c.decisions + c.failed + row.connections, row.phase);
      }
      const ratios = [pool.vsCheck, pool.vsAutocannonCheck];
      if (options.gatewayRate === undefined) assert.ok(ratios.every((r) => r !== undefined && r > 0));
      else assert.deepEqual(ratios, [undefined, undefined], 'no ratio between paced and unpaced gateways');
      if (options.gatewayRate !== undefined)
        for (const [p, row] of [g, check.gateway].map((x, i) => [x, result.phases[i]!] as const)) {
          assert.equal(p.targetPerS, PACED_RATE);
          assert.ok(p.decisions <= PACED_RATE * row.elapsedS + SLICE, `${row.phase}: paced (${p.decisions})`);
        }

      const report = await ctx.ledger.check(tenant.api, ctx.auditAccounts);
      assert.deepEqual(report.findings, [], 'the bench ledger check agrees');
      assert.equal(report.accountsChecked, GATEWAY_ACCOUNTS);
      const lines = formatLeases(result.phases);
      for (const expected of [/lease\.tryTake\(1\): p50 .* µs over 1,000,000 calls \(target p99 ≤ 50 µs\)/, /exact: /])
        assert.ok(
          lines.some((l) => expected.test(l)),
          `${expected}\n${lines.join('\n')}`,
        );
      assert.ok(lines.some((l) => l.includes(`${POOL_PHASE}: `) && l.includes('HTTP requests per decision')));
      assert.ok(lines.some((l) => l.includes(`${CHECK_PHASE}: `) && l.includes('decisions/s')));
      assert.ok(lines.some((l) => l.includes(`${AUTOCANNON_CHECK_PHASE}: `) && l.includes('decisions/s')));
      const ratio = /lease pool's decisions\/s ÷ a check per decision's: .*client.*autocannon/;
      assert.equal(
        lines.some((l) => ratio.test(l)),
        options.gatewayRate === undefined,
      );
      t.diagnostic(lines.join('\n'));
      assert.ok(logged.some((m) => m.startsWith('leases: exact: ')));
    } finally {
      await server.stop();
      await store.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
