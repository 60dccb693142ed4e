// Guarantees: the bench's own arithmetic is right — the ledger check accepts exactly what the
// acknowledged requests (and, for unanswered ones, some subset of them) explain, the transaction
// chain check catches a broken link, /proc parsing and percentiles are exact, flags parse,
// the loads of several generators (one per server process) merge into the figures one would give,
// and a connection's fixed cycle of requests attributes every response to the request it answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventBatch, eventBatches, BODY_VARIANTS } from '../lib/bodies.js';
import { describeGrants, extraGrants, grantBody, grantedUnits } from '../lib/grants.js';
import { ChainCheck, compareBalance, compareGrants, isSubsetSum, Ledger, type AccountBook } from '../lib/ledger.js';
import { LatencyRecorder, mergeOutcomes, runLoad, splitConnections, type LoadOutcome } from '../lib/load.js';
import {
  connectionsFor,
  DEFAULT_CHECK_RATE,
  INITIAL_GRANT,
  MAX_CHECK_RATE,
  parseOptions,
  parseProcessCounts,
  SCENARIO_NAMES,
} from '../lib/options.js';
import { parseCpuLine, parseRssBytes, parseStat } from '../lib/procstats.js';
import {
  applyRatios,
  BASELINE_SCENARIO,
  formatRoundRatios,
  formatTable,
  HELLO_PHASE,
  median,
  noDbPhaseName,
  phaseLabel,
  runLabel,
  plainSqlPhaseName,
  storeOnlyPhaseName,
} from '../lib/report.js';
import { parseStoreOnlyMessage, storeLanes, storeOnlyPhase, type StoreOnlyFigures } from '../lib/storeonly.js';
import { scatter } from '../lib/scatter.js';
import { connectionCycle, CYCLE_ACCOUNTS_MAX, EventTraffic, type PhaseResult } from '../lib/scenarios.js';

function book(overrides: Partial<AccountBook> = {}): AccountBook {
  return {
    accountId: 'a_1',
    label: 'test',
    granted: INITIAL_GRANT,
    debited: 0,
    held: 0,
    uncertainDebits: [],
    uncertainHolds: [],
    ...overrides,
  };
}

const balance = (amount: number, pending = 0) => ({ amount, pending, available: amount - pending });

test('subset sums: exact targets only', () => {
  assert.equal(isSubsetSum(0, []), true);
  assert.equal(isSubsetSum(1, []), false);
  assert.equal(isSubsetSum(-1, [1]), false);
  assert.equal(isSubsetSum(12, [5, 7, 9]), true);
  assert.equal(isSubsetSum(13, [5, 7, 9]), false);
  assert.equal(isSubsetSum(21, [5, 7, 9]), true);
  assert.equal(isSubsetSum(22, [5, 7, 9]), false);
  assert.equal(
    isSubsetSum(
      40_000_000,
      Array.from({ length: 10_000_000 }, () => 17),
    ),
    undefined,
  );
});

test('balance check: exact when every request was answered', () => {
  assert.deepEqual(compareBalance(book({ debited: 100 }), balance(INITIAL_GRANT - 100)), []);
  const off = compareBalance(book({ debited: 100 }), balance(INITIAL_GRANT - 101));
  assert.equal(off.length, 1);
  assert.equal(off[0]?.check, 'amount');
  assert.match(off[0]?.message ?? '', /off by -1/);
  const pendingOff = compareBalance(book({ held: 5 }), balance(INITIAL_GRANT, 6));
  assert.equal(pendingOff[0]?.check, 'pending');
});

test('balance check: unanswered submissions may explain a difference, but only exactly', () => {
  const b = book({ debited: 100, uncertainDebits: [10, 30] });
  assert.deepEqual(compareBalance(b, balance(INITIAL_GRANT - 100)), []);
  assert.deepEqual(compareBalance(b, balance(INITIAL_GRANT - 130)), []);
  assert.deepEqual(compareBalance(b, balance(INITIAL_GRANT - 140)), []);
  assert.equal(compareBalance(b, balance(INITIAL_GRANT - 120)).length, 1);
  assert.equal(compareBalance(b, balance(INITIAL_GRANT - 99)).length, 1);
});

test('balance check: available must be amount − pending', () => {
  const findings = compareBalance(book({ held: 3 }), { amount: INITIAL_GRANT, pending: 3, available: INITIAL_GRANT });
  assert.deepEqual(
    findings.map((f) => f.check),
    ['available'],
  );
});

