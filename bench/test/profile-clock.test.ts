// The clock `--cpu-prof`'s phase windows rely on: a .cpuprofile's timestamps (startTime, timeDeltas, endTime)
// are microseconds of the clock `process.hrtime.bigint()` reads, in any process of the machine. A child profiles
// itself while spinning in a named function between two readings of hrtime; its samples of that function must
// fall between them, and its whole profile between the parent's readings before the start and after the exit.
// Clocks that differed would be off by seconds to hours; the margins here are a few milliseconds.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { profileFiles } from '../lib/cpuprof.js';
import { sampleTimestamps, type CpuProfile } from '../lib/profile-analysis.js';

/** A sample's timestamp may be read a little before or after the moment the sampled code is on the stack. */
const SLACK_US = 5_000;

const CHILD = `
const hr = () => Number(process.hrtime.bigint() / 1000n);
function spinMarker(ms) {
  const end = hr() + ms * 1000;
  let n = 0;
  while (hr() < end) n++;
  return n;
}
const before = hr();
spinMarker(300);
const after = hr();
console.log(JSON.stringify({ before, after }));
`;

test("a .cpuprofile's timestamps are on process.hrtime's clock, across processes", () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-clock-'));
  try {
    const parentBefore = Number(process.hrtime.bigint() / 1000n);
    const child = spawnSync(
      process.execPath,
      ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--input-type=module', '-e', CHILD],
      {
        encoding: 'utf8',
      },
    );
    const parentAfter = Number(process.hrtime.bigint() / 1000n);
    assert.equal(child.status, 0, child.stderr);
    const { before, after } = JSON.parse(child.stdout) as { before: number; after: number };
    const [file] = profileFiles(dir);
    assert.ok(file !== undefined, 'the child wrote its profile');
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;

    assert.ok(parentBefore <= profile.startTime && profile.endTime <= parentAfter, 'the profile within the parent');
    const marker = new Set(profile.nodes.filter((n) => n.callFrame.functionName === 'spinMarker').map((n) => n.id));
    const stamps = sampleTimestamps(profile).filter((_, i) => marker.has(profile.samples?.[i] as number));
    assert.ok(stamps.length > 10, `samples of the spinning function: ${stamps.length}`);
    const first = Math.min(...stamps);
    const last = Math.max(...stamps);
    assert.ok(first >= before - SLACK_US, `first sample ${first} µs, spin from ${before} µs`);
    assert.ok(last <= after + SLACK_US, `last sample ${last} µs, spin until ${after} µs`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
