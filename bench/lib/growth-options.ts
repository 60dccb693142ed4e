/**
 * Flags of `npm run bench:growth` (bench/growth.ts), parsed into typed options.
 */
import { parseArgs } from 'node:util';
import {
  DEFAULT_GROWTH_FEATURES,
  DEFAULT_GROWTH_PLANS,
  DEFAULT_OVERRIDE_EVERY,
  MAX_GROWTH_FEATURES,
  MAX_GROWTH_PLANS,
} from './entitlements.js';
import {
  ADMIN_POSTGRES_URL,
  DEFAULT_SERVER_ENTRY,
  MAX_GRANTS,
  parseDbChoice,
  parseEnvPairs,
  parseGrantCount,
  positiveNumber,
  type DbChoice,
} from './options.js';

/** Account levels of a full run: cost per event should not move between them. */
export const DEFAULT_ACCOUNT_LEVELS = [1_000, 1_000_000] as const;
/** Stored-event levels of a full run (at the largest account level). */
export const DEFAULT_EVENT_LEVELS = [0, 10_000_000] as const;
/** Transactions of the one account the list endpoints are measured on. */
export const DEFAULT_BIG_ACCOUNT_TRANSACTIONS = 1_000_000;
/** `--quick`: a smoke run small enough to seed in seconds. */
export const QUICK_ACCOUNT_LEVELS = [1_000, 20_000] as const;
export const QUICK_EVENT_LEVELS = [0, 200_000] as const;
export const QUICK_BIG_ACCOUNT_TRANSACTIONS = 20_000;

export const GROWTH_DEFAULT_DURATION_S = 5;
export const GROWTH_QUICK_DURATION_S = 2;
/** Each level starts a fresh server: this much untimed load first (JIT, caches). */
export const GROWTH_DEFAULT_WARMUP_S = 2;
/** Sequential requests per list-endpoint case. */
export const DEFAULT_LIST_REQUESTS = 200;
/** Balances read back through the API after the run (a random sample of the accounts the load touched). */
export const DEFAULT_CHECK_ACCOUNTS = 20_000;
/** Rows per seeding transaction. */
export const DEFAULT_SEED_CHUNK_ROWS = 10_000;
/** Credit grants per account: the initial one and two expiring over the next 60 days (lib/grants.ts). */
export const DEFAULT_GROWTH_GRANTS = 3;

/** Bounds of one run: the seeder keeps every account id and amount in memory. */
export const MAX_SEEDED_ACCOUNTS = 100_000_000;
export const MAX_SEEDED_EVENTS = 2_000_000_000;

export interface GrowthOptions {
  db: DbChoice | undefined;
  accountLevels: number[];
  eventLevels: number[];
  bigAccountTransactions: number;
  durationS: number;
  warmupS: number;
  connections: number | undefined;
  listRequests: number;
  checkAccounts: number;
  seedChunkRows: number;
  /** Credit grants each account's balance holds (the initial one and `grants − 1` expiring ones). */
  grants: number;
  /** Features of the company (0: none, and no plans); created through the API (lib/entitlements.ts). */
  features: number;
  /** Plans listing them in tiers; every seeded account is on one, round robin. */
  plans: number;
  /** Every n-th account gets an override, every 5n-th a second one (0: none). */
  overrideEvery: number;
  quick: boolean;
  keep: boolean;
  serverEntry: string;
  dataDir: string | undefined;
  serverEnv: Readonly<Record<string, string>>;
  postgresAdminUrl: string;
  help: boolean;
}

