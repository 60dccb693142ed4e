/**
 * The `leases` scenario (contract "Leases"): usage decided in the gateway's own process against leases, with the
 * client library (sdk/typescript `Lease`, `LeasePool`), against the real server the bench started. Three parts:
 *
 * 1. tryTake: `lease.tryTake(1)` and `pool.tryTake(account, 'tokens', 1)`, each call timed alone with
 *    `process.hrtime.bigint()` (TRYTAKE_CALLS calls after TRYTAKE_WARMUP_CALLS, on a lease holding them all), in µs,
 *    beside the target (p99 ≤ 50 µs: reported, never asserted), and the timer pair alone. Nothing is recorded:
 *    closing the lease releases what was taken.
 * 2. gateway, lease pool (lib/lease-gateway.ts): decisions over GATEWAY_ACCOUNTS accounts, as fast as the gateway can
 *    or `--gateway-rate` per second, each `pool.tryTake(account, 'tokens', units)` (1–5 units) and, when allowed,
 *    `take.record` of one `llm` event costing those units; every HTTP request of the client counted. Then
 *    `pool.close()` and the exactness check: per account Σ units taken = Σ event costs in the server's usage, one
 *    event per decision allowed, Σ `used` of its leases = units taken, no lease left open, balance = start − taken,
 *    pending 0. A difference fails the run.
 * 3. gateway, check per decision: the same decisions, each one `POST /v1/accounts/{id}/check` of that event
 *    (`billing.check`), `connectionsFor(options, 1)` in flight: a request per decision, nothing recorded; then the
 *    same requests from autocannon (closed loop, never paced), the server's figure when the client costs least.
 */
import { performance } from 'node:perf_hooks';
import { Billing, type LeaseFailure, LeasePool, LeaseTake } from '../../sdk/typescript/src/index.js';
import { mapConcurrent, type Tenant } from './api.js';
import type { LatencyFigures } from './latency.js';
import { LatencyRecorder } from './latency.js';
import {
  autocannonChecks,
  checkGateway,
  type GatewayFigures,
  gatewayFigures,
  LEASE_EVENT_TYPE,
  measure,
  type MeasuredWindow,
  poolGateway,
  RequestCounter,
  Tally,
} from './lease-gateway.js';
import type { Ledger } from './ledger.js';
import { connectionsFor, DENOMINATION, SETUP_CONCURRENCY, type BenchOptions } from './options.js';

export const TRYTAKE_CALLS = 1_000_000;
export const TRYTAKE_WARMUP_CALLS = 100_000;
/** The issue's target for `tryTake`'s p99, printed beside the figures. */
export const TRYTAKE_TARGET_P99_US = 50;
export const GATEWAY_ACCOUNTS = 50;
/** Units each lease of the gateway's pool holds: seconds of an account's usage at full speed. */
export const GATEWAY_LEASE_AMOUNT = 50_000;
const GATEWAY_LEASE_TTL_S = 120;
/** The lifetime of the tryTake benchmark's leases: far longer than its calls take. */
const TRYTAKE_LEASE_TTL_S = 600;
export const POOL_PHASE = 'gateway, lease pool';
export const CHECK_PHASE = 'gateway, check per decision';
export const AUTOCANNON_CHECK_PHASE = 'check per decision, autocannon';
const HOUR_MS = 3_600_000;

/** One call timed alone, `calls` times. */
export interface TryTakeFigures {
  /** `lease.tryTake(1)`, `pool.tryTake(account, 'tokens', 1)`, or the timer pair around nothing. */
  call: string;
  calls: number;
  warmupCalls: number;
  latencyUs: LatencyFigures;
  /** Calls answered false or null (none expected: the lease holds them all). */
  refused: number;
}

export interface ExactnessFigures {
  accounts: number;
  events: number;
  units: number;
  /** Empty when exact; otherwise each difference (the run fails). */
  problems: string[];
}

/** A row's `leases`: the gateway's figures; on the lease pool's row also tryTake, exactness and the ratio. */
export interface LeaseFigures {
  targetP99Us: number;
  gateway: GatewayFigures;
  tryTake?: TryTakeFigures[];
  exactness?: ExactnessFigures;
  /** The lease pool's decisions/s ÷ those of the check per decision (the client library's, autocannon's). */
  vsCheck?: number;
  vsAutocannonCheck?: number;
}

