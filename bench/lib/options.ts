/**
 * The bench's defaults as named constants, and the command line parsed into typed options.
 */
import { parseArgs } from 'node:util';

export const SCENARIO_NAMES = [
  'events-1',
  'events-100',
  'events-1000',
  'holds',
  'accounts',
  'check-1',
  'read-1',
  'entitlements-1',
  'leases',
] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

export const DB_KINDS = ['sqlite', 'postgres'] as const;
export type DbKind = (typeof DB_KINDS)[number];
export type DbChoice = DbKind | 'both';

/**
 * How the events of the events-N and check scenarios are costed: `override` (a cost_override each, the
 * default), `unit` (a unit price of 1, quantity = cost) or `graduated` (a graduated price whose tiers all cost 1
 * per unit: the same costs, through the period counts of graduated prices).
 */
export const PRICINGS = ['override', 'unit', 'graduated'] as const;
export type Pricing = (typeof PRICINGS)[number];

/** Seconds of load per measured phase. */
export const DEFAULT_DURATION_S = 5;
/** `--quick`: the CI smoke run. */
export const QUICK_DURATION_S = 2;
/** Seconds of untimed load on each fresh server before the first measured phase (JIT, caches). */
export const DEFAULT_WARMUP_S = 1;

/** Concurrent connections per request size (events per request) when `--connections` is not given. */
export const DEFAULT_CONNECTIONS_BY_EVENTS: Readonly<Record<number, number>> = { 1: 100, 100: 20, 1000: 8 };
/** Connections for 1-event traffic (holds, settles, the account spread, hello-world). */
export const DEFAULT_SMALL_REQUEST_CONNECTIONS = 100;

/** Server processes per PostgreSQL run: one run with each count of `--processes`. */
export const DEFAULT_PROCESS_COUNTS: readonly number[] = [1];
/** More server processes than this on one machine is a typo, not a measurement. */
export const MAX_PROCESSES = 16;

/**
 * Entitlement checks started per second by `entitlements-1` (`--check-rate`), open loop, beside the closed loop
 * of 1-event ingest: the figure.
 */
export const DEFAULT_CHECK_RATE = 1_000;
/** `--check-rate` beyond this is a typo: the generator shares the machine's cores with the server. */
export const MAX_CHECK_RATE = 100_000;

/** `--gateway-rate` beyond this is a typo: decisions per second of one gateway process. */
export const MAX_GATEWAY_RATE = 10_000_000;

/** Accounts the `accounts` scenario spreads its requests over (against one hot account). */
export const DEFAULT_SPREAD_ACCOUNTS = 10_000;
/** Accounts each of the other scenarios spreads its requests over. */
export const POOL_ACCOUNTS = 100;
/** Concurrent requests used to create accounts and balances during setup, and to read them back. */
export const SETUP_CONCURRENCY = 32;

/** Every balance starts with this grant: large enough that no scenario can drive it negative. */
export const INITIAL_GRANT = 1_000_000_000_000;
/** Grants each balance holds (`--grants`): the initial one alone. */
export const DEFAULT_GRANTS = 1;
/** `--grants` beyond this is a typo: a balance keeps a handful of live grants. */
export const MAX_GRANTS = 10;
/**
 * Units of each grant beyond the initial one (`--grant-units`): as large as the initial grant, so
 * that none is used up in a run and every balance holds all its grants throughout.
 */
export const DEFAULT_GRANT_UNITS = INITIAL_GRANT;
export const DENOMINATION = 'tokens';
export const EVENT_TYPE = 'bench.call';

/** Seconds autocannon waits for one response before counting a timeout. */
export const REQUEST_TIMEOUT_S = 30;
/** Seconds the server gets to be ready (its /readyz, a baseline's /healthz) after it was started. */
export const STARTUP_TIMEOUT_S = 60;
/** Interval of the server's RSS sampling. */
export const RSS_SAMPLE_MS = 100;

export const ADMIN_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';
/** The server's entry point, relative to the repository root: the build `npm start` runs (built first). */
export const DEFAULT_SERVER_ENTRY = 'dist/main.js';