export const GROWTH_USAGE = `Usage: npm run bench:growth -- [flags]

Seeds a fresh store in bulk through its public interface to each level (accounts, then stored
events), starts the real server on it and measures cost per event; then measures the list
endpoints on one account with a long history and checks their query plans. See bench/README.md,
"Growth".

  --db <which>                    sqlite | postgres | both (default: both when PostgreSQL is reachable)
  --accounts <n,n,…>              account levels (default ${DEFAULT_ACCOUNT_LEVELS.join(',')})
  --events <n,n,…>                stored-event levels, at the largest account level
                                  (default ${DEFAULT_EVENT_LEVELS.join(',')})
  --big-account-transactions <n>  usage transactions of the account the list endpoints are measured on,
                                  seeded with the first event level that holds them
                                  (default ${DEFAULT_BIG_ACCOUNT_TRANSACTIONS})
  --duration <s>                  seconds per measured phase
                                  (default ${GROWTH_DEFAULT_DURATION_S}; --quick ${GROWTH_QUICK_DURATION_S})
  --warmup <s>                    untimed load after each server start (default ${GROWTH_DEFAULT_WARMUP_S})
  --connections <n>               connections for both request sizes
                                  (default 100 for 1-event, 20 for 100-event requests)
  --list-requests <n>             sequential requests per list-endpoint case (default ${DEFAULT_LIST_REQUESTS})
  --check-accounts <n>            balances read back after the run, sampled from the accounts the load
                                  touched (default ${DEFAULT_CHECK_ACCOUNTS})
  --seed-chunk <n>                rows per seeding transaction (default ${DEFAULT_SEED_CHUNK_ROWS})
  --grants <n>                    credit grants per account (default ${DEFAULT_GROWTH_GRANTS}, at most ${MAX_GRANTS}):
                                  the initial one, and n − 1 of 500–5,000 units expiring over the next 60 days
  --features <n>                  features of the company (default ${DEFAULT_GROWTH_FEATURES},
                                  at most ${MAX_GROWTH_FEATURES}; 0: none): of every ten, seven boolean,
                                  two config, one metered
  --plans <n>                     plans listing them in tiers (default ${DEFAULT_GROWTH_PLANS},
                                  at most ${MAX_GROWTH_PLANS}); every account is seeded on one, round robin
  --override-every <n>            every n-th account gets a feature override, every 5n-th a second one
                                  ending in 30 days (default ${DEFAULT_OVERRIDE_EVERY}; 0: none)
  --quick                         smoke run: accounts ${QUICK_ACCOUNT_LEVELS.join(',')},
                                  events ${QUICK_EVENT_LEVELS.join(',')}, big account ${QUICK_BIG_ACCOUNT_TRANSACTIONS},
                                  ${GROWTH_QUICK_DURATION_S} s per phase (explicit flags win)
  --keep                          keep the databases (SQLite file, PostgreSQL database) and print where
                                  they are
  --server <path>                 server entry point, relative to the repository root
                                  (default ${DEFAULT_SERVER_ENTRY})
  --data-dir <dir>                where the SQLite file goes (default: a fresh directory under the OS
                                  temp dir)
  --env <KEY=VALUE>               extra environment for the server process (repeatable)
  --pg-admin-url <url>            PostgreSQL URL used to create and drop the bench database
                                  (default ${ADMIN_POSTGRES_URL})
  --help                          this text
`;

function wholeNumber(flag: string, raw: string, allowZero: boolean): number {
  const n = Number(raw.replaceAll('_', ''));
  if (!Number.isSafeInteger(n) || n < 0 || (!allowZero && n === 0)) {
    throw new Error(`${flag} needs a ${allowZero ? 'non-negative' : 'positive'} whole number, got "${raw}"`);
  }
  return n;
}

/** "1000,1000000" → ascending distinct levels. */
export function parseLevels(flag: string, raw: string, allowZero: boolean): number[] {
  const parts = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (parts.length === 0) throw new Error(`${flag} needs at least one level`);
  return [...new Set(parts.map((p) => wholeNumber(flag, p, allowZero)))].sort((a, b) => a - b);
}

