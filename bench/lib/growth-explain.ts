/**
 * Query plans of the list endpoints (and of the lookups every ingest request makes) on the
 * seeded database: does each statement reach its rows through an index, without a full scan
 * and without sorting every matching row?
 *
 * No SQL is copied here. The store's own reads run, through its public interface, on the
 * subjects below (`Store.read`; the row locks of ingest in a `Store.write` that is rolled
 * back), while a tap on the database driver records each statement they send and its
 * parameters: better-sqlite3's `Statement` methods, or `pg.Client#query`. Each recorded
 * statement is then explained on a connection of this module's own. PostgreSQL:
 * EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON), inside a transaction that is rolled back (some
 * statements lock rows). SQLite: EXPLAIN QUERY PLAN, and the statement timed.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { portOf, type Store } from './engine.js';
import { DENOMINATION } from './options.js';

/** A sort of more rows than this is a sort of the set, not of a page. */
const SORT_ROWS_OK = 1_000;
/** Rows read and thrown away by a filter beyond this: the index does not narrow the query. */
const FILTERED_ROWS_OK = 1_000;
/** SQLite statements are run this many times to time them. */
const SQLITE_TIMING_RUNS = 20;
const LARGE_TABLES = new Set([
  'accounts',
  'balances',
  'events',
  'transactions',
  'grants',
  'account_plans',
  'feature_overrides',
]);
/** Statements that open or end transactions, or set up a session: not plans. */
const NOT_A_PLAN = /^\s*(BEGIN|COMMIT|ROLLBACK|SET|SAVEPOINT|RELEASE|START)\b/i;

export interface PlanCheck {
  /** The read it belongs to, and which of its statements (`[2/3]`) when it sends several. */
  name: string;
  sql: string;
  /** Compact plan, one node per line. */
  plan: string[];
  indexes: string[];
  /** Empty when the statement uses an index without scanning or sorting the whole set. */
  problems: string[];
  /** PostgreSQL: EXPLAIN ANALYZE execution time; SQLite: median of timed runs. */
  executionMs: number | undefined;
  /** Its plan is printed whatever the verdict (the credit grants' lists). */
  shown: boolean;
}

interface Statement {
  name: string;
  sql: string;
  params: unknown[];
  /** See PlanCheck.shown. */
  shown?: boolean;
  /**
   * It sorts the rows of one balance (its grants in drawing order: a handful): SQLite's temporary
   * B-tree for ORDER BY is then no problem (PostgreSQL's sorts are judged by their row counts).
   */
  sortsOneBalance?: boolean;
}

/** The cases of the credit grants' lists (lib/grants.ts seeds them). */
export interface GrantPlanSubjects {
  /** An account whose balance holds grants. */
  accountId: string;
  /** The instant the lists are read at, and `expires_before` of the company's list. */
  nowMs: number;
  expiresBeforeMs: number;
  /** A grant deep in the company's list by expiry (a cursor a client holds after paging that far). */
  cursor: string | undefined;
}

type Recorder = (sql: string, params: unknown[]) => void;

/**
 * Records every statement better-sqlite3 or pg runs in this process while `work` runs.
 * better-sqlite3 takes parameters spread or as one array; pg as (text, values) or a config.
 */
async function recording(work: () => Promise<unknown>): Promise<Statement[]> {
  const seen: Statement[] = [];
  const record: Recorder = (sql, params) => {
    if (!NOT_A_PLAN.test(sql)) seen.push({ name: '', sql, params });
  };
  const probe = new Database(':memory:');
  const statementProto = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, unknown>;
  probe.close();
  const restore: (() => void)[] = [];
  for (const method of ['all', 'get', 'run', 'iterate']) {
    const original = statementProto[method] as (...args: unknown[]) => unknown;
    statementProto[method] = function (this: { source: string }, ...args: unknown[]): unknown {
      record(this.source, args.length === 1 && Array.isArray(args[0]) ? (args[0] as unknown[]) : args);
      return original.apply(this, args);
    };
    restore.push(() => {
      statementProto[method] = original;
    });
  }
  const clientProto = pg.Client.prototype as unknown as Record<string, unknown>;
  const originalQuery = clientProto.query as (...args: unknown[]) => unknown;
  clientProto.query = function (this: unknown, ...args: unknown[]): unknown {
    const [config, values] = args;
    if (typeof config === 'string') record(config, Array.isArray(values) ? values : []);
    else if (config !== null && typeof config === 'object' && 'text' in config) {
      const c = config as { text: string; values?: unknown[] };
      record(c.text, c.values ?? []);
    }
    return originalQuery.apply(this, args);
  };
  restore.push(() => {
    clientProto.query = originalQuery;
  });
  try {
    await work();
  } finally {
    for (const undo of restore) undo();
  }
  return seen;
}

