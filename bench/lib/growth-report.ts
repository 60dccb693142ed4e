/**
 * What `npm run bench:growth` reports: per level the cost of an event, per list endpoint its
 * latency, the query plans, the seeding times; as tables on stdout and JSON in bench/results/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PlanCheck } from './growth-explain.js';
import type { GrowthOptions } from './growth-options.js';
import type { SeedTiming } from './growth-seed.js';
import type { Finding } from './ledger.js';
import type { PhaseResult } from './scenarios.js';
import type { RunMeta } from './report.js';

export interface GrowthPhase {
  /** `events-1` or `events-100`. */
  name: string;
  result: PhaseResult;
  /** Server CPU (utime+stime of its process tree) over the phase ÷ events acknowledged, in µs. */
  serverCpuUsPerEvent: number;
  /** The same for the PostgreSQL processes serving the bench database. */
  databaseCpuUsPerEvent: number | undefined;
}

export interface LevelResult {
  accounts: number;
  /** Stored events the level asks for (seeded; the load adds its own on top). */
  storedEvents: number;
  /** Events stored when the level was measured: seeded, and acknowledged by earlier levels' load. */
  eventRows: number;
  /** Size of the database files (SQLite: file + WAL) or pg_database_size. */
  databaseBytes: number;
  seedS: number;
  phases: GrowthPhase[];
}

export interface ListResult {
  name: string;
  request: string;
  requests: number;
  itemsPerAnswer: number;
  latencyMs: { p50: number; p99: number; max: number; mean: number };
  serverCpuUsPerRequest: number;
  databaseCpuUsPerRequest: number | undefined;
  otherCpuPercent: number;
  non2xx: number;
  errors: number;
  /** 2xx answers that did not hold the expected number of items. */
  malformed: number;
  /** The issue's target for its p99, when it has one (the credit grants' lists). */
  targetMs?: number;
}

export interface CheckReport {
  balancesChecked: number;
  accountsTouched: number;
  uncertainRequests: number;
  chainsChecked: string[];
  auditS: number;
  findings: Finding[];
  /** The store's own audit of the whole ledger (`auditLedger`), and the big account's balance. */
  auditProblems: string[];
}

export interface SeedEstimate {
  accountsPerS: number | undefined;
  eventsPerS: number | undefined;
  balanceReadsPerS: number | undefined;
  balanceUpdatesPerS: number | undefined;
  settleSPerMillionRows: number | undefined;
  /** Seconds a run of `accounts` / `events` would take to seed at this run's rates. */
  forLevels: { accounts: number; events: number; seconds: number } | undefined;
}

export interface DbGrowthRun {
  db: string;
  storage: string;
  levels: LevelResult[];
  lists: ListResult[];
  plans: PlanCheck[];
  seedTimings: SeedTiming[];
  seedS: number;
  seedEstimate: SeedEstimate | undefined;
  bigAccount: { accountId: string; transactions: number } | undefined;
  /** The credit grants seeded: per account, rows in all, and how many the list by expiry matched. */
  grants?: { perAccount: number; rows: number; expiresBefore: string; matching: number };
  /** The features and plans (created through the API), the accounts seeded on the plans, the overrides seeded. */
  entitlements?: { features: number; plans: number; accountsOnPlans: number; overrides: number };
  check: CheckReport | undefined;
  error: string | undefined;
}

export interface GrowthReport {
  meta: RunMeta;
  options: GrowthOptions;
  runs: DbGrowthRun[];
  failures: string[];
}

const whole = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

function ms(value: number): string {
  return value >= 100 ? whole.format(value) : value.toFixed(value >= 10 ? 1 : 2);
}

function us(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return '';
  return value >= 100 ? whole.format(value) : value.toFixed(1);
}

function compact(n: number): string {
  if (n >= 1_000_000 && n % 100_000 === 0) return `${n / 1_000_000}M`;
  if (n >= 1_000 && n % 100 === 0) return `${n / 1_000}k`;
  return whole.format(n);
}

