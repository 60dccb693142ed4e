/**
 * The synthetic gateways of the `leases` scenario (lib/leases.ts) and how their windows are measured: one deciding
 * each request with a `LeasePool` of the client library (no request per decision), one asking the engine's
 * pre-flight check per decision; a `fetch` for the client that counts and times every HTTP request it sends; and a
 * measured window (the servers', their database's, this process's and the machine's CPU, as lib/scenarios.ts
 * measures a phase).
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToLoop, setTimeout as sleep } from 'node:timers/promises';
import type { Billing, FetchLike, Lease, LeasePool } from '../../sdk/typescript/src/index.js';
import { monotonicUs } from './cpuprof.js';
import { LatencyRecorder, type LatencyFigures } from './latency.js';
import { type LoadOutcome, runLoads, type Shot, spreadOver } from './load.js';
import { DENOMINATION } from './options.js';
import { MachineSampler, ProcessSampler, processForest, type ProcessUsage } from './procstats.js';
import { scatter } from './scatter.js';

/** Units per decision: 1 to this, in turn for each account. */
const MAX_UNITS = 5;
/** Decisions between two turns of the event loop (which sends the batches and opens the leases). */
const SLICE_DECISIONS = 1_000;
/** Events recorded and not yet accepted by the server the gateway lets pile up, per account, before it waits. */
export const BACKLOG_PER_ACCOUNT = 2_000;
export const LEASE_EVENT_TYPE = 'llm';
const ERROR_SAMPLES = 5;

export interface GatewayFigures {
  accounts: number;
  /** `--gateway-rate`; undefined: as fast as the gateway can. */
  targetPerS: number | undefined;
  decisions: number;
  decisionsPerS: number;
  allowed: number;
  allowedPerS: number;
  refused: number;
  /** Checks that failed (no answer, or no 2xx after the client's retries): no decision. */
  failed: number;
  /** HTTP requests the client sent in the window (retries included), whatever their answer. */
  requests: number;
  requestsPerDecision: number;
  /** `events` (batches), `open` (leases opened), `close`, `check`, `other`. */
  requestsByKind: Record<string, number>;
  /**
   * Lease pool: the events the server accepted per second in the window: those recorded, plus the backlog not yet
   * accepted at its start, minus the backlog at its end (sent during `pool.close()`).
   */
  acceptedPerS?: number;
  /** Lease pool: one decision (`tryTake`, and `record` when allowed) inside the gateway, in µs. */
  decisionUs?: LatencyFigures;
  /** Lease pool: the share of the window the gateway waited for the server to accept its backlog of events. */
  backlogWaitPercent?: number;
  /** Lease pool: seconds `pool.close()` took after the window (the last batches sent, every lease closed). */
  closeS?: number;
}

/** A measured window: what lib/scenarios.ts makes a table row of. */
export interface MeasuredWindow {
  phase: string;
  /** Most requests in flight at once. */
  connections: number;
  elapsedS: number;
  windowUs: { start: number; end: number };
  ok: number;
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
  /** Every HTTP request of the window, from the call of `fetch` to the answer's headers. */
  latencyMs: LatencyFigures;
  errorSamples: string[];
  server: ProcessUsage;
  databaseCpuPercent: number | undefined;
  generatorCpuPercent: number;
  otherCpuPercent: number;
  stealCpuPercent: number;
}

/** Requests of a window by answer and kind. */
export interface Counts {
  requests: number;
  ok: number;
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
  byKind: Record<string, number>;
}

const noCounts = (): Counts => ({ requests: 0, ok: 0, non2xx: 0, errors: 0, statusCodes: {}, byKind: {} });

function add(into: Record<string, number>, key: string | number): void {
  into[key] = (into[key] ?? 0) + 1;
}

/** The client's `fetch`, counting every request (each attempt) by kind and answer, and timing those of a window. */
export class RequestCounter {
  /** The window's counts: `begin` starts a window, `end` closes it (later answers count in none). */
  window = noCounts();
  latencyMs = new LatencyRecorder();
  timing = false;
  inFlight = 0;
  maxInFlight = 0;
  errorSamples: string[] = [];

  readonly fetch: FetchLike = async (input, init) => {
    const c = this.window;
    c.requests++;
    const m = /\/(events|leases|close|check)$/.exec(new URL(input.url).pathname);
    add(c.byKind, m === null ? 'other' : m[1] === 'leases' ? 'open' : (m[1] as string));
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
    const timing = this.timing;
    const started = performance.now();
    try {
      const res = await fetch(input, init);
      if (timing) this.latencyMs.push(performance.now() - started);
      add(c.statusCodes, res.status);
      if (res.status >= 200 && res.status <= 299) c.ok++;
      else this.problem(c, 'non2xx', `${res.status} ${input.method} ${input.url}`);
      return res;
    } catch (error) {
      this.problem(c, 'errors', `${input.method} ${input.url}: ${String(error)}`);
      throw error;
    } finally {
      this.inFlight--;
    }
  };

