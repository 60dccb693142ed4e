// Guarantees: bench/request-cpu.ts runs each build it is given (here this checkout twice) as a whole server on a
// fresh SQLite file, sends it ingest requests, and reports one line per build, the second against the first; a flag
// it cannot use stops it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');

function run(args: string[]) {
  return spawnSync(TSX, ['bench/request-cpu.ts', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 });
}

test('two builds, alternated: a line for each, the second with its change against the first', () => {
  const r = run([
    ...['--build', 'a=.', '--build', 'b=.', '--accounts', '3', '--in-flight', '4'],
    ...['--events', '2', '--rounds', '2', '--block', '30', '--warmup', '10'],
  ]);
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.match(
    lines[0]!,
    /^sqlite, requests of 2 event\(s\) over 3 accounts, 4 in flight; 2 rounds of 30 requests per build$/,
  );
  assert.match(lines[1]!, /^a +process CPU [\d.]+ µs, machine [\d.]+ µs, wall [\d.]+ µs per request$/);
  assert.match(
    lines[2]!,
    /^b +process CPU [\d.]+ µs \(-?\d+\.\d %\), machine [\d.]+ µs( \(-?\d+\.\d %\))?, wall [\d.]+ µs \(-?\d+\.\d %\)/,
  );
});

test('no build, or a flag it cannot use: stops with the reason', () => {
  assert.match(run([]).stderr, /name at least one --build/);
  assert.match(run(['--build', 'a=.', '--db', 'mysql']).stderr, /--db is sqlite or postgres/);
  assert.match(run(['--build', 'a=.', '--in-flight', '0']).stderr, /--in-flight needs a positive number/);
});
