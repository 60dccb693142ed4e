/**
 * Names of the report's rows, ratios to the baselines, the table printed to stdout, and the JSON
 * written to bench/results/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LedgerReport } from './ledger.js';
import type { PhaseResult, ScenarioResult } from './scenarios.js';

export const HELLO_PHASE = 'hello-world';
/** The `scenario` of every baseline row. */
export const BASELINE_SCENARIO = 'baseline';
export const NO_DB_PHASE_PREFIX = 'no-db validation';
export const STORE_ONLY_PHASE_PREFIX = 'store only';
export const PLAIN_SQL_PHASE_PREFIX = 'plain SQL';

export function noDbPhaseName(events: number): string {
  return `${NO_DB_PHASE_PREFIX}, ${events} event${events === 1 ? '' : 's'}`;
}

/** The store-only baseline with `events` events per transaction. */
export function storeOnlyPhaseName(events: number): string {
  return `${STORE_ONLY_PHASE_PREFIX}, ${events} event${events === 1 ? '' : 's'}/tx`;
}

/** The plain-SQL limit with `events` ledger rows per transaction (PostgreSQL: baselines/plain-sql.ts). */
export function plainSqlPhaseName(events: number): string {
  return `${PLAIN_SQL_PHASE_PREFIX}, ${events} event${events === 1 ? '' : 's'}/tx`;
}

/** How a database run is named in the report: `postgres ×2` (the database and its server processes). */
export function runLabel(db: string, processes: number): string {
  return `${db} ×${processes}`;
}

/** The `db` column: a server run's database and process count; the baselines' `none`, or their database. */
export function phaseLabel(p: Pick<PhaseResult, 'db' | 'servers' | 'scenario'>): string {
  return p.scenario === BASELINE_SCENARIO || p.servers === 0 ? p.db : runLabel(p.db, p.servers);
}

export interface DbRun {
  db: string;
  /** Server processes against the database in this run. */
  processes: number;
  /** `db ×processes`, as in the table. */
  label: string;
  /** What the server ran on (SQLite file path, PostgreSQL database name). */
  storage: string;
  scenarios: ScenarioResult[];
  ledger: LedgerReport | undefined;
  /** Why the run stopped early, if it did. */
  error: string | undefined;
}

/** Where and when a bench ran (both benches' JSON start with it). */
export interface RunMeta {
  startedAt: string;
  finishedAt: string;
  node: string;
  cpus: number;
  cpuModel: string;
  serverCommit: string;
  dataDirFilesystem: string;
  loadAverageAtStart: number;
}

/**
 * Fills each phase's ratios from the baselines of the same run; the store-only one from the
 * baseline of the same database (whatever the phase's number of server processes).
 */
export function applyRatios(phases: readonly PhaseResult[], baselines: readonly PhaseResult[]): void {
  const hello = baselines.find((b) => b.phase === HELLO_PHASE);
  for (const phase of phases) {
    if (hello !== undefined && phase.eventsPerRequest === 1 && hello.requestsPerS > 0) {
      phase.ratios.vsHelloRequests = phase.requestsPerS / hello.requestsPerS;
    }
    if (phase.storeEvents !== undefined) {
      const name = storeOnlyPhaseName(phase.storeEvents);
      const store = baselines.find((b) => b.db === phase.db && b.phase === name);
      if (store !== undefined && store.eventsPerS > 0) phase.ratios.vsStoreEvents = phase.eventsPerS / store.eventsPerS;
      const plainName = plainSqlPhaseName(phase.storeEvents);
      const plain = baselines.find((b) => b.db === phase.db && b.phase === plainName);
      if (plain !== undefined && plain.eventsPerS > 0)
        phase.ratios.vsPlainSqlEvents = phase.eventsPerS / plain.eventsPerS;
    }
    if (phase.baselineEvents === undefined) continue;
    const noDb = baselines.find((b) => b.phase === noDbPhaseName(phase.baselineEvents as number));
    if (noDb === undefined) continue;
    if (noDb.eventsPerS > 0) phase.ratios.vsNoDbEvents = phase.eventsPerS / noDb.eventsPerS;
    if (noDb.requestsPerS > 0) phase.ratios.vsNoDbRequests = phase.requestsPerS / noDb.requestsPerS;
    const perUnit = phase.baselineEvents > 1 ? cpuPerEvent : cpuPerRequest;
    const ours = perUnit(phase);
    const theirs = perUnit(noDb);
    if (ours !== undefined && theirs !== undefined && theirs > 0) phase.ratios.cpuPerRequestVsNoDb = ours / theirs;
  }
}

