/**
 * The scenarios: what is sent, to which accounts, and how each answer enters the ledger.
 */
import { createFundedAccounts, type Tenant } from './api.js';
import { benchPrice, eventBatches, SETTLE_BODY, type EventBatch } from './bodies.js';
import {
  createFeatures,
  createPlans,
  SCENARIO_FEATURES,
  SCENARIO_PLAN,
  scenarioChecks,
  scenarioOverrides,
  setOverrides,
} from './entitlements.js';
import { extraGrants, grantedUnits } from './grants.js';
import { leasesScenario, type LeaseFigures, type LeaseWindow } from './leases.js';
import type { ChildServer } from './children.js';
import type { Ledger } from './ledger.js';
import { runLoads, spreadOver, type LatencyFigures, type LoadOutcome, type LoadSpec, type Shot } from './load.js';
import { PacedLoad, pacedSpec, type PacedFigures, type PacedOutcome } from './paced.js';
import {
  connectionsFor,
  DENOMINATION,
  EVENT_TYPE,
  POOL_ACCOUNTS,
  type BenchOptions,
  type ScenarioName,
} from './options.js';
import { MachineSampler, ProcessSampler, processForest, processTree } from './procstats.js';
import { monotonicUs, performanceToMonotonicUs, recordPhase } from './cpuprof.js';
import { gcd, scatter } from './scatter.js';

/** Keys of this run's requests start with it: unique across runs on one database. */
const KEY_RUN = `${Date.now().toString(36)}${process.pid.toString(36)}`;
/** Keys given so far in this process, over every scenario (one company may see several). */
let keysSent = 0;
const HOLD_EVENTS_PER_REQUEST = 1;
/** Every n-th hold is left pending, so that the check of `pending` always has something to count. */
const LEAVE_PENDING_EVERY = 10;
const SPREAD_EVENTS_PER_REQUEST = 1;
const WARMUP_REQUEST_SIZES = [1, 100] as const;

export interface PhaseResult {
  /** `none` for the baselines without a database. */
  db: string;
  /**
   * Server processes the load was spread over (each with its own load generator); 0 for the
   * store-only baseline, which has no server.
   */
  servers: number;
  scenario: string;
  phase: string;
  connections: number;
  eventsPerRequest: number;
  /** Event count of the no-database baseline this phase is compared with, if any. */
  baselineEvents: number | undefined;
  /** Events per transaction of the store-only baseline this phase is compared with, if any. */
  storeEvents: number | undefined;
  durationS: number;
  elapsedS: number;
  /** Requests answered 2xx. */
  requests: number;
  requestsPerS: number;
  /** Events the server acknowledged (recorded, or settled in the settle phase). */
  events: number;
  eventsPerS: number;
  latencyMs: LatencyFigures;
  non2xx: number;
  statusCodes: Record<string, number>;
  errors: number;
  timeouts: number;
  unanswered: number;
  /** 2xx answers whose body did not say what was sent (events_submitted, event_ids). */
  malformedAnswers: number;
  /** CPU of every server process (and what they fork), summed, as % of one core. */
  serverCpuPercent: number;
  /** The same CPU in seconds (utime+stime over the phase, all server processes summed): per request, ÷ `requests`. */
  serverCpuSeconds: number;
  /**
   * The window the CPU figures cover, in µs of CLOCK_MONOTONIC (`process.hrtime`, the clock of a .cpuprofile's
   * timestamps); absent from rows that were not measured by `measurePhase` (the store-only baseline).
   */
  windowUs?: { start: number; end: number };
  /** Peak of the summed RSS of every server process (sampled together). */
  serverPeakRssMb: number;
  /** Processes in the servers' trees (servers, and anything they forked). */
  serverProcesses: number;
  generatorCpuPercent: number;
  /** CPU of the PostgreSQL processes serving the bench database, as % of one core (SQLite runs inside the server). */
  databaseCpuPercent: number | undefined;
  /** CPU used on the machine by anything but the server, its database and the bench, as % of one core: noise. */
  otherCpuPercent: number;
  /** CPU time the hypervisor took away, as % of one core. */
  stealCpuPercent: number;
  errorSamples: string[];
  ratios: {
    vsHelloRequests?: number;
    vsNoDbEvents?: number;
    vsNoDbRequests?: number;
    vsStoreEvents?: number;
    /** Events/s over the plain-SQL limit's with as many events per transaction (PostgreSQL). */
    vsPlainSqlEvents?: number;
    /**
     * Server CPU per request over the no-db validation baseline's, for the same events per request (per event for
     * requests of several events, which is the same ratio when every request carries as many).
     */
    cpuPerRequestVsNoDb?: number;
  };
  /**
   * An open-loop phase (lib/paced.ts): the rate asked for and kept, latencies from the due time and per kind of
   * request, how late requests went out. Its CPU columns are those of the closed-loop phase it ran beside.
   */
  paced?: PacedFigures;
  /** The `leases` scenario (lib/leases.ts): tryTake's latency, a gateway's decisions, the exactness check. */
  leases?: LeaseFigures;
}