export function parseGrowthOptions(argv: readonly string[]): GrowthOptions {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      db: { type: 'string' },
      accounts: { type: 'string' },
      events: { type: 'string' },
      'big-account-transactions': { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      'list-requests': { type: 'string' },
      'check-accounts': { type: 'string' },
      'seed-chunk': { type: 'string' },
      grants: { type: 'string' },
      features: { type: 'string' },
      plans: { type: 'string' },
      'override-every': { type: 'string' },
      quick: { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      server: { type: 'string' },
      'data-dir': { type: 'string' },
      env: { type: 'string', multiple: true },
      'pg-admin-url': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  const quick = values.quick;

  const db = parseDbChoice(values.db);

  const accountLevels =
    values.accounts !== undefined
      ? parseLevels('--accounts', values.accounts, false)
      : [...(quick ? QUICK_ACCOUNT_LEVELS : DEFAULT_ACCOUNT_LEVELS)];
  const eventLevels =
    values.events !== undefined
      ? parseLevels('--events', values.events, true)
      : [...(quick ? QUICK_EVENT_LEVELS : DEFAULT_EVENT_LEVELS)];
  const bigAccountTransactions =
    values['big-account-transactions'] !== undefined
      ? wholeNumber('--big-account-transactions', values['big-account-transactions'], true)
      : quick
        ? QUICK_BIG_ACCOUNT_TRANSACTIONS
        : DEFAULT_BIG_ACCOUNT_TRANSACTIONS;

  const maxAccounts = accountLevels[accountLevels.length - 1] as number;
  const maxEvents = eventLevels[eventLevels.length - 1] as number;
  if (maxAccounts > MAX_SEEDED_ACCOUNTS) throw new Error(`--accounts: at most ${MAX_SEEDED_ACCOUNTS} accounts`);
  if (maxEvents > MAX_SEEDED_EVENTS) throw new Error(`--events: at most ${MAX_SEEDED_EVENTS} events`);
  if (!bigFitsSomewhere(eventLevels, bigAccountTransactions)) {
    throw new Error(
      `--big-account-transactions ${bigAccountTransactions}: no --events level adds that many events to the ` +
        `one before (levels ${eventLevels.join(', ')}); the big account's transactions are part of the stored events`,
    );
  }

  const serverEnv = parseEnvPairs(values.env);

  const features =
    values.features !== undefined ? wholeNumber('--features', values.features, true) : DEFAULT_GROWTH_FEATURES;
  if (features > MAX_GROWTH_FEATURES) throw new Error(`--features: at most ${MAX_GROWTH_FEATURES}, got ${features}`);
  const plans = values.plans !== undefined ? wholeNumber('--plans', values.plans, false) : DEFAULT_GROWTH_PLANS;
  if (plans > MAX_GROWTH_PLANS) throw new Error(`--plans: at most ${MAX_GROWTH_PLANS}, got ${plans}`);

  return {
    db,
    accountLevels,
    eventLevels,
    bigAccountTransactions,
    durationS:
      values.duration !== undefined
        ? positiveNumber('--duration', values.duration, false)
        : quick
          ? GROWTH_QUICK_DURATION_S
          : GROWTH_DEFAULT_DURATION_S,
    warmupS: values.warmup !== undefined ? positiveNumber('--warmup', values.warmup, true) : GROWTH_DEFAULT_WARMUP_S,
    connections: values.connections !== undefined ? wholeNumber('--connections', values.connections, false) : undefined,
    listRequests:
      values['list-requests'] !== undefined
        ? wholeNumber('--list-requests', values['list-requests'], false)
        : DEFAULT_LIST_REQUESTS,
    checkAccounts:
      values['check-accounts'] !== undefined
        ? wholeNumber('--check-accounts', values['check-accounts'], true)
        : DEFAULT_CHECK_ACCOUNTS,
    seedChunkRows:
      values['seed-chunk'] !== undefined
        ? wholeNumber('--seed-chunk', values['seed-chunk'], false)
        : DEFAULT_SEED_CHUNK_ROWS,
    grants: values.grants !== undefined ? parseGrantCount(values.grants) : DEFAULT_GROWTH_GRANTS,
    features,
    plans: features === 0 ? 0 : plans,
    overrideEvery:
      features === 0
        ? 0
        : values['override-every'] !== undefined
          ? wholeNumber('--override-every', values['override-every'], true)
          : DEFAULT_OVERRIDE_EVERY,
    quick,
    keep: values.keep,
    serverEntry: values.server ?? DEFAULT_SERVER_ENTRY,
    dataDir: values['data-dir'],
    serverEnv,
    postgresAdminUrl: values['pg-admin-url'] ?? ADMIN_POSTGRES_URL,
    help: values.help,
  };
}

/**
 * The big account's transactions go into the first event level that adds at least that many
 * events (`bigFitsSomewhere` checks the levels allow it).
 */
export function bigAt(bigTransactions: number, alreadySeeded: boolean, levelEvents: number): number {
  return !alreadySeeded && levelEvents >= bigTransactions ? bigTransactions : 0;
}

export function bigFitsSomewhere(eventLevels: readonly number[], bigTransactions: number): boolean {
  if (bigTransactions === 0) return true;
  return eventLevels.some((level, i) => level - (i === 0 ? 0 : (eventLevels[i - 1] as number)) >= bigTransactions);
}

/** One measured state of the database: the accounts and stored events it holds. */
export interface GrowthLevel {
  accounts: number;
  events: number;
}

/** Accounts grow first (at the smallest event level), then stored events at the largest account level. */
export function growthLevels(options: Pick<GrowthOptions, 'accountLevels' | 'eventLevels'>): GrowthLevel[] {
  const firstEvents = options.eventLevels[0] as number;
  const maxAccounts = options.accountLevels[options.accountLevels.length - 1] as number;
  return [
    ...options.accountLevels.map((accounts) => ({ accounts, events: firstEvents })),
    ...options.eventLevels.slice(1).map((events) => ({ accounts: maxAccounts, events })),
  ];
}