function table(titles: readonly string[], rightAligned: readonly boolean[], rows: readonly string[][]): string {
  const widths = titles.map((t, i) => Math.max(t.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => (rightAligned[i] ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const header = line(titles);
  return [header, '-'.repeat(header.length), ...rows.map(line)].join('\n');
}

export function formatLevels(runs: readonly DbGrowthRun[]): string {
  const rows: string[][] = [];
  for (const run of runs) {
    for (const level of run.levels) {
      for (const p of level.phases) {
        const r = p.result;
        rows.push([
          run.db,
          compact(level.accounts),
          compact(level.storedEvents),
          whole.format(level.eventRows),
          p.name,
          String(r.connections),
          whole.format(r.eventsPerS),
          ms(r.latencyMs.p50),
          ms(r.latencyMs.p99),
          us(p.serverCpuUsPerEvent),
          us(p.databaseCpuUsPerEvent),
          `${r.serverCpuPercent.toFixed(0)}%`,
          r.databaseCpuPercent === undefined ? '' : `${r.databaseCpuPercent.toFixed(0)}%`,
          `${r.otherCpuPercent.toFixed(0)}%`,
          whole.format(r.non2xx + r.errors + r.unanswered),
        ]);
      }
    }
  }
  return table(
    [
      'db',
      'accounts',
      'stored events',
      'events rows',
      'requests',
      'conns',
      'events/s',
      'p50 ms',
      'p99 ms',
      'µs srv CPU/event',
      'µs db CPU/event',
      'srv CPU',
      'db CPU',
      'other CPU',
      'non-2xx+err',
    ],
    [false, true, true, true, false, true, true, true, true, true, true, true, true, true, true],
    rows,
  );
}

export function formatLists(runs: readonly DbGrowthRun[]): string {
  const rows: string[][] = [];
  for (const run of runs) {
    for (const l of run.lists) {
      rows.push([
        run.db,
        l.name,
        whole.format(l.requests),
        String(l.itemsPerAnswer),
        ms(l.latencyMs.p50),
        ms(l.latencyMs.p99),
        ms(l.latencyMs.max),
        us(l.serverCpuUsPerRequest),
        us(l.databaseCpuUsPerRequest),
        `${l.otherCpuPercent.toFixed(0)}%`,
        whole.format(l.non2xx + l.errors + l.malformed),
        l.targetMs === undefined ? '' : `${l.latencyMs.p99 <= l.targetMs ? 'met' : 'MISSED'} (≤ ${l.targetMs})`,
      ]);
    }
  }
  return table(
    [
      'db',
      'request (sequential, 1 connection)',
      'n',
      'items',
      'p50 ms',
      'p99 ms',
      'max ms',
      'µs srv CPU/req',
      'µs db CPU/req',
      'other CPU',
      'bad',
      'p99 target ms',
    ],
    [false, false, true, true, true, true, true, true, true, true, true, false],
    rows,
  );
}

export function formatPlans(runs: readonly DbGrowthRun[]): string[] {
  const out: string[] = [];
  for (const run of runs) {
    if (run.plans.length === 0) continue;
    out.push(`${run.db}:`);
    for (const p of run.plans) {
      const verdict = p.problems.length === 0 ? 'ok' : `PROBLEM: ${p.problems.join('; ')}`;
      const time = p.executionMs === undefined ? '' : `, ${p.executionMs.toFixed(3)} ms`;
      out.push(`  ${p.name}: ${verdict} (index ${p.indexes.length === 0 ? 'none' : p.indexes.join(', ')}${time})`);
      if (p.problems.length > 0 || p.indexes.length === 0 || p.shown) {
        out.push(`      SQL: ${p.sql}`);
        for (const line of p.plan) out.push(`      ${line}`);
      }
    }
  }
  return out;
}

/** The credit grants' lists against the issue's targets, one line per database. */
export function formatGrantTargets(runs: readonly DbGrowthRun[]): string[] {
  const out: string[] = [];
  for (const run of runs) {
    const g = run.grants;
    if (g === undefined) continue;
    const lists = run.lists.filter((l) => l.targetMs !== undefined);
    const parts = lists.map(
      (l) =>
        `${l.name}: p50 ${ms(l.latencyMs.p50)} ms, p99 ${ms(l.latencyMs.p99)} ms ` +
        `(target ≤ ${l.targetMs} ms: ${l.latencyMs.p99 <= (l.targetMs as number) ? 'met' : 'MISSED'})`,
    );
    out.push(
      `${run.db}: ${whole.format(g.rows)} grants (${g.perAccount} per account), ` +
        `${whole.format(g.matching)} expiring before ${g.expiresBefore}; ${parts.join('; ')}`,
    );
  }
  return out;
}

/** The name of every list case of the entitlements: `formatEntitlements` reports them together. */
export const ENTITLEMENT_CASE_PREFIX = 'entitlements';

/** Features, plans and overrides, and the p50 / p99 of the entitlement cases, one line per database. */
export function formatEntitlements(runs: readonly DbGrowthRun[]): string[] {
  const out: string[] = [];
  for (const run of runs) {
    const e = run.entitlements;
    if (e === undefined) continue;
    const parts = run.lists
      .filter((l) => l.name.startsWith(ENTITLEMENT_CASE_PREFIX))
      .map((l) => `${l.name}: p50 ${ms(l.latencyMs.p50)} ms, p99 ${ms(l.latencyMs.p99)} ms`);
    out.push(
      `${run.db}: ${e.features} features, ${e.plans} plans, ${whole.format(e.accountsOnPlans)} accounts on them, ` +
        `${whole.format(e.overrides)} overrides; ${parts.join('; ')}`,
    );
  }
  return out;
}

export function formatSeeding(runs: readonly DbGrowthRun[]): string[] {
  const out: string[] = [];
  for (const run of runs) {
    const byLevel = new Map<string, SeedTiming[]>();
    for (const t of run.seedTimings) byLevel.set(t.level, [...(byLevel.get(t.level) ?? []), t]);
    const parts: string[] = [];
    for (const [level, timings] of byLevel) {
      const seconds = timings.reduce((s, t) => s + t.seconds, 0);
      parts.push(`${level} ${seconds.toFixed(1)} s`);
    }
    out.push(`${run.db}: seeding took ${run.seedS.toFixed(1)} s (${parts.join('; ')})`);
    const e = run.seedEstimate;
    if (e !== undefined) {
      const rate = (v: number | undefined): string => (v === undefined ? '?' : whole.format(v));
      out.push(
        `${run.db}: rates: ${rate(e.accountsPerS)} accounts/s ` +
          `(account + balance + ${run.grants?.perAccount ?? 1} grant${run.grants?.perAccount === 1 ? '' : 's'}), ` +
          `${rate(e.eventsPerS)} events/s (event + usage transaction), ` +
          `${rate(e.balanceReadsPerS)} balance reads/s, ${rate(e.balanceUpdatesPerS)} balance updates/s, ` +
          `${e.settleSPerMillionRows === undefined ? '?' : e.settleSPerMillionRows.toFixed(1)} s of ` +
          `${run.db === 'postgres' ? 'VACUUM (ANALYZE)' : 'closing the store (WAL checkpoint)'} ` +
          'per million rows seeded',
      );
      if (e.forLevels !== undefined) {
        out.push(
          `${run.db}: at these rates, seeding ${compact(e.forLevels.accounts)} accounts and ` +
            `${compact(e.forLevels.events)} events would take about ${(e.forLevels.seconds / 60).toFixed(1)} min ` +
            '(linear; larger indexes make it slower)',
        );
      }
    }
  }
  return out;
}

export function formatChecks(runs: readonly DbGrowthRun[]): string[] {
  const out: string[] = [];
  for (const run of runs) {
    const c = run.check;
    if (c === undefined) {
      out.push(`${run.db}: ledger not checked${run.error !== undefined ? ' (run failed)' : ''}`);
      continue;
    }
    out.push(
      `${run.db}: ${whole.format(c.balancesChecked)} of ${whole.format(c.accountsTouched)} loaded accounts' ` +
        'balances read back (expected: grant − seeded history − acknowledged events), ' +
        `${c.uncertainRequests} requests without a definite answer; chains: ${c.chainsChecked.join('; ')}; ` +
        `store audit ${c.auditS.toFixed(1)} s`,
    );
    if (c.findings.length === 0 && c.auditProblems.length === 0) out.push(`${run.db}: ledger exact`);
    for (const f of c.findings) out.push(`${run.db}: LEDGER MISMATCH account ${f.accountId} [${f.check}] ${f.message}`);
    for (const p of c.auditProblems) out.push(`${run.db}: LEDGER MISMATCH ${p}`);
  }
  return out;
}

export function writeGrowthJson(dir: string, report: GrowthReport): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `growth-${report.meta.startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}