export interface ScenarioResult {
  db: string;
  scenario: ScenarioName;
  setupAccounts: number;
  setupS: number;
  phases: PhaseResult[];
}

export interface ScenarioContext {
  db: string;
  /** The server processes under test, all on one database; setup and read-back go through the first. */
  servers: readonly ChildServer[];
  tenant: Tenant;
  ledger: Ledger;
  options: BenchOptions;
  /** The PostgreSQL processes serving the bench database; undefined on SQLite. */
  databaseProcesses: (() => number[]) | undefined;
  /** Accounts whose transactions the ledger check pages through. */
  auditAccounts: string[];
  /** Accounts created (with their balance) and the time it took, for the scenario being run. */
  setup: { accounts: number; seconds: number };
  log(message: string): void;
}

export interface PhaseMeta {
  scenario: string;
  phase: string;
  eventsPerRequest: number;
  baselineEvents: number | undefined;
  /** Only the `events-N` phases: N complete events per request, spread over accounts, like the store-only runs. */
  storeEvents?: number;
}

/** What a phase measures: the servers (their CPU and memory) and the database behind them. */
export interface PhaseTarget {
  db: string;
  serverPids: readonly number[];
  /** The PostgreSQL processes serving the bench database; undefined on SQLite and for baselines. */
  databaseProcesses: (() => number[]) | undefined;
  /** The servers behind `serverPids`: those with a `profileDir` get the phase's window in their `phases.json`. */
  servers?: readonly ChildServer[];
}

export function phaseTarget(ctx: ScenarioContext): PhaseTarget {
  return {
    db: ctx.db,
    serverPids: ctx.servers.map((s) => s.pid),
    databaseProcesses: ctx.databaseProcesses,
    servers: ctx.servers,
  };
}

/** Load that runs beside a phase's own, inside its measured window (an open-loop schedule). */
export interface Alongside {
  begin(): void;
  finish(): Promise<unknown>;
}

/**
 * Runs one load per spec at the same time (one per server, see `spreadOver`) while sampling
 * the servers' CPU and memory, and reports them as one phase. `alongside` starts with the load
 * and is finished when it has drained, before the samplers stop.
 */
