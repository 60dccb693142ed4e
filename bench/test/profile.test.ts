// `npm run bench:profile`'s arithmetic on hand-made profiles: which stage a stack is charged to, a profile cut
// to a phase's window, and phases.json's names. No timing: every figure comes from the profiles written here.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findPhase, profileFileInfo, type PhaseWindow } from '../lib/cpuprof.js';
import {
  selfTimes,
  stageOfStack,
  stageTimes,
  STAGE_RULES,
  STAGES,
  topFrames,
  windowInside,
  type CallFrame,
  type CpuProfile,
  type Stage,
} from '../lib/profile-analysis.js';

const ROOT = '/repo';

/** A frame: `fn@url`, url relative to ROOT unless it is node:… or empty (a native). */
function frame(spec: string, line = 0): CallFrame {
  const at = spec.lastIndexOf('@');
  const functionName = at < 0 ? spec : spec.slice(0, at);
  const where = at < 0 ? '' : spec.slice(at + 1);
  const url = where === '' || where.startsWith('node:') ? where : `file://${ROOT}/${where}`;
  return { functionName, url, lineNumber: line };
}

/** The stage of a stack written leaf first. */
function stage(...leafFirst: string[]): Stage {
  return stageOfStack(leafFirst.map((s) => frame(s)));
}

test("a native leaf is charged to what called it: a socket write to HTTP's answer or to PostgreSQL's driver", () => {
  const write = ['writev@', 'writevGeneric@node:internal/stream_base_commons', 'Socket._writev@node:net'];
  assert.equal(stage(...write, 'end@node:_http_outgoing', 'send@node_modules/fastify/lib/reply.js'), 'http+json');
  assert.equal(stage(...write, 'Connection.query@node_modules/pg/lib/connection.js'), 'driver');
  assert.equal(stage(...write), 'http+json', 'nothing above says whose socket: a weak rule');
  assert.equal(stage('onStreamRead@node:internal/stream_base_commons'), 'http+json');
  assert.equal(stage('parse@', '_parse@node_modules/secure-json-parse/index.js', 'x@dist/http/app.js'), 'http+json');
});

test('hashing belongs to whoever hashes; alone, to auth', () => {
  const hash = ['digest@', 'Hash@node:internal/crypto/hash', 'createHash@node:crypto'];
  assert.equal(stage(...hash, 'authenticate@dist/operations/identity.js'), 'auth');
  assert.equal(stage(...hash, 'requestHash@dist/http/idempotency.js', 'x@dist/http/auth.js'), 'idempotency');
  assert.equal(stage(...hash), 'auth');
  assert.equal(stage('parseBasic@dist/http/auth.js', 'hook@node_modules/fastify/lib/hooks.js'), 'auth');
});

test('generated code: Ajv validate functions and fast-json-stringify serialisers (no url)', () => {
  assert.equal(stage('validate41@', 'validateParam@node_modules/fastify/lib/validation.js'), 'validation');
  assert.equal(stage('validate41@', 'x@node_modules/fastify/lib/route.js'), 'validation', 'named validate<n>');
  assert.equal(
    stage('anonymous1@', 'anonymous0@', 'serialize@node_modules/fastify/lib/reply.js', 'h@dist/http/routes/events.js'),
    'answer',
  );
  assert.equal(stage('find@node_modules/find-my-way/index.js'), 'fastify');
  assert.equal(stage('take@dist/http/rate-limit.js'), 'fastify', "the server's own hooks");
});

test('the engine: its sources (tsx) or its build, the specific place before the general one', () => {
  assert.equal(stage('price@src/domain/pricing.ts'), 'domain');
  assert.equal(stage('post@dist/ledger/posting.js'), 'domain');
  assert.equal(stage('usageOf@dist/domain/usage.js', 'x@dist/ledger/ingest.js'), 'rollups');
  assert.equal(stage('companyUsage@dist/store/usage/sql.js'), 'rollups');
  assert.equal(stage('#nextGroup@dist/ingest/group-commit.js'), 'ingest');
  assert.equal(
    stage('postMessage@', 'postMessage@node:internal/worker', '#send@dist/ingest/writer-thread.js'),
    'ingest',
  );
  assert.equal(stage('ingest@dist/http/routes/events.js'), 'handlers');
  assert.equal(stage('ingestGroup@dist/operations/events.js'), 'handlers');
  assert.equal(stage('authenticate@dist/operations/identity.js'), 'auth');
  assert.equal(stage('lookup@dist/store/idempotency/sql.js'), 'idempotency');
  assert.equal(stage('balanceOf@dist/store/balances/sql.js'), 'store');
  assert.equal(stage('writeLedgerStatement@dist/store/postgres/statements.js'), 'store');
  assert.equal(stage('observe@dist/http/metrics.js'), 'logs+metrics');
  assert.equal(stage('child@node_modules/pino/lib/proto.js'), 'logs+metrics');
  assert.equal(stage('x@dist/http/errors.js'), 'answer');
});

