/**
 * Query plans of the list endpoints (and of the lookups every ingest request makes) on the
 * seeded database: does each statement reach its rows through an index, without a full scan
 * and without sorting every matching row?
 *
 * The SQL shared by both stores is not copied here: the server's own `SqlTx` methods are run
 * against an executor that records each statement it issues (and runs it, so the cursor
 * lookups find their rows). The few statements that are dialect overrides (PostgreSQL's
 * unnest joins and row locks, SQLite's balance lock) are repeated by hand and say so.
 *
 * PostgreSQL: EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON), inside a transaction that is rolled
 * back (some statements lock rows). SQLite: EXPLAIN QUERY PLAN, and the statement timed.
 */
import { SqlTx, type SqlExec, type SqlRow } from '../../src/store/sql-base.js';
import { postgresInList, postgresSeqOrder } from '../../src/store/postgres.js';
import type { BalanceKey, BalanceRow, EventRow, TransactionRow } from '../../src/store/types.js';
import type { SqlRunner } from './growth-seed.js';
import { DENOMINATION } from './options.js';

/** A sort of more rows than this is a sort of the set, not of a page. */
const SORT_ROWS_OK = 1_000;
/** Rows read and thrown away by a filter beyond this: the index does not narrow the query. */
const FILTERED_ROWS_OK = 1_000;
/** SQLite statements are run this many times to time them. */
const SQLITE_TIMING_RUNS = 20;
const LARGE_TABLES = new Set(['accounts', 'balances', 'events', 'transactions']);

export interface PlanCheck {
  name: string;
  /** Where the SQL comes from. */
  source: 'server SqlTx' | 'copied from the store override';
  sql: string;
  /** Compact plan, one node per line. */
  plan: string[];
  indexes: string[];
  /** Empty when the statement uses an index without scanning or sorting the whole set. */
  problems: string[];
  /** PostgreSQL: EXPLAIN ANALYZE execution time; SQLite: median of timed runs. */
  executionMs: number | undefined;
}

interface Recorded {
  sql: string;
  params: unknown[];
}

/** Runs statements on the runner and remembers them. */
class RecordingExec implements SqlExec {
  readonly statements: Recorded[] = [];
  constructor(private readonly runner: SqlRunner) {}
  async all(sql: string, params: unknown[] = []): Promise<SqlRow[]> {
    this.statements.push({ sql, params });
    return await this.runner.all<SqlRow>(sql, params);
  }
  async run(sql: string): Promise<number> {
    throw new Error(`the plan check runs no writes (${sql.slice(0, 60)})`);
  }
}

/** The server's shared SQL; the write-path abstract methods are never called here. */
class RecordingTx extends SqlTx {
  constructor(
    exec: SqlExec,
    private readonly dialect: 'sqlite' | 'postgres',
  ) {
    super(exec);
  }
  protected override inList(column: string, values: readonly string[]): [string, unknown[]] {
    return this.dialect === 'postgres' ? postgresInList(column, values) : super.inList(column, values);
  }
  protected override seqOrder(leadingColumn: string): string {
    return this.dialect === 'postgres' ? postgresSeqOrder(leadingColumn) : super.seqOrder(leadingColumn);
  }
  protected bool(b: boolean): unknown {
    return this.dialect === 'postgres' ? b : b ? 1 : 0;
  }
  lockBalances(_keys: BalanceKey[]): Promise<BalanceRow[]> {
    throw new Error('not used by the plan check');
  }
  applyBalanceDeltas(): Promise<BalanceRow[]> {
    throw new Error('not used by the plan check');
  }
  insertEvents(_rows: EventRow[]): Promise<void> {
    throw new Error('not used by the plan check');
  }
  insertTransactions(_rows: TransactionRow[]): Promise<void> {
    throw new Error('not used by the plan check');
  }
  lockEvents(): Promise<EventRow[]> {
    throw new Error('not used by the plan check');
  }
}

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
}

interface Statement {
  name: string;
  source: PlanCheck['source'];
  sql: string;
  params: unknown[];
}

