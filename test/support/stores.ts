/**
 * Test stores for the contract suite: one fresh, isolated store per call on each dialect
 * (SQLite: a file in its own temp dir, so WAL and the separate read connection are in play;
 * PostgreSQL: its own schema), plus seeding helpers that go through the Tx methods only.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe } from 'node:test';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import { PostgresStore } from '../../src/store/postgres.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { NewBalanceRow, Store } from '../../src/store/types.js';
import { lotOf, newGrantRow } from '../../src/ledger/grants.js';
import { newId } from '../../src/lib/ids.js';
import { SecretBox, parseSecretKeys } from '../../src/lib/secret-box.js';
import { portOf } from '../../src/ledger/port.js';

const ALL_DIALECTS = ['sqlite', 'postgres'] as const;
export type Dialect = (typeof ALL_DIALECTS)[number];

/**
 * The databases every dialect-parameterised test runs on (harness.ts re-exports it as HTTP_DIALECTS):
 * both, or those TEST_DIALECTS names (`TEST_DIALECTS=sqlite`: `npm run test:sqlite`, no PostgreSQL).
 */
export const DIALECTS: readonly Dialect[] = dialectsOf(process.env.TEST_DIALECTS);

function dialectsOf(list: string | undefined): readonly Dialect[] {
  if (list === undefined || list.trim() === '') return ALL_DIALECTS;
  const named = list.split(',').map((d) => d.trim());
  const unknown = named.filter((d) => !(ALL_DIALECTS as readonly string[]).includes(d));
  if (unknown.length > 0) throw new Error(`TEST_DIALECTS: unknown ${unknown.join(', ')} (sqlite, postgres)`);
  return ALL_DIALECTS.filter((d) => named.includes(d));
}

/**
 * `skip` of a test that needs PostgreSQL whatever TEST_DIALECTS says (several server processes on one
 * database, PostgreSQL's own statements): false, or why it is skipped.
 */
export const POSTGRES_ONLY_SKIP: false | string = DIALECTS.includes('postgres')
  ? false
  : 'needs PostgreSQL, which TEST_DIALECTS leaves out';

export const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The BILLING_SECRET_KEY of test servers (fixed: a server restarted on the same database opens what it sealed). */
export const TEST_SECRET_KEY = `test:${Buffer.alloc(32, 7).toString('base64')}`;
/** A SecretBox with TEST_SECRET_KEY, for tests that build Deps themselves. */
export const testSecretBox = (): SecretBox => new SecretBox(parseSecretKeys(TEST_SECRET_KEY));

export interface TestStore {
  store: Store;
  /**
   * Raw SQL on committed data, outside the Store interface: for looking at what no read
   * method exposes (the outbox) and nothing else. `?` placeholders on both dialects.
   */
  query(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  cleanup(): Promise<void>;
}

export async function openTestStore(
  dialect: Dialect,
  opts: { poolSize?: number; preparedStatements?: boolean } = {},
): Promise<TestStore> {
  if (dialect === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), 'billing-store-'));
    const file = join(dir, 'test.sqlite');
    const store = new SqliteStore(file);
    let closed = false;
    return {
      store,
      async query(sql, params = []) {
        const db = new Database(file, { readonly: true });
        try {
          return db.prepare(sql).all(...params) as Record<string, unknown>[];
        } finally {
          db.close();
        }
      },
      async cleanup() {
        if (!closed) await store.close();
        closed = true;
        await rm(dir, { recursive: true, force: true });
      },
    };
  }
  const schema = `t_${randomBytes(8).toString('hex')}`;
  const store = await PostgresStore.open({
    connectionString: DATABASE_URL,
    schema,
    poolSize: opts.poolSize ?? 8,
    ...(opts.preparedStatements !== undefined ? { preparedStatements: opts.preparedStatements } : {}),
  });
  return {
    store,
    async query(sql, params = []) {
      let i = 0;
      return (
        await store.pool.query(
          sql.replace(/\?/g, () => `$${++i}`),
          params,
        )
      ).rows as Record<string, unknown>[];
    },
    async cleanup() {
      await store.close();
      const admin = new pg.Client({ connectionString: DATABASE_URL });
      await admin.connect();
      try {
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await admin.end();
      }
    },
  };
}

export interface DialectStore extends TestStore {
  dialect: Dialect;
}

/**
 * The per-dialect set-up of the store tests, in one place: for each of DIALECTS a suite (named `title (dialect)`,
 * or the dialect alone) whose tests share one fresh store, opened while the suite is built and removed after its
 * tests. `body` declares the suite's tests and hooks, given that store (a real SqliteStore or PostgresStore).
 */
