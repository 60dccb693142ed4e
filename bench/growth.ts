/**
 * `npm run bench:growth`: does the cost of an event stay flat as the database grows, and do the
 * list endpoints stay fast on an account with a long history?
 *
 * For each database: a fresh store, the real server as a child process, a tenant created
 * through the API; then, level by level, the server is stopped, the store is seeded through
 * its public interface in bulk (accounts, then stored events with their ledger transactions:
 * lib/growth-seed.ts), the server is started again and measured with the main bench's load
 * code (1-event and 100-event requests over random accounts of the whole population). At the
 * end the list endpoints are measured on the "big" account and the company's accounts, their
 * query plans checked, and the ledger checked to the unit. Figures are reported, never
 * asserted: the exit status is non-zero only when the ledger is off or a run failed. See
 * bench/README.md, "Growth".
 */
import {
  benchEntry,
  chooseDatabases,
  EXIT_LEDGER_OR_RUN_FAILED,
  EXIT_USAGE,
  filesystemOf,
  loadAtStart,
  REPO_ROOT,
  runMeta,
  buildServer,
} from './lib/entry.js';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Api, createTenant, mapConcurrent, type Transaction } from './lib/api.js';
import { eventBatches } from './lib/bodies.js';
import { startChild, type ChildServer } from './lib/children.js';
import {
  createFeatures,
  createPlans,
  entitlementPath,
  type GrowthCatalogue,
  growthCatalogue,
} from './lib/entitlements.js';
import { checkPlans, type GrantPlanSubjects, type PlanSubjects } from './lib/growth-explain.js';
import { DAY_MS } from './lib/grants.js';
import {
  DEFAULT_ACCOUNT_LEVELS,
  DEFAULT_EVENT_LEVELS,
  GROWTH_USAGE,
  growthLevels,
  parseGrowthOptions,
  type GrowthLevel,
  type GrowthOptions,
} from './lib/growth-options.js';
import {
  ENTITLEMENT_CASE_PREFIX,
  formatChecks,
  formatEntitlements,
  formatGrantTargets,
  formatLevels,
  formatLists,
  formatPlans,
  formatSeeding,
  writeGrowthJson,
  type CheckReport,
  type DbGrowthRun,
  type GrowthPhase,
  type GrowthReport,
  type ListResult,
  type SeedEstimate,
} from './lib/growth-report.js';
import { openStore, type Store } from './lib/engine.js';
import {
  SEED_ACCOUNTS,
  SEED_BALANCES,
  SEED_EVENTS,
  SEED_READ,
  SEED_SETTLE,
  Seeder,
  USAGE_SPAN_DAYS,
  type SeedTiming,
} from './lib/growth-seed.js';
import { ChainCheck, compareBalance, compareGrants, Ledger, type AccountBook, type Finding } from './lib/ledger.js';
import type { LoadSpec } from './lib/load.js';
import {
  connectionsFor,
  DENOMINATION,
  EVENT_TYPE,
  INITIAL_GRANT,
  parseOptions,
  SETUP_CONCURRENCY,
  type BenchOptions,
  type DbKind,
} from './lib/options.js';
import { createBenchDatabase, dataDirectory, type BenchDatabase } from './lib/postgres.js';
import { postgresProcesses } from './lib/procstats.js';
import { EventTraffic, measurePhase, phaseTarget, type ScenarioContext } from './lib/scenarios.js';

/** The secrets-at-rest key of the servers this run starts (`bench:` and 32 random bytes, as run.ts makes it). */
const RUN_SECRET_KEY = `bench:${randomBytes(32).toString('base64')}`;
const RESULTS_DIR = join(REPO_ROOT, 'bench', 'results');
const SERVER_LOG_LEVEL = 'warn';
const REQUEST_SIZES = [1, 100] as const;
const WARMUP_SIZES = [1, 100] as const;
/** Page size of the list requests (the contract's maximum). */
const LIST_PAGE = 100;
const HOUR_MS = 3_600_000;
/** Usage answers fit one page: 31 days × a type or two. */
const USAGE_LIMIT = 100;
/** Spread accounts whose usage is asked, one after the other. */
const USAGE_ACCOUNTS = 50;
/** Backstop for a list case: it ends when its requests are sent, long before this. */
const LIST_BACKSTOP_S = 600;
/** Pages followed from a deep cursor to check that paging continues the history. */
const PAGES_FOLLOWED = 3;
/** Loaded accounts whose whole transaction chain is paged through the API. */
const CHAINS_THROUGH_API = 3;
/**
 * Disk needed per seeded row, generous (measured on PostgreSQL 15 / SQLite 3.53: an event with
 * its usage transaction and their indexes ≈ 0.5 kB; an account with its balance and grant ≈ 0.6 kB;
 * PostgreSQL's WAL and the dead rows of the balance updates come on top).
 */
const DISK_BYTES_PER_EVENT = 1_000;
const DISK_BYTES_PER_ACCOUNT = 1_200;
/** Each grant beyond the initial one: its row, its two index entries, its `grant` transaction, its lot. */
const DISK_BYTES_PER_GRANT = 600;
/** An account on a plan: its plan periods row and its index entries (overrides are a tenth as many). */
const DISK_BYTES_PER_PLAN_ACCOUNT = 300;
/** Transactions per page when the bench reads the big account's history through the store. */
const STORE_PAGE = 10_000;
/** Connections of the store the bench seeds and reads with (PostgreSQL). */
const STORE_POOL_SIZE = 5;

const { log, onCleanup, cleanUpEverything, run } = benchEntry('growth');

function compact(n: number): string {
  if (n >= 1_000_000 && n % 100_000 === 0) return `${n / 1_000_000}M`;
  if (n >= 1_000 && n % 100 === 0) return `${n / 1_000}k`;
  return String(n);
}

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** The main bench's ledger, with books opened on first use: the load touches a few of a million accounts. */
class GrowthLedger extends Ledger {
  private readonly opened = new Set<string>();
  override book(accountId: string): AccountBook {
    if (!this.opened.has(accountId)) {
      this.opened.add(accountId);
      this.open(accountId, 'growth');
    }
    return super.book(accountId);
  }
}