/** Server CPU seconds per 2xx answer over a phase (utime+stime from /proc), if it has both. */
export function cpuPerRequest(p: Pick<PhaseResult, 'serverCpuSeconds' | 'requests'>): number | undefined {
  return p.serverCpuSeconds !== undefined && p.requests > 0 ? p.serverCpuSeconds / p.requests : undefined;
}

/** Server CPU seconds per event acknowledged over a phase, if it has both. */
export function cpuPerEvent(p: Pick<PhaseResult, 'serverCpuSeconds' | 'events'>): number | undefined {
  return p.serverCpuSeconds !== undefined && p.events > 0 ? p.serverCpuSeconds / p.events : undefined;
}

const whole = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

function ms(value: number): string {
  return value >= 100 ? whole.format(value) : value.toFixed(value >= 10 ? 1 : 2);
}

function percent(ratio: number | undefined): string {
  return ratio === undefined ? '' : `${(100 * ratio).toFixed(ratio < 0.1 ? 1 : 0)}%`;
}

function times(ratio: number | undefined): string {
  return ratio === undefined ? '' : `${ratio.toFixed(ratio < 10 ? 2 : 1)}×`;
}

interface Column {
  title: string;
  right: boolean;
  cell(p: PhaseResult): string;
}

const COLUMNS: Column[] = [
  { title: 'db', right: false, cell: (p) => phaseLabel(p) },
  { title: 'scenario', right: false, cell: (p) => p.scenario },
  { title: 'phase', right: false, cell: (p) => p.phase },
  { title: 'conns', right: true, cell: (p) => String(p.connections) },
  { title: 'req/s', right: true, cell: (p) => whole.format(p.requestsPerS) },
  { title: 'events/s', right: true, cell: (p) => (p.eventsPerRequest === 0 ? '' : whole.format(p.eventsPerS)) },
  { title: 'p50 ms', right: true, cell: (p) => ms(p.latencyMs.p50) },
  { title: 'p99 ms', right: true, cell: (p) => ms(p.latencyMs.p99) },
  { title: 'p99.9 ms', right: true, cell: (p) => ms(p.latencyMs.p99_9) },
  { title: 'non-2xx', right: true, cell: (p) => whole.format(p.non2xx) },
  { title: 'errors', right: true, cell: (p) => whole.format(p.errors + p.unanswered) },
  { title: 'srv CPU', right: true, cell: (p) => `${p.serverCpuPercent.toFixed(0)}%` },
  { title: 'srv RSS MB', right: true, cell: (p) => p.serverPeakRssMb.toFixed(0) },
  {
    title: 'db CPU',
    right: true,
    cell: (p) => (p.databaseCpuPercent === undefined ? '' : `${p.databaseCpuPercent.toFixed(0)}%`),
  },
  { title: 'gen CPU', right: true, cell: (p) => `${p.generatorCpuPercent.toFixed(0)}%` },
  { title: 'other CPU', right: true, cell: (p) => `${p.otherCpuPercent.toFixed(0)}%` },
  { title: 'vs hello req/s', right: true, cell: (p) => percent(p.ratios.vsHelloRequests) },
  { title: 'vs no-db events/s', right: true, cell: (p) => percent(p.ratios.vsNoDbEvents) },
  { title: 'vs store events/s', right: true, cell: (p) => percent(p.ratios.vsStoreEvents) },
  { title: 'vs plain SQL events/s', right: true, cell: (p) => percent(p.ratios.vsPlainSqlEvents) },
  { title: 'CPU/req vs no-db', right: true, cell: (p) => times(p.ratios.cpuPerRequestVsNoDb) },
];

export function formatTable(phases: readonly PhaseResult[]): string {
  return alignedTable(
    COLUMNS.map((c) => c.title),
    COLUMNS.map((c) => c.right),
    phases.map((p) => COLUMNS.map((c) => c.cell(p))),
  );
}