/** The statements to check, as the server issues them for these subjects. */
async function collectStatements(runner: SqlRunner, s: PlanSubjects): Promise<Statement[]> {
  const out: Statement[] = [];
  const capture = async (names: string[], work: (tx: RecordingTx) => Promise<unknown>): Promise<void> => {
    const exec = new RecordingExec(runner);
    await work(new RecordingTx(exec, runner.dialect));
    if (exec.statements.length !== names.length) {
      throw new Error(
        `plan check: expected ${names.length} statements for ${names.join(' / ')}, the server issued ${exec.statements.length}`,
      );
    }
    for (const [i, st] of exec.statements.entries())
      out.push({ name: names[i] as string, source: 'server SqlTx', ...st });
  };
  const page = { limit: 100 };
  const deep = { limit: 100, startingAfter: s.deepTransactionId };
  await capture(
    [
      "transactions: the account's denominations (loose index scan)",
      'transactions: first page (newest of each denomination, merged)',
    ],
    (tx) => tx.listTransactions(s.bigAccountId, undefined, page),
  );
  await capture(
    [
      'transactions: cursor lookup',
      "transactions: the account's denominations",
      'transactions: page after a deep cursor',
    ],
    (tx) => tx.listTransactions(s.bigAccountId, undefined, deep),
  );
  await capture(['transactions ?denomination: first page'], (tx) =>
    tx.listTransactions(s.bigAccountId, DENOMINATION, page),
  );
  await capture(
    ['transactions ?denomination: cursor lookup', 'transactions ?denomination: page after a deep cursor'],
    (tx) => tx.listTransactions(s.bigAccountId, DENOMINATION, deep),
  );
  await capture(['accounts: first page'], (tx) => tx.listAccounts(s.companyId, page));
  await capture(['accounts: cursor lookup', 'accounts: page after a deep cursor'], (tx) =>
    tx.listAccounts(s.companyId, { limit: 100, startingAfter: s.deepAccountId }),
  );
  await capture(['accounts: balances of the listed accounts (one query per page)'], (tx) =>
    tx.listBalancesOfAccounts([s.someAccountId, s.bigAccountId]),
  );
  await capture(['account lookup (every account-scoped request)'], (tx) => tx.findAccount(s.companyId, s.bigAccountId));
  if (s.eventId !== undefined)
    await capture(['event by id (GET /v1/events/{id})'], (tx) => tx.findEvent(s.companyId, s.eventId as string));
  await capture(['ingest: account owners'], (tx) => tx.findAccountOwners([s.someAccountId]));

  const now = Date.now();
  if (runner.dialect === 'sqlite') {
    await capture(['ingest: expired holds of a balance'], (tx) =>
      tx.findExpiredHolds(now, 1, [{ accountId: s.someAccountId, denomination: DENOMINATION }]),
    );
    out.push({
      name: 'ingest: lock the balances of a group (one IN query per 500 accounts)',
      source: 'copied from the store override',
      sql: 'SELECT * FROM balances WHERE account_id IN (?, ?)',
      params: [s.someAccountId, s.bigAccountId],
    });
  } else {
    out.push({
      name: 'ingest: expired holds of the balances',
      source: 'copied from the store override',
      sql: `SELECT e.* FROM events e JOIN unnest(?::text[], ?::text[]) AS k(account_id, denomination)
         ON e.account_id = k.account_id AND e.denomination = k.denomination
       WHERE e.state = 'pending' AND e.expires_at <= ? ORDER BY e.expires_at LIMIT ? FOR UPDATE OF e SKIP LOCKED`,
      params: [[s.someAccountId], [DENOMINATION], now, 1],
    });
    out.push({
      name: 'ingest: lock the balances',
      source: 'copied from the store override',
      sql: `SELECT b.* FROM balances b JOIN unnest(?::text[], ?::text[]) AS k(account_id, denomination)
         ON b.account_id = k.account_id AND b.denomination = k.denomination
       ORDER BY b.account_id, b.denomination FOR UPDATE OF b`,
      params: [[s.someAccountId], [DENOMINATION]],
    });
  }
  return out;
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

function analyseSqlite(rows: readonly SqliteQueryPlanRow[]): { plan: string[]; indexes: string[]; problems: string[] } {
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
    if (/USE TEMP B-TREE FOR (ORDER BY|GROUP BY|DISTINCT)/.test(row.detail))
      problems.push(`sorts every matching row (${row.detail})`);
  }
  return { plan, indexes: [...indexes], problems };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Plans of every list and lookup statement for these subjects. */
export async function checkPlans(runner: SqlRunner, subjects: PlanSubjects): Promise<PlanCheck[]> {
  const statements = await collectStatements(runner, subjects);
  const checks: PlanCheck[] = [];
  for (const st of statements) {
    if (runner.dialect === 'postgres') {
      await runner.run('BEGIN');
      try {
        const [row] = await runner.all<{ 'QUERY PLAN': { Plan: PgNode; 'Execution Time': number }[] }>(
          `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${st.sql}`,
          st.params,
        );
        const explained = row?.['QUERY PLAN'][0];
        if (explained === undefined) throw new Error(`no plan for ${st.name}`);
        checks.push({ ...pick(st), ...analysePostgres(explained.Plan), executionMs: explained['Execution Time'] });
      } finally {
        await runner.run('ROLLBACK');
      }
    } else {
      const rows = await runner.all<SqliteQueryPlanRow>(`EXPLAIN QUERY PLAN ${st.sql}`, st.params);
      const times: number[] = [];
      for (let i = 0; i < SQLITE_TIMING_RUNS; i++) {
        const started = performance.now();
        await runner.all(st.sql, st.params);
        times.push(performance.now() - started);
      }
      checks.push({ ...pick(st), ...analyseSqlite(rows), executionMs: median(times) });
    }
  }
  return checks;
}

function pick(st: Statement): Pick<PlanCheck, 'name' | 'source' | 'sql'> {
  return { name: st.name, source: st.source, sql: st.sql.replace(/\s+/g, ' ').trim() };
}
