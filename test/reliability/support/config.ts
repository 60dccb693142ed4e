/**
 * Short (CI, `npm test`) or full (`npm run test:reliability`, RELIABILITY_FULL=1) sizes, and the figures each
 * scenario reports: printed as test diagnostics and, with RELIABILITY_REPORT=<file>, appended to that file as one
 * JSON line per run (docs/RELIABILITY.md's table is filled from them).
 */
import { appendFileSync } from 'node:fs';
import type { TestContext } from 'node:test';

export const FULL = process.env.RELIABILITY_FULL === '1';

/** The short size in CI, the full one under RELIABILITY_FULL=1. */
export const size = <T>(short: T, full: T): T => (FULL ? full : short);

/** A fixed seed, printed; RELIABILITY_SEED overrides it to replay or explore. */
export function seed(fixed: number): number {
  const s = process.env.RELIABILITY_SEED;
  return s !== undefined && /^\d+$/.test(s) ? Number(s) : fixed;
}

export function report(t: TestContext, scenario: string, figures: Record<string, unknown>): void {
  const line = { scenario, full: FULL, at: new Date().toISOString(), ...figures };
  t.diagnostic(JSON.stringify(line));
  const file = process.env.RELIABILITY_REPORT;
  if (file) appendFileSync(file, `${JSON.stringify(line)}\n`);
}

/** A small seeded PRNG (mulberry32): the same seed, the same run. */
export function rng(seedValue: number): { next(): number; int(n: number): number; pick<T>(xs: readonly T[]): T } {
  let a = seedValue >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n) => Math.floor(next() * n), pick: (xs) => xs[Math.floor(next() * xs.length)]! };
}