/** Rows of cells under their titles, each column as wide as its widest cell, right-aligned where `right` says. */
function alignedTable(titles: readonly string[], right: readonly boolean[], rows: readonly string[][]): string {
  const widths = titles.map((t, i) => Math.max(t.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => (right[i] ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const header = line(titles);
  return [header, '-'.repeat(header.length), ...rows.map(line)].join('\n');
}

/**
 * The open-loop phases (`entitlements-1`'s checks): the rate asked for and kept, p50/p99 per kind of request
 * and from the due time, how late requests went out, and the answers' verdicts.
 */
export function formatPaced(phases: readonly PhaseResult[]): string[] {
  const lines: string[] = [];
  for (const p of phases) {
    const f = p.paced;
    if (f === undefined) continue;
    const kinds = Object.entries(f.byKind)
      .map(([kind, k]) => `${kind} ${ms(k.latencyMs.p50)} / ${ms(k.latencyMs.p99)}`)
      .join(', ');
    lines.push(
      `${phaseLabel(p)} ${p.scenario} / ${p.phase}: ${whole.format(f.sentPerS)} of ${whole.format(f.targetPerS)} ` +
        `requests/s started; p50 / p99 ${ms(p.latencyMs.p50)} / ${ms(p.latencyMs.p99)} ms (${kinds}); from the due ` +
        `time ${ms(f.fromDueMs.p50)} / ${ms(f.fromDueMs.p99)} ms; sent late by p99 ${ms(f.sendLagMs.p99)} ms; ` +
        `${whole.format(f.granted)} granted, ${whole.format(f.denied)} refused; ${f.socketsOpened} sockets; ` +
        `generator loop ${(100 * f.workerLoopUtilization).toFixed(0)}% busy`,
    );
  }
  return lines;
}

function us(value: number): string {
  return value >= 100 ? whole.format(value) : value.toFixed(value >= 10 ? 1 : 2);
}

function usFigures(f: { p50: number; p99: number; p99_9: number }): string {
  return `p50 ${us(f.p50)} / p99 ${us(f.p99)} / p99.9 ${us(f.p99_9)} µs`;
}

/**
 * The `leases` rows (lib/leases.ts): tryTake's latency beside its target, each gateway's decisions and the HTTP
 * requests per decision, the exactness check, and the lease pool's decisions/s over the check's, per run.
 */
export function formatLeases(phases: readonly PhaseResult[]): string[] {
  const lines: string[] = [];
  const ratios: string[] = [];
  for (const p of phases) {
    const f = p.leases;
    if (f === undefined) continue;
    const at = `${phaseLabel(p)} ${p.scenario}`;
    for (const t of f.tryTake ?? [])
      lines.push(
        `${at} / ${t.call}: ${usFigures(t.latencyUs)} over ${whole.format(t.calls)} calls ` +
          `(target p99 ≤ ${f.targetP99Us} µs)${t.refused > 0 ? `; ${whole.format(t.refused)} refused` : ''}`,
      );
    const g = f.gateway;
    const kinds = Object.entries(g.requestsByKind)
      .map(([kind, n]) => `${kind} ${whole.format(n)}`)
      .join(', ');
    const perDecision = g.requestsPerDecision > 0 ? `, 1 per ${whole.format(1 / g.requestsPerDecision)}` : '';
    lines.push(
      `${at} / ${p.phase}: ${whole.format(g.decisionsPerS)} decisions/s` +
        `${g.targetPerS === undefined ? '' : ` (of ${whole.format(g.targetPerS)} asked)`}, ` +
        `${whole.format(g.allowedPerS)} allowed/s, over ${g.accounts} accounts; ` +
        `${g.requestsPerDecision.toPrecision(3)} HTTP requests per decision${perDecision} (${kinds || 'none'}); ` +
        `srv CPU ${p.serverCpuPercent.toFixed(0)}%, gateway CPU ${p.generatorCpuPercent.toFixed(0)}%` +
        `${g.failed > 0 ? `; ${whole.format(g.failed)} failed` : ''}`,
    );
    if (g.decisionUs !== undefined)
      lines.push(
        `    events accepted by the server ${whole.format(g.acceptedPerS ?? 0)}/s; ` +
          `a decision (tryTake + record) ${usFigures(g.decisionUs)}; waited on the server's backlog ` +
          `${(g.backlogWaitPercent ?? 0).toFixed(0)}% of the time; pool.close() took ${(g.closeS ?? 0).toFixed(1)} s`,
      );
    const e = f.exactness;
    if (e !== undefined)
      lines.push(
        e.problems.length === 0
          ? `    exact: ${whole.format(e.events)} events, ${whole.format(e.units)} units over ${e.accounts} accounts ` +
              '(Σ taken = Σ event costs = Σ leases used; balances = start − taken; pending 0)'
          : `    NOT EXACT: ${e.problems.length} differences, e.g. ${e.problems[0]}`,
      );
    const vs = [
      f.vsCheck === undefined ? '' : `${times(f.vsCheck)} the client library's`,
      f.vsAutocannonCheck === undefined ? '' : `${times(f.vsAutocannonCheck)} autocannon's`,
    ].filter((x) => x !== '');
    if (vs.length > 0) ratios.push(`${at}: lease pool's decisions/s ÷ a check per decision's: ${vs.join(', ')}`);
  }
  return [...lines, ...ratios];
}

/** Non-2xx answers and errors per phase, with a sample of what the server said. */
export function formatProblems(phases: readonly PhaseResult[]): string[] {
  const lines: string[] = [];
  for (const p of phases) {
    const troubles = p.non2xx + p.errors + p.unanswered + p.malformedAnswers;
    if (troubles === 0) continue;
    const codes = Object.entries(p.statusCodes)
      .filter(([code]) => !code.startsWith('2'))
      .map(([code, n]) => `${code}×${n}`)
      .join(', ');
    lines.push(
      `${phaseLabel(p)} ${p.scenario} / ${p.phase}: non-2xx ${p.non2xx}${codes !== '' ? ` (${codes})` : ''}, ` +
        `errors ${p.errors} (timeouts ${p.timeouts}), unanswered ${p.unanswered}, malformed 2xx ${p.malformedAnswers}`,
    );
    for (const sample of p.errorSamples) lines.push(`    e.g. ${sample}`);
  }
  return lines;
}

export function formatLedger(run: DbRun): string[] {
  const ledger = run.ledger;
  if (ledger === undefined)
    return [`${run.label}: ledger not checked${run.error !== undefined ? ' (run failed)' : ''}`];
  const audited = ledger.transactionsChecked
    .map((t) => `${t.label} ${t.accountId} (${whole.format(t.transactions)} transactions)`)
    .join('; ');
  const grants = ledger.grantsChecked.map((g) => `${g.label} ${g.live}`).join(', ');
  const lines = [
    `${run.label}: ${whole.format(ledger.accountsChecked)} balances checked, ` +
      `${ledger.uncertainRequests} requests without a definite answer, ${ledger.holdsResolved} settles read back; ` +
      `transaction chains: ${audited === '' ? 'none' : audited}`,
  ];
  if (grants !== '')
    lines.push(
      `${run.label}: live grants of those accounts at the end (Σ remaining = amount, Σ held = pending): ${grants}`,
    );
  if (ledger.findings.length === 0) lines.push(`${run.label}: ledger exact`);
  for (const f of ledger.findings)
    lines.push(`${run.label}: LEDGER MISMATCH ${f.label} account ${f.accountId} [${f.check}] ${f.message}`);
  return lines;
}

/** Writes a run's report as `<dir>/<start time>.json`; returns the file's path. */
export function writeJson(dir: string, report: { meta: RunMeta }): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${report.meta.startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}

/** The ratios `--rounds` summarises, as the table names them. */
const ROUND_RATIOS: readonly { title: string; of: (r: PhaseResult['ratios']) => number | undefined; x: boolean }[] = [
  { title: 'vs hello req/s', of: (r) => r.vsHelloRequests, x: false },
  { title: 'vs no-db events/s', of: (r) => r.vsNoDbEvents, x: false },
  { title: 'vs store events/s', of: (r) => r.vsStoreEvents, x: false },
  { title: 'vs plain SQL events/s', of: (r) => r.vsPlainSqlEvents, x: false },
  { title: 'CPU/req vs no-db', of: (r) => r.cpuPerRequestVsNoDb, x: true },
];

/** The middle value (the mean of the two middle ones of an even count); undefined for none. */
export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * `--rounds`: each row of the rounds' tables (a database and process count, a scenario, a phase) with its requests/s
 * and each ratio as the median over the rounds, and the range (`min–max`) the rounds gave. Each round's ratios come
 * from that round's own baselines, so a baseline caught in a fast or slow moment moves one round, not the median.
 */
export function formatRoundRatios(rounds: readonly (readonly PhaseResult[])[]): string {
  const rows = new Map<string, PhaseResult[]>();
  for (const phases of rounds)
    for (const p of phases) {
      const key = `${phaseLabel(p)}\u0000${p.scenario}\u0000${p.phase}`;
      const list = rows.get(key);
      if (list === undefined) rows.set(key, [p]);
      else list.push(p);
    }
  const cellOf = (values: number[], x: boolean): string => {
    const mid = median(values);
    if (mid === undefined) return '';
    const show = x ? times : percent;
    const low = Math.min(...values);
    const high = Math.max(...values);
    return values.length === 1 ? show(mid) : `${show(mid)} (${show(low)}–${show(high)})`;
  };
  const header = ['db', 'scenario', 'phase', 'rounds', 'req/s', ...ROUND_RATIOS.map((c) => c.title)];
  const right = header.map((_, i) => i >= 3);
  const body = [...rows.values()].map((list) => {
    const first = list[0] as PhaseResult;
    const ratios = ROUND_RATIOS.map((c) =>
      cellOf(
        list.flatMap((p) => {
          const v = c.of(p.ratios);
          return v === undefined ? [] : [v];
        }),
        c.x,
      ),
    );
    return [
      phaseLabel(first),
      first.scenario,
      first.phase,
      String(list.length),
      whole.format(median(list.map((p) => p.requestsPerS)) ?? 0),
      ...ratios,
    ];
  });
  return alignedTable(header, right, body);
}