test('statements and driver: better-sqlite3 (its natives charged to their callers), pg', () => {
  assert.equal(
    stage('exec@node_modules/better-sqlite3/lib/methods/wrappers.js', 'write@dist/store/sqlite.js'),
    'statements',
  );
  assert.equal(stage('allSync@dist/store/sqlite/exec.js', 'balanceOf@dist/store/balances/sql.js'), 'statements');
  assert.equal(stage('#insertMany@dist/store/sqlite/ledger.js'), 'statements');
  assert.equal(
    stage('parse@node_modules/pg-protocol/dist/parser.js', 'x@node_modules/pg/lib/connection.js'),
    'statements',
  );
  assert.equal(stage('copy@node:buffer', 'parse@node_modules/pg-protocol/dist/parser.js'), 'statements');
  assert.equal(stage('parseRow@node_modules/pg/lib/result.js'), 'driver');
  assert.equal(stage('connect@node_modules/pg-pool/index.js'), 'driver');
  assert.equal(stage('parse@node_modules/postgres-date/index.js'), 'driver');
});

test("V8's own nodes, and what nothing classifies", () => {
  assert.equal(stage('(garbage collector)@'), 'gc');
  assert.equal(stage('(idle)@'), 'idle');
  assert.equal(stage('(program)@'), 'other');
  assert.equal(stage('processTicksAndRejections@node:internal/process/task_queues', '(root)@'), 'other');
  assert.equal(stage('emit@node:events', 'x@node_modules/some-lib/index.js'), 'other');
  assert.ok(
    STAGE_RULES.every((r) => STAGES.includes(r.stage)),
    'every rule names a stage the table prints',
  );
});

/**
 * root ─ handler (auth.js) ─ hash (native)
 *      └ (idle)
 * Samples every 100 µs from 1,100: handler, hash, idle, handler, hash; the profile ends at 1,600.
 */
function handMade(): CpuProfile {
  return {
    nodes: [
      { id: 1, callFrame: frame('(root)@'), children: [2, 4] },
      { id: 2, callFrame: frame('parseBasic@dist/http/auth.js', 21), children: [3] },
      { id: 3, callFrame: frame('digest@') },
      { id: 4, callFrame: frame('(idle)@') },
    ],
    startTime: 1_000,
    endTime: 1_600,
    samples: [2, 3, 4, 2, 3],
    timeDeltas: [100, 100, 100, 100, 100],
  };
}

test('each sample lasts until the next one (the last until endTime), the whole profile', () => {
  const all = selfTimes(handMade());
  assert.deepEqual(
    [...all.byNode].sort((a, b) => a[0] - b[0]),
    [
      [2, 200],
      [3, 200],
      [4, 100],
    ],
  );
  assert.equal(all.totalUs, 500);
  assert.equal(all.windowUs, 600, 'from startTime to endTime');
  assert.equal(all.samples, 5);
});

test('a window keeps the part of each sample inside it', () => {
  // [1,150, 1,450): half of the sample at 1,100, those at 1,200 and 1,300 whole, half of the one at 1,400.
  const window = { startUs: 1_150, endUs: 1_450 };
  const cut = selfTimes(handMade(), window);
  assert.deepEqual(
    [...cut.byNode].sort((a, b) => a[0] - b[0]),
    [
      [2, 100],
      [3, 100],
      [4, 100],
    ],
  );
  assert.equal(cut.totalUs, 300);
  assert.equal(cut.windowUs, 300);
  assert.equal(cut.samples, 4);
  const stages = stageTimes(handMade(), window);
  assert.equal(stages.get('auth'), 200, 'the native digest goes to its caller in auth.js');
  assert.equal(stages.get('idle'), 100);
  assert.equal(
    [...stages.values()].reduce((a, b) => a + b, 0),
    cut.totalUs,
    'every sample in exactly one stage',
  );
  const top = topFrames(handMade(), window, ROOT);
  assert.deepEqual(
    top.map((f) => [f.functionName, f.location, f.stage, f.selfUs]),
    [
      ['parseBasic', 'dist/http/auth.js:22', 'auth', 100],
      ['digest', '(native)', 'auth', 100],
      ['(idle)', '(native)', 'idle', 100],
    ],
  );
  assert.equal(selfTimes(handMade(), { startUs: 2_000, endUs: 3_000 }).totalUs, 0, 'after the profile: nothing');
  assert.ok(windowInside(handMade(), window));
  assert.ok(!windowInside(handMade(), { startUs: 900, endUs: 1_200 }), 'starts before the profile');
});

test('phases.json names and profile file names', () => {
  const phase = (scenario: string, name: string): PhaseWindow =>
    ({ scenario, phase: name, startUs: 0, endUs: 1, requests: 1 }) as PhaseWindow;
  const phases = [
    phase('warm-up', 'warm-up'),
    phase('events-1', 'events-1'),
    phase('holds', 'hold'),
    phase('holds', 'settle'),
    phase('entitlements-1', 'ingest beside checks'),
  ];
  assert.equal(findPhase(phases, 'events-1')?.scenario, 'events-1');
  assert.equal(findPhase(phases, 'holds/settle')?.phase, 'settle');
  assert.equal(findPhase(phases, 'settle')?.phase, 'settle');
  assert.equal(findPhase(phases, 'entitlements-1')?.phase, 'ingest beside checks', 'a scenario of one phase');
  assert.throws(() => findPhase(phases, 'holds'), /several phases/);
  assert.equal(findPhase(phases, 'events-100'), undefined);
  assert.deepEqual(profileFileInfo('CPU.20261127.233851.20828.1.002.cpuprofile'), { pid: 20828, threadId: 1, seq: 2 });
  assert.equal(profileFileInfo('phases.json'), undefined);
});
