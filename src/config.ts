/**
 * The environment, parsed once, typed and validated. Nothing else reads the server's settings from
 * process.env. One TypeBox schema describes every variable; every problem is reported at once, in
 * plain words (`ConfigError`), so that an operator fixes them all in one go.
 */
import { existsSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, resolve } from 'node:path';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { parseSecretKeys } from './lib/secret-box.js';

export type SignupMode = 'open' | 'closed';

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
  /** BILLING_SIGNUP=closed: `POST /v1/users` and `POST /v1/companies` refuse (403); the CLI creates both. */
  signup: SignupMode;
  /** How long a start keeps retrying an unreachable PostgreSQL before it gives up (0: one attempt). */
  dbConnectTimeoutMs: number;
  /** BILLING_EVENT_MAX_AGE_DAYS: how old an event's `timestamp` may be. */
  eventMaxAgeDays: number;
  /** BILLING_USAGE_RETENTION_DAYS: how long hourly usage rollups are kept (and may be asked for). */
  usageRetentionDays: number;
  /** BILLING_PUBLIC_URL, else http://HOST:PORT: the base of the links sent by email; https makes cookies Secure. */
  publicUrl: string;
  /** BILLING_SESSION_IDLE_MINUTES: a console session ends after this long without a request. */
  sessionIdleMinutes: number;
  /** BILLING_SIGNUP_LIMIT_PER_MINUTE: sign-ups per client address per minute (0: no limit). */
  signupLimitPerMinute: number;
  /** BILLING_TRUST_PROXY, as Fastify's `trustProxy`: whose X-Forwarded-For/-Proto to believe. */
  trustProxy: TrustProxy;
  /** SMTP_URL: where email goes; null: the development sender logs the links instead. */
  smtpUrl: string | null;
  smtpFrom: string;
  /** Whether BILLING_PUBLIC_URL was set: the `servers` entry of /openapi.json is then that URL, else `/`. */
  publicUrlSet: boolean;
  /** BILLING_IDEMPOTENCY_LEASE_MS: how long an Idempotency-Key claim outlives a crashed request. */
  idempotencyLeaseMs: number;
  /** BILLING_RATE_LIMIT_REQUESTS_PER_SECOND: per company and process; 0: off. */
  rateLimitRequestsPerSecond: number;
  /** BILLING_RATE_LIMIT_EVENTS_PER_SECOND: ingested events per company and process; 0: off. */
  rateLimitEventsPerSecond: number;
  /** BILLING_SECRET_KEY as given (checked here, read by secret-keys.ts); null when unset. */
  secretKey: string | null;
  /** NODE_ENV (`production` makes BILLING_SECRET_KEY required on PostgreSQL). */
  nodeEnv: string;
  /** BILLING_SHUTDOWN_TIMEOUT_MS: how long SIGTERM/SIGINT may drain before the process exits anyway. */
  shutdownTimeoutMs: number;
  /** BILLING_HTTP_CONNECTION_TIMEOUT_MS: a connection silent this long is closed (0: never). */
  httpConnectionTimeoutMs: number;
  /** BILLING_HTTP_HEADERS_TIMEOUT_MS: how long a client may take to send a request's headers. */
  httpHeadersTimeoutMs: number;
  /** BILLING_HTTP_REQUEST_TIMEOUT_MS: how long a client may take to send a whole request. */
  httpRequestTimeoutMs: number;
  /** BILLING_HTTP_KEEP_ALIVE_TIMEOUT_MS: how long an idle keep-alive connection stays open. */
  httpKeepAliveTimeoutMs: number;
  /** BILLING_HTTP_MAX_CONNECTIONS: open connections at most; idle ones are closed first near the cap. */
  httpMaxConnections: number;
  /** BILLING_METRICS_TOKEN: when set, /metrics wants `Authorization: Bearer <token>`. */
  metricsToken: string | null;
  /**
   * BILLING_CHARGE_ACTION_TIMEOUT_MINUTES: how long a Stripe payment may wait for the customer to authenticate
   * (3-D Secure) before it is cancelled and its charge recorded failed.
   */
  chargeActionTimeoutMinutes: number;
}

/** false: no proxy; true: every proxy; a number: that many hops; a string: addresses and CIDRs, comma-separated. */
export type TrustProxy = boolean | number | string;

