/**
 * What every CLI command shares: its input and output (passed in, so a test can run a command
 * with its own environment), argument parsing that turns mistakes into usage errors (exit 2),
 * and opening the store the way the server does (src/config.ts, then src/db-connect.ts).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { loadConfig, type Config } from '../config.js';
import { connectStore } from '../db-connect.js';
import { systemClock } from '../lib/clock.js';
import type { Deps } from '../operations/deps.js';
import type { ProcessorFactory } from '../processors/types.js';
import type { Store } from '../store/types.js';
import { composeDeps } from '../compose.js';
import { secretBoxFor } from '../secret-keys.js';

export interface Io {
  /** The process environment (DATABASE_URL and the server's other settings, BILLING_USER_PASSWORD). */
  env: NodeJS.ProcessEnv;
  /** Results: what a script reads. */
  out(line: string): void;
  /** Messages for the person at the terminal: progress, warnings, errors. */
  err(line: string): void;
  /** All of standard input, or undefined when it is a terminal. */
  readStdin(): Promise<string | undefined>;
}

/** Exit statuses: documented in the usage text. */
export const EXIT_OK = 0;
export const EXIT_ERROR = 1;
export const EXIT_USAGE = 2;
export const EXIT_AUDIT_FAILED = 3;

/** A mistake in the command line: the message, then the usage, exit 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    /** The usage lines to show after the message (the command's own, or all). */
    readonly usage?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A refusal the operator can act on (no such company, a file already there): one line, exit 1. */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** `--help` is accepted by every command; `--json` where a command offers it (listed in its options). */
const COMMON_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options;

/** The option of commands whose results a script may want to parse. */
export const JSON_OPTION = { json: { type: 'boolean' } } as const satisfies Options;

export interface Parsed {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
  /** `--help` was given: the command prints its usage and does nothing else. */
  help: boolean;
  json: boolean;
}

/**
 * Parses one command's arguments strictly: an unknown flag, a missing value, a stray positional
 * is a `UsageError` carrying the command's usage.
 */
export function parseCommand(
  args: string[],
  options: Options,
  usage: string,
  positionals: { min: number; max: number } = { min: 0, max: 0 },
): Parsed {
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args, options: { ...options, ...COMMON_OPTIONS }, strict: true, allowPositionals: true });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new UsageError(message.split('\n')[0]!.replace(/\. To specify a positional argument.*$/, ''), usage);
  }
  const help = parsed.values.help === true;
  const json = parsed.values.json === true;
  if (help) return { ...parsed, help, json };
  const n = parsed.positionals.length;
  if (n < positionals.min) throw new UsageError('missing argument', usage);
  if (n > positionals.max) throw new UsageError(`unexpected argument "${parsed.positionals[positionals.max]}"`, usage);
  return { ...parsed, help, json };
}

/** A flag the command cannot do without. */
export function required(values: Record<string, unknown>, name: string, usage: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`, usage);
  return v;
}

/** The CLI's commands charge no card: the payment processors (and the Stripe SDK) are never loaded. */
const noPayments: ProcessorFactory = () => {
  throw new Error('the billing CLI makes no payments');
};

export interface Opened {
  config: Config;
  store: Store;
  deps: Deps;
}

/** Reads the configuration, opens (and migrates) the store, runs `fn`, and always closes the store. */
export async function withStore<T>(io: Io, fn: (opened: Opened) => Promise<T>): Promise<T> {
  const config = loadConfig(io.env);
  const store = await connectStore(config, { log: (line) => io.err(`billing: ${line}`) });
  try {
    // A command that never touches a secret runs without the key on PostgreSQL; one that does says it is needed.
    const secrets = secretBoxFor(config, { log: (line) => io.err(`billing: ${line}`), optional: true });
    return await fn({ config, store, deps: composeDeps(config, store, systemClock, noPayments, secrets) });
  } finally {
    await store.close();
  }
}

/** Rows as aligned columns (two spaces apart), header first. */
export function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  return [header, ...rows].map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}