export async function measurePhase<T>(
  target: PhaseTarget,
  meta: PhaseMeta,
  specs: readonly LoadSpec<T>[],
  acknowledged: () => { events: number; malformed: number },
  alongside?: Alongside,
): Promise<{ result: PhaseResult; outcome: LoadOutcome<T> }> {
  const { db, databaseProcesses } = target;
  const sampler = new ProcessSampler(() => processForest(target.serverPids));
  const dbSampler = databaseProcesses === undefined ? undefined : new ProcessSampler(databaseProcesses);
  // Each profiled server's own CPU, for its phases.json.
  const profiled = (target.servers ?? []).flatMap((server) =>
    server.profileDir === undefined
      ? []
      : [{ server, dir: server.profileDir, sampler: new ProcessSampler(() => processTree(server.pid)) }],
  );
  const machine = new MachineSampler();
  machine.begin();
  const startUs = monotonicUs();
  sampler.start();
  for (const p of profiled) p.sampler.start();
  dbSampler?.start();
  alongside?.begin();
  let outcome: LoadOutcome<T>;
  try {
    outcome = await runLoads(specs);
  } finally {
    await alongside?.finish();
  }
  const usage = sampler.stop();
  const ownUsage = profiled.map((p) => p.sampler.stop());
  const endUs = monotonicUs();
  const dbUsage = dbSampler?.stop();
  const machineUsage = machine.end();
  const accounted = usage.cpuPercent + (dbUsage?.cpuPercent ?? 0) + outcome.generatorCpuPercent;
  const { events, malformed } = acknowledged();
  profiled.forEach(({ server, dir }, i) => {
    const load = specs.findIndex((spec) => spec.baseUrl === server.baseUrl);
    const requests = load < 0 ? 0 : (outcome.okPerLoad?.[load] ?? 0);
    recordPhase(
      dir,
      { label: server.label, pid: server.pid, db },
      {
        scenario: meta.scenario,
        phase: meta.phase,
        startUs,
        endUs,
        loadStartUs: performanceToMonotonicUs(outcome.startedAtMs),
        loadEndUs: performanceToMonotonicUs(outcome.endedAtMs),
        requests,
        events: meta.eventsPerRequest > 0 ? requests * meta.eventsPerRequest : undefined,
        eventsPerRequest: meta.eventsPerRequest,
        processCpuUs: Math.round((ownUsage[i]?.cpuSeconds ?? 0) * 1e6),
        servers: target.serverPids.length,
        phaseRequests: outcome.ok,
        phaseEvents: events,
      },
    );
  });
  return {
    outcome,
    result: {
      db,
      servers: target.serverPids.length,
      ...meta,
      storeEvents: meta.storeEvents,
      connections: specs.reduce((sum, spec) => sum + spec.connections, 0),
      durationS: specs[0]?.durationS ?? 0,
      elapsedS: outcome.elapsedS,
      requests: outcome.ok,
      requestsPerS: outcome.ok / outcome.elapsedS,
      events,
      eventsPerS: events / outcome.elapsedS,
      latencyMs: outcome.latencyMs,
      non2xx: outcome.non2xx,
      statusCodes: outcome.statusCodes,
      errors: outcome.errors,
      timeouts: outcome.timeouts,
      unanswered: outcome.unanswered.length,
      malformedAnswers: malformed,
      serverCpuPercent: usage.cpuPercent,
      serverCpuSeconds: usage.cpuSeconds,
      windowUs: { start: startUs, end: endUs },
      serverPeakRssMb: usage.peakRssBytes / (1024 * 1024),
      serverProcesses: usage.processes,
      generatorCpuPercent: outcome.generatorCpuPercent,
      databaseCpuPercent: dbUsage?.cpuPercent,
      otherCpuPercent: Math.max(0, machineUsage.busyPercent - accounted),
      stealCpuPercent: machineUsage.stealPercent,
      errorSamples: outcome.errorSamples,
      ratios: {},
    },
  };
}

function baseUrls(ctx: ScenarioContext): string[] {
  return ctx.servers.map((s) => s.baseUrl);
}

export function eventsPath(accountId: string): string {
  return `/v1/accounts/${encodeURIComponent(accountId)}/events`;
}

/** Most accounts one connection's cycle covers; past that, requests are made per send. */
export const CYCLE_ACCOUNTS_MAX = 200;

/**
 * What connection `connection` of `connections` sends in a cycle: its share of the `accounts`
 * (indexes into the scattered order), each equally often, with the `variants` bodies in turn.
 * Together the connections send to every account, and every body is used. The cycle is kept
 * short (as long as the share, or the least common multiple with `variants` for a small share):
 * its requests are built when the load starts, inside the measured window.
 */
export function connectionCycle(
  accounts: number,
  variants: number,
  connection: number,
  connections: number,
): { account: number; variant: number }[] {
  const own = Math.max(1, Math.ceil(accounts / connections));
  const length = own >= variants ? own : (own * variants) / gcd(own, variants);
  return Array.from({ length }, (_, k) => ({
    account: (connection + connections * (k % own)) % accounts,
    variant: k % variants,
  }));
}

interface EventTag {
  accountId: string;
  batch: EventBatch;
}