export const OUTBOX_RETENTION_DAYS_DEFAULT = 7;
/** The contract's default: events may carry a timestamp up to 35 days old. */
export const EVENT_MAX_AGE_DAYS_DEFAULT = 35;
/** Thirteen months and a bit: a year compared with the year before. */
export const USAGE_RETENTION_DAYS_DEFAULT = 400;
export const WEBHOOK_LOG_RETENTION_DAYS_DEFAULT = 30;
/** Ten years: a longer retention is no retention. */
const RETENTION_DAYS_MAX = 3650;
export const DB_CONNECT_TIMEOUT_MS_DEFAULT = 30_000;
/** An Idempotency-Key claim lapses this long after its request last renewed it (every third of it). */
export const IDEMPOTENCY_LEASE_MS_DEFAULT = 30_000;
/**
 * Per-company limits, generous: above what one company can get from one process on the reference
 * machine (docs/PERFORMANCE.md), so a single tenant never meets them; an operator serving many
 * companies from one server sets them to a share of its capacity.
 */
export const RATE_LIMIT_REQUESTS_PER_SECOND_DEFAULT = 25_000;
export const RATE_LIMIT_EVENTS_PER_SECOND_DEFAULT = 250_000;
/** Ten minutes: an orchestrator restarts a process that waits longer. */
const DB_CONNECT_TIMEOUT_MS_MAX = 600_000;
export const SHUTDOWN_TIMEOUT_MS_DEFAULT = 10_000;
/** Node's own default for a request's headers is 60 s; a client that has not sent them in 20 s is not coming. */
export const HTTP_HEADERS_TIMEOUT_MS_DEFAULT = 20_000;
export const HTTP_REQUEST_TIMEOUT_MS_DEFAULT = 60_000;
/** Fastify's default: longer than the 60 s idle timeout of common load balancers, so that they close first. */
export const HTTP_KEEP_ALIVE_TIMEOUT_MS_DEFAULT = 72_000;
/** A socket silent this long is closed (a keep-alive connection between requests: the keep-alive timeout). */
export const HTTP_CONNECTION_TIMEOUT_MS_DEFAULT = 60_000;
/** Well below common file-descriptor limits (ulimit -n), well above what a fleet of clients keeps open. */
export const HTTP_MAX_CONNECTIONS_DEFAULT = 10_000;
const HOUR_MS = 3_600_000;

export const SESSION_IDLE_MINUTES_DEFAULT = 720;
/** A day for the customer to complete a payment their bank asked them to authenticate; at most 30 days. */
export const CHARGE_ACTION_TIMEOUT_MINUTES_DEFAULT = 1440;
export const SIGNUP_LIMIT_PER_MINUTE_DEFAULT = 20;
export const SMTP_FROM_DEFAULT = 'Billing <no-reply@localhost>';

export const DEFAULT_SQLITE_URL = 'sqlite:./data/billing.sqlite';
/** The default SQLite file's directory is created on first start; any other must exist. */
const DEFAULT_SQLITE_DIR = './data';

/** pino's levels: the logger refuses any other. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Every problem with the environment, one plain sentence each. */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

// --- the schema: each variable once, with what it must be in words (`description`, used in messages)

const integer = (minimum: number, maximum: number, fallback: number) =>
  Type.Integer({ minimum, maximum, default: fallback, description: `an integer from ${minimum} to ${maximum}` });
const flag = (fallback: boolean) => Type.Boolean({ default: fallback, description: '1 or 0 (or true or false)' });