/** A measured window of the scenario with its figures, made into a table row by lib/scenarios.ts. */
export interface LeaseWindow extends MeasuredWindow {
  figures: LeaseFigures;
}

/** What the scenario uses of the bench's context (lib/scenarios.ts ScenarioContext). */
export interface LeaseContext {
  db: string;
  servers: readonly { pid: number; baseUrl: string }[];
  tenant: Tenant;
  ledger: Ledger;
  options: BenchOptions;
  databaseProcesses: (() => number[]) | undefined;
  auditAccounts: string[];
  log(message: string): void;
}

/**
 * `call` timed alone, TRYTAKE_CALLS times after TRYTAKE_WARMUP_CALLS untimed, in µs. It is allowed unless it answers
 * false or null; a LeaseTake it answers is released (untimed).
 */
export function timeCalls(name: string, call: () => boolean | LeaseTake | null, calls = TRYTAKE_CALLS): TryTakeFigures {
  const us = new LatencyRecorder();
  const warmup = Math.min(TRYTAKE_WARMUP_CALLS, calls);
  let refused = 0;
  for (let i = 0; i < warmup + calls; i++) {
    const t0 = process.hrtime.bigint();
    const result = call();
    const t1 = process.hrtime.bigint();
    if (result instanceof LeaseTake) result.release();
    if (i < warmup) continue;
    us.push(Number(t1 - t0) / 1000);
    if (result === false || result === null) refused++;
  }
  return { call: name, calls, warmupCalls: warmup, latencyUs: us.figures(), refused };
}

async function measureTryTake(billing: Billing, accountId: string): Promise<TryTakeFigures[]> {
  const amount = TRYTAKE_CALLS + TRYTAKE_WARMUP_CALLS;
  const ttlSeconds = TRYTAKE_LEASE_TTL_S;
  const lease = await billing.leases.open(accountId, DENOMINATION, { amount, ttlSeconds });
  const one = timeCalls('lease.tryTake(1)', () => lease.tryTake(1));
  await lease.close();
  // A lease big enough that the pool never opens the next one (at 80 %) during the calls.
  const pool = new LeasePool(billing, { amount: 2 * amount, ttlSeconds });
  try {
    const first = await pool.take(accountId, DENOMINATION, 1);
    if (first === null) throw new Error(`leases: the pool could not open a lease on ${accountId}`);
    first.release();
    const pooled = timeCalls(`pool.tryTake(account, '${DENOMINATION}', 1)`, () =>
      pool.tryTake(accountId, DENOMINATION, 1),
    );
    return [one, pooled, timeCalls('process.hrtime.bigint() pair alone', () => true)];
  } finally {
    await pool.close();
  }
}

/** What one account shows after the pool closed. */
export interface AccountObservation {
  amount: number;
  pending: number;
  available: number;
  leasesUsed: number;
  leasesOpen: number;
  usageEvents: number;
  usageCost: number;
}

/** The differences between what the gateway took from an account and what the server recorded. */
export function exactnessProblems(
  accountId: string,
  e: { start: number; taken: number; recorded: number },
  o: AccountObservation,
): string[] {
  const out: string[] = [];
  const at = `account ${accountId}`;
  if (o.usageCost !== e.taken || o.usageEvents !== e.recorded)
    out.push(`${at}: ${o.usageEvents} events costing ${o.usageCost} recorded, ${e.recorded} costing ${e.taken} taken`);
  if (o.leasesUsed !== e.taken) out.push(`${at}: its leases used ${o.leasesUsed} units, ${e.taken} were taken`);
  if (o.leasesOpen !== 0) out.push(`${at}: ${o.leasesOpen} leases still open after pool.close()`);
  if (o.amount !== e.start - e.taken) out.push(`${at}: amount ${o.amount}, expected ${e.start} − ${e.taken}`);
  if (o.pending !== 0 || o.available !== o.amount)
    out.push(`${at}: pending ${o.pending}, available ${o.available} (amount ${o.amount}): expected pending 0`);
  return out;
}