/** Thrown to roll back a write that only locked rows. */
class RolledBack extends Error {}

export interface PlanSubjects {
  companyId: string;
  /** The account with the long history. */
  bigAccountId: string;
  /** A transaction deep in its history (a cursor a client holds after paging that far). */
  deepTransactionId: string;
  /** An account deep in the company's list. */
  deepAccountId: string;
  /** Any account (the ingest lookups). */
  someAccountId: string;
  /** A stored event, if any. */
  eventId: string | undefined;
  /** The usage cases' period (whole hours). */
  usageFromMs: number;
  usageToMs: number;
  /** The credit grants' lists, when the store holds grants. */
  grants?: GrantPlanSubjects;
  /** The entitlements' reads: an account on a plan (with overrides) and a feature of the company. */
  entitlements?: { accountId: string; featureKey: string };
}

/** Balances the grant job asks for at once (src/operations/grants.ts GRANT_JOB_BATCH_MAX). */
const GRANT_JOB_BATCH = 500;

/** Hourly rows a usage read may return (the operation's own limit is larger; the plan is the same). */
const USAGE_ROWS = 200_001;

/** The statements the store sends for each read, named after the read. */
async function collectStatements(store: Store, s: PlanSubjects): Promise<Statement[]> {
  const out: Statement[] = [];
  const capture = async (
    name: string,
    work: () => Promise<unknown>,
    how: Pick<Statement, 'shown' | 'sortsOneBalance'> = {},
  ): Promise<void> => {
    const statements = await recording(work);
    if (statements.length === 0) throw new Error(`plan check: ${name}: the store sent no statement`);
    for (const [i, st] of statements.entries()) {
      out.push({ ...st, ...how, name: statements.length === 1 ? name : `${name} [${i + 1}/${statements.length}]` });
    }
  };
  const page = { limit: 100 };
  const deep = { limit: 100, startingAfter: s.deepTransactionId };
  const big = s.bigAccountId;
  await capture('transactions: first page', () =>
    store.read((tx) => tx.transactions.listTransactions(big, undefined, page)),
  );
  await capture('transactions: page after a deep cursor', () =>
    store.read((tx) => tx.transactions.listTransactions(big, undefined, deep)),
  );
  await capture('transactions ?denomination: first page', () =>
    store.read((tx) => tx.transactions.listTransactions(big, DENOMINATION, page)),
  );
  await capture('transactions ?denomination: page after a deep cursor', () =>
    store.read((tx) => tx.transactions.listTransactions(big, DENOMINATION, deep)),
  );
  await capture('accounts: first page', () => store.read((tx) => tx.accounts.listAccounts(s.companyId, page)));
  await capture('accounts: page after a deep cursor', () =>
    store.read((tx) => tx.accounts.listAccounts(s.companyId, { limit: 100, startingAfter: s.deepAccountId })),
  );
  await capture('accounts: balances of the listed accounts (one query per page)', () =>
    store.read((tx) => portOf(tx).listBalancesOfAccounts([s.someAccountId, big])),
  );
  await capture('account lookup (every account-scoped request)', () =>
    store.read((tx) => tx.accounts.findAccount(s.companyId, big)),
  );
  const eventId = s.eventId;
  if (eventId !== undefined) {
    await capture('event by id (GET /v1/events/{id})', () =>
      store.read((tx) => tx.events.findEvent(s.companyId, eventId)),
    );
  }
  await capture('events: first page of the company', () =>
    store.read((tx) => tx.events.listEvents(s.companyId, {}, page)),
  );
  await capture('events: first page of the big account', () =>
    store.read((tx) => tx.events.listEvents(s.companyId, { accountId: big }, page)),
  );
  const period = { companyId: s.companyId, fromMs: s.usageFromMs, toMs: s.usageToMs, byAccount: false };
  await capture('usage: the big account over the period', () =>
    store.read((tx) => tx.usage.listUsage({ ...period, accountId: big }, USAGE_ROWS)),
  );
  await capture('usage: the company over the period', () => store.read((tx) => tx.usage.listUsage(period, USAGE_ROWS)));
  await capture('ingest: account owners', () => store.read((tx) => tx.accounts.findAccountOwners([s.someAccountId])));
  const keys = [
    { accountId: s.someAccountId, denomination: DENOMINATION },
    { accountId: big, denomination: DENOMINATION },
  ];
  // Ingest locks its balances, then looks for expired holds among them, in its write transaction.
  await capture('ingest: lock the balances of a group', () =>
    store
      .write(async (tx) => {
        await portOf(tx).lockBalances(keys);
        throw new RolledBack();
      })
      .catch((error: unknown) => {
        if (!(error instanceof RolledBack)) throw error;
      }),
  );
  await capture('ingest: expired holds of the balances', () =>
    store
      .write(async (tx) => {
        await portOf(tx).findExpiredHolds(Date.now(), 1, keys);
        throw new RolledBack();
      })
      .catch((error: unknown) => {
        if (!(error instanceof RolledBack)) throw error;
      }),
  );
  if (s.grants !== undefined) await captureGrants(store, s.companyId, s.grants, capture);
  const e = s.entitlements;
  if (e !== undefined) {
    await capture("entitlements: the company's features (list and check)", () =>
      store.read((tx) => tx.features.allFeatures(s.companyId)),
    );
    await capture('entitlements: one feature (check)', () =>
      store.read((tx) => tx.features.findFeature(s.companyId, e.featureKey)),
    );
    await capture("entitlements: an account's plan entries and overrides (list)", () =>
      store.read((tx) => tx.features.entitlementRows(e.accountId)),
    );
    await capture("entitlements: an account's plan entry and override of one feature (check)", () =>
      store.read((tx) => tx.features.entitlementRows(e.accountId, e.featureKey)),
    );
  }
  return out;
}