const ENV_SCHEMA = Type.Object({
  HOST: Type.String({ minLength: 1, default: '127.0.0.1', description: 'a host name or address' }),
  PORT: integer(0, 65535, 8080),
  DATABASE_URL: Type.String({
    pattern: '^(sqlite:.+|postgres://.+|postgresql://.+)$',
    default: DEFAULT_SQLITE_URL,
    description: 'sqlite:<file>, sqlite::memory:, postgres://… or postgresql://…',
  }),
  BILLING_TEST_CLOCK: flag(false),
  BILLING_WEBHOOK_ALLOW_PRIVATE: flag(false),
  BILLING_API_KEY_CACHE_MS: integer(0, 300_000, 5_000),
  BILLING_WORKER_INTERVAL_MS: integer(10, 3_600_000, 1_000),
  BILLING_WORKERS: flag(true),
  LOG_LEVEL: Type.Union(
    LOG_LEVELS.map((l) => Type.Literal(l)),
    { default: 'warn', description: `one of ${LOG_LEVELS.join(', ')}` },
  ),
  BILLING_PG_POOL_SIZE: integer(1, 200, 8),
  BILLING_PG_PREPARED_STATEMENTS: flag(true),
  BILLING_OUTBOX_RETENTION_DAYS: integer(1, RETENTION_DAYS_MAX, OUTBOX_RETENTION_DAYS_DEFAULT),
  BILLING_EVENT_MAX_AGE_DAYS: integer(1, RETENTION_DAYS_MAX, EVENT_MAX_AGE_DAYS_DEFAULT),
  BILLING_USAGE_RETENTION_DAYS: integer(1, RETENTION_DAYS_MAX, USAGE_RETENTION_DAYS_DEFAULT),
  BILLING_WEBHOOK_LOG_RETENTION_DAYS: integer(1, RETENTION_DAYS_MAX, WEBHOOK_LOG_RETENTION_DAYS_DEFAULT),
  BILLING_SIGNUP: Type.Union([Type.Literal('open'), Type.Literal('closed')], {
    default: 'open',
    description: 'open or closed',
  }),
  BILLING_DB_CONNECT_TIMEOUT_MS: integer(0, DB_CONNECT_TIMEOUT_MS_MAX, DB_CONNECT_TIMEOUT_MS_DEFAULT),
  BILLING_PUBLIC_URL: Type.String({
    pattern: '^(https?://[^\\s/?#]+(/[^\\s?#]*)?)?$',
    default: '',
    description: 'an http:// or https:// URL without query or fragment',
  }),
  BILLING_SESSION_IDLE_MINUTES: integer(1, 43_200, SESSION_IDLE_MINUTES_DEFAULT),
  BILLING_SIGNUP_LIMIT_PER_MINUTE: integer(0, 1_000_000, SIGNUP_LIMIT_PER_MINUTE_DEFAULT),
  BILLING_TRUST_PROXY: Type.String({
    default: 'false',
    description: 'true, false, a hop count, or a comma-separated list of IP addresses or CIDR ranges',
  }),
  SMTP_URL: Type.String({ pattern: '^(smtps?://.+)?$', default: '', description: 'smtp://… or smtps://…' }),
  SMTP_FROM: Type.String({ minLength: 1, default: SMTP_FROM_DEFAULT, description: 'an email address' }),
  BILLING_IDEMPOTENCY_LEASE_MS: integer(1_000, 3_600_000, IDEMPOTENCY_LEASE_MS_DEFAULT),
  BILLING_RATE_LIMIT_REQUESTS_PER_SECOND: integer(0, 10_000_000, RATE_LIMIT_REQUESTS_PER_SECOND_DEFAULT),
  BILLING_RATE_LIMIT_EVENTS_PER_SECOND: integer(0, 100_000_000, RATE_LIMIT_EVENTS_PER_SECOND_DEFAULT),
  BILLING_SECRET_KEY: Type.String({ default: '', description: 'id:base64 keys of 32 bytes, separated by commas' }),
  NODE_ENV: Type.String({ default: '', description: 'a word such as production' }),
  BILLING_SHUTDOWN_TIMEOUT_MS: integer(0, DB_CONNECT_TIMEOUT_MS_MAX, SHUTDOWN_TIMEOUT_MS_DEFAULT),
  BILLING_HTTP_CONNECTION_TIMEOUT_MS: integer(0, HOUR_MS, HTTP_CONNECTION_TIMEOUT_MS_DEFAULT),
  BILLING_HTTP_HEADERS_TIMEOUT_MS: integer(100, HOUR_MS, HTTP_HEADERS_TIMEOUT_MS_DEFAULT),
  BILLING_HTTP_REQUEST_TIMEOUT_MS: integer(100, HOUR_MS, HTTP_REQUEST_TIMEOUT_MS_DEFAULT),
  BILLING_HTTP_KEEP_ALIVE_TIMEOUT_MS: integer(100, HOUR_MS, HTTP_KEEP_ALIVE_TIMEOUT_MS_DEFAULT),
  BILLING_HTTP_MAX_CONNECTIONS: integer(1, 1_000_000, HTTP_MAX_CONNECTIONS_DEFAULT),
  BILLING_CHARGE_ACTION_TIMEOUT_MINUTES: integer(5, 43_200, CHARGE_ACTION_TIMEOUT_MINUTES_DEFAULT),
  BILLING_METRICS_TOKEN: Type.String({
    pattern: '^$|^[\\x21-\\x7e]{16,256}$',
    default: '',
    description: 'empty, or 16 to 256 printable characters without spaces',
  }),
});
type Env = Static<typeof ENV_SCHEMA>;
type EnvName = keyof Env;