test('ledger: a settle moves the hold from pending to amount, once', () => {
  const ledger = new Ledger();
  ledger.open('a_1', 'holds');
  ledger.hold('a_1', 'ev_1', 7);
  ledger.hold('a_1', 'ev_2', 4);
  ledger.settle('ev_1');
  ledger.settle('ev_1');
  const b = ledger.book('a_1');
  assert.equal(b.debited, 7);
  assert.equal(b.held, 4);
  assert.throws(() => ledger.hold('a_1', 'ev_2', 4));
});

function tx(id: string, amount: number, balanceAfter: number) {
  return { transaction_id: id, amount, balance_after: balanceAfter, kind: 'usage' };
}

test('transaction chain: newest first, from zero to the balance', () => {
  const good = new ChainCheck();
  for (const t of [tx('t3', -2, 95), tx('t2', -3, 97), tx('t1', 100, 100)]) good.add(t);
  assert.equal(good.finish(95), undefined);
  assert.equal(good.count, 3);

  const broken = new ChainCheck();
  for (const t of [tx('t3', -2, 94), tx('t2', -3, 97), tx('t1', 100, 100)]) broken.add(t);
  assert.match(broken.finish(94) ?? '', /chain broken/);

  const wrongBalance = new ChainCheck();
  for (const t of [tx('t2', -3, 97), tx('t1', 100, 100)]) wrongBalance.add(t);
  assert.match(wrongBalance.finish(96) ?? '', /sum to 97/);

  const notFromZero = new ChainCheck();
  for (const t of [tx('t2', -3, 97), tx('t1', 90, 100)]) notFromZero.add(t);
  assert.match(notFromZero.finish(97) ?? '', /sum to 87/);
});

test('/proc parsing', () => {
  const stat = '1234 (node (worker) x) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 11 0 100 1000 50';
  assert.deepEqual(parseStat(stat), { ppid: 1, cpuTicks: 325 });
  assert.equal(parseRssBytes('Name:\tnode\nVmRSS:\t  123456 kB\nThreads: 7\n'), 123456 * 1024);
  assert.equal(parseRssBytes('Name:\tzombie\n'), 0);
  assert.deepEqual(parseCpuLine('cpu  100 5 30 900 7 1 2 3 0 0\ncpu0 1 2 3\n'), { busy: 141, steal: 3 });
});

test('latency percentiles by nearest rank', () => {
  const recorder = new LatencyRecorder();
  for (let i = 1; i <= 100_000; i++) recorder.push(i / 100);
  const f = recorder.figures();
  assert.equal(f.p50, 500);
  assert.equal(f.p99, 990);
  assert.equal(f.p99_9, 999);
  assert.equal(f.max, 1000);
  assert.equal(new LatencyRecorder().figures().p99, 0);
});

test('event bodies: the costs the ledger counts are the costs sent', () => {
  const batch = eventBatch(100, 3, 'pending');
  const sent = JSON.parse(batch.body.toString()) as { cost_override: { amount: number }; state: string }[];
  assert.equal(sent.length, 100);
  assert.deepEqual(
    sent.map((e) => e.cost_override.amount),
    batch.costs,
  );
  assert.equal(
    batch.total,
    batch.costs.reduce((a, b) => a + b, 0),
  );
  assert.ok(sent.every((e) => e.state === 'pending'));
  const complete = JSON.parse(eventBatch(1, 0, 'complete').body.toString()) as object[];
  assert.ok(!('state' in (complete[0] as object)));
  assert.equal(eventBatches(10).length, BODY_VARIANTS);
});

test('account scatter visits every account once per cycle', () => {
  for (const count of [1, 7, 100, 7919, 10_000]) {
    const pick = scatter(count);
    const seen = new Set(Array.from({ length: count }, (_, i) => pick(i)));
    assert.equal(seen.size, count);
  }
});