/**
 * Event submissions spread over `accounts`, cycling through `batches`. Acknowledged complete
 * events go into the ledger as debits; acknowledged pending ones as holds, whose ids are kept
 * in `heldEventIds` (oldest first) for settling later.
 */
export class EventTraffic {
  acknowledgedEvents = 0;
  malformedAnswers = 0;
  readonly heldEventIds: string[] = [];
  private sent = 0;
  private readonly pick: (i: number) => number;

  /**
   * `cycles: false`: every request made per send, whatever the population (the growth bench, so
   * that its levels compare).
   */
  constructor(
    private readonly ledger: Ledger,
    private readonly accounts: readonly string[],
    private readonly batches: readonly EventBatch[],
    private readonly cycles = true,
    /** Each request gets a fresh Idempotency-Key (which a cycle, sending the same bytes again, cannot). */
    private readonly keyed = false,
    /**
     * `check`: to the pre-flight check instead; `read`: a GET of the account's balance instead. Answers are
     * counted, nothing enters the ledger.
     */
    private readonly mode: 'events' | 'check' | 'read' = 'events',
  ) {
    if (accounts.length === 0 || batches.length === 0) throw new Error('EventTraffic needs accounts and batches');
    this.pick = scatter(accounts.length);
  }

  spec(baseUrl: string, authorization: string, connections: number, durationS: number): LoadSpec<EventTag> {
    return {
      baseUrl,
      authorization,
      connections,
      durationS,
      next: (): Shot<EventTag> => {
        const i = this.sent++;
        const shot = this.shot(this.pick(i), i % this.batches.length);
        return this.keyed ? { ...shot, headers: { 'idempotency-key': `bench-${KEY_RUN}-${keysSent++}` } } : shot;
      },
      // Cycles while they stay short; over a large population (the growth bench's million
      // accounts) they would be built by the million when the load starts.
      ...(this.cycles && !this.keyed && Math.ceil(this.accounts.length / connections) <= CYCLE_ACCOUNTS_MAX
        ? {
            cycle: (connection: number, all: number) =>
              connectionCycle(this.accounts.length, this.batches.length, connection, all).map(({ account, variant }) =>
                this.shot(this.pick(account), variant),
              ),
          }
        : {}),
      onResponse: (tag, status, body) => this.record(tag, status, body),
    };
  }

  private shot(account: number, variant: number): Shot<EventTag> {
    const accountId = this.accounts[account] as string;
    const batch = this.batches[variant] as EventBatch;
    const tag = { accountId, batch };
    const accountPath = `/v1/accounts/${encodeURIComponent(accountId)}`;
    if (this.mode === 'read') return { method: 'GET', path: `${accountPath}/balance/${DENOMINATION}`, tag };
    const path = this.mode === 'check' ? `${accountPath}/check` : eventsPath(accountId);
    return { method: 'POST', path, body: batch.body, tag };
  }

  private record(tag: EventTag, status: number, body: string): void {
    if (status >= 500) {
      this.uncertain(tag);
      return;
    }
    if (status < 200 || status > 299) return; // refused: nothing changed
    const { batch, accountId } = tag;
    if (this.mode !== 'events') {
      let answer: { data?: { events?: unknown[]; available?: unknown } } = {};
      try {
        answer = JSON.parse(body) as typeof answer;
      } catch {
        // counted below
      }
      const ok =
        this.mode === 'check'
          ? answer.data?.events?.length === batch.costs.length
          : Number.isSafeInteger(answer.data?.available);
      if (!ok) this.malformedAnswers++;
      this.acknowledgedEvents += batch.costs.length;
      return;
    }
    let answer: { events_submitted?: unknown; event_ids?: unknown } = {};
    try {
      answer = JSON.parse(body) as typeof answer;
    } catch {
      // counted below
    }
    const ids = answer.event_ids;
    const idsOk = Array.isArray(ids) && ids.length === batch.costs.length && ids.every((id) => typeof id === 'string');
    if (answer.events_submitted !== batch.costs.length || !idsOk) this.malformedAnswers++;
    this.acknowledgedEvents += batch.costs.length;
    if (batch.state === 'complete') {
      this.ledger.debit(accountId, batch.total);
      return;
    }
    if (!idsOk) {
      // Recorded, but unknown ids: they cannot be settled, and stay held.
      for (const cost of batch.costs) this.ledger.uncertainHold(accountId, cost);
      return;
    }
    (ids as string[]).forEach((id, k) => {
      this.ledger.hold(accountId, id, batch.costs[k] as number);
      this.heldEventIds.push(id);
    });
  }

