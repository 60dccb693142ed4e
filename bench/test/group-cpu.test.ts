// Guarantees: bench/group-cpu.ts runs the store's ingest of each build it is given (here this checkout twice) on a
// fresh SQLite file and reports one line per build, the second against the first; a flag it cannot use stops it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');

function run(args: string[]) {
  return spawnSync(TSX, ['bench/group-cpu.ts', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 });
}

test('two builds, alternated: a line for each, the second with its change against the first', () => {
  const r = run([
    '--build',
    'a=.',
    '--build',
    'b=.',
    '--accounts',
    '5',
    '--grants',
    '2',
    '--rounds',
    '2',
    '--block',
    '3',
  ]);
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.match(
    lines[0]!,
    /^sqlite, groups of 5 requests × 1 event\(s\), 2 grant\(s\) per balance; 2 rounds of 3 groups/,
  );
  assert.match(lines[1]!, /^a +process CPU \d+ µs, machine \d+ µs, wall \d+ µs per group$/);
  assert.match(
    lines[2]!,
    /^b +process CPU \d+ µs \(-?\d+\.\d %\), machine \d+ µs( \(-?\d+\.\d %\))?, wall \d+ µs \(-?\d+\.\d %\)/,
  );
});

test('no build, or a flag it cannot use: stops with the reason', () => {
  assert.match(run([]).stderr, /name at least one --build/);
  assert.match(run(['--build', 'a=.', '--db', 'mysql']).stderr, /--db is sqlite or postgres/);
  assert.match(run(['--build', 'a=.', '--rounds', '0']).stderr, /--rounds needs a positive number/);
});