test('flags', () => {
  const defaults = parseOptions([]);
  assert.equal(defaults.durationS, 5);
  assert.deepEqual(defaults.only, SCENARIO_NAMES);
  assert.equal(defaults.db, undefined);
  assert.equal(connectionsFor(defaults, 1), 100);
  assert.equal(connectionsFor(defaults, 100), 20);
  assert.equal(connectionsFor(defaults, 1000), 8);
  assert.equal(parseOptions(['--quick']).durationS, 2);
  assert.equal(parseOptions(['--quick', '--duration', '3']).durationS, 3);
  const some = parseOptions(['--only', 'holds,events-1', '--db', 'sqlite', '--connections', '10', '--env', 'A=b=c']);
  assert.deepEqual(some.only, ['events-1', 'holds']);
  assert.equal(connectionsFor(some, 1000), 10);
  assert.deepEqual(some.serverEnv, { A: 'b=c' });
  assert.throws(() => parseOptions(['--only', 'nope']));
  assert.throws(() => parseOptions(['--db', 'mysql']));
  assert.throws(() => parseOptions(['--duration', '0']));
  assert.deepEqual(defaults.processes, [1]);
  assert.deepEqual(parseOptions(['--processes', '2']).processes, [2]);
  assert.deepEqual(parseOptions(['--processes', '2, 1,2']).processes, [1, 2]);
  assert.equal(defaults.cpuProf, false);
  assert.equal(parseOptions(['--cpu-prof']).cpuProf, true);
  assert.equal(defaults.rounds, 1);
  assert.equal(parseOptions(['--rounds', '3']).rounds, 3);
  for (const bad of ['0', '-1', '1.5', 'many']) assert.throws(() => parseOptions(['--rounds', bad]), /--rounds/, bad);
});

test('--rounds: each row of the rounds with the median of each ratio and the range the rounds gave', () => {
  assert.equal(median([]), undefined);
  assert.equal(median([3]), 3);
  assert.equal(median([5, 1, 3]), 3);
  assert.equal(median([4, 1, 3, 10]), 3.5);
  const row = (db: string, requestsPerS: number, ratios: PhaseResult['ratios']): PhaseResult =>
    ({ db, servers: 1, scenario: 'events-1', phase: 'events-1', requestsPerS, ratios }) as PhaseResult;
  const hello = (requestsPerS: number): PhaseResult =>
    ({
      db: 'none',
      servers: 1,
      scenario: BASELINE_SCENARIO,
      phase: HELLO_PHASE,
      requestsPerS,
      ratios: {},
    }) as PhaseResult;
  const table = formatRoundRatios([
    [hello(50_000), row('sqlite', 8_000, { cpuPerRequestVsNoDb: 6, vsHelloRequests: 0.16 })],
    [hello(30_000), row('sqlite', 7_000, { cpuPerRequestVsNoDb: 9, vsHelloRequests: 0.23 })],
    [hello(40_000), row('sqlite', 6_000, { cpuPerRequestVsNoDb: 5, vsHelloRequests: 0.15 })],
    // A row only one round has (a run that failed in the others) is summarised over that round alone.
    [row('postgres', 5_000, { cpuPerRequestVsNoDb: 7 })],
  ]);
  const lines = table.split('\n');
  assert.match(lines[0] ?? '', /^db +scenario +phase +rounds +req\/s +vs hello req\/s .* CPU\/req vs no-db$/);
  assert.equal(lines.length, 5, table);
  assert.match(lines[2] ?? '', /^none +baseline +hello-world +3 +40,000$/);
  assert.match(
    lines[3] ?? '',
    /^sqlite ×1 +events-1 +events-1 +3 +7,000 +16% \(15%–23%\) .* 6\.00× \(5\.00×–9\.00×\)$/,
  );
  assert.match(lines[4] ?? '', /^postgres ×1 +events-1 +events-1 +1 +5,000 .* 7\.00×$/);
});

test('--check-rate: entitlement checks per second of entitlements-1, 1,000 by default', () => {
  assert.ok(SCENARIO_NAMES.includes('entitlements-1'));
  assert.deepEqual(parseOptions(['--only', 'entitlements-1,events-1']).only, ['events-1', 'entitlements-1']);
  assert.equal(parseOptions([]).checkRate, DEFAULT_CHECK_RATE);
  assert.equal(DEFAULT_CHECK_RATE, 1_000);
  assert.equal(parseOptions(['--check-rate', '250']).checkRate, 250);
  assert.equal(parseOptions(['--check-rate', '0.5']).checkRate, 0.5, 'one every two seconds');
  for (const bad of ['0', '-5', 'fast', String(MAX_CHECK_RATE + 1)])
    assert.throws(() => parseOptions(['--check-rate', bad]), /--check-rate/, bad);
});

