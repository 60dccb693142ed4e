/**
 * What a row costs PostgreSQL: the backend's own CPU per inserted row for the ingest path's
 * insert statements and for variants of them (fewer indexes, one combined statement), each
 * measured in transactions of `--rows` rows (BEGIN, the statement, COMMIT), one connection.
 * Reads the backend's CPU from /proc, so PostgreSQL must run on this machine.
 *
 *   npx tsx bench/pg-rows.ts [--groups 600] [--rows 100] [--rounds 2] [--only events,transactions]
 *
 * A fresh database gets the real schema (the store's migrations), then is dropped. Variants:
 * - `events`, `transactions`: the statements PgTx.insertEvents / insertTransactions run;
 * - `both-separately`: the two in one transaction, as the ingest path does;
 * - `write-ledger`: the statement PgTx.writeLedger runs (both inserts as data-modifying CTEs);
 * - `transactions-no-id-index`: into a copy of the table without its transaction_id index;
 * - `transactions-no-index`: into a copy of the table without any index.
 * Reports figures only; the machine is shared, so compare variants of the same run.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';
import {
  insertEventsStatement,
  insertTransactionsStatement,
  newId,
  openStore,
  postgresQuery,
  writeLedgerStatement,
  type EventRow,
  type TransactionRow,
} from './lib/engine.js';

const { values } = parseArgs({
  options: {
    groups: { type: 'string', default: '600' },
    rows: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '2' },
    only: { type: 'string' },
    url: { type: 'string', default: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test' },
  },
});
const GROUPS = Number(values.groups);
const ROWS = Number(values.rows);
const ROUNDS = Number(values.rounds);
const ACCOUNTS = 100;
const CLOCK_TICKS_PER_S = 100;

interface Group {
  events: EventRow[];
  transactions: TransactionRow[];
}
const accounts = Array.from({ length: ACCOUNTS }, (_, i) => `a_bench${String(i).padStart(4, '0')}`);
/** One group of complete 1-unit events and their usage ledger rows, as ingest plans them. */
function group(): Group {
  const nowMs = Date.now();
  const events: EventRow[] = [];
  const transactions: TransactionRow[] = [];
  for (let i = 0; i < ROWS; i++) {
    const accountId = accounts[Math.floor(Math.random() * ACCOUNTS)]!;
    const e: EventRow = {
      companyId: 'co_bench',
      eventId: newId('ev'),
      accountId,
      clientSupplied: false,
      occurredAtMs: nowMs,
      type: 'call',
      quantity: 1,
      costAmount: 3,
      denomination: 'tokens',
      priceModel: 'unit',
      metadata: null,
      state: 'complete',
      contentHash: null,
      createdAtMs: nowMs,
      updatedAtMs: nowMs,
      expiresAtMs: null,
      heldFrom: null,
      leaseId: null,
    };
    events.push(e);
    transactions.push({
      transactionId: newId('tx'),
      accountId,
      denomination: 'tokens',
      amount: -e.costAmount,
      balanceAfter: 1_000,
      kind: 'usage',
      eventId: e.eventId,
      reason: null,
      grantId: null,
      drawnFrom: null,
      createdAtMs: nowMs,
    });
  }
  return { events, transactions };
}

/** The store's own statements (what PgTx.insertEvents / insertTransactions run), or variants of them. */
const eventsStatement = (g: Group) => insertEventsStatement(g.events);
const transactionsInto =
  (table: string) =>
  (g: Group): [string, unknown[]] => {
    const [sql, params] = insertTransactionsStatement(g.transactions);
    return [sql.replace('INSERT INTO transactions ', `INSERT INTO ${table} `), params];
  };
/** What PgTx.writeLedger runs for an ingest group: events and ledger rows in one statement (no balance deltas here). */
const writeLedger = (g: Group) => writeLedgerStatement(g.events, [], g.transactions);

type Statement = (g: Group) => [string, unknown[]];
const VARIANTS: Record<string, Statement[]> = {
  events: [eventsStatement],
  transactions: [transactionsInto('transactions')],
  'both-separately': [eventsStatement, transactionsInto('transactions')],
  'write-ledger': [writeLedger],
  'transactions-no-id-index': [transactionsInto('tx_no_id_index')],
  'transactions-no-index': [transactionsInto('tx_no_index')],
};

const database = `bench_rows_${Math.random().toString(36).slice(2, 10)}`;
const admin = new pg.Client({ connectionString: values.url });
await admin.connect();
await admin.query(`CREATE DATABASE ${database}`);
try {
  const url = new URL(values.url);
  url.pathname = `/${database}`;
  await (await openStore(url.toString())).close();
  const c = new pg.Client({ connectionString: url.toString() });
  await c.connect();
  await c.query('SET plan_cache_mode = force_custom_plan');
  await c.query('CREATE TABLE tx_no_id_index (LIKE transactions INCLUDING DEFAULTS INCLUDING IDENTITY)');
  await c.query('ALTER TABLE tx_no_id_index ADD PRIMARY KEY (seq)');
  await c.query('CREATE INDEX ON tx_no_id_index (account_id, denomination, seq)');
  await c.query('CREATE TABLE tx_no_index (LIKE transactions INCLUDING DEFAULTS INCLUDING IDENTITY)');
  const pid = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const backendTicks = (): number => {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return Number(fields[11]) + Number(fields[12]);
  };
  const run = async (statements: Statement[], g: Group) => {
    await c.query('BEGIN');
    for (const statement of statements) await c.query(postgresQuery(...statement(g), true));
    await c.query('COMMIT');
  };
  const names = values.only?.split(',') ?? Object.keys(VARIANTS);
  console.log(
    `${GROUPS} transactions of ${ROWS} rows per variant and round; ` +
      "PostgreSQL backend CPU and this process's CPU per row",
  );
  for (let round = 1; round <= ROUNDS; round++) {
    for (const name of names) {
      const statements = VARIANTS[name];
      if (!statements) throw new Error(`unknown variant ${name}; known: ${Object.keys(VARIANTS).join(', ')}`);
      for (let i = 0; i < 20; i++) await run(statements, group());
      const groups = Array.from({ length: GROUPS }, group);
      const ticks0 = backendTicks();
      const node0 = process.cpuUsage();
      const wall0 = performance.now();
      for (const g of groups) await run(statements, g);
      const n = GROUPS * ROWS;
      const pgUs = ((backendTicks() - ticks0) * 1e6) / CLOCK_TICKS_PER_S / n;
      const node = process.cpuUsage(node0);
      const nodeUs = (node.user + node.system) / n;
      const wallUs = ((performance.now() - wall0) * 1000) / n;
      const figure = (us: number): string => us.toFixed(2).padStart(6);
      console.log(
        `round ${round}  ${name.padEnd(26)} PostgreSQL ${figure(pgUs)} µs/row   node ${figure(nodeUs)} µs/row   ` +
          `wall ${figure(wallUs)} µs/row`,
      );
    }
  }
  await c.end();
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
}