/**
 * Text to the schema's types, exactly: only digits make an integer ("1.5", "1e3", " 8" and "-1"
 * stay text and fail the schema), only 1/0/true/false make a flag. Unset or empty: the default.
 */
function typed(schema: TSchema, raw: string): unknown {
  if (schema.type === 'integer') return /^\d{1,15}$/.test(raw) ? Number(raw) : raw;
  if (schema.type === 'boolean') {
    if (raw === '1' || raw === 'true') return true;
    if (raw === '0' || raw === 'false') return false;
  }
  return raw;
}

/** A PostgreSQL URL without its password, for messages. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*):[^@/]*@/i, '$1:***@');
}

function shown(name: string, raw: string): string {
  if (name === 'BILLING_SECRET_KEY') return '(not shown)';
  if (name === 'BILLING_METRICS_TOKEN') return `a value of ${raw.length} characters`;
  return JSON.stringify(name === 'DATABASE_URL' || name === 'SMTP_URL' ? redactUrl(raw) : raw);
}

/** proxy-addr's names for address ranges, accepted in BILLING_TRUST_PROXY's list. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** BILLING_TRUST_PROXY to Fastify's `trustProxy`; null when it is none of the accepted forms. */
export function parseTrustProxy(raw: string): TrustProxy | null {
  const v = raw.trim();
  if (v === 'true') return true;
  if (v === 'false' || v === '') return false;
  if (/^\d{1,3}$/.test(v)) return Number(v);
  const entries = v.split(',').map((e) => e.trim());
  const valid = entries.every((e) => {
    if (PROXY_RANGE_NAMES.has(e)) return true;
    const [address = '', bits, ...rest] = e.split('/');
    const family = isIP(address);
    if (family === 0 || rest.length > 0) return false;
    if (bits === undefined) return true;
    if (/^\d{1,3}$/.test(bits)) return Number(bits) <= (family === 4 ? 32 : 128);
    return family === 4 && isIP(bits) === 4; // a netmask
  });
  return valid ? entries.join(',') : null;
}

/** Checks of DATABASE_URL that a pattern cannot make: a URL that parses, an existing directory. */
function databaseUrlProblems(url: string): string[] {
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length);
    if (file === ':memory:') return [];
    const dir = dirname(file);
    if (resolve(dir) === resolve(DEFAULT_SQLITE_DIR)) return [];
    if (!existsSync(dir))
      return [`DATABASE_URL names a SQLite file in a directory that does not exist: ${dir} (create it first)`];
    if (!statSync(dir).isDirectory())
      return [`DATABASE_URL names a SQLite file under ${dir}, which is not a directory`];
    if (existsSync(file) && statSync(file).isDirectory())
      return [`DATABASE_URL must name a SQLite file, but ${file} is a directory`];
    return [];
  }
  try {
    new URL(url);
  } catch {
    return [`DATABASE_URL is not a valid URL: ${JSON.stringify(redactUrl(url))}`];
  }
  return [];
}