test('--grants: the initial grant and n − 1 more drawn before it, active the whole run', () => {
  const defaults = parseOptions([]);
  assert.equal(defaults.grants, 1);
  assert.equal(defaults.grantUnits, INITIAL_GRANT);
  const three = parseOptions(['--grants', '3', '--grant-units', '2000']);
  assert.equal(three.grants, 3);
  assert.equal(three.grantUnits, 2000);
  for (const bad of [
    ['--grants', '0'],
    ['--grants', '11'],
    ['--grants', '2.5'],
    ['--grant-units', '1.5'],
  ])
    assert.throws(() => parseOptions(bad), bad.join(' '));
  assert.throws(() => parseOptions(['--grants', '10', '--grant-units', '2000000000000000']), /safe integer/);

  assert.deepEqual(extraGrants(1, 2000, 0), []);
  const nowMs = Date.parse('2026-01-01T00:00:00Z');
  const grants = extraGrants(3, 2000, nowMs);
  assert.equal(grants.length, 2);
  assert.deepEqual(
    grants.map((g) => g.priority),
    [5, 10],
    'drawn first, in this order, before the initial grant (priority 50)',
  );
  assert.deepEqual(
    grants.map((g) => g.category),
    ['promotional', 'paid'],
  );
  for (const g of grants) {
    assert.equal(g.amount, 2000);
    assert.ok((g.expiresAtMs as number) >= nowMs + 365 * 86_400_000, 'far in the future: active the whole run');
  }
  assert.equal(grantedUnits(grants), INITIAL_GRANT + 4000);
  assert.deepEqual(grantBody(grants[1] as (typeof grants)[number]), {
    amount: 2000,
    priority: 10,
    category: 'paid',
    cost_basis: '0.8',
    expires_at: '2028-01-01T00:00:00.000Z',
    name: 'bench grant 2',
  });
  assert.equal('cost_basis' in grantBody(grants[0] as (typeof grants)[number]), false);
  assert.match(describeGrants(1, INITIAL_GRANT), /^1 grant per balance/);
  assert.match(describeGrants(3, 2000), /^3 grants per balance: 2 × 2,000 units drawn first/);

  // The ledger expects what the grants held at setup.
  const ledger = new Ledger();
  ledger.open('a_g', 'grants', grantedUnits(grants));
  ledger.debit('a_g', 4100);
  assert.deepEqual(compareBalance(ledger.book('a_g'), balance(INITIAL_GRANT - 100)), []);
  assert.equal(compareBalance(ledger.book('a_g'), balance(INITIAL_GRANT - 4100)).length, 1);
});

test('grants check: the live grants hold the balance and its holds', () => {
  const grants = [
    { remaining: 0, held: 0 },
    { remaining: 70, held: 5 },
    { remaining: 30, held: 0 },
  ];
  assert.equal(compareGrants({ amount: 100, pending: 5 }, grants), undefined);
  assert.match(compareGrants({ amount: 99, pending: 5 }, grants) ?? '', /hold 100 units, the balance amount is 99/);
  assert.match(compareGrants({ amount: 100, pending: 6 }, grants) ?? '', /pending is 6/);
});

test('--processes: counts, or a list of counts', () => {
  assert.deepEqual(parseProcessCounts('1,2'), [1, 2]);
  assert.deepEqual(parseProcessCounts('4,1'), [1, 4]);
  for (const bad of ['', '0', '1,', '1.5', 'two', '1,,2', '17']) assert.throws(() => parseProcessCounts(bad), bad);
});

test('connections split evenly over the servers', () => {
  assert.deepEqual(splitConnections(20, 1), [20]);
  assert.deepEqual(splitConnections(20, 2), [10, 10]);
  assert.deepEqual(splitConnections(100, 3), [34, 33, 33]);
  assert.deepEqual(splitConnections(8, 3), [3, 3, 2]);
  assert.deepEqual(splitConnections(1, 2), [1]);
  for (const [total, parts] of [
    [7, 1],
    [7, 2],
    [7, 7],
    [3, 5],
    [101, 4],
  ] as const) {
    const split = splitConnections(total, parts);
    assert.equal(
      split.reduce((a, b) => a + b, 0),
      total,
    );
    assert.ok(Math.max(...split) - Math.min(...split) <= 1);
    assert.equal(split.length, Math.min(total, parts));
  }
  assert.throws(() => splitConnections(0, 2));
  assert.throws(() => splitConnections(4, 0));
});

function outcome(over: Partial<LoadOutcome<string>>, latencies: number[]): LoadOutcome<string> {
  const recorder = new LatencyRecorder();
  for (const ms of latencies) recorder.push(ms);
  return {
    elapsedS: 1,
    startedAtMs: 0,
    endedAtMs: 1000,
    responses: 0,
    ok: 0,
    non2xx: 0,
    statusCodes: {},
    errors: 0,
    timeouts: 0,
    latencyMs: recorder.figures(),
    latencies: recorder,
    unanswered: [],
    errorSamples: [],
    generatorCpuPercent: 0,
    ...over,
  };
}