  uncertain(tag: EventTag): void {
    if (this.mode !== 'events') return; // a check or a read writes nothing
    if (tag.batch.state === 'complete') this.ledger.uncertainDebit(tag.accountId, tag.batch.total);
    else for (const cost of tag.batch.costs) this.ledger.uncertainHold(tag.accountId, cost);
  }

  async measure(
    ctx: ScenarioContext,
    meta: PhaseMeta,
    connections: number,
    durationS: number,
    alongside?: Alongside,
  ): Promise<PhaseResult> {
    const before = { events: this.acknowledgedEvents, malformed: this.malformedAnswers };
    const { result, outcome } = await measurePhase(
      phaseTarget(ctx),
      meta,
      spreadOver(baseUrls(ctx), connections, (baseUrl, n) =>
        this.spec(baseUrl, ctx.tenant.authorization, n, durationS),
      ),
      () => ({
        events: this.acknowledgedEvents - before.events,
        malformed: this.malformedAnswers - before.malformed,
      }),
      alongside,
    );
    for (const tag of outcome.unanswered) this.uncertain(tag);
    return result;
  }
}

/** Settles held events (oldest first) with `PUT /v1/events/{id}` `{state: "complete"}`. */
class SettleTraffic {
  settled = 0;
  private nextIndex = 0;

  constructor(
    private readonly ledger: Ledger,
    private readonly eventIds: readonly string[],
  ) {}

  async measure(ctx: ScenarioContext, meta: PhaseMeta, connections: number, durationS: number): Promise<PhaseResult> {
    // One `next` for every server: each held event is settled once, oldest first overall.
    const spec = (baseUrl: string, n: number): LoadSpec<string> => ({
      baseUrl,
      authorization: ctx.tenant.authorization,
      connections: n,
      durationS,
      next: () => {
        const eventId = this.eventIds[this.nextIndex];
        if (eventId === undefined) return undefined;
        this.nextIndex++;
        return { method: 'PUT', path: `/v1/events/${encodeURIComponent(eventId)}`, body: SETTLE_BODY, tag: eventId };
      },
      onResponse: (eventId, status) => {
        if (status >= 200 && status <= 299) {
          this.ledger.settle(eventId);
          this.settled++;
        } else if (status >= 500) this.ledger.uncertainSettle(eventId);
      },
    });
    const total = Math.max(1, Math.min(connections, this.eventIds.length));
    const { result, outcome } = await measurePhase(
      phaseTarget(ctx),
      meta,
      spreadOver(baseUrls(ctx), total, spec),
      () => ({
        events: this.settled,
        malformed: 0,
      }),
    );
    for (const eventId of outcome.unanswered) this.ledger.uncertainSettle(eventId);
    return result;
  }
}

/**
 * Accounts whose balance holds the initial grant and the `--grants` others (lib/grants.ts), created on
 * `planIds` in turn when given.
 */
async function fundedAccounts(
  ctx: ScenarioContext,
  count: number,
  label: string,
  planIds: readonly string[] = [],
): Promise<string[]> {
  const started = performance.now();
  const grants = extraGrants(ctx.options.grants, ctx.options.grantUnits, Date.now());
  const accounts = await createFundedAccounts(
    ctx.tenant,
    count,
    grants,
    ctx.options.limits,
    ctx.options.alerts,
    planIds,
  );
  for (const id of accounts) ctx.ledger.open(id, label, grantedUnits(grants));
  ctx.setup.accounts += count;
  ctx.setup.seconds += (performance.now() - started) / 1000;
  return accounts;
}