type Capture = (
  name: string,
  work: () => Promise<unknown>,
  how?: Pick<Statement, 'shown' | 'sortsOneBalance'>,
) => Promise<void>;

/** The statements of the credit grants' two lists (their plans printed), and of the grant job's scan. */
async function captureGrants(store: Store, companyId: string, g: GrantPlanSubjects, capture: Capture): Promise<void> {
  const live = ['scheduled', 'active'] as const;
  const shown = { shown: true };
  await capture(
    'grants of a balance (GET /v1/accounts/{id}/balance/{d}/grants)',
    () => store.read((tx) => tx.grants.listGrantsOfBalance(g.accountId, DENOMINATION, live, g.nowMs)),
    { shown: true, sortsOneBalance: true },
  );
  const filter = { statuses: live, nowMs: g.nowMs, expiresBeforeMs: g.expiresBeforeMs };
  let listed: string[] = [];
  await capture(
    'grants by expiry: first page (GET /v1/grants?expires_before=)',
    async () => {
      const page = await store.read((tx) => tx.grants.listGrants(companyId, filter, { limit: 100 }));
      listed = [...new Set(page?.rows.map((r) => r.accountId) ?? [])];
    },
    shown,
  );
  const cursor = g.cursor;
  if (cursor !== undefined)
    await capture(
      'grants by expiry: page after a deep cursor',
      () => store.read((tx) => tx.grants.listGrants(companyId, filter, { limit: 100, startingAfter: cursor })),
      shown,
    );
  if (listed.length > 0)
    await capture('grants by expiry: balances of the listed grants (one query per page)', () =>
      store.read((tx) => portOf(tx).listBalancesOfAccounts(listed)),
    );
  await capture('grant job: balances with a start or expiry due', () =>
    store
      .write(async (tx) => {
        await portOf(tx).findBalancesWithGrantsDue(Date.now(), GRANT_JOB_BATCH);
        throw new RolledBack();
      })
      .catch((error: unknown) => {
        if (!(error instanceof RolledBack)) throw error;
      }),
  );
}

interface PgNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Scan Direction'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  'Sort Method'?: string;
  Plans?: PgNode[];
}

function analysePostgres(root: PgNode): { plan: string[]; indexes: string[]; problems: string[] } {
  const plan: string[] = [];
  const indexes = new Set<string>();
  const problems: string[] = [];
  const walk = (node: PgNode, depth: number): void => {
    const type = node['Node Type'];
    const rows = (node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1);
    const parts = [type];
    if (node['Scan Direction'] === 'Backward') parts.push('Backward');
    if (node['Index Name'] !== undefined) {
      parts.push(`using ${node['Index Name']}`);
      indexes.add(node['Index Name']);
    }
    if (node['Relation Name'] !== undefined) parts.push(`on ${node['Relation Name']}`);
    const removed = (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0);
    const details = [`rows ${rows}`];
    if (removed > 0) details.push(`filtered out ${removed}`);
    details.push(`buffers hit ${node['Shared Hit Blocks'] ?? 0} read ${node['Shared Read Blocks'] ?? 0}`);
    plan.push(`${'  '.repeat(depth)}${parts.join(' ')} (${details.join(', ')})`);
    const relation = node['Relation Name'];
    if (type === 'Seq Scan' && relation !== undefined && LARGE_TABLES.has(relation))
      problems.push(`full scan of ${relation}`);
    if (type === 'Sort') {
      const input = (node.Plans ?? []).reduce(
        (sum, child) => sum + (child['Actual Rows'] ?? 0) * (child['Actual Loops'] ?? 1),
        0,
      );
      if (input > SORT_ROWS_OK) problems.push(`sorts ${input} rows`);
    }
    if (removed > FILTERED_ROWS_OK)
      problems.push(`${type}${relation !== undefined ? ` on ${relation}` : ''} reads and discards ${removed} rows`);
    for (const child of node.Plans ?? []) walk(child, depth + 1);
  };
  walk(root, 0);
  return { plan, indexes: [...indexes], problems };
}

