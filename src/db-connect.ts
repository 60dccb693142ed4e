/**
 * Opens the store at start (server and CLI) and says plainly when it cannot. A PostgreSQL that is
 * not reachable yet (a container still starting, a failover in progress) is retried for
 * BILLING_DB_CONNECT_TIMEOUT_MS with one line per attempt; anything else fails at once, in one line.
 */
import pg from 'pg';
import { redactUrl, type Config } from './config.js';
import { openStore } from './store/open.js';
import type { Store } from './store/types.js';

/** The database could not be opened; `message` is one line, fit for an operator. */
export class DbConnectError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DbConnectError';
  }
}

/** First wait between attempts; doubled after each, up to the longest. */
const RETRY_DELAY_MS_FIRST = 250;
const RETRY_DELAY_MS_MAX = 5_000;
/** How long one attempt may wait for the server's answer (a host that drops packets never answers). */
const ATTEMPT_MS_MIN = 1_000;
const ATTEMPT_MS_MAX = 10_000;

/** Socket errors and PostgreSQL's "starting up" / "too many connections": worth another attempt. */
const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  '57P03', // cannot_connect_now: the server is starting up or shutting down
  '53300', // too_many_connections
]);

/** The `code` of a Node or pg error (ECONNREFUSED, 57P03, SQLITE_NOTADB), if it has one. */
function codeOf(err: unknown): string | undefined {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

function isTransient(err: unknown): boolean {
  if (err instanceof AggregateError && err.errors.some(isTransient)) return true;
  const code = codeOf(err);
  if (code !== undefined && TRANSIENT_CODES.has(code)) return true;
  const message = err instanceof Error ? err.message : '';
  return /Connection terminated|timeout expired/i.test(message);
}

/** One line for any error: its first line (pg and SQLite errors are short), never a stack. */
export function oneLine(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return oneLine(err.errors[0]);
  const text = err instanceof Error ? err.message || err.name : String(err);
  const code = codeOf(err);
  const first = text.split('\n')[0]!.trim() || 'unknown error';
  return code !== undefined && !first.includes(code) ? `${first} (${code})` : first;
}

/** Where the store lives, for messages: the SQLite file, or the PostgreSQL URL without its password. */
export function describeDatabase(databaseUrl: string): string {
  return databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length) : redactUrl(databaseUrl);
}

export interface ConnectOptions {
  /** Where each retry is announced (default: stderr). */
  log?: (line: string) => void;
  /** Told when the database is being reached, then migrated (the starting server says so). */
  phase?: (phase: 'waiting for the database' | 'running migrations') => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Opens (and migrates) the store named by `config.databaseUrl`; throws `DbConnectError`. */
export async function connectStore(
  config: Pick<Config, 'databaseUrl' | 'pgPoolSize' | 'pgPreparedStatements' | 'dbConnectTimeoutMs'>,
  opts: ConnectOptions = {},
): Promise<Store> {
  const where = describeDatabase(config.databaseUrl);
  const sqlite = config.databaseUrl.startsWith('sqlite:');
  // Reaching PostgreSQL is retried; migrating is not bounded by the timeout (an index on a large
  // table may take minutes), so the store is opened only once the server has answered.
  if (!sqlite) {
    opts.phase?.('waiting for the database');
    await waitForPostgres(config.databaseUrl, config.dbConnectTimeoutMs, where, opts.log);
  }
  opts.phase?.('running migrations');
  try {
    return await openStore(config.databaseUrl, {
      pgPoolSize: config.pgPoolSize,
      pgPreparedStatements: config.pgPreparedStatements,
    });
  } catch (err) {
    throw new DbConnectError(`cannot open the ${sqlite ? 'SQLite' : 'PostgreSQL'} database ${where}: ${oneLine(err)}`);
  }
}

/** Connects and runs `SELECT 1` until it works, a non-transient error, or the deadline. */
async function waitForPostgres(
  connectionString: string,
  timeoutMs: number,
  where: string,
  log: (line: string) => void = (line) => console.error(line),
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let delayMs = RETRY_DELAY_MS_FIRST;
  for (let attempt = 1; ; attempt++) {
    const client = new pg.Client({
      connectionString,
      connectionTimeoutMillis: Math.max(ATTEMPT_MS_MIN, Math.min(ATTEMPT_MS_MAX, deadline - Date.now())),
    });
    // A connection that breaks after the attempt failed must not crash the process.
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (err) {
      const leftMs = deadline - Date.now();
      if (!isTransient(err)) throw new DbConnectError(`cannot use the PostgreSQL database ${where}: ${oneLine(err)}`);
      if (leftMs <= 0) {
        const tries = attempt > 1 ? ` after ${attempt} attempts in ${Math.round(timeoutMs / 1000)} s` : '';
        throw new DbConnectError(`cannot reach the PostgreSQL database ${where}${tries}: ${oneLine(err)}`);
      }
      const waitMs = Math.min(delayMs, leftMs);
      log(
        `database ${where} not reachable (${oneLine(err)}); attempt ${attempt}, ` +
          `next in ${(waitMs / 1000).toFixed(1)} s, giving up in ${Math.ceil(leftMs / 1000)} s`,
      );
      await sleep(waitMs);
      delayMs = Math.min(delayMs * 2, RETRY_DELAY_MS_MAX);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
