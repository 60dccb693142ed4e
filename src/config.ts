/**
 * The environment, parsed once, typed and validated. Nothing else reads process.env.
 */
export interface Config {
  host: string;
  port: number;
  databaseUrl: string;
  testClock: boolean;
  webhookAllowPrivate: boolean;
  /** How long a cached API key stays trusted before it is checked again (revocation delay on other processes). */
  apiKeyCacheMs: number;
  /** How often the hold-expiry sweeper and other workers look for due work. */
  workerIntervalMs: number;
  /** Run the background workers in this process. */
  workers: boolean;
  logLevel: string;
  pgPoolSize: number;
  /** BILLING_PG_PREPARED_STATEMENTS=0: unnamed statements only (for poolers that do not track named ones). */
  pgPreparedStatements: boolean;
  /** Days a finished outbox row (a notification fanned out, a charge made) is kept before it is deleted. */
  outboxRetentionDays: number;
  /** Days a finished webhook delivery and its attempts stay in the delivery log. */
  webhookLogRetentionDays: number;
}

export const OUTBOX_RETENTION_DAYS_DEFAULT = 7;
export const WEBHOOK_LOG_RETENTION_DAYS_DEFAULT = 30;
/** Ten years: a longer retention is no retention. */
const RETENTION_DAYS_MAX = 3650;

export const DEFAULT_SQLITE_URL = 'sqlite:./data/billing.sqlite';

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new Error(`${name} must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new Error(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function flagFrom(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === '1' || raw === 'true') return true;
  if (raw === '0' || raw === 'false') return false;
  throw new Error(`${name} must be 1 or 0, got "${raw}"`);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const databaseUrl = env.DATABASE_URL && env.DATABASE_URL !== '' ? env.DATABASE_URL : DEFAULT_SQLITE_URL;
  if (!/^(sqlite:|postgres:\/\/|postgresql:\/\/)/.test(databaseUrl)) {
    throw new Error('DATABASE_URL must start with sqlite:, postgres:// or postgresql://');
  }
  return {
    host: env.HOST && env.HOST !== '' ? env.HOST : '127.0.0.1',
    port: intFrom(env, 'PORT', 8080, 0, 65535),
    databaseUrl,
    testClock: flagFrom(env, 'BILLING_TEST_CLOCK', false),
    webhookAllowPrivate: flagFrom(env, 'BILLING_WEBHOOK_ALLOW_PRIVATE', false),
    apiKeyCacheMs: intFrom(env, 'BILLING_API_KEY_CACHE_MS', 5_000, 0, 300_000),
    workerIntervalMs: intFrom(env, 'BILLING_WORKER_INTERVAL_MS', 1_000, 10, 3_600_000),
    workers: flagFrom(env, 'BILLING_WORKERS', true),
    logLevel: env.LOG_LEVEL && env.LOG_LEVEL !== '' ? env.LOG_LEVEL : 'warn',
    pgPoolSize: intFrom(env, 'BILLING_PG_POOL_SIZE', 8, 1, 200),
    pgPreparedStatements: flagFrom(env, 'BILLING_PG_PREPARED_STATEMENTS', true),
    outboxRetentionDays: intFrom(
      env,
      'BILLING_OUTBOX_RETENTION_DAYS',
      OUTBOX_RETENTION_DAYS_DEFAULT,
      1,
      RETENTION_DAYS_MAX,
    ),
    webhookLogRetentionDays: intFrom(
      env,
      'BILLING_WEBHOOK_LOG_RETENTION_DAYS',
      WEBHOOK_LOG_RETENTION_DAYS_DEFAULT,
      1,
      RETENTION_DAYS_MAX,
    ),
  };
}