test('loads of several generators merge: sums, one window, percentiles over every response', () => {
  const fast = Array.from({ length: 900 }, (_, i) => 1 + i / 1000);
  const slow = Array.from({ length: 100 }, (_, i) => 50 + i);
  const a = outcome(
    {
      startedAtMs: 1_000,
      endedAtMs: 3_000,
      responses: 905,
      ok: 900,
      non2xx: 5,
      statusCodes: { '200': 900, '409': 5 },
      errors: 1,
      timeouts: 1,
      unanswered: ['r1'],
      errorSamples: ['409 a'],
      generatorCpuPercent: 80,
    },
    fast,
  );
  const b = outcome(
    {
      startedAtMs: 1_010,
      endedAtMs: 3_500,
      responses: 100,
      ok: 100,
      statusCodes: { '200': 100 },
      errors: 2,
      unanswered: ['r2', 'r3'],
      errorSamples: ['409 a', '500 b'],
      generatorCpuPercent: 80,
    },
    slow,
  );
  const merged = mergeOutcomes([a, b], 85);
  assert.equal(merged.elapsedS, 2.5);
  assert.equal(merged.startedAtMs, 1_000);
  assert.equal(merged.endedAtMs, 3_500);
  assert.equal(merged.responses, 1_005);
  assert.equal(merged.ok, 1_000);
  assert.equal(merged.non2xx, 5);
  assert.deepEqual(merged.statusCodes, { '200': 1_000, '409': 5 });
  assert.equal(merged.errors, 3);
  assert.equal(merged.timeouts, 1);
  assert.deepEqual(merged.unanswered, ['r1', 'r2', 'r3']);
  assert.deepEqual(merged.errorSamples, ['409 a', '500 b']);
  assert.equal(merged.generatorCpuPercent, 85, 'one process: its CPU is measured once, not summed');
  // The same figures as one generator that saw every response.
  const all = new LatencyRecorder();
  for (const ms of [...slow, ...fast]) all.push(ms);
  assert.deepEqual(merged.latencyMs, all.figures());
  assert.equal(merged.latencyMs.p50, fast[499]);
  assert.equal(merged.latencyMs.p99, slow[89]);
  assert.equal(merged.latencyMs.max, 149);
  assert.equal(merged.latencies.size, 1_000);
  // The inputs are left as they were.
  assert.equal(a.latencies.size, 900);
  assert.throws(() => mergeOutcomes([], 0));
});

test('a database run is labelled with its process count', () => {
  assert.equal(runLabel('postgres', 2), 'postgres ×2');
  assert.equal(phaseLabel({ db: 'postgres', servers: 2, scenario: 'events-100' }), 'postgres ×2');
  assert.equal(phaseLabel({ db: 'sqlite', servers: 1, scenario: 'events-1' }), 'sqlite ×1');
  assert.equal(phaseLabel({ db: 'none', servers: 1, scenario: BASELINE_SCENARIO }), 'none');
});

test('ratios come from the baseline of the same request size', () => {
  const phase = (over: Partial<PhaseResult>): PhaseResult =>
    ({
      db: 'sqlite',
      scenario: 's',
      phase: 'p',
      eventsPerRequest: 1,
      baselineEvents: 1,
      requestsPerS: 0,
      eventsPerS: 0,
      ratios: {},
      ...over,
    }) as PhaseResult;
  const baselines = [
    phase({ db: 'none', phase: HELLO_PHASE, eventsPerRequest: 0, baselineEvents: undefined, requestsPerS: 100_000 }),
    phase({ db: 'none', phase: noDbPhaseName(1), requestsPerS: 80_000, eventsPerS: 80_000 }),
    phase({
      db: 'none',
      phase: noDbPhaseName(100),
      eventsPerRequest: 100,
      requestsPerS: 15_000,
      eventsPerS: 1_500_000,
    }),
  ];
  const one = phase({ requestsPerS: 20_000, eventsPerS: 20_000 });
  const hundred = phase({ eventsPerRequest: 100, baselineEvents: 100, requestsPerS: 1_000, eventsPerS: 100_000 });
  const settle = phase({ baselineEvents: undefined, requestsPerS: 10_000, eventsPerS: 10_000 });
  applyRatios([one, hundred, settle], baselines);
  assert.deepEqual(one.ratios, { vsHelloRequests: 0.2, vsNoDbEvents: 0.25, vsNoDbRequests: 0.25 });
  assert.deepEqual(hundred.ratios, { vsNoDbEvents: 100_000 / 1_500_000, vsNoDbRequests: 1_000 / 15_000 });
  assert.deepEqual(settle.ratios, { vsHelloRequests: 0.1 });
});