/** An account's balance, its leases and its `llm` usage since the hour before `fromMs`, as the server answers. */
async function observe(billing: Billing, accountId: string, fromMs: number): Promise<AccountObservation> {
  const { amount, pending, available } = await billing.balances.retrieve(accountId, DENOMINATION);
  const o = { amount, pending, available, leasesUsed: 0, leasesOpen: 0, usageEvents: 0, usageCost: 0 };
  for await (const l of billing.leases.list(accountId)) {
    o.leasesUsed += l.used;
    if (l.status === 'open') o.leasesOpen++;
  }
  const hour = (ms: number): string => new Date(Math.floor(ms / HOUR_MS) * HOUR_MS).toISOString();
  const [from, to] = [hour(fromMs - HOUR_MS), hour(Date.now() + 2 * HOUR_MS)];
  const query = { account_id: accountId, from, to, window: 'all', group_by: 'account_id', type: LEASE_EVENT_TYPE };
  for await (const u of billing.usage.query(query)) {
    o.usageEvents += u.events;
    o.usageCost += u.cost;
  }
  return o;
}

/** What the scenario's gateways share: the accounts, one client per server, the counting `fetch` behind them. */
interface Setup {
  ctx: LeaseContext;
  accounts: string[];
  billings: Billing[];
  counter: RequestCounter;
}

/**
 * The lease pool's gateway (after a warm-up on the same pools), `pool.close()`, the exactness check; each account's
 * units taken enter the ledger as debits, so that the run's ledger check sees them too.
 */
async function leasePoolPhase(s: Setup, tryTake: TryTakeFigures[]): Promise<LeaseWindow> {
  const { ctx, accounts, billings, counter } = s;
  const { durationS, warmupS, gatewayRate: rate } = ctx.options;
  const first = billings[0] as Billing;
  const start = await mapConcurrent(accounts, SETUP_CONCURRENCY, async (a) => {
    return (await first.balances.retrieve(a, DENOMINATION)).amount;
  });
  const fromMs = Date.now();
  const failures: LeaseFailure[] = [];
  const options = { amount: GATEWAY_LEASE_AMOUNT, ttlSeconds: GATEWAY_LEASE_TTL_S };
  const pools = billings.map((b) => new LeasePool(b, { ...options, onError: (f) => failures.push(f) }));
  const tally = new Tally(accounts.length);
  if (warmupS > 0) await poolGateway({ accounts, tally, durationS: warmupS, rate }, pools);
  const [before, unsentBefore] = [{ ...tally }, tally.unsent()];
  const decisionUs = new LatencyRecorder();
  const run = { accounts, tally, durationS, rate };
  const { window, counts } = await measure(ctx, counter, POOL_PHASE, () => poolGateway(run, pools, decisionUs));
  const accepted = tally.allowed - before.allowed + unsentBefore - tally.unsent();
  const closeStarted = performance.now();
  const problems: string[] = [];
  for (const c of await Promise.allSettled(pools.map((p) => p.close())))
    if (c.status === 'rejected') problems.push(`pool.close() failed: ${String(c.reason)}`);
  const closeS = (performance.now() - closeStarted) / 1000;
  for (const f of failures)
    if (f.dropped) problems.push(`a ${f.kind} of lease ${f.leaseId} (${f.accountId}) was refused: ${String(f.error)}`);
  await mapConcurrent(accounts, SETUP_CONCURRENCY, async (accountId, j) => {
    const [taken, recorded] = [tally.taken[j] as number, tally.recorded[j] as number];
    const observed = await observe(first, accountId, fromMs);
    problems.push(...exactnessProblems(accountId, { start: start[j] as number, taken, recorded }, observed));
    ctx.ledger.debit(accountId, taken);
  });
  const units = tally.taken.reduce((a, b) => a + b, 0);
  ctx.log(
    problems.length === 0
      ? `leases: exact: ${tally.allowed} events, ${units} units taken and recorded over ${accounts.length} accounts`
      : `leases: NOT EXACT:\n  ${problems.join('\n  ')}`,
  );
  const gateway: GatewayFigures = {
    ...gatewayFigures(tally, before, counts, window.elapsedS, rate),
    acceptedPerS: accepted / window.elapsedS,
    decisionUs: decisionUs.figures(),
    backlogWaitPercent: (100 * (tally.waitedMs - before.waitedMs)) / 1000 / window.elapsedS,
    closeS,
  };
  const exactness = { accounts: accounts.length, events: tally.allowed, units, problems };
  return { ...window, figures: { targetP99Us: TRYTAKE_TARGET_P99_US, gateway, tryTake, exactness } };
}