/** Untimed traffic on a fresh server, so that the first measured phase is not the one that pays for JIT and caches. */
export async function warmUp(ctx: ScenarioContext): Promise<void> {
  if (ctx.options.warmupS <= 0) return;
  const accounts = await fundedAccounts(ctx, 1, 'warm-up');
  ctx.auditAccounts.push(accounts[0] as string);
  const batches = WARMUP_REQUEST_SIZES.flatMap((size) => eventBatches(size));
  const traffic = new EventTraffic(ctx.ledger, accounts, batches);
  const result = await traffic.measure(
    ctx,
    { scenario: 'warm-up', phase: 'warm-up', eventsPerRequest: 0, baselineEvents: undefined },
    connectionsFor(ctx.options, 100),
    ctx.options.warmupS,
  );
  ctx.log(`warm-up: ${Math.round(result.eventsPerS)} events/s over ${result.elapsedS.toFixed(1)} s`);
}

/** Sets the price of EVENT_TYPE that `--pricing` asks for (once per tenant; a repeat changes nothing). */
async function priced(ctx: ScenarioContext): Promise<void> {
  const price = benchPrice(ctx.options.pricing);
  if (price) await ctx.tenant.api.call('PUT', `/v1/prices/${encodeURIComponent(EVENT_TYPE)}`, price);
}

async function eventsScenario(ctx: ScenarioContext, size: number): Promise<PhaseResult[]> {
  const name = `events-${size}`;
  await priced(ctx);
  const accounts = await fundedAccounts(ctx, POOL_ACCOUNTS, name);
  ctx.auditAccounts.push(accounts[0] as string);
  const batches = eventBatches(size, 'complete', ctx.options.pricing);
  const traffic = new EventTraffic(ctx.ledger, accounts, batches, true, ctx.options.idempotencyKeys);
  const meta = { scenario: name, phase: name, eventsPerRequest: size, baselineEvents: size, storeEvents: size };
  return [await traffic.measure(ctx, meta, connectionsFor(ctx.options, size), ctx.options.durationS)];
}

/** The pre-flight check of 1-event bodies, with the load of events-1: its latency beside ingest's. */
async function checkScenario(ctx: ScenarioContext): Promise<PhaseResult[]> {
  await priced(ctx);
  const accounts = await fundedAccounts(ctx, POOL_ACCOUNTS, 'check-1');
  const batches = eventBatches(1, 'complete', ctx.options.pricing);
  const traffic = new EventTraffic(ctx.ledger, accounts, batches, true, false, 'check');
  const meta = { scenario: 'check-1', phase: 'check-1', eventsPerRequest: 1, baselineEvents: undefined };
  return [await traffic.measure(ctx, meta, connectionsFor(ctx.options, 1), ctx.options.durationS)];
}

/** `GET /v1/accounts/{id}/balance/{denomination}` over as many accounts as events-1, at its load: a read. */
async function readScenario(ctx: ScenarioContext): Promise<PhaseResult[]> {
  const accounts = await fundedAccounts(ctx, POOL_ACCOUNTS, 'read-1');
  const traffic = new EventTraffic(ctx.ledger, accounts, eventBatches(1), true, false, 'read');
  const meta = { scenario: 'read-1', phase: 'read-1', eventsPerRequest: 1, baselineEvents: undefined };
  return [await traffic.measure(ctx, meta, connectionsFor(ctx.options, 1), ctx.options.durationS)];
}

/** The phase names of `entitlements-1`: its closed-loop ingest, and its open-loop checks at `rate` per second. */
export const ENTITLEMENT_INGEST_PHASE = 'ingest beside checks';
export function entitlementChecksPhase(rate: number): string {
  return `checks, ${rate.toLocaleString('en-US')}/s open loop`;
}

/**
 * The row of an open-loop phase that ran beside `beside` (whose window, CPU and memory figures it shares):
 * its requests, latencies and answers.
 */
export function pacedPhase(beside: PhaseResult, meta: PhaseMeta, outcome: PacedOutcome): PhaseResult {
  return {
    ...beside,
    ...meta,
    storeEvents: undefined,
    connections: outcome.figures.socketsOpened,
    elapsedS: outcome.elapsedS,
    requests: outcome.ok,
    requestsPerS: outcome.ok / outcome.elapsedS,
    events: 0,
    eventsPerS: 0,
    latencyMs: outcome.latencyMs,
    non2xx: outcome.non2xx,
    statusCodes: outcome.statusCodes,
    errors: outcome.errors,
    timeouts: outcome.timeouts,
    unanswered: outcome.unanswered,
    malformedAnswers: outcome.malformed,
    errorSamples: outcome.errorSamples,
    ratios: {},
    paced: outcome.figures,
  };
}