/**
 * Reads the environment: every variable checked against the schema, every problem collected;
 * throws one `ConfigError` listing them all.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const props = ENV_SCHEMA.properties as Record<EnvName, TSchema>;
  const input: Record<string, unknown> = {};
  for (const name of Object.keys(props) as EnvName[]) {
    const raw = env[name];
    input[name] = raw === undefined || raw === '' ? props[name].default : typed(props[name], raw);
  }
  const problems: string[] = [];
  const reported = new Set<string>();
  for (const error of Value.Errors(ENV_SCHEMA, input)) {
    const name = error.path.slice(1) as EnvName;
    if (reported.has(name)) continue;
    reported.add(name);
    problems.push(`${name} must be ${props[name]?.description ?? 'valid'}, got ${shown(name, String(env[name]))}`);
  }
  if (!reported.has('DATABASE_URL')) problems.push(...databaseUrlProblems(String(input.DATABASE_URL)));
  if (input.BILLING_SECRET_KEY !== '') {
    try {
      parseSecretKeys(String(input.BILLING_SECRET_KEY));
    } catch (err) {
      problems.push(`BILLING_SECRET_KEY ${(err as Error).message}`);
    }
  }
  const headersMs = input.BILLING_HTTP_HEADERS_TIMEOUT_MS;
  const requestMs = input.BILLING_HTTP_REQUEST_TIMEOUT_MS;
  if (typeof headersMs === 'number' && typeof requestMs === 'number' && headersMs > requestMs)
    problems.push(
      `BILLING_HTTP_HEADERS_TIMEOUT_MS (${headersMs}) must not exceed BILLING_HTTP_REQUEST_TIMEOUT_MS (${requestMs})`,
    );
  const trustProxy = parseTrustProxy(String(input.BILLING_TRUST_PROXY));
  if (trustProxy === null && !reported.has('BILLING_TRUST_PROXY'))
    problems.push(
      `BILLING_TRUST_PROXY must be ${props.BILLING_TRUST_PROXY.description}, ` +
        `got ${shown('', String(env.BILLING_TRUST_PROXY))}`,
    );
  if (problems.length > 0) throw new ConfigError(problems);
  const e = input as Env;
  return {
    host: e.HOST,
    port: e.PORT,
    databaseUrl: e.DATABASE_URL,
    testClock: e.BILLING_TEST_CLOCK,
    webhookAllowPrivate: e.BILLING_WEBHOOK_ALLOW_PRIVATE,
    apiKeyCacheMs: e.BILLING_API_KEY_CACHE_MS,
    workerIntervalMs: e.BILLING_WORKER_INTERVAL_MS,
    workers: e.BILLING_WORKERS,
    logLevel: e.LOG_LEVEL,
    pgPoolSize: e.BILLING_PG_POOL_SIZE,
    pgPreparedStatements: e.BILLING_PG_PREPARED_STATEMENTS,
    outboxRetentionDays: e.BILLING_OUTBOX_RETENTION_DAYS,
    eventMaxAgeDays: e.BILLING_EVENT_MAX_AGE_DAYS,
    usageRetentionDays: e.BILLING_USAGE_RETENTION_DAYS,
    webhookLogRetentionDays: e.BILLING_WEBHOOK_LOG_RETENTION_DAYS,
    signup: e.BILLING_SIGNUP,
    dbConnectTimeoutMs: e.BILLING_DB_CONNECT_TIMEOUT_MS,
    publicUrlSet: e.BILLING_PUBLIC_URL !== '',
    idempotencyLeaseMs: e.BILLING_IDEMPOTENCY_LEASE_MS,
    rateLimitRequestsPerSecond: e.BILLING_RATE_LIMIT_REQUESTS_PER_SECOND,
    rateLimitEventsPerSecond: e.BILLING_RATE_LIMIT_EVENTS_PER_SECOND,
    secretKey: e.BILLING_SECRET_KEY === '' ? null : e.BILLING_SECRET_KEY,
    nodeEnv: e.NODE_ENV,
    shutdownTimeoutMs: e.BILLING_SHUTDOWN_TIMEOUT_MS,
    httpConnectionTimeoutMs: e.BILLING_HTTP_CONNECTION_TIMEOUT_MS,
    httpHeadersTimeoutMs: e.BILLING_HTTP_HEADERS_TIMEOUT_MS,
    httpRequestTimeoutMs: e.BILLING_HTTP_REQUEST_TIMEOUT_MS,
    httpKeepAliveTimeoutMs: e.BILLING_HTTP_KEEP_ALIVE_TIMEOUT_MS,
    httpMaxConnections: e.BILLING_HTTP_MAX_CONNECTIONS,
    metricsToken: e.BILLING_METRICS_TOKEN === '' ? null : e.BILLING_METRICS_TOKEN,
    chargeActionTimeoutMinutes: e.BILLING_CHARGE_ACTION_TIMEOUT_MINUTES,
    publicUrl: (e.BILLING_PUBLIC_URL || `http://${e.HOST.includes(':') ? `[${e.HOST}]` : e.HOST}:${e.PORT}`).replace(
      /\/+$/,
      '',
    ),
    sessionIdleMinutes: e.BILLING_SESSION_IDLE_MINUTES,
    signupLimitPerMinute: e.BILLING_SIGNUP_LIMIT_PER_MINUTE,
    trustProxy: trustProxy ?? false,
    smtpUrl: e.SMTP_URL === '' ? null : e.SMTP_URL,
    smtpFrom: e.SMTP_FROM,
  };
}

/** The variables `loadConfig` reads, for documentation and tests. */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(ENV_SCHEMA.properties);
