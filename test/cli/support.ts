/**
 * Runs the real `billing` CLI as a child process (built as `npm run build` builds it: support/built.ts) against a
 * fresh database of either dialect: a SQLite file in its own temporary directory, or a PostgreSQL database created
 * for the test and dropped after it.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { builtEntry } from '../support/built.js';
import { childEnv } from '../support/child-env.js';

export const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** TEST_DIALECTS=sqlite runs these tests without PostgreSQL. */
export const CLI_DIALECTS = (process.env.TEST_DIALECTS ?? 'sqlite,postgres')
  .split(',')
  .filter((d): d is 'sqlite' | 'postgres' => d === 'sqlite' || d === 'postgres');
export type Dialect = (typeof CLI_DIALECTS)[number];

/** The entries' sources; a child process runs what they compile to (`nodeArgs`). */
export const CLI_ENTRY = resolve('src/cli/main.ts');
export const SERVER_ENTRY = resolve('src/main.ts');

/** The arguments of `node` that run `entry` (a source under src/) as production does: its build (support/built.ts). */
export async function nodeArgs(entry: string, args: string[] = []): Promise<string[]> {
  return [await builtEntry(entry), ...args];
}

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `entry` (built: `nodeArgs`) with `…args` to the end. */
export async function runNode(
  entry: string,
  args: string[],
  env: Record<string, string>,
  stdin?: string,
  timeoutMs = 60_000,
): Promise<Ran> {
  const argv = await nodeArgs(entry, args);
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, argv, {
      env: childEnv(env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
    child.stdin.end(stdin ?? '');
  });
}

export function billing(args: string[], env: Record<string, string>, stdin?: string): Promise<Ran> {
  return runNode(CLI_ENTRY, args, env, stdin);
}

/** A stack trace line as Node prints it. */
export const STACK_LINE = /^\s+at\s/m;

export interface TestDatabase {
  dialect: Dialect;
  url: string;
  /** Raw SQL outside the store (to corrupt a balance on purpose); `?` placeholders on both dialects. */
  sql(text: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  drop(): Promise<void>;
}

export async function freshDatabase(dialect: Dialect): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'billing-cli-'));
    const file = join(dir, 'billing.sqlite');
    return {
      dialect,
      url: `sqlite:${file}`,
      async sql(text, params = []) {
        const db = new Database(file);
        try {
          const stmt = db.prepare(text);
          if (stmt.reader) return stmt.all(...params) as Record<string, unknown>[];
          stmt.run(...params);
          return [];
        } finally {
          db.close();
        }
      },
      async drop() {
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  // openStore from a URL cannot choose a schema: each test gets its own database instead.
  const name = `cli_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return {
    dialect,
    url: url.toString(),
    async sql(text, params = []) {
      const c = new pg.Client({ connectionString: url.toString() });
      await c.connect();
      try {
        let i = 0;
        return (
          await c.query(
            text.replace(/\?/g, () => `$${++i}`),
            params,
          )
        ).rows as Record<string, unknown>[];
      } finally {
        await c.end();
      }
    },
    async drop() {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