/**
 * Entitlement checks (`GET /v1/accounts/{id}/entitlements/{key}`) started at `--check-rate` per second, open
 * loop, while 1-event ingest runs as in events-1 (closed loop, 100 connections) on the same accounts: a few
 * features of each kind (a metered one on the events' type), the accounts created on a plan that lists some,
 * some overrides (lib/entitlements.ts). Half the checks ask a boolean feature, half the metered one (its
 * pre-flight check against the balance the ingest is drawing from).
 */
async function entitlementsScenario(ctx: ScenarioContext): Promise<PhaseResult[]> {
  const name = 'entitlements-1';
  await priced(ctx);
  const started = performance.now();
  await createFeatures(ctx.tenant, SCENARIO_FEATURES, ctx.options.pricing);
  const planIds = await createPlans(ctx.tenant, [SCENARIO_PLAN]);
  ctx.setup.seconds += (performance.now() - started) / 1000;
  const accounts = await fundedAccounts(ctx, POOL_ACCOUNTS, name, planIds);
  const overridesStarted = performance.now();
  const overrides = await setOverrides(ctx.tenant, accounts, scenarioOverrides);
  ctx.setup.seconds += (performance.now() - overridesStarted) / 1000;
  ctx.log(`${name}: ${SCENARIO_FEATURES.length} features, 1 plan, ${overrides} overrides`);
  ctx.auditAccounts.push(accounts[0] as string);

  const rate = ctx.options.checkRate;
  const checks = await PacedLoad.start(
    pacedSpec(baseUrls(ctx), ctx.tenant.authorization, rate, scenarioChecks(accounts, scatter(accounts.length))),
  );
  let outcome: PacedOutcome | undefined;
  const alongside: Alongside = {
    begin: () => checks.begin(),
    finish: async () => {
      outcome = await checks.finish();
    },
  };
  let ingest: PhaseResult;
  try {
    const batches = eventBatches(1, 'complete', ctx.options.pricing);
    const traffic = new EventTraffic(ctx.ledger, accounts, batches, true, ctx.options.idempotencyKeys);
    const meta = { scenario: name, phase: ENTITLEMENT_INGEST_PHASE, eventsPerRequest: 1, baselineEvents: 1 };
    ingest = await traffic.measure(ctx, meta, connectionsFor(ctx.options, 1), ctx.options.durationS, alongside);
  } catch (error) {
    await checks.abort();
    throw error;
  }
  if (outcome === undefined) throw new Error(`${name}: the checks reported nothing`);
  const checkMeta = {
    scenario: name,
    phase: entitlementChecksPhase(rate),
    eventsPerRequest: 0,
    baselineEvents: undefined,
  };
  return [ingest, pacedPhase(ingest, checkMeta, outcome)];
}

async function holdsScenario(ctx: ScenarioContext): Promise<PhaseResult[]> {
  const accounts = await fundedAccounts(ctx, POOL_ACCOUNTS, 'holds');
  ctx.auditAccounts.push(accounts[0] as string);
  const size = HOLD_EVENTS_PER_REQUEST;
  const connections = connectionsFor(ctx.options, size);
  const holds = new EventTraffic(ctx.ledger, accounts, eventBatches(size, 'pending'));
  const holdPhase = await holds.measure(
    ctx,
    { scenario: 'holds', phase: 'hold', eventsPerRequest: size, baselineEvents: size },
    connections,
    ctx.options.durationS,
  );
  const toSettle = holds.heldEventIds.filter((_, i) => i % LEAVE_PENDING_EVERY !== LEAVE_PENDING_EVERY - 1);
  const settles = new SettleTraffic(ctx.ledger, toSettle);
  const settlePhase = await settles.measure(
    ctx,
    { scenario: 'holds', phase: 'settle', eventsPerRequest: 1, baselineEvents: undefined },
    connections,
    ctx.options.durationS,
  );
  ctx.log(
    `holds: ${holds.heldEventIds.length} held, ${settles.settled} settled, ` +
      `${holds.heldEventIds.length - settles.settled} left pending`,
  );
  return [holdPhase, settlePhase];
}

