// Guarantees: the bench's own arithmetic is right — the ledger check accepts exactly what the
// acknowledged requests (and, for unanswered ones, some subset of them) explain, the transaction
// chain check catches a broken link, /proc parsing and percentiles are exact, flags parse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventBatch, eventBatches, BODY_VARIANTS } from '../../bench/lib/bodies.js';
import { ChainCheck, compareBalance, isSubsetSum, Ledger, type AccountBook } from '../../bench/lib/ledger.js';
import { LatencyRecorder } from '../../bench/lib/load.js';
import { connectionsFor, INITIAL_GRANT, parseOptions, SCENARIO_NAMES } from '../../bench/lib/options.js';
import { parseCpuLine, parseRssBytes, parseStat } from '../../bench/lib/procstats.js';
import { applyRatios, HELLO_PHASE, noDbPhaseName } from '../../bench/lib/report.js';
import { scatter, type PhaseResult } from '../../bench/lib/scenarios.js';

function book(overrides: Partial<AccountBook> = {}): AccountBook {
  return { accountId: 'a_1', label: 'test', debited: 0, held: 0, uncertainDebits: [], uncertainHolds: [], ...overrides };
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
  assert.equal(isSubsetSum(40_000_000, Array.from({ length: 10_000_000 }, () => 17)), undefined);
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
  assert.equal(batch.total, batch.costs.reduce((a, b) => a + b, 0));
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
    phase({ db: 'none', phase: noDbPhaseName(100), eventsPerRequest: 100, requestsPerS: 15_000, eventsPerS: 1_500_000 }),
  ];
  const one = phase({ requestsPerS: 20_000, eventsPerS: 20_000 });
  const hundred = phase({ eventsPerRequest: 100, baselineEvents: 100, requestsPerS: 1_000, eventsPerS: 100_000 });
  const settle = phase({ baselineEvents: undefined, requestsPerS: 10_000, eventsPerS: 10_000 });
  applyRatios([one, hundred, settle], baselines);
  assert.deepEqual(one.ratios, { vsHelloRequests: 0.2, vsNoDbEvents: 0.25, vsNoDbRequests: 0.25 });
  assert.deepEqual(hundred.ratios, { vsNoDbEvents: 100_000 / 1_500_000, vsNoDbRequests: 1_000 / 15_000 });
  assert.deepEqual(settle.ratios, { vsHelloRequests: 0.1 });
});