test('server CPU per request against the no-db baseline: per request at 1 event, per event at 100', () => {
  const phase = (over: Partial<PhaseResult>): PhaseResult =>
    ({
      db: 'sqlite',
      scenario: 's',
      phase: 'p',
      eventsPerRequest: 1,
      baselineEvents: 1,
      requestsPerS: 0,
      eventsPerS: 0,
      ratios: {},
      ...over,
    }) as PhaseResult;
  const baselines = [
    // 1 event: 2 s of CPU over 40,000 requests = 50 µs each; 100 events: 3 s over 10,000 requests = 3 µs per event.
    phase({ db: 'none', phase: noDbPhaseName(1), serverCpuSeconds: 2, requests: 40_000, events: 40_000 }),
    phase({
      db: 'none',
      phase: noDbPhaseName(100),
      eventsPerRequest: 100,
      serverCpuSeconds: 3,
      requests: 10_000,
      events: 1_000_000,
    }),
  ];
  // 200 µs per request; 100-event requests: 15 µs per event.
  const one = phase({ serverCpuSeconds: 2, requests: 10_000, events: 10_000 });
  const hundred = phase({
    eventsPerRequest: 100,
    baselineEvents: 100,
    serverCpuSeconds: 1.5,
    requests: 1_000,
    events: 100_000,
  });
  const unmatched = phase({ eventsPerRequest: 1000, baselineEvents: 1000, serverCpuSeconds: 1, requests: 10 });
  const noCpu = phase({ requests: 10 });
  const settle = phase({ baselineEvents: undefined, serverCpuSeconds: 1, requests: 10 });
  applyRatios([one, hundred, unmatched, noCpu, settle], baselines);
  assert.ok(Math.abs((one.ratios.cpuPerRequestVsNoDb ?? 0) - 4) < 1e-9, 'per request: 200 µs over 50 µs');
  assert.ok(Math.abs((hundred.ratios.cpuPerRequestVsNoDb ?? 0) - 5) < 1e-9, 'per event: 15 µs over 3 µs');
  assert.equal(unmatched.ratios.cpuPerRequestVsNoDb, undefined, 'no baseline of that size');
  assert.equal(noCpu.ratios.cpuPerRequestVsNoDb, undefined, 'no CPU figure');
  assert.equal(settle.ratios.cpuPerRequestVsNoDb, undefined, 'no baseline named');
  const row = {
    ...one,
    servers: 1,
    connections: 100,
    latencyMs: { p50: 1, p99: 2, p99_9: 3 },
    non2xx: 0,
    errors: 0,
    unanswered: 0,
    serverCpuPercent: 40,
    serverPeakRssMb: 100,
    generatorCpuPercent: 50,
    otherCpuPercent: 0,
  } as PhaseResult;
  assert.match(formatTable([row]), /CPU\/req vs no-db\n-+\n.* 4\.00×$/);
});