export interface BenchOptions {
  durationS: number;
  warmupS: number;
  /** Overrides every scenario's default when set. */
  connections: number | undefined;
  only: readonly ScenarioName[];
  db: DbChoice | undefined;
  /**
   * Server processes of each PostgreSQL run, one run per entry (ascending, no repeats); SQLite
   * always runs one process (a single writer).
   */
  processes: readonly number[];
  spreadAccounts: number;
  baselines: boolean;
  /** Each events-N request carries a fresh Idempotency-Key (requests built per send, not cycled). */
  idempotencyKeys: boolean;
  pricing: Pricing;
  /**
   * Grants each balance of the scenarios holds (bench/lib/grants.ts): the initial grant, and
   * `grants − 1` grants drawn before it (priorities 5, 10, …, expiring years ahead).
   */
  grants: number;
  /**
   * Every funded balance gets daily and monthly spend limits (`--limits`), far above what a run takes: the cost
   * of checking them, none refused.
   */
  limits: boolean;
  /**
   * Every funded balance gets three alerts (`--alerts`), none ever triggered in a run: `available` below a
   * threshold far under the balance, the day's and the month's spend reaching one far above what a run takes.
   */
  alerts: boolean;
  /** Units of each of those `grants − 1` grants. */
  grantUnits: number;
  /** Entitlement checks started per second in `entitlements-1`, whatever the answers (open loop). */
  checkRate: number;
  /** Decisions per second of each gateway of the `leases` scenario; undefined: as fast as it can. */
  gatewayRate: number | undefined;
  serverEntry: string;
  dataDir: string | undefined;
  serverEnv: Readonly<Record<string, string>>;
  postgresAdminUrl: string;
  /**
   * `--cpu-prof`: the engine's server processes run with Node's `--cpu-prof` (one directory per process under the
   * run's log directory, with the phases' windows in `phases.json`; read them with `npm run bench:profile`).
   */
  cpuProf: boolean;
  /**
   * `--rounds`: the whole run (baselines, then every database) this many times, each round's ratios against its own
   * baselines, and their medians over the rounds after the tables.
   */
  rounds: number;
  help: boolean;
}

export const USAGE = `Usage: npm run bench -- [flags]

  --duration <s>       seconds of load per measured phase (default ${DEFAULT_DURATION_S})
  --quick              ${QUICK_DURATION_S} s per phase, for CI smoke runs (a --duration given too wins)
  --warmup <s>         untimed load on each fresh server before measuring (default ${DEFAULT_WARMUP_S}; 0 = none)
  --connections <n>    connections for every scenario (default: 100 for 1-event traffic,
                       20 for 100-event, 8 for 1,000-event requests)
  --only <names>       comma-separated subset of: ${SCENARIO_NAMES.join(', ')}
  --db <which>         sqlite | postgres | both (default: both when PostgreSQL is reachable)
  --processes <list>   server processes against one PostgreSQL database: a count or a
                       comma-separated list of counts, one PostgreSQL run each (default 1;
                       e.g. 1,2); SQLite always runs one
  --accounts <n>       accounts of the spread phase of the accounts scenario (default ${DEFAULT_SPREAD_ACCOUNTS})
  --no-baselines       skip the Fastify hello-world and no-database validation baselines
  --idempotency-keys   every events-N request carries a fresh Idempotency-Key (built per send)
  --pricing <how>      override (default: a cost_override per event) | unit | graduated (a price, quantity = cost)
  --limits             every funded balance gets daily and monthly spend limits (never reached in a run)
  --alerts             every funded balance gets three alerts (available, the day's spend, the month's spend),
                       never triggered in a run
  --grants <n>         grants each balance holds (default ${DEFAULT_GRANTS}, at most ${MAX_GRANTS}): the initial
                       grant, and n − 1 grants drawn before it (priorities 5, 10, …; expiring years ahead)
  --grant-units <n>    units of each of those n − 1 grants (default ${DEFAULT_GRANT_UNITS}: none is used up
                       in a run; a few thousand: draws cross from one grant into the next)
  --check-rate <n>     entitlement checks started per second in entitlements-1, open loop, beside 1-event
                       ingest (default ${DEFAULT_CHECK_RATE})
  --gateway-rate <n>   decisions per second of each gateway of the leases scenario (default: as fast as it can)
  --server <path>      server entry point, relative to the repository root (default ${DEFAULT_SERVER_ENTRY})
  --data-dir <dir>     where the SQLite file goes (default: a fresh directory under the OS temp dir)
  --env <KEY=VALUE>    extra environment for the server process (repeatable)
  --pg-admin-url <url> PostgreSQL URL used to create and drop the bench database
                       (default ${ADMIN_POSTGRES_URL})
  --rounds <n>         the whole run n times (default 1), each round's ratios against its own baselines; after the
                       tables, each ratio's median and range over the rounds (what to quote on a drifting host)
  --cpu-prof           the engine's servers run with node --cpu-prof: a directory of .cpuprofile files per
                       server process (its threads included) and the phases' windows (phases.json) under the
                       run's log directory, kept and printed; read them with npm run bench:profile
  --help               this text
`;