  private problem(c: Counts, kind: 'non2xx' | 'errors', sample: string): void {
    c[kind]++;
    if (this.timing && this.errorSamples.length < ERROR_SAMPLES) this.errorSamples.push(sample);
  }

  begin(): Counts {
    this.window = noCounts();
    this.latencyMs = new LatencyRecorder();
    this.errorSamples = [];
    this.maxInFlight = this.inFlight;
    this.timing = true;
    return this.window;
  }

  end(): void {
    this.window = noCounts();
    this.timing = false;
  }
}

/** The processes a window's CPU figures cover. */
export interface Measured {
  servers: readonly { pid: number }[];
  databaseProcesses: (() => number[]) | undefined;
}

/**
 * Runs `run` as a measured window: the requests the client sent meanwhile (counted, timed), the CPU of the servers,
 * of their database, of this process (the gateway) and of the rest of the machine.
 */
export async function measure(
  target: Measured,
  counter: RequestCounter,
  phase: string,
  run: () => Promise<void>,
): Promise<{ window: MeasuredWindow; counts: Counts }> {
  const server = new ProcessSampler(() => processForest(target.servers.map((s) => s.pid)));
  const db = target.databaseProcesses === undefined ? undefined : new ProcessSampler(target.databaseProcesses);
  const machine = new MachineSampler();
  const counts = counter.begin();
  machine.begin();
  server.start();
  db?.start();
  const cpuBefore = process.cpuUsage();
  const startUs = monotonicUs();
  const startedAt = performance.now();
  await run();
  const elapsedS = Math.max(1e-6, (performance.now() - startedAt) / 1000);
  const cpu = process.cpuUsage(cpuBefore);
  const usage = server.stop();
  const dbUsage = db?.stop();
  const busy = machine.end();
  const connections = counter.maxInFlight;
  counter.end();
  const generatorCpuPercent = (100 * (cpu.user + cpu.system)) / 1e6 / elapsedS;
  const accounted = usage.cpuPercent + (dbUsage?.cpuPercent ?? 0) + generatorCpuPercent;
  const { ok, non2xx, errors, statusCodes } = counts;
  const window = {
    phase,
    connections,
    elapsedS,
    windowUs: { start: startUs, end: monotonicUs() },
    ...{ ok, non2xx, errors, statusCodes, latencyMs: counter.latencyMs.figures(), errorSamples: counter.errorSamples },
    server: usage,
    databaseCpuPercent: dbUsage?.cpuPercent,
    generatorCpuPercent,
    otherCpuPercent: Math.max(0, busy.busyPercent - accounted),
    stealCpuPercent: busy.stealPercent,
  };
  return { window, counts };
}

/** A gateway's decisions so far, per account and in all (warm-up and measured window together). */
export class Tally {
  seq = 0;
  decisions = 0;
  allowed = 0;
  refused = 0;
  failed = 0;
  waitedMs = 0;
  /** Units taken, and events recorded, per account. */
  readonly taken: number[];
  readonly recorded: number[];
  /** The leases the lease pool's gateway took from, until they are closed. */
  readonly leases = new Set<Lease>();

  constructor(accounts: number) {
    this.taken = Array.from({ length: accounts }, () => 0);
    this.recorded = Array.from({ length: accounts }, () => 0);
  }

  /** Events recorded on those leases and not yet accepted by the server. */
  unsent(): number {
    let n = 0;
    for (const lease of this.leases) {
      if (lease.state === 'closed') this.leases.delete(lease);
      else n += lease.unsent;
    }
    return n;
  }
}

/** What a gateway runs: its accounts, its tally, for how long, at what rate (undefined: as fast as it can). */
export interface GatewayRun {
  accounts: readonly string[];
  tally: Tally;
  durationS: number;
  rate: number | undefined;
}

/** Decision `seq`: which account (scattered) and how many units (1–MAX_UNITS, in turn for each account). */
function decisionOf(seq: number, pick: (i: number) => number, accounts: number): { j: number; units: number } {
  return { j: pick(seq % accounts), units: 1 + (Math.floor(seq / accounts) % MAX_UNITS) };
}

/** The event a decision allowed records: one `llm` event costing its units. */
export function llmEvent(units: number) {
  return { type: LEASE_EVENT_TYPE, cost_override: { amount: units, denomination: DENOMINATION } };
}

/** How many decisions are due now: a slice, or under `rate` what the schedule allows. */
function due(rate: number | undefined, startedAt: number, done: number): number {
  if (rate === undefined) return SLICE_DECISIONS;
  return Math.min(SLICE_DECISIONS, Math.floor(((performance.now() - startedAt) * rate) / 1000) - done);
}

/**
 * The lease-pool gateway: decisions in slices, the event loop's turn between them; account j decides with
 * `pools[j mod n]`. It waits (and counts the wait) while the events not yet accepted pass BACKLOG_PER_ACCOUNT each.
 */
