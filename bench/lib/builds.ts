/**
 * Builds side by side in one process (group-cpu.ts, request-cpu.ts): the `--build LABEL=CHECKOUT` flags, the rounds
 * that alternate them, and the lines that compare each with the first.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { positiveInteger } from './options.js';
import { createBenchDatabase } from './postgres.js';
import { machineBusySeconds } from './procstats.js';

export interface Build {
  label: string;
  /** The checkout's root (this one, or a worktree of an older commit with `node_modules` linked). */
  root: string;
}

/** The `--build LABEL=CHECKOUT` flags; at least one (the first is the base the others are compared with). */
export function parseBuilds(specs: readonly string[] | undefined): Build[] {
  const builds = (specs ?? []).map((spec) => {
    const eq = spec.indexOf('=');
    if (eq <= 0) throw new Error(`--build takes LABEL=CHECKOUT, got "${spec}"`);
    return { label: spec.slice(0, eq), root: resolve(spec.slice(eq + 1)) };
  });
  if (builds.length === 0) throw new Error('name at least one --build LABEL=CHECKOUT (the first is the base)');
  return builds;
}

/** A whole number ≥ 1 from `--flag`, or `fallback` when it is not given. */
export function wholeFlag(flag: string, raw: string | undefined, fallback: number): number {
  return raw === undefined ? fallback : positiveInteger(`--${flag}`, raw);
}

/** `--db`: sqlite (the default) or postgres. */
export function parseBuildsDb(raw: string | undefined): 'sqlite' | 'postgres' {
  const db = raw ?? 'sqlite';
  if (db !== 'sqlite' && db !== 'postgres') throw new Error(`--db is sqlite or postgres, got "${db}"`);
  return db;
}

/** A fresh database for one build: a SQLite file in a new temporary directory, or a new PostgreSQL database. */
export async function freshDatabase(
  db: 'sqlite' | 'postgres',
  adminUrl: string,
): Promise<{ url: string; drop: () => Promise<void> }> {
  if (db === 'postgres') return createBenchDatabase(adminUrl);
  const dir = mkdtempSync(join(tmpdir(), 'builds-'));
  return { url: `sqlite:${join(dir, 'store.sqlite')}`, drop: async () => rmSync(dir, { recursive: true }) };
}

/** One build's runs: `step` does one unit of work (a group, a block of requests); the sums of what they used. */
export interface Contender {
  label: string;
  step: () => Promise<void>;
  /** Units of work each step does. */
  unitsPerStep: number;
  /** Stops what the build runs and drops its database. */
  close: () => Promise<void>;
  cpuUs: number;
  machineUs: number;
  wallUs: number;
  units: number;
}

/**
 * `rounds` rounds, each running `steps` steps of every contender in turn, in reversed order every other round (the
 * machine's drift falls on all of them alike), summing this process's CPU (every thread), the machine's busy CPU
 * (/proc/stat) and the wall time of each.
 */
export async function alternate(contenders: readonly Contender[], rounds: number, steps: number): Promise<void> {
  for (let r = 0; r < rounds; r++) {
    for (const x of r % 2 === 0 ? contenders : [...contenders].reverse()) {
      const cpu = process.cpuUsage();
      const machine = machineBusySeconds();
      const wall = performance.now();
      for (let s = 0; s < steps; s++) await x.step();
      const used = process.cpuUsage(cpu);
      x.cpuUs += used.user + used.system;
      x.machineUs += (machineBusySeconds() - machine) * 1e6;
      x.wallUs += (performance.now() - wall) * 1000;
      x.units += steps * x.unitsPerStep;
    }
  }
}

/** A line per contender: each figure per unit (`unit`: what one is), the others' against the first's. */
export function compareLines(contenders: readonly Contender[], unit: string, digits: number): string[] {
  const base = contenders[0]!;
  const per = (x: Contender, k: 'cpuUs' | 'machineUs' | 'wallUs') => x[k] / x.units;
  const cell = (x: Contender, k: 'cpuUs' | 'machineUs' | 'wallUs') => {
    // /proc/stat counts in 10 ms ticks: a short run may see none (no change to give then).
    const change = x === base || per(base, k) === 0 ? '' : ` (${((per(x, k) / per(base, k) - 1) * 100).toFixed(1)} %)`;
    return `${per(x, k).toFixed(digits)} µs${change}`;
  };
  return contenders.map(
    (x) =>
      `${x.label.padEnd(12)} process CPU ${cell(x, 'cpuUs')}, machine ${cell(x, 'machineUs')}, ` +
      `wall ${cell(x, 'wallUs')} per ${unit}`,
  );
}