/** `--db`: sqlite, postgres or both; undefined when not given. (Shared with growth-options.ts.) */
export function parseDbChoice(raw: string | undefined): DbChoice | undefined {
  if (raw === undefined) return undefined;
  if (raw !== 'sqlite' && raw !== 'postgres' && raw !== 'both')
    throw new Error(`--db takes sqlite, postgres or both; got "${raw}"`);
  return raw;
}

/** `--env KEY=VALUE`, repeatable: the server's extra environment. */
export function parseEnvPairs(pairs: readonly string[] | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`--env takes KEY=VALUE, got "${pair}"`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return env;
}

function parsePricing(raw: string | undefined): Pricing {
  if (raw === undefined) return 'override';
  if (!(PRICINGS as readonly string[]).includes(raw))
    throw new Error(`--pricing takes ${PRICINGS.join(', ')}; got "${raw}"`);
  return raw as Pricing;
}

export function positiveNumber(flag: string, raw: string, allowZero = false): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || (!allowZero && n === 0)) {
    throw new Error(`${flag} needs a ${allowZero ? 'non-negative' : 'positive'} number, got "${raw}"`);
  }
  return n;
}

export function positiveInteger(flag: string, raw: string): number {
  const n = positiveNumber(flag, raw);
  if (!Number.isInteger(n)) throw new Error(`${flag} needs a whole number, got "${raw}"`);
  return n;
}

/** `--grants`: 1 … MAX_GRANTS. */
export function parseGrantCount(raw: string, flag = '--grants'): number {
  const n = positiveInteger(flag, raw);
  if (n > MAX_GRANTS) throw new Error(`${flag}: at most ${MAX_GRANTS} grants per balance, got ${n}`);
  return n;
}

/** `--gateway-rate`: decisions per second, > 0 and at most MAX_GATEWAY_RATE. */
export function parseGatewayRate(raw: string): number {
  const n = positiveNumber('--gateway-rate', raw);
  if (n > MAX_GATEWAY_RATE)
    throw new Error(`--gateway-rate: at most ${MAX_GATEWAY_RATE} decisions per second, got ${n}`);
  return n;
}

/** `--check-rate`: requests per second, > 0 and at most MAX_CHECK_RATE (fractions allowed: 0.5 = one every 2 s). */
export function parseCheckRate(raw: string): number {
  const n = positiveNumber('--check-rate', raw);
  if (n > MAX_CHECK_RATE) throw new Error(`--check-rate: at most ${MAX_CHECK_RATE} requests per second, got ${n}`);
  return n;
}

function isScenarioName(name: string): name is ScenarioName {
  return (SCENARIO_NAMES as readonly string[]).includes(name);
}

/** `--processes`: `2` or `1,2`; sorted ascending, repeats dropped. */
export function parseProcessCounts(raw: string): number[] {
  const parts = raw.split(',').map((s) => s.trim());
  if (parts.length === 0 || parts.some((p) => p === '')) {
    throw new Error(`--processes takes a count or a comma-separated list of counts, got "${raw}"`);
  }
  const counts = parts.map((p) => positiveInteger('--processes', p));
  const tooMany = counts.find((n) => n > MAX_PROCESSES);
  if (tooMany !== undefined) throw new Error(`--processes: at most ${MAX_PROCESSES} server processes, got ${tooMany}`);
  return [...new Set(counts)].sort((a, b) => a - b);
}