test('the store-only ratio comes from the same database, whatever the process count', () => {
  const phase = (over: Partial<PhaseResult>): PhaseResult =>
    ({
      db: 'sqlite',
      servers: 1,
      scenario: 'events-100',
      phase: 'events-100',
      eventsPerRequest: 100,
      baselineEvents: 100,
      storeEvents: 100,
      requestsPerS: 0,
      eventsPerS: 0,
      ratios: {},
      ...over,
    }) as PhaseResult;
  const baselines = [
    phase({
      scenario: BASELINE_SCENARIO,
      servers: 0,
      phase: storeOnlyPhaseName(100),
      storeEvents: undefined,
      baselineEvents: undefined,
      eventsPerS: 200_000,
    }),
    phase({
      db: 'postgres',
      scenario: BASELINE_SCENARIO,
      servers: 0,
      phase: storeOnlyPhaseName(100),
      storeEvents: undefined,
      baselineEvents: undefined,
      eventsPerS: 50_000,
    }),
    phase({
      db: 'postgres',
      scenario: BASELINE_SCENARIO,
      servers: 0,
      phase: storeOnlyPhaseName(1),
      storeEvents: undefined,
      baselineEvents: undefined,
      eventsPerRequest: 1,
      eventsPerS: 5_000,
    }),
    phase({
      db: 'postgres',
      scenario: BASELINE_SCENARIO,
      servers: 0,
      phase: plainSqlPhaseName(100),
      storeEvents: undefined,
      baselineEvents: undefined,
      eventsPerS: 160_000,
    }),
  ];
  const sqlite = phase({ eventsPerS: 150_000 });
  const pg1 = phase({ db: 'postgres', eventsPerS: 40_000 });
  const pg2 = phase({ db: 'postgres', servers: 2, eventsPerS: 60_000 });
  const pgOne = phase({ db: 'postgres', eventsPerRequest: 1, baselineEvents: 1, storeEvents: 1, eventsPerS: 10_000 });
  const hot = phase({
    db: 'postgres',
    eventsPerRequest: 1,
    baselineEvents: 1,
    storeEvents: undefined,
    eventsPerS: 10_000,
  });
  const noStore = phase({ db: 'sqlite', eventsPerRequest: 1, baselineEvents: 1, storeEvents: 1, eventsPerS: 10_000 });
  applyRatios([sqlite, pg1, pg2, pgOne, hot, noStore], baselines);
  assert.equal(sqlite.ratios.vsStoreEvents, 0.75);
  assert.equal(pg1.ratios.vsStoreEvents, 0.8);
  assert.equal(pg2.ratios.vsStoreEvents, 1.2);
  assert.equal(pgOne.ratios.vsStoreEvents, 2);
  assert.equal(hot.ratios.vsStoreEvents, undefined, 'only phases that say which store-only run they compare with');
  assert.equal(noStore.ratios.vsStoreEvents, undefined, 'no store-only run of that size on that database');
  assert.equal(storeOnlyPhaseName(100), 'store only, 100 events/tx');
  assert.equal(storeOnlyPhaseName(1), 'store only, 1 event/tx');
  assert.equal(pg1.ratios.vsPlainSqlEvents, 0.25, 'PostgreSQL against the plain-SQL limit of its size');
  assert.equal(pg2.ratios.vsPlainSqlEvents, 0.375);
  assert.equal(pgOne.ratios.vsPlainSqlEvents, undefined, 'no plain-SQL run of that size');
  assert.equal(sqlite.ratios.vsPlainSqlEvents, undefined, 'the plain-SQL limit is PostgreSQL’s');
  assert.equal(plainSqlPhaseName(1), 'plain SQL, 1 event/tx');
});

test('store-only: lanes, messages, and its row in the report', () => {
  assert.equal(storeLanes('sqlite', 16), 1);
  assert.equal(storeLanes('postgres', 8), 4);
  assert.equal(storeLanes('postgres', 1), 1);
  assert.deepEqual(parseStoreOnlyMessage('{"type":"measuring"}'), { type: 'measuring' });
  assert.equal(parseStoreOnlyMessage('(node:1) ExperimentalWarning: …'), undefined);
  assert.equal(parseStoreOnlyMessage('{"type":"other"}'), undefined);
  assert.equal(parseStoreOnlyMessage('{broken'), undefined);
  const figures: StoreOnlyFigures = {
    type: 'result',
    dialect: 'sqlite',
    eventsPerTransaction: 100,
    lanes: 1,
    accounts: 100,
    grants: 1,
    durationS: 5,
    elapsedS: 5,
    transactions: 1_000,
    transactionsPerS: 200,
    events: 100_000,
    eventsPerS: 20_000,
    refused: 0,
    errors: 1,
    errorSamples: ['error: x'],
    latencyMs: { p50: 4, p99: 9, p99_9: 12, mean: 5, max: 13 },
    ledger: { accountsChecked: 100, findings: [] },
  };
  assert.deepEqual(parseStoreOnlyMessage(` ${JSON.stringify(figures)}\n`), figures);
  const row = storeOnlyPhase(
    'sqlite',
    figures,
    { cpuPercent: 90, cpuSeconds: 4.5, peakRssBytes: 100 * 1024 * 1024, processes: 1 },
    undefined,
    {
      busyPercent: 120,
      stealPercent: 0,
    },
  );
  assert.equal(row.scenario, BASELINE_SCENARIO);
  assert.equal(row.phase, storeOnlyPhaseName(100));
  assert.equal(phaseLabel(row), 'sqlite');
  assert.equal(row.requestsPerS, 200, 'req/s shows transactions/s');
  assert.equal(row.eventsPerS, 20_000);
  assert.equal(row.connections, 1, 'conns shows the lanes');
  assert.equal(row.errors, 1);
  assert.equal(row.serverPeakRssMb, 100);
  assert.equal(row.otherCpuPercent, 30);
  assert.equal(row.storeEvents, undefined);
  const plain = storeOnlyPhase(
    'postgres',
    { ...figures, baseline: 'plain-sql', dialect: 'postgres' },
    { cpuPercent: 60, cpuSeconds: 3, peakRssBytes: 0, processes: 1 },
    90,
    { busyPercent: 160, stealPercent: 0 },
  );
  assert.equal(plain.phase, plainSqlPhaseName(100), 'the plain-SQL child’s row');
  assert.equal(plain.databaseCpuPercent, 90);
});