export async function poolGateway(run: GatewayRun, pools: readonly LeasePool[], decisionUs?: LatencyRecorder) {
  const { accounts, tally, rate } = run;
  const n = accounts.length;
  const pick = scatter(n);
  const last: (Lease | undefined)[] = [];
  const startedAt = performance.now();
  let done = 0;
  while (performance.now() < startedAt + run.durationS * 1000) {
    const slice = due(rate, startedAt, done);
    if (tally.unsent() > BACKLOG_PER_ACCOUNT * n || slice <= 0) {
      const waitFrom = performance.now();
      await sleep(1);
      if (slice > 0) tally.waitedMs += performance.now() - waitFrom;
      continue;
    }
    for (let k = 0; k < slice; k++) {
      const { j, units } = decisionOf(tally.seq++, pick, n);
      const t0 = process.hrtime.bigint();
      const take = (pools[j % pools.length] as LeasePool).tryTake(accounts[j] as string, DENOMINATION, units);
      take?.record([llmEvent(units)]);
      decisionUs?.push(Number(process.hrtime.bigint() - t0) / 1000);
      if (take === null) {
        tally.refused++;
        continue;
      }
      tally.allowed++;
      tally.taken[j] = (tally.taken[j] as number) + units;
      tally.recorded[j] = (tally.recorded[j] as number) + 1;
      if (last[j] !== take.lease) {
        last[j] = take.lease;
        tally.leases.add(take.lease);
      }
    }
    done += slice;
    tally.decisions += slice;
    await yieldToLoop();
  }
}

/** The check-per-decision gateway: `concurrency` decisions in flight, each one request (`billings[j mod n]`). */
export async function checkGateway(run: GatewayRun, billings: readonly Billing[], concurrency: number) {
  const { accounts, tally, rate } = run;
  const n = accounts.length;
  const pick = scatter(n);
  const startedAt = performance.now();
  let started = 0;
  const worker = async (): Promise<void> => {
    while (performance.now() < startedAt + run.durationS * 1000) {
      if (due(rate, startedAt, started) <= 0) {
        await sleep(1);
        continue;
      }
      started++;
      const { j, units } = decisionOf(tally.seq++, pick, n);
      try {
        const billing = billings[j % billings.length] as Billing;
        const answer = await billing.check(accounts[j] as string, [llmEvent(units)]);
        tally.decisions++;
        if (answer.allowed) tally.allowed++;
        else tally.refused++;
      } catch {
        tally.failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/**
 * The same check per decision sent by autocannon (lib/load.ts, the bench's load generator) instead of the client
 * library: what the server answers when the client costs least. `connections` in a closed loop, split over the
 * servers; each connection cycles through its share of the decisions (every account, every number of units).
 */
export async function autocannonChecks(
  run: GatewayRun,
  baseUrls: readonly string[],
  authorization: string,
  connections: number,
): Promise<LoadOutcome<number>> {
  const { accounts, tally } = run;
  const n = accounts.length;
  const pick = scatter(n);
  const bodies = Array.from({ length: MAX_UNITS }, (_, u) => Buffer.from(JSON.stringify([llmEvent(u + 1)])));
  const shot = (seq: number): Shot<number> => {
    const { j, units } = decisionOf(seq, pick, n);
    const path = `/v1/accounts/${encodeURIComponent(accounts[j] as string)}/check`;
    return { method: 'POST', path, body: bodies[units - 1] as Buffer, tag: j };
  };
  const onResponse = (_j: number, status: number, body: string): void => {
    if (status < 200 || status > 299) {
      tally.failed++;
      return;
    }
    tally.decisions++;
    if ((JSON.parse(body) as { data?: { allowed?: unknown } }).data?.allowed === true) tally.allowed++;
    else tally.refused++;
  };
  return await runLoads(
    spreadOver(baseUrls, connections, (baseUrl, c) => ({
      baseUrl,
      authorization,
      connections: c,
      durationS: run.durationS,
      next: () => shot(tally.seq++),
      cycle: (k: number, all: number) =>
        Array.from({ length: Math.ceil((n * MAX_UNITS) / all) }, (_, i) => shot(k + all * i)),
      onResponse,
    })),
  );
}

/** A gateway's figures over a window: its tally then against before, the requests counted meanwhile. */
export function gatewayFigures(
  now: Tally,
  before: Pick<Tally, 'decisions' | 'allowed' | 'refused' | 'failed'>,
  counts: Counts,
  elapsedS: number,
  rate: number | undefined,
): GatewayFigures {
  const decisions = now.decisions - before.decisions;
  const allowed = now.allowed - before.allowed;
  return {
    accounts: now.taken.length,
    targetPerS: rate,
    decisions,
    decisionsPerS: decisions / elapsedS,
    allowed,
    allowedPerS: allowed / elapsedS,
    refused: now.refused - before.refused,
    failed: now.failed - before.failed,
    requests: counts.requests,
    requestsPerDecision: decisions > 0 ? counts.requests / decisions : 0,
    requestsByKind: counts.byKind,
  };
}