export function parseOptions(argv: readonly string[]): BenchOptions {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      duration: { type: 'string' },
      quick: { type: 'boolean', default: false },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      only: { type: 'string' },
      db: { type: 'string' },
      processes: { type: 'string' },
      accounts: { type: 'string' },
      'no-baselines': { type: 'boolean', default: false },
      'idempotency-keys': { type: 'boolean', default: false },
      pricing: { type: 'string' },
      grants: { type: 'string' },
      'grant-units': { type: 'string' },
      limits: { type: 'boolean', default: false },
      alerts: { type: 'boolean', default: false },
      'check-rate': { type: 'string' },
      'gateway-rate': { type: 'string' },
      server: { type: 'string' },
      'data-dir': { type: 'string' },
      env: { type: 'string', multiple: true },
      'pg-admin-url': { type: 'string' },
      'cpu-prof': { type: 'boolean', default: false },
      rounds: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });

  const durationS =
    values.duration !== undefined
      ? positiveNumber('--duration', values.duration)
      : values.quick
        ? QUICK_DURATION_S
        : DEFAULT_DURATION_S;

  let only: ScenarioName[] = [...SCENARIO_NAMES];
  if (values.only !== undefined) {
    const names = values.only
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    const unknown = names.filter((n) => !isScenarioName(n));
    if (unknown.length > 0 || names.length === 0) {
      throw new Error(`--only takes names from: ${SCENARIO_NAMES.join(', ')}; got "${values.only}"`);
    }
    // Keep the canonical order whatever order the flag lists them in.
    only = SCENARIO_NAMES.filter((n) => names.includes(n));
  }

  const db = parseDbChoice(values.db);

  const serverEnv = parseEnvPairs(values.env);

  const grants = values.grants !== undefined ? parseGrantCount(values.grants) : DEFAULT_GRANTS;
  const grantUnits =
    values['grant-units'] !== undefined ? positiveInteger('--grant-units', values['grant-units']) : DEFAULT_GRANT_UNITS;
  if (INITIAL_GRANT + (grants - 1) * grantUnits > Number.MAX_SAFE_INTEGER)
    throw new Error(
      `--grants ${grants} × --grant-units ${grantUnits}: a balance would exceed the largest safe integer`,
    );

  return {
    durationS,
    warmupS: values.warmup !== undefined ? positiveNumber('--warmup', values.warmup, true) : DEFAULT_WARMUP_S,
    connections: values.connections !== undefined ? positiveInteger('--connections', values.connections) : undefined,
    only,
    db,
    processes: values.processes !== undefined ? parseProcessCounts(values.processes) : DEFAULT_PROCESS_COUNTS,
    spreadAccounts:
      values.accounts !== undefined ? positiveInteger('--accounts', values.accounts) : DEFAULT_SPREAD_ACCOUNTS,
    baselines: !values['no-baselines'],
    idempotencyKeys: values['idempotency-keys'],
    pricing: parsePricing(values.pricing),
    grants,
    grantUnits,
    limits: values.limits,
    alerts: values.alerts,
    checkRate: values['check-rate'] !== undefined ? parseCheckRate(values['check-rate']) : DEFAULT_CHECK_RATE,
    gatewayRate: values['gateway-rate'] !== undefined ? parseGatewayRate(values['gateway-rate']) : undefined,
    serverEntry: values.server ?? DEFAULT_SERVER_ENTRY,
    dataDir: values['data-dir'],
    serverEnv,
    postgresAdminUrl: values['pg-admin-url'] ?? ADMIN_POSTGRES_URL,
    cpuProf: values['cpu-prof'],
    rounds: values.rounds !== undefined ? positiveInteger('--rounds', values.rounds) : 1,
    help: values.help,
  };
}

/** Connections for traffic of `eventsPerRequest` events per request. */
export function connectionsFor(options: Pick<BenchOptions, 'connections'>, eventsPerRequest: number): number {
  return options.connections ?? DEFAULT_CONNECTIONS_BY_EVENTS[eventsPerRequest] ?? DEFAULT_SMALL_REQUEST_CONNECTIONS;
}