async function accountsScenario(ctx: ScenarioContext): Promise<PhaseResult[]> {
  const spread = await fundedAccounts(ctx, ctx.options.spreadAccounts, 'accounts/spread');
  const [hot] = await fundedAccounts(ctx, 1, 'accounts/hot');
  ctx.auditAccounts.push(hot as string, spread[0] as string);
  const size = SPREAD_EVENTS_PER_REQUEST;
  const connections = connectionsFor(ctx.options, size);
  const batches = eventBatches(size);
  const spreadPhase = await new EventTraffic(ctx.ledger, spread, batches).measure(
    ctx,
    { scenario: 'accounts', phase: `spread over ${spread.length}`, eventsPerRequest: size, baselineEvents: size },
    connections,
    ctx.options.durationS,
  );
  const hotPhase = await new EventTraffic(ctx.ledger, [hot as string], batches).measure(
    ctx,
    { scenario: 'accounts', phase: 'one hot account', eventsPerRequest: size, baselineEvents: size },
    connections,
    ctx.options.durationS,
  );
  return [spreadPhase, hotPhase];
}

/**
 * A window of the `leases` scenario as a row: `req/s` the HTTP requests its gateway sent, answered 2xx, per second
 * (its decisions per second are in `leases`), latencies those requests', `conns` the most in flight at once.
 */
function leaseRow(ctx: ScenarioContext, w: LeaseWindow): PhaseResult {
  return {
    db: ctx.db,
    servers: ctx.servers.length,
    scenario: 'leases',
    phase: w.phase,
    connections: w.connections,
    eventsPerRequest: 0,
    baselineEvents: undefined,
    storeEvents: undefined,
    durationS: ctx.options.durationS,
    elapsedS: w.elapsedS,
    requests: w.ok,
    requestsPerS: w.ok / w.elapsedS,
    events: 0,
    eventsPerS: 0,
    latencyMs: w.latencyMs,
    non2xx: w.non2xx,
    statusCodes: w.statusCodes,
    errors: w.errors,
    timeouts: 0,
    unanswered: 0,
    malformedAnswers: 0,
    serverCpuPercent: w.server.cpuPercent,
    serverCpuSeconds: w.server.cpuSeconds,
    windowUs: w.windowUs,
    serverPeakRssMb: w.server.peakRssBytes / (1024 * 1024),
    serverProcesses: w.server.processes,
    generatorCpuPercent: w.generatorCpuPercent,
    databaseCpuPercent: w.databaseCpuPercent,
    otherCpuPercent: w.otherCpuPercent,
    stealCpuPercent: w.stealCpuPercent,
    errorSamples: w.errorSamples,
    ratios: {},
    leases: w.figures,
  };
}

export async function runScenario(ctx: ScenarioContext, name: ScenarioName): Promise<ScenarioResult> {
  ctx.setup.accounts = 0;
  ctx.setup.seconds = 0;
  let phases: PhaseResult[];
  switch (name) {
    case 'events-1':
      phases = await eventsScenario(ctx, 1);
      break;
    case 'events-100':
      phases = await eventsScenario(ctx, 100);
      break;
    case 'events-1000':
      phases = await eventsScenario(ctx, 1000);
      break;
    case 'holds':
      phases = await holdsScenario(ctx);
      break;
    case 'accounts':
      phases = await accountsScenario(ctx);
      break;
    case 'check-1':
      phases = await checkScenario(ctx);
      break;
    case 'read-1':
      phases = await readScenario(ctx);
      break;
    case 'entitlements-1':
      phases = await entitlementsScenario(ctx);
      break;
    case 'leases':
      phases = (await leasesScenario(ctx, (count, label) => fundedAccounts(ctx, count, label))).map((w) =>
        leaseRow(ctx, w),
      );
      break;
  }
  return { db: ctx.db, scenario: name, setupAccounts: ctx.setup.accounts, setupS: ctx.setup.seconds, phases };
}