interface SqliteQueryPlanRow {
  id: number;
  parent: number;
  detail: string;
}

function analyseSqlite(
  rows: readonly SqliteQueryPlanRow[],
  sortsOneBalance = false,
): { plan: string[]; indexes: string[]; problems: string[] } {
  const depth = new Map<number, number>([[0, -1]]);
  const plan: string[] = [];
  const indexes = new Set<string>();
  const problems: string[] = [];
  for (const row of rows) {
    const d = (depth.get(row.parent) ?? -1) + 1;
    depth.set(row.id, d);
    plan.push(`${'  '.repeat(d)}${row.detail}`);
    const index = /USING (?:COVERING )?INDEX (\S+)/.exec(row.detail)?.[1];
    if (index !== undefined) indexes.add(index);
    if (/USING INTEGER PRIMARY KEY/.test(row.detail)) indexes.add('rowid');
    if (/USING PRIMARY KEY/.test(row.detail)) indexes.add('primary key');
    const scan = /^SCAN (\S+)/.exec(row.detail);
    if (scan !== null && LARGE_TABLES.has(scan[1] as string)) {
      problems.push(
        /USING/.test(row.detail) ? `walks the whole index of ${scan[1]} (${row.detail})` : `full scan of ${scan[1]}`,
      );
    }
    if (/USE TEMP B-TREE FOR (ORDER BY|GROUP BY|DISTINCT)/.test(row.detail) && !sortsOneBalance)
      problems.push(`sorts every matching row (${row.detail})`);
  }
  return { plan, indexes: [...indexes], problems };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function pick(st: Statement): Pick<PlanCheck, 'name' | 'sql' | 'shown'> {
  return { name: st.name, sql: st.sql.replace(/\s+/g, ' ').trim(), shown: st.shown === true };
}

async function explainPostgres(databaseUrl: string, statements: readonly Statement[]): Promise<PlanCheck[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const checks: PlanCheck[] = [];
  try {
    for (const st of statements) {
      await client.query('BEGIN');
      try {
        const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PgNode; 'Execution Time': number }[] }>(
          `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${st.sql}`,
          st.params,
        );
        const explained = rows[0]?.['QUERY PLAN'][0];
        if (explained === undefined) throw new Error(`no plan for ${st.name}`);
        checks.push({ ...pick(st), ...analysePostgres(explained.Plan), executionMs: explained['Execution Time'] });
      } finally {
        await client.query('ROLLBACK');
      }
    }
  } finally {
    await client.end();
  }
  return checks;
}

function explainSqlite(file: string, statements: readonly Statement[]): PlanCheck[] {
  const db = new Database(file, { readonly: true });
  const checks: PlanCheck[] = [];
  try {
    db.pragma('busy_timeout = 5000');
    for (const st of statements) {
      const rows = db.prepare(`EXPLAIN QUERY PLAN ${st.sql}`).all(...st.params) as SqliteQueryPlanRow[];
      const statement = db.prepare(st.sql);
      const times: number[] = [];
      for (let i = 0; i < SQLITE_TIMING_RUNS; i++) {
        const started = performance.now();
        statement.all(...st.params);
        times.push(performance.now() - started);
      }
      checks.push({ ...pick(st), ...analyseSqlite(rows, st.sortsOneBalance), executionMs: median(times) });
    }
  } finally {
    db.close();
  }
  return checks;
}

/**
 * Plans of every list and lookup statement the store sends for these subjects. `store` is open
 * on the database; `database` says where to explain them: a PostgreSQL URL or a SQLite file.
 */
export async function checkPlans(
  store: Store,
  database: { postgresUrl: string } | { sqliteFile: string },
  subjects: PlanSubjects,
): Promise<PlanCheck[]> {
  const statements = await collectStatements(store, subjects);
  return 'postgresUrl' in database
    ? await explainPostgres(database.postgresUrl, statements)
    : explainSqlite(database.sqliteFile, statements);
}