interface Storage {
  description: string;
  databaseUrl: string;
  sqliteFile: string | undefined;
  /** The PostgreSQL database, when it is one. */
  postgres: BenchDatabase | undefined;
  processes: (() => number[]) | undefined;
  release: () => Promise<void>;
}

async function prepareStorage(db: DbKind, options: GrowthOptions, dataDir: string): Promise<Storage> {
  if (db === 'sqlite') {
    const file = join(dataDir, `growth-${randomBytes(4).toString('hex')}.sqlite`);
    const release = onCleanup(() => {
      if (options.keep) {
        log(`sqlite: kept ${file}`);
        return;
      }
      for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${file}${suffix}`, { force: true });
    });
    return {
      description: file,
      databaseUrl: `sqlite:${file}`,
      sqliteFile: file,
      postgres: undefined,
      processes: undefined,
      release,
    };
  }
  const database = await createBenchDatabase(options.postgresAdminUrl);
  const release = onCleanup(async () => {
    if (options.keep) {
      log(`postgres: kept database ${database.name} (${database.url})`);
      return;
    }
    await database.drop();
  });
  return {
    description: `PostgreSQL database ${database.name}`,
    databaseUrl: database.url,
    sqliteFile: undefined,
    postgres: database,
    processes: () => postgresProcesses(database.name),
    release,
  };
}

function freeBytes(path: string): number | undefined {
  try {
    const s = statfsSync(path);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

/** Refuses to start a seed the disk cannot hold (the PostgreSQL data directory, or the SQLite file's). */
async function checkDisk(options: GrowthOptions, storage: Storage): Promise<string> {
  const dir =
    storage.sqliteFile !== undefined ? dirname(storage.sqliteFile) : await dataDirectory(options.postgresAdminUrl);
  const maxAccounts = options.accountLevels[options.accountLevels.length - 1] as number;
  const maxEvents = options.eventLevels[options.eventLevels.length - 1] as number;
  const needed =
    maxAccounts *
      (DISK_BYTES_PER_ACCOUNT +
        (options.grants - 1) * DISK_BYTES_PER_GRANT +
        (options.features > 0 ? DISK_BYTES_PER_PLAN_ACCOUNT : 0)) +
    maxEvents * DISK_BYTES_PER_EVENT;
  const free = dir === undefined ? undefined : freeBytes(dir);
  const gb = (b: number): string => `${(b / 1e9).toFixed(1)} GB`;
  if (free === undefined)
    return `free disk space under ${dir ?? 'the data directory'} unknown; about ${gb(needed)} needed`;
  if (needed > free) throw new Error(`the seed needs about ${gb(needed)} under ${dir}, only ${gb(free)} are free`);
  return `${gb(free)} free under ${dir}, about ${gb(needed)} needed`;
}

async function databaseBytes(storage: Storage): Promise<number> {
  if (storage.postgres !== undefined) return await storage.postgres.bytes();
  let total = 0;
  for (const suffix of ['', '-wal']) {
    try {
      total += statSync(`${storage.sqliteFile}${suffix}`).size;
    } catch {
      // no WAL file
    }
  }
  return total;
}

function cpuUs(percent: number | undefined, elapsedS: number, count: number): number | undefined {
  if (percent === undefined || count === 0) return undefined;
  return ((percent / 100) * elapsedS * 1e6) / count;
}

async function measureLevel(
  ctx: ScenarioContext,
  population: readonly string[],
  options: GrowthOptions,
  label: string,
): Promise<{ phases: GrowthPhase[]; acknowledgedEvents: number }> {
  let acknowledgedEvents = 0;
  if (options.warmupS > 0) {
    const warm = new EventTraffic(
      ctx.ledger,
      shuffled(population),
      WARMUP_SIZES.flatMap((size) => eventBatches(size)),
      false,
    );
    const w = await warm.measure(
      ctx,
      { scenario: 'warm-up', phase: 'warm-up', eventsPerRequest: 0, baselineEvents: undefined },
      connectionsFor(ctx.options, 100),
      options.warmupS,
    );
    acknowledgedEvents += w.events;
    ctx.log(`${label}: warm-up ${Math.round(w.eventsPerS)} events/s`);
  }
  const phases: GrowthPhase[] = [];
  for (const size of REQUEST_SIZES) {
    // Requests made per send at every level (no per-connection cycles), so that the levels compare.
    const traffic = new EventTraffic(ctx.ledger, shuffled(population), eventBatches(size), false);
    const result = await traffic.measure(
      ctx,
      { scenario: label, phase: `events-${size}`, eventsPerRequest: size, baselineEvents: undefined },
      connectionsFor(ctx.options, size),
      options.durationS,
    );
    const phase: GrowthPhase = {
      name: `events-${size}`,
      result,
      serverCpuUsPerEvent: cpuUs(result.serverCpuPercent, result.elapsedS, result.events) ?? Number.NaN,
      databaseCpuUsPerEvent: cpuUs(result.databaseCpuPercent, result.elapsedS, result.events),
    };
    phases.push(phase);
    acknowledgedEvents += result.events;
    ctx.log(
      `${label}: events-${size}: ${Math.round(result.eventsPerS)} events/s, ` +
        `p99 ${result.latencyMs.p99.toFixed(1)} ms, ${phase.serverCpuUsPerEvent.toFixed(1)} µs server CPU/event, ` +
        `other CPU ${result.otherCpuPercent.toFixed(0)}%`,
    );
  }
  return { phases, acknowledgedEvents };
}

interface ListCase {
  name: string;
  request: string;
  paths: string[];
  /** Whether a 2xx body holds what was asked for. */
  expect: (body: string) => boolean;
  itemsPerAnswer: number;
  /** The target for the p99, if it sets one. */
  targetMs?: number;
}

function fullPage(body: string): boolean {
  try {
    const page = JSON.parse(body) as { data?: unknown[]; has_more?: boolean };
    return Array.isArray(page.data) && page.data.length === LIST_PAGE && page.has_more === true;
  } catch {
    return false;
  }
}

/** A list answer with at least one item, all on one page (usage groups; a balance's live grants). */
function onePageAnswer(body: string): boolean {
  try {
    const page = JSON.parse(body) as { data?: unknown[]; has_more?: boolean };
    return Array.isArray(page.data) && page.data.length > 0 && page.has_more === false;
  } catch {
    return false;
  }
}

/**
 * The usage cases' period: the USAGE_SPAN_DAYS up to the next whole hour (the seeded history
 * and what the load added since), on whole hours as the API wants.
 */
function usagePeriod(nowMs: number): { fromMs: number; toMs: number; query: string } {
  const toMs = (Math.floor(nowMs / HOUR_MS) + 1) * HOUR_MS;
  const fromMs = toMs - USAGE_SPAN_DAYS * 24 * HOUR_MS;
  const query = `from=${new Date(fromMs).toISOString()}&to=${new Date(toMs).toISOString()}`;
  return { fromMs, toMs, query };
}

function oneEvent(body: string): boolean {
  try {
    return typeof (JSON.parse(body) as { data?: { event_id?: unknown } }).data?.event_id === 'string';
  } catch {
    return false;
  }
}

async function measureList(ctx: ScenarioContext, c: ListCase, count: number): Promise<ListResult> {
  let sent = 0;
  let ok = 0;
  let malformed = 0;
  const spec: LoadSpec<number> = {
    baseUrl: ctx.servers[0]!.baseUrl,
    authorization: ctx.tenant.authorization,
    connections: 1,
    durationS: LIST_BACKSTOP_S,
    next: () =>
      sent < count ? { method: 'GET', path: c.paths[sent++ % c.paths.length] as string, tag: 0 } : undefined,
    onResponse: (_tag, status, body) => {
      if (status < 200 || status > 299) return;
      ok++;
      if (!c.expect(body)) malformed++;
    },
  };
  const { result } = await measurePhase(
    phaseTarget(ctx),
    { scenario: 'lists', phase: c.name, eventsPerRequest: 0, baselineEvents: undefined },
    [spec],
    () => ({ events: ok, malformed }),
  );
  const list: ListResult = {
    name: c.name,
    request: c.request,
    requests: result.requests,
    itemsPerAnswer: c.itemsPerAnswer,
    latencyMs: {
      p50: result.latencyMs.p50,
      p99: result.latencyMs.p99,
      max: result.latencyMs.max,
      mean: result.latencyMs.mean,
    },
    serverCpuUsPerRequest: cpuUs(result.serverCpuPercent, result.elapsedS, result.requests) ?? Number.NaN,
    databaseCpuUsPerRequest: cpuUs(result.databaseCpuPercent, result.elapsedS, result.requests),
    otherCpuPercent: result.otherCpuPercent,
    non2xx: result.non2xx,
    errors: result.errors + result.unanswered,
    malformed,
    ...(c.targetMs !== undefined ? { targetMs: c.targetMs } : {}),
  };
  ctx.log(
    `list ${c.name}: p50 ${list.latencyMs.p50.toFixed(2)} ms, p99 ${list.latencyMs.p99.toFixed(2)} ms ` +
      `over ${list.requests} requests`,
  );
  if (result.errorSamples.length > 0) ctx.log(`list ${c.name}: e.g. ${result.errorSamples[0]}`);
  return list;
}

/**
 * Transactions of the big account at evenly spaced depths in the older half of its history,
 * newest first, read through the store (its list, in pages of STORE_PAGE).
 */
async function deepTransactionCursors(
  store: Store,
  accountId: string,
  total: number,
  count: number,
): Promise<string[]> {
  const from = Math.floor(total / 2);
  const to = total - LIST_PAGE; // a full page remains after each cursor
  if (to <= from) return [];
  const step = Math.max(1, Math.floor((to - from) / count));
  const cursors: string[] = [];
  let depth = 0; // rank from the newest, 1-based
  let startingAfter: string | undefined;
  while (depth < to && cursors.length < count) {
    const page = await store.read((tx) =>
      tx.transactions.listTransactions(accountId, DENOMINATION, { limit: STORE_PAGE, startingAfter }),
    );
    if (page === undefined || page.rows.length === 0) break;
    for (const row of page.rows) {
      depth++;
      if (depth > from && depth <= to && (depth - from) % step === 0 && cursors.length < count)
        cursors.push(row.transactionId);
    }
    if (!page.hasMore) break;
    startingAfter = page.rows[page.rows.length - 1]?.transactionId;
  }
  return cursors;
}

/** The issue's targets for the p99 of the credit grants' lists (issue 25, "What it must show"). */
const GRANTS_OF_BALANCE_TARGET_MS = 20;
const GRANTS_BY_EXPIRY_TARGET_MS = 100;
/** `GET /v1/grants?expires_before=` asks for the grants expiring within this many days. */
const GRANTS_EXPIRING_WITHIN_DAYS = 7;
/** "A few pages in": cursors at the ends of pages 1 … GRANT_PAGES_IN of the list by expiry. */
const GRANT_PAGES_IN = 10;

/**
 * The cases of the credit grants' lists: a balance's grants (random accounts), and the company's
 * grants expiring within GRANTS_EXPIRING_WITHIN_DAYS: the first page, pages 2 … GRANT_PAGES_IN + 1,
 * and pages after cursors spread over the whole list (found by paging through the store).
 */
async function grantCases(
  store: Store,
  companyId: string,
  population: readonly string[],
  grantsPerAccount: number,
  listRequests: number,
): Promise<{ cases: ListCase[]; subjects: GrantPlanSubjects; info: NonNullable<DbGrowthRun['grants']> }> {
  const nowMs = Date.now();
  // On a whole second, as a client would write it; the store reads the list at the same instant.
  const expiresBeforeMs = Math.floor((nowMs + GRANTS_EXPIRING_WITHIN_DAYS * DAY_MS) / 1000) * 1000;
  const expiresBefore = new Date(expiresBeforeMs).toISOString();
  const filter = { statuses: ['scheduled', 'active'] as const, nowMs, expiresBeforeMs };
  const ids: string[] = [];
  let startingAfter: string | undefined;
  for (;;) {
    const page = await store.read((tx) =>
      tx.grants.listGrants(companyId, filter, { limit: STORE_PAGE, startingAfter }),
    );
    if (page === undefined || page.rows.length === 0) break;
    for (const r of page.rows) ids.push(r.grantId);
    if (!page.hasMore) break;
    startingAfter = page.rows[page.rows.length - 1]?.grantId;
  }
  // Cursors after which a full page remains.
  const usable = Math.max(0, ids.length - LIST_PAGE);
  const pagesIn = Array.from({ length: GRANT_PAGES_IN }, (_, p) => ids[(p + 1) * LIST_PAGE - 1]).filter(
    (id, p): id is string => id !== undefined && (p + 1) * LIST_PAGE <= usable,
  );
  const step = Math.max(1, Math.floor(usable / listRequests));
  const deep: string[] = [];
  for (let depth = step; depth <= usable && deep.length < listRequests; depth += step)
    deep.push(ids[depth - 1] as string);
  const byExpiry = (query: string): string => `/v1/grants?expires_before=${encodeURIComponent(expiresBefore)}${query}`;
  const balancePath = (accountId: string): string =>
    `/v1/accounts/${encodeURIComponent(accountId)}/balance/${DENOMINATION}/grants`;
  const cases: ListCase[] = [
    {
      name: 'grants of a balance',
      request: 'GET /v1/accounts/{random account}/balance/tokens/grants',
      paths: shuffled(population).slice(0, listRequests).map(balancePath),
      expect: onePageAnswer,
      itemsPerAnswer: grantsPerAccount,
      targetMs: GRANTS_OF_BALANCE_TARGET_MS,
    },
  ];
  if (ids.length > LIST_PAGE) {
    cases.push({
      name: `grants by expiry (< ${GRANTS_EXPIRING_WITHIN_DAYS} days), first page`,
      request: `GET /v1/grants?expires_before={now + ${GRANTS_EXPIRING_WITHIN_DAYS} days}&limit=${LIST_PAGE}`,
      paths: [byExpiry(`&limit=${LIST_PAGE}`)],
      expect: fullPage,
      itemsPerAnswer: LIST_PAGE,
      targetMs: GRANTS_BY_EXPIRY_TARGET_MS,
    });
  }
  if (pagesIn.length > 0)
    cases.push({
      name: `grants by expiry, pages 2–${pagesIn.length + 1}`,
      request:
        `GET /v1/grants?expires_before=…&limit=${LIST_PAGE}` +
        `&starting_after={last grant of pages 1–${pagesIn.length}}`,
      paths: pagesIn.map((c) => byExpiry(`&limit=${LIST_PAGE}&starting_after=${encodeURIComponent(c)}`)),
      expect: fullPage,
      itemsPerAnswer: LIST_PAGE,
      targetMs: GRANTS_BY_EXPIRY_TARGET_MS,
    });
  if (deep.length > 0)
    cases.push({
      name: 'grants by expiry, deep pages',
      request: `GET /v1/grants?expires_before=…&limit=${LIST_PAGE}&starting_after={cursor anywhere in the list}`,
      paths: deep.map((c) => byExpiry(`&limit=${LIST_PAGE}&starting_after=${encodeURIComponent(c)}`)),
      expect: fullPage,
      itemsPerAnswer: LIST_PAGE,
      targetMs: GRANTS_BY_EXPIRY_TARGET_MS,
    });
  return {
    cases,
    subjects: {
      accountId: population[Math.floor(population.length / 3)] as string,
      nowMs,
      expiresBeforeMs,
      cursor: deep[Math.floor(deep.length / 2)],
    },
    info: { perAccount: grantsPerAccount, rows: 0, expiresBefore, matching: ids.length },
  };
}

/** An entitlement check's answer: `has_access` decided (and, for a metered feature, the balance it draws from). */
function checkAnswer(metered: boolean): (body: string) => boolean {
  return (body) => {
    try {
      const data = (JSON.parse(body) as { data?: { has_access?: unknown; balance?: unknown } }).data;
      return typeof data?.has_access === 'boolean' && (!metered || typeof data.balance === 'object');
    } catch {
      return false;
    }
  };
}

/**
 * The entitlements' cases on random accounts of the population: the list of every feature, one check of a
 * boolean or config feature (the keys in turn), one check of the metered feature on the events' type (its
 * pre-flight check, 1 unit).
 */
function entitlementCases(population: readonly string[], catalogue: GrowthCatalogue, requests: number): ListCase[] {
  const accounts = (): string[] => shuffled(population).slice(0, requests);
  const plain = catalogue.features.filter((f) => f.kind !== 'metered');
  const metered = catalogue.features.find((f) => f.kind === 'metered' && f.eventType === EVENT_TYPE);
  const features = catalogue.features.length;
  const cases: ListCase[] = [
    {
      name: `${ENTITLEMENT_CASE_PREFIX}, list`,
      request: `GET /v1/accounts/{random account}/entitlements (${features} features)`,
      paths: accounts().map((a) => `/v1/accounts/${encodeURIComponent(a)}/entitlements`),
      expect: (body) => {
        try {
          return (JSON.parse(body) as { data?: unknown[] }).data?.length === features;
        } catch {
          return false;
        }
      },
      itemsPerAnswer: features,
    },
  ];
  if (plain.length > 0)
    cases.push({
      name: `${ENTITLEMENT_CASE_PREFIX}, one check (boolean or config)`,
      request: 'GET /v1/accounts/{random account}/entitlements/{boolean or config feature, in turn}',
      paths: accounts().map((a, i) => entitlementPath(a, (plain[i % plain.length] as { key: string }).key)),
      expect: checkAnswer(false),
      itemsPerAnswer: 1,
    });
  if (metered !== undefined)
    cases.push({
      name: `${ENTITLEMENT_CASE_PREFIX}, one check (metered, pre-flight)`,
      request: `GET /v1/accounts/{random account}/entitlements/${metered.key}?quantity=1`,
      paths: accounts().map((a) => entitlementPath(a, metered.key, 1)),
      expect: checkAnswer(true),
      itemsPerAnswer: 1,
    });
  return cases;
}

/**
 * The plan check's account and feature: an account with overrides (account index 5n, spread index 5n − 1)
 * when the population has one, and the metered feature (else the first).
 */
function entitlementSubjects(
  population: readonly string[],
  catalogue: GrowthCatalogue,
  overrideEvery: number,
): { accountId: string; featureKey: string } {
  const withOverrides = overrideEvery > 0 ? overrideEvery * 5 - 1 : 0;
  const accountId = (population[withOverrides] ?? population[0]) as string;
  const feature = catalogue.features.find((f) => f.kind === 'metered') ?? catalogue.features[0];
  return { accountId, featureKey: feature?.key ?? '' };
}

/** Follows next_cursor from a deep cursor: the pages must continue the balance_after chain without a gap. */
async function followPages(api: Api, accountId: string, cursor: string): Promise<string | undefined> {
  let previous: Transaction | undefined;
  let next: string | null = cursor;
  for (let page = 0; page < PAGES_FOLLOWED && next !== null; page++) {
    const query = new URLSearchParams({ limit: String(LIST_PAGE), starting_after: next });
    const body: { data: Transaction[]; has_more: boolean; next_cursor: string | null } = await api.call(
      'GET',
      `/v1/accounts/${encodeURIComponent(accountId)}/transactions?${query.toString()}`,
    );
    for (const tx of body.data) {
      if (previous !== undefined && previous.balance_after - previous.amount !== tx.balance_after) {
        return `paging from a deep cursor: ${previous.transaction_id} and ${tx.transaction_id} do not chain`;
      }
      previous = tx;
    }
    next = body.has_more ? (body.next_cursor ?? body.data[body.data.length - 1]?.transaction_id ?? null) : null;
  }
  return undefined;
}

async function checkLedger(
  ctx: ScenarioContext,
  store: Store,
  seeder: Seeder,
  population: readonly string[],
  sampleSize: number,
  deepCursor: string | undefined,
): Promise<CheckReport> {
  const api = ctx.tenant.api;
  const ledger = ctx.ledger;
  const books = ledger.accounts();
  const indexOf = new Map<string, number>();
  population.forEach((id, i) => {
    indexOf.set(id, i);
  });
  const sample = shuffled(books).slice(0, sampleSize);
  const findings: Finding[] = [];
  await mapConcurrent(sample, SETUP_CONCURRENCY, async (book) => {
    const balance = await api.balance(book.accountId);
    const index = indexOf.get(book.accountId);
    if (index === undefined) {
      findings.push({
        accountId: book.accountId,
        label: book.label,
        check: 'amount',
        message: 'loaded account is not a seeded account',
      });
      return;
    }
    // The bench's ledger expects the initial grant − acknowledged; the seeded history took its
    // part first, and the account's other grants added theirs.
    const seeded = seeder.seededCost(index) - (seeder.granted(index + 1) - INITIAL_GRANT);
    findings.push(
      ...compareBalance(book, {
        amount: balance.amount + seeded,
        pending: balance.pending,
        available: balance.available + seeded,
      }),
    );
  });

  const chainsChecked: string[] = [];
  const bigAccountId = seeder.bigAccountId as string;
  const grantsOf = async (accountId: string, label: string): Promise<number> => {
    const balance = await api.balance(accountId);
    const grants = await api.grants(accountId);
    if (grants === undefined) throw new Error('the growth bench needs a server with credit grants');
    const problem = compareGrants(balance, grants);
    if (problem !== undefined) findings.push({ accountId, label, check: 'grants', message: problem });
    return grants.length;
  };
  for (const book of sample.slice(0, CHAINS_THROUGH_API)) {
    const balance = await api.balance(book.accountId);
    const chain = new ChainCheck();
    for await (const tx of api.transactions(book.accountId)) chain.add(tx);
    const problem = chain.finish(balance.amount);
    if (problem !== undefined)
      findings.push({ accountId: book.accountId, label: book.label, check: 'transactions', message: problem });
    const live = await grantsOf(book.accountId, book.label);
    chainsChecked.push(`${book.accountId} (${chain.count} transactions, ${live} live grants, through the API)`);
  }
  const bigLive = await grantsOf(bigAccountId, 'big');
  chainsChecked.push(`the big account's ${bigLive} live grants hold its balance (through the API)`);
  if (deepCursor !== undefined) {
    const problem = await followPages(api, bigAccountId, deepCursor);
    if (problem !== undefined)
      findings.push({ accountId: bigAccountId, label: 'big', check: 'transactions', message: problem });
    chainsChecked.push(`${PAGES_FOLLOWED} pages from a deep cursor of the big account (through the API)`);
  }

  // The server's own audit over the whole store: every balance = the sum of its transactions,
  // every balance_after chain unbroken, holds, money movement.
  const started = performance.now();
  const auditProblems = (await store.read((tx) => tx.transactions.auditLedger())).map(
    (v) => `${v.accountId} ${v.denomination}: ${v.problem}`,
  );
  const bigBalance = await api.balance(bigAccountId);
  const expectedBig = seeder.granted(0) - seeder.bigSeededCost();
  if (bigBalance.amount !== expectedBig)
    auditProblems.push(`big account: balance ${bigBalance.amount}, its seeded history leaves ${expectedBig}`);
  chainsChecked.push(`every balance and transaction chain by the store's audit (auditLedger)`);
  const auditS = (performance.now() - started) / 1000;

  return {
    balancesChecked: sample.length,
    accountsTouched: books.length,
    uncertainRequests: ledger.uncertainRequests(),
    chainsChecked,
    auditS,
    findings,
    auditProblems,
  };
}

/** Seeding rates of this run, and what the default full run would take at them. */
export function seedEstimate(timings: readonly SeedTiming[], levels: readonly GrowthLevel[]): SeedEstimate {
  const rate = (what: string): number | undefined => {
    const matching = timings.filter((t) => t.what === what);
    const rows = matching.reduce((s, t) => s + t.rows, 0);
    const seconds = matching.reduce((s, t) => s + t.seconds, 0);
    return rows > 0 && seconds > 0 ? rows / seconds : undefined;
  };
  const accountsPerS = rate(SEED_ACCOUNTS);
  const eventsPerS = rate(SEED_EVENTS);
  const balanceUpdatesPerS = rate(SEED_BALANCES);
  const balanceReadsPerS = rate(SEED_READ);
  const settles = timings.filter((t) => t.what === SEED_SETTLE);
  const settleRows = settles.reduce((s, t) => s + t.rows, 0);
  const settleSPerMillionRows =
    settleRows > 0 ? (settles.reduce((s, t) => s + t.seconds, 0) / settleRows) * 1e6 : undefined;
  let forLevels: SeedEstimate['forLevels'];
  if (accountsPerS !== undefined && eventsPerS !== undefined) {
    let seconds = 0;
    let accounts = 0;
    let events = 0;
    for (const level of levels) {
      const addedAccounts = Math.max(0, level.accounts - accounts);
      const addedEvents = Math.max(0, level.events - events);
      accounts = Math.max(accounts, level.accounts);
      events = Math.max(events, level.events);
      seconds += addedAccounts / accountsPerS + addedEvents / eventsPerS;
      if (addedEvents > 0 && balanceUpdatesPerS !== undefined)
        seconds += Math.min(addedEvents, accounts) / balanceUpdatesPerS;
      if (addedEvents > 0 && balanceReadsPerS !== undefined) seconds += accounts / balanceReadsPerS;
      if (settleSPerMillionRows !== undefined) seconds += ((accounts + events) / 1e6) * settleSPerMillionRows;
    }
    forLevels = { accounts, events, seconds };
  }
  return { accountsPerS, eventsPerS, balanceReadsPerS, balanceUpdatesPerS, settleSPerMillionRows, forLevels };
}

async function runDatabase(db: DbKind, options: GrowthOptions, dataDir: string, logDir: string): Promise<DbGrowthRun> {
  const run: DbGrowthRun = {
    db,
    storage: '',
    levels: [],
    lists: [],
    plans: [],
    seedTimings: [],
    seedS: 0,
    seedEstimate: undefined,
    bigAccount: undefined,
    check: undefined,
    error: undefined,
  };
  const say = (message: string): void => log(`${db}: ${message}`);
  let storage: Storage | undefined;
  let server: ChildServer | undefined;
  let seeder: Seeder | undefined;
  let store: Store | undefined;
  try {
    storage = await prepareStorage(db, options, dataDir);
    run.storage = storage.description;
    const current = storage;
    say(await checkDisk(options, current));
    const start = async (): Promise<ChildServer> => {
      const child = await startChild({
        label: `growth-${db}`,
        cwd: REPO_ROOT,
        entry: options.serverEntry,
        // One key of secrets at rest for the whole run (PostgreSQL requires one; every restart needs the same).
        env: {
          DATABASE_URL: current.databaseUrl,
          LOG_LEVEL: SERVER_LOG_LEVEL,
          BILLING_SECRET_KEY: RUN_SECRET_KEY,
          ...options.serverEnv,
        },
        logDir,
      });
      const release = onCleanup(() => child.stop());
      return { ...child, stop: release };
    };
    const open = (): Promise<Store> => openStore(current.databaseUrl, { pgPoolSize: STORE_POOL_SIZE });
    say(`starting ${options.serverEntry} on ${current.description}`);
    server = await start();
    const tenant = await createTenant(server.baseUrl);
    seeder = new Seeder(
      tenant.companyId,
      options.seedChunkRows,
      options.bigAccountTransactions,
      options.listRequests,
      say,
      options.grants,
    );
    let catalogue: GrowthCatalogue | undefined;
    if (options.features > 0) {
      catalogue = growthCatalogue(options.features, options.plans);
      await createFeatures(tenant, catalogue.features, 'override');
      const planIds = await createPlans(tenant, catalogue.plans);
      seeder.entitlements = { planIds, catalogue, overrideEvery: options.overrideEvery };
      const overrides = options.overrideEvery > 0 ? `, every ${options.overrideEvery}th with an override` : '';
      say(
        `entitlements: ${catalogue.features.length} features and ${planIds.length} plans created through the API; ` +
          `accounts are seeded on the plans${overrides}`,
      );
    }
    const ledger = new GrowthLedger();
    const benchOptions: BenchOptions = {
      ...parseOptions([]),
      durationS: options.durationS,
      warmupS: options.warmupS,
      connections: options.connections,
    };
    let ctx: ScenarioContext | undefined;
    let acknowledgedEvents = 0;

    for (const level of growthLevels(options)) {
      const label = `${compact(level.accounts)} accounts / ${compact(level.events)} events`;
      await server?.stop();
      server = undefined;
      const started = performance.now();
      const accountsBefore = seeder.spreadAccounts;
      const eventsBefore = seeder.seededEvents;
      store = await open();
      await seeder.seedAccounts(store, level.accounts, label);
      await seeder.seedEvents(store, level.events, label);
      const seededStore = store;
      store = undefined;
      const rows = seeder.spreadAccounts - accountsBefore + seeder.seededEvents - eventsBefore;
      // What the database would have done by itself over the time the history took: SQLite
      // checkpoints its WAL when the last connection closes; PostgreSQL's autovacuum (maybe off here).
      await seeder.timed(label, SEED_SETTLE, rows, async () => {
        await seededStore.close();
        if (rows > 0) await current.postgres?.vacuumAnalyze();
      });
      const seedS = (performance.now() - started) / 1000;
      const bytes = await databaseBytes(current);
      const eventRows = seeder.seededEvents + acknowledgedEvents;
      run.seedS += seedS;
      say(`${label}: seeded in ${seedS.toFixed(1)} s; ${eventRows} events stored, ${(bytes / 1e6).toFixed(0)} MB`);

      server = await start();
      ctx = {
        db,
        servers: [server],
        // Each start listens on a new port: the tenant's API client follows the server.
        tenant: { ...tenant, api: new Api(server.baseUrl, tenant.authorization) },
        ledger,
        options: benchOptions,
        databaseProcesses: current.processes,
        auditAccounts: [],
        setup: { accounts: 0, seconds: 0 },
        log: say,
      };
      const measured = await measureLevel(ctx, seeder.population(), options, label);
      acknowledgedEvents += measured.acknowledgedEvents;
      run.levels.push({
        accounts: level.accounts,
        storedEvents: level.events,
        eventRows,
        databaseBytes: bytes,
        seedS,
        phases: measured.phases,
      });
    }
    if (ctx === undefined || seeder.bigAccountId === undefined) throw new Error('no level was measured');

    // The list endpoints, on the database as the last level left it; the store reads beside the server.
    store = await open();
    {
      const population = seeder.population();
      const big = seeder.bigAccountId;
      const bigTransactions = seeder.bigSeededTransactions() + 1;
      run.bigAccount = { accountId: big, transactions: bigTransactions };
      const cursors = await deepTransactionCursors(store, big, bigTransactions, options.listRequests);
      const deepAccounts = shuffled(
        population.slice(LIST_PAGE, Math.max(LIST_PAGE + 1, Math.floor(population.length / 2))),
      ).slice(0, options.listRequests);
      const events = seeder.sampledEvents();
      const txPath = (query: string): string => `/v1/accounts/${encodeURIComponent(big)}/transactions?${query}`;
      const cases: ListCase[] = [
        {
          name: 'transactions, first page',
          request: `GET /v1/accounts/{big}/transactions?limit=${LIST_PAGE}`,
          paths: [txPath(`limit=${LIST_PAGE}`)],
          expect: fullPage,
          itemsPerAnswer: LIST_PAGE,
        },
        {
          name: 'transactions, first page, denomination',
          request: `GET /v1/accounts/{big}/transactions?denomination=${DENOMINATION}&limit=${LIST_PAGE}`,
          paths: [txPath(`denomination=${DENOMINATION}&limit=${LIST_PAGE}`)],
          expect: fullPage,
          itemsPerAnswer: LIST_PAGE,
        },
      ];
      if (cursors.length > 0) {
        cases.push(
          {
            name: 'transactions, deep page',
            request: `GET /v1/accounts/{big}/transactions?limit=${LIST_PAGE}&starting_after={cursor in the older half}`,
            paths: cursors.map((c) => txPath(`limit=${LIST_PAGE}&starting_after=${encodeURIComponent(c)}`)),
            expect: fullPage,
            itemsPerAnswer: LIST_PAGE,
          },
          {
            name: 'transactions, deep page, denomination',
            request:
              `GET /v1/accounts/{big}/transactions?denomination=${DENOMINATION}&limit=${LIST_PAGE}` +
              '&starting_after={cursor}',
            paths: cursors.map((c) =>
              txPath(`denomination=${DENOMINATION}&limit=${LIST_PAGE}&starting_after=${encodeURIComponent(c)}`),
            ),
            expect: fullPage,
            itemsPerAnswer: LIST_PAGE,
          },
        );
      }
      cases.push({
        name: 'accounts, first page',
        request: `GET /v1/accounts?limit=${LIST_PAGE}`,
        paths: [`/v1/accounts?limit=${LIST_PAGE}`],
        expect: fullPage,
        itemsPerAnswer: LIST_PAGE,
      });
      if (deepAccounts.length > 0) {
        cases.push({
          name: 'accounts, deep page',
          request: `GET /v1/accounts?limit=${LIST_PAGE}&starting_after={account in the older half}`,
          paths: deepAccounts.map((a) => `/v1/accounts?limit=${LIST_PAGE}&starting_after=${encodeURIComponent(a)}`),
          expect: fullPage,
          itemsPerAnswer: LIST_PAGE,
        });
      }
      cases.push(
        {
          name: 'events, company, first page',
          request: `GET /v1/events?limit=${LIST_PAGE}`,
          paths: [`/v1/events?limit=${LIST_PAGE}`],
          expect: fullPage,
          itemsPerAnswer: LIST_PAGE,
        },
        {
          name: 'events, big account, first page',
          request: `GET /v1/accounts/{big}/events?limit=${LIST_PAGE}`,
          paths: [`/v1/accounts/${encodeURIComponent(big)}/events?limit=${LIST_PAGE}`],
          expect: fullPage,
          itemsPerAnswer: LIST_PAGE,
        },
      );
      // Usage over the seeded span: the big account has rollup rows in every hour of it, a
      // spread account a few; the company one row per hour (× shards on PostgreSQL).
      const period = usagePeriod(Date.now());
      const usagePath = (accountId: string): string =>
        `/v1/accounts/${encodeURIComponent(accountId)}/usage?${period.query}&window=day&limit=${USAGE_LIMIT}`;
      const spreadEvents = seeder.seededEvents - seeder.bigSeededTransactions();
      const daysPerAccount = Math.min(USAGE_SPAN_DAYS + 1, Math.max(1, Math.round(spreadEvents / population.length)));
      if (seeder.seededEvents > 0)
        cases.push(
          {
            name: `usage, big account, ${USAGE_SPAN_DAYS} days by day`,
            request: `GET /v1/accounts/{big}/usage?from&to (${USAGE_SPAN_DAYS} days)&window=day`,
            paths: [usagePath(big)],
            expect: onePageAnswer,
            itemsPerAnswer: USAGE_SPAN_DAYS + 1,
          },
          {
            name: `usage, spread accounts, ${USAGE_SPAN_DAYS} days by day`,
            request: `GET /v1/accounts/{random account}/usage?from&to (${USAGE_SPAN_DAYS} days)&window=day`,
            paths: shuffled(population).slice(0, USAGE_ACCOUNTS).map(usagePath),
            expect: onePageAnswer,
            itemsPerAnswer: daysPerAccount,
          },
          {
            name: `usage, company, ${USAGE_SPAN_DAYS} days by day and type`,
            request: `GET /v1/usage?from&to (${USAGE_SPAN_DAYS} days)&window=day&group_by=type`,
            paths: [`/v1/usage?${period.query}&window=day&group_by=type&limit=${USAGE_LIMIT}`],
            expect: onePageAnswer,
            itemsPerAnswer: USAGE_SPAN_DAYS + 1,
          },
          {
            name: `usage, company, ${USAGE_SPAN_DAYS} days by type`,
            request: `GET /v1/usage?from&to (${USAGE_SPAN_DAYS} days)&window=all&group_by=type`,
            paths: [`/v1/usage?${period.query}&window=all&group_by=type&limit=${USAGE_LIMIT}`],
            expect: onePageAnswer,
            itemsPerAnswer: 1,
          },
        );
      if (events.length > 0) {
        cases.push({
          name: 'event by id',
          request: 'GET /v1/events/{random stored event}',
          paths: events.map((e) => `/v1/events/${encodeURIComponent(e)}`),
          expect: oneEvent,
          itemsPerAnswer: 1,
        });
      }
      say('credit grants: finding the list by expiry through the store');
      const grants = await grantCases(store, tenant.companyId, population, options.grants, options.listRequests);
      run.grants = { ...grants.info, rows: seeder.seededGrants };
      cases.push(...grants.cases);
      if (catalogue !== undefined) {
        cases.push(...entitlementCases(population, catalogue, options.listRequests));
        run.entitlements = {
          features: catalogue.features.length,
          plans: catalogue.plans.length,
          accountsOnPlans: catalogue.plans.length > 0 ? population.length + 1 : 0,
          overrides: seeder.seededOverrides,
        };
      }
      for (const c of cases) run.lists.push(await measureList(ctx, c, options.listRequests));

      const subjects: PlanSubjects = {
        companyId: tenant.companyId,
        bigAccountId: big,
        deepTransactionId: cursors[Math.floor(cursors.length / 2)] ?? big,
        deepAccountId: deepAccounts[0] ?? (population[0] as string),
        someAccountId: population[Math.floor(population.length / 2)] as string,
        eventId: events[0],
        usageFromMs: period.fromMs,
        usageToMs: period.toMs,
        grants: grants.subjects,
        ...(catalogue === undefined
          ? {}
          : { entitlements: entitlementSubjects(population, catalogue, options.overrideEvery) }),
      };
      say('checking query plans');
      const database =
        current.postgres !== undefined
          ? { postgresUrl: current.databaseUrl }
          : { sqliteFile: current.sqliteFile as string };
      run.plans = await checkPlans(store, database, subjects);
      say('checking the ledger');
      run.check = await checkLedger(ctx, store, seeder, population, options.checkAccounts, cursors[0]);
    }
  } catch (error) {
    const cause = error instanceof Error && error.cause !== undefined ? ` (${String(error.cause)})` : '';
    run.error = error instanceof Error ? `${error.message}${cause}` : String(error);
    say(`FAILED: ${run.error}`);
    if (error instanceof Error && error.stack !== undefined) say(error.stack);
    if (server !== undefined) say(`server log: ${server.logFile}`);
  } finally {
    if (seeder !== undefined) {
      run.seedTimings = seeder.timings;
      run.seedEstimate = seedEstimate(
        seeder.timings,
        growthLevels({ accountLevels: [...DEFAULT_ACCOUNT_LEVELS], eventLevels: [...DEFAULT_EVENT_LEVELS] }),
      );
    }
    await store?.close().catch(() => undefined);
    await server?.stop();
    await storage?.release();
  }
  return run;
}

async function main(): Promise<number> {
  let options: GrowthOptions;
  try {
    options = parseGrowthOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${GROWTH_USAGE}`);
    return EXIT_USAGE;
  }
  if (options.help) {
    process.stdout.write(GROWTH_USAGE);
    return 0;
  }
  buildServer(options.serverEntry, log);
  const startedAt = new Date();
  const databases = await chooseDatabases(options, log);
  const workDir = mkdtempSync(join(tmpdir(), 'billing-growth-'));
  const dataDir = options.dataDir ?? workDir;
  const filesystem = filesystemOf(dataDir);
  const loadAverage = loadAtStart(log);
  const levels = growthLevels(options)
    .map((l) => `${compact(l.accounts)} accounts / ${compact(l.events)} events`)
    .join(' → ');
  log(
    `levels ${levels}; big account ${compact(options.bigAccountTransactions)} transactions; ` +
      `${options.durationS} s per phase; databases ${databases.join(', ')}; data on ${filesystem}; logs in ${workDir}`,
  );

  const runs: DbGrowthRun[] = [];
  for (const db of databases) runs.push(await runDatabase(db, options, dataDir, workDir));

  const failures: string[] = [];
  for (const run of runs) {
    if (run.error !== undefined) failures.push(`${run.db}: run failed: ${run.error}`);
    for (const f of run.check?.findings ?? [])
      failures.push(`${run.db}: ledger off on account ${f.accountId} (${f.check}): ${f.message}`);
    for (const p of run.check?.auditProblems ?? []) failures.push(`${run.db}: ledger off: ${p}`);
  }

  const out: string[] = ['', 'Cost per event as the database grows:', '', formatLevels(runs), ''];
  out.push('List endpoints (the big account; the company with every account):', '', formatLists(runs), '');
  const grantTargets = formatGrantTargets(runs);
  if (grantTargets.length > 0) out.push('Credit grants (issue 25 targets, p99):', ...grantTargets, '');
  const entitlements = formatEntitlements(runs);
  if (entitlements.length > 0) out.push('Features and entitlements (sequential, 1 connection):', ...entitlements, '');
  for (const run of runs) {
    if (run.bigAccount !== undefined) {
      out.push(
        `${run.db}: big account ${run.bigAccount.accountId}, ` +
          `${run.bigAccount.transactions.toLocaleString('en-US')} transactions`,
      );
    }
  }
  out.push(
    '',
    'Query plans (index used; a full scan, a sort of the whole set or rows read and discarded are problems):',
    ...formatPlans(runs),
  );
  out.push('', 'Seeding:', ...formatSeeding(runs));
  out.push('', 'Ledger:', ...formatChecks(runs));

  const report: GrowthReport = {
    meta: runMeta(startedAt, filesystem, loadAverage),
    options,
    runs,
    failures,
  };
  const file = writeGrowthJson(RESULTS_DIR, report);
  out.push('', `JSON: ${file}`);
  if (failures.length > 0) out.push('', 'FAILED:', ...failures.map((f) => `  ${f}`), `  (server logs in ${workDir})`);
  process.stdout.write(`${out.join('\n')}\n`);

  await cleanUpEverything();
  if (failures.length === 0 && !options.keep) rmSync(workDir, { recursive: true, force: true });
  return failures.length === 0 ? 0 : EXIT_LEDGER_OR_RUN_FAILED;
}

run(main);