export function forEachDialect(
  body: (store: Store, t: DialectStore) => void,
  opts: { title?: string; poolSize?: number } = {},
): void {
  for (const dialect of DIALECTS) {
    describe(opts.title === undefined ? dialect : `${opts.title} (${dialect})`, async () => {
      const t = await openTestStore(dialect, { poolSize: opts.poolSize ?? 8 });
      body(t.store, { ...t, dialect });
      // After the body's own `after` hooks (which may still use the store).
      after(() => t.cleanup());
    });
  }
}

export interface Seeded {
  userId: number;
  companyId: string;
  accountId: string;
}

let seedCounter = 0;

/** A user, their company (owner membership) and one account, in one write. */
export async function seedCompanyAndAccount(
  store: Store,
  opts: { nowMs?: number; email?: string; companyId?: string; accountId?: string } = {},
): Promise<Seeded> {
  const nowMs = opts.nowMs ?? 1_700_000_000_000;
  const n = ++seedCounter;
  return store.write(async (tx) => {
    const user = await tx.identity.insertUser({
      name: `User ${n}`,
      email: opts.email ?? `user${n}-${randomBytes(4).toString('hex')}@example.test`,
      passwordHash: 'x',
      dateOfBirth: null,
      emailVerified: false,
      createdAtMs: nowMs,
    });
    const companyId = opts.companyId ?? newId('c');
    await tx.identity.insertCompany({
      companyId,
      name: `Company ${n}`,
      ownerUserId: user.id,
      processor: 'sandbox',
      processorApiKey: null,
      createdAtMs: nowMs,
    });
    await tx.identity.addCompanyMember(companyId, user.id, 'owner');
    const accountId = opts.accountId ?? newId('a');
    await tx.accounts.insertAccount({
      accountId,
      companyId,
      name: null,
      email: null,
      metadata: null,
      processorId: null,
      planId: null,
      createdAtMs: nowMs,
    });
    return { userId: user.id, companyId, accountId };
  });
}

/** A second account of an existing company. */
export async function seedAccount(store: Store, companyId: string, nowMs = 1_700_000_000_000): Promise<string> {
  const accountId = newId('a');
  await store.write((tx) =>
    tx.accounts.insertAccount({
      accountId,
      companyId,
      name: null,
      email: null,
      metadata: null,
      processorId: null,
      planId: null,
      createdAtMs: nowMs,
    }),
  );
  return accountId;
}

export function balanceRow(
  companyId: string,
  accountId: string,
  denomination: string,
  nowMs = 1_700_000_000_000,
): NewBalanceRow {
  return {
    accountId,
    companyId,
    denomination,
    amount: 0,
    pending: 0,
    refillThreshold: null,
    refillAmount: null,
    refillUsdCents: null,
    refillOnDay: null,
    createdAtMs: nowMs,
  };
}

/**
 * Creates a balance and, when `amount` is non-zero, grants it the way the operations do: an
 * atomic delta plus a `grant` transaction, so the ledger stays exact.
 */
export async function seedBalance(
  store: Store,
  companyId: string,
  accountId: string,
  denomination: string,
  amount = 0,
  nowMs = 1_700_000_000_000,
): Promise<void> {
  await store.write(async (tx) => {
    if (!(await tx.balances.insertBalance(balanceRow(companyId, accountId, denomination, nowMs))))
      throw new Error('balance exists');
    if (amount === 0) return;
    // Every unit belongs to a grant: the seed is one `initial` grant holding the amount.
    const grant = newGrantRow({ companyId, accountId, denomination }, { amount, source: 'initial' }, nowMs);
    const lot = { ...lotOf(grant), remaining: amount, held: 0, voidedAtMs: null, opened: true, closed: false };
    await portOf(tx).writeLedger(
      [],
      [{ accountId, denomination, amount, pending: 0, grants: [lot], grantsDueAtMs: null }],
      [],
    );
    await portOf(tx).insertGrants([grant]);
    await portOf(tx).writeLedger(
      [],
      [],
      [
        {
          transactionId: newId('tx'),
          accountId,
          denomination,
          amount,
          balanceAfter: amount,
          kind: 'grant',
          eventId: null,
          reason: 'seed',
          grantId: grant.grantId,
          drawnFrom: null,
          createdAtMs: nowMs,
        },
      ],
    );
  });
}