test('connection cycles: together they send to every account, each share evenly, and use every body', () => {
  for (const [accounts, connections] of [
    [100, 100],
    [100, 20],
    [100, 8],
    [10_000, 100],
    [1, 100],
    [7, 3],
  ] as const) {
    const seenAccounts = new Set<number>();
    const seenVariants = new Set<number>();
    for (let c = 0; c < connections; c++) {
      const cycle = connectionCycle(accounts, BODY_VARIANTS, c, connections);
      const perAccount = new Map<number, number>();
      for (const { account, variant } of cycle) {
        assert.ok(account >= 0 && account < accounts && variant >= 0 && variant < BODY_VARIANTS);
        perAccount.set(account, (perAccount.get(account) ?? 0) + 1);
        seenAccounts.add(account);
        seenVariants.add(variant);
      }
      assert.equal(new Set(perAccount.values()).size, 1, 'every account of the share equally often');
      assert.ok(cycle.length <= Math.max(BODY_VARIANTS, Math.ceil(accounts / connections)) * BODY_VARIANTS);
    }
    assert.equal(seenAccounts.size, accounts, `${accounts} accounts over ${connections} connections`);
    assert.equal(seenVariants.size, BODY_VARIANTS);
  }
});

test('a fixed cycle per connection: every response is matched to the request it answers', async () => {
  // The server answers with the path it was asked for, after a delay that varies, so that the
  // connections' responses interleave.
  let served = 0;
  const server = createServer((req, res) => {
    served++;
    setTimeout(() => res.end(req.url), served % 3);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const tags = new Map<string, number>();
    let mismatched = 0;
    const outcome = await runLoad<string>({
      baseUrl: `http://127.0.0.1:${port}`,
      authorization: undefined,
      connections: 4,
      durationS: 0.5,
      next: () => assert.fail('a cycle is given: next is not called'),
      cycle: (connection) =>
        [0, 1, 2].map((k) => ({ method: 'GET' as const, path: `/c${connection}/r${k}`, tag: `/c${connection}/r${k}` })),
      onResponse: (tag, status, body) => {
        if (status !== 200 || body !== tag) mismatched++;
        tags.set(tag, (tags.get(tag) ?? 0) + 1);
      },
    });
    assert.equal(mismatched, 0);
    assert.equal(outcome.unanswered.length, 0, 'drained: every request sent was answered');
    assert.equal(outcome.responses, served);
    assert.equal(outcome.ok, served);
    assert.deepEqual([...tags.keys()].sort(), [0, 1, 2, 3].flatMap((c) => [0, 1, 2].map((k) => `/c${c}/r${k}`)).sort());
    assert.ok(served > 12);
  } finally {
    server.close();
  }
});

test('event traffic: cycles per connection over a small population, requests per send over a large one', () => {
  const traffic = (accounts: number) =>
    new EventTraffic(
      new Ledger(),
      Array.from({ length: accounts }, (_, i) => `a_${i}`),
      eventBatches(1),
    );
  const small = traffic(10_000).spec('http://127.0.0.1:1', 'Basic x', 100, 1);
  assert.ok(small.cycle);
  assert.equal(small.cycle(3, 100).length, 10_000 / 100, 'its share of the accounts, once each');
  const large = traffic(100 * CYCLE_ACCOUNTS_MAX + 1).spec('http://127.0.0.1:1', 'Basic x', 100, 1);
  assert.equal(large.cycle, undefined);
  assert.match(large.next()!.path, /^\/v1\/accounts\/a_\d+\/events$/);
  const off = new EventTraffic(new Ledger(), ['a_0'], eventBatches(1), false).spec(
    'http://127.0.0.1:1',
    'Basic x',
    100,
    1,
  );
  assert.equal(off.cycle, undefined, 'cycles turned off');
});