/** The baseline: the same decisions, one pre-flight check each (after a warm-up). */
async function checkPhase(s: Setup): Promise<LeaseWindow> {
  const { ctx, accounts, billings, counter } = s;
  const { durationS, warmupS, gatewayRate: rate } = ctx.options;
  const concurrency = connectionsFor(ctx.options, 1);
  const tally = new Tally(accounts.length);
  if (warmupS > 0) await checkGateway({ accounts, tally, durationS: warmupS, rate }, billings, concurrency);
  const before = { ...tally };
  const run = { accounts, tally, durationS, rate };
  const { window, counts } = await measure(ctx, counter, CHECK_PHASE, () => checkGateway(run, billings, concurrency));
  const gateway = gatewayFigures(tally, before, counts, window.elapsedS, rate);
  return { ...window, figures: { targetP99Us: TRYTAKE_TARGET_P99_US, gateway } };
}

/** The same checks from autocannon: its requests and latencies replace the (uncounted) client's. */
async function autocannonCheckPhase(s: Setup): Promise<LeaseWindow> {
  const { ctx, accounts, counter } = s;
  const { durationS, warmupS } = ctx.options;
  const baseUrls = ctx.servers.map((server) => server.baseUrl);
  const [auth, connections] = [ctx.tenant.authorization, connectionsFor(ctx.options, 1)];
  const tally = new Tally(accounts.length);
  const warmup = { accounts, tally, durationS: warmupS, rate: undefined };
  if (warmupS > 0) await autocannonChecks(warmup, baseUrls, auth, connections);
  const before = { ...tally };
  const run = { accounts, tally, durationS, rate: undefined };
  let outcome: Awaited<ReturnType<typeof autocannonChecks>> | undefined;
  const { window } = await measure(ctx, counter, AUTOCANNON_CHECK_PHASE, async () => {
    outcome = await autocannonChecks(run, baseUrls, auth, connections);
  });
  if (outcome === undefined) throw new Error('leases: autocannon reported nothing');
  const { ok, non2xx, errors, statusCodes, latencyMs, errorSamples, elapsedS } = outcome;
  const requests = outcome.responses + errors;
  const counts = { requests, ok, non2xx, errors, statusCodes, byKind: { check: requests } };
  const gateway = gatewayFigures(tally, before, counts, elapsedS, undefined);
  const measured = { ...window, connections, elapsedS, ok, non2xx, errors, statusCodes, latencyMs, errorSamples };
  return { ...measured, figures: { targetP99Us: TRYTAKE_TARGET_P99_US, gateway } };
}

/**
 * Runs the scenario on accounts `funded` creates (entered in the ledger), the first one's transactions audited;
 * answers its windows: the lease pool's (with tryTake, exactness and the ratios), the checks' from the client library
 * and from autocannon.
 */
export async function leasesScenario(
  ctx: LeaseContext,
  funded: (count: number, label: string) => Promise<string[]>,
): Promise<LeaseWindow[]> {
  const accounts = await funded(GATEWAY_ACCOUNTS, 'leases');
  ctx.auditAccounts.push(accounts[0] as string);
  const counter = new RequestCounter();
  const credentials = Buffer.from(ctx.tenant.authorization.replace(/^Basic /, ''), 'base64').toString('utf8');
  const colon = credentials.indexOf(':');
  const [companyId, apiKey] = [credentials.slice(0, colon), credentials.slice(colon + 1)];
  // A client per server process: with several, account j is decided through server j mod n.
  const billings = ctx.servers.map((s) => new Billing({ baseUrl: s.baseUrl, companyId, apiKey, fetch: counter.fetch }));
  const setup = { ctx, accounts, billings, counter };

  const tryTake = await measureTryTake(billings[0] as Billing, accounts[0] as string);
  for (const t of tryTake)
    ctx.log(`leases: ${t.call}: p50 ${t.latencyUs.p50.toFixed(2)} µs, p99 ${t.latencyUs.p99.toFixed(2)} µs`);
  const pooled = await leasePoolPhase(setup, tryTake);
  const checked = await checkPhase(setup);
  const autocannon = await autocannonCheckPhase(setup);
  const ratio = (w: LeaseWindow): number | undefined =>
    w.figures.gateway.decisionsPerS > 0
      ? pooled.figures.gateway.decisionsPerS / w.figures.gateway.decisionsPerS
      : undefined;
  // Paced, the gateways' rates are the rate asked for: no ratio.
  if (ctx.options.gatewayRate === undefined) {
    pooled.figures.vsCheck = ratio(checked);
    pooled.figures.vsAutocannonCheck = ratio(autocannon);
  }
  return [pooled, checked, autocannon];
}
