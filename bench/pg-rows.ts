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
 * - `both-in-one`: one statement (a data-modifying CTE) sharing the per-row arrays;
 * - `transactions-no-id-index`: into a copy of the table without its transaction_id index;
 * - `transactions-no-index`: into a copy of the table without any index.
 * Reports figures only; the machine is shared, so compare variants of the same run.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { newId } from '../src/lib/ids.js';
import { EVENT_COLUMNS, TRANSACTION_COLUMNS } from '../src/store/sql-base.js';
import { openStore } from '../src/store/open.js';
import { pgArrayLiteral } from '../src/store/postgres.js';

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

interface Row { eventId: string; accountId: string; transactionId: string; costAmount: number; balanceAfter: number; nowMs: number }
const accounts = Array.from({ length: ACCOUNTS }, (_, i) => `a_bench${String(i).padStart(4, '0')}`);
function group(): Row[] {
  const nowMs = Date.now();
  return Array.from({ length: ROWS }, () => ({
    eventId: newId('ev'), accountId: accounts[Math.floor(Math.random() * ACCOUNTS)]!, transactionId: newId('tx'), costAmount: 3, balanceAfter: 1_000, nowMs,
  }));
}
const lit = (xs: unknown[]) => pgArrayLiteral(xs);

const EVENTS_SQL = `INSERT INTO events (${EVENT_COLUMNS})
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::boolean[], $5::text[], $6::float8[], $7::bigint[], $8::text[], $9::text[], $10::text[], $11::text[], $12::bigint[], $13::bigint[], $14::bigint[])`;
const eventParams = (r: Row[]) => [
  lit(r.map(() => 'co_bench')), lit(r.map((e) => e.eventId)), lit(r.map((e) => e.accountId)), lit(r.map(() => false)), lit(r.map(() => 'call')),
  lit(r.map(() => 1)), lit(r.map((e) => e.costAmount)), lit(r.map(() => 'tokens')), lit(r.map(() => null)), lit(r.map(() => 'complete')),
  lit(r.map(() => null)), lit(r.map((e) => e.nowMs)), lit(r.map((e) => e.nowMs)), lit(r.map(() => null)),
];
const transactionsSql = (table: string) => `INSERT INTO ${table} (${TRANSACTION_COLUMNS})
  SELECT t.transaction_id, t.account_id, t.denomination, t.amount, t.balance_after, t.kind, t.event_id, t.reason, t.created_at
  FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::text[], $7::text[], $8::text[], $9::bigint[])
    WITH ORDINALITY AS t(transaction_id, account_id, denomination, amount, balance_after, kind, event_id, reason, created_at, n)
  ORDER BY t.n`;
const transactionParams = (r: Row[]) => [
  lit(r.map((e) => e.transactionId)), lit(r.map((e) => e.accountId)), lit(r.map(() => 'tokens')), lit(r.map((e) => -e.costAmount)),
  lit(r.map((e) => e.balanceAfter)), lit(r.map(() => 'usage')), lit(r.map((e) => e.eventId)), lit(r.map(() => null)), lit(r.map((e) => e.nowMs)),
];
const BOTH_SQL = `WITH u AS (
    SELECT * FROM unnest($3::text[], $4::text[], $5::bigint[], $6::text[], $7::bigint[]) WITH ORDINALITY AS u(event_id, account_id, cost, transaction_id, balance_after, n)),
  e AS (INSERT INTO events (${EVENT_COLUMNS})
    SELECT $1, u.event_id, u.account_id, false, 'call', 1, u.cost, 'tokens', NULL, 'complete', NULL, $2::bigint, $2::bigint, NULL FROM u)
  INSERT INTO transactions (${TRANSACTION_COLUMNS})
  SELECT u.transaction_id, u.account_id, 'tokens', -u.cost, u.balance_after, 'usage', u.event_id, NULL, $2::bigint FROM u ORDER BY u.n`;
const bothParams = (r: Row[]) => [
  'co_bench', r[0]!.nowMs, lit(r.map((e) => e.eventId)), lit(r.map((e) => e.accountId)), lit(r.map((e) => e.costAmount)),
  lit(r.map((e) => e.transactionId)), lit(r.map((e) => e.balanceAfter)),
];

type Statement = { name: string; text: string; values: (r: Row[]) => unknown[] };
const VARIANTS: Record<string, Statement[]> = {
  events: [{ name: 'events', text: EVENTS_SQL, values: eventParams }],
  transactions: [{ name: 'transactions', text: transactionsSql('transactions'), values: transactionParams }],
  'both-separately': [{ name: 'events', text: EVENTS_SQL, values: eventParams }, { name: 'transactions', text: transactionsSql('transactions'), values: transactionParams }],
  'both-in-one': [{ name: 'both', text: BOTH_SQL, values: bothParams }],
  'transactions-no-id-index': [{ name: 'tx_no_id', text: transactionsSql('tx_no_id_index'), values: transactionParams }],
  'transactions-no-index': [{ name: 'tx_no_index', text: transactionsSql('tx_no_index'), values: transactionParams }],
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
  const run = async (statements: Statement[], rows: Row[]) => {
    await c.query('BEGIN');
    for (const s of statements) await c.query({ name: s.name, text: s.text, values: s.values(rows) });
    await c.query('COMMIT');
  };
  const names = values.only?.split(',') ?? Object.keys(VARIANTS);
  console.log(`${GROUPS} transactions of ${ROWS} rows per variant and round; PostgreSQL backend CPU and this process's CPU per row`);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const name of names) {
      const statements = VARIANTS[name];
      if (!statements) throw new Error(`unknown variant ${name}; known: ${Object.keys(VARIANTS).join(', ')}`);
      for (let i = 0; i < 20; i++) await run(statements, group());
      const groups = Array.from({ length: GROUPS }, group);
      const ticks0 = backendTicks();
      const node0 = process.cpuUsage();
      const wall0 = performance.now();
      for (const rows of groups) await run(statements, rows);
      const n = GROUPS * ROWS;
      const pgUs = ((backendTicks() - ticks0) * 1e6) / CLOCK_TICKS_PER_S / n;
      const node = process.cpuUsage(node0);
      console.log(`round ${round}  ${name.padEnd(26)} PostgreSQL ${pgUs.toFixed(2).padStart(6)} µs/row   node ${((node.user + node.system) / n).toFixed(2).padStart(6)} µs/row   wall ${(((performance.now() - wall0) * 1000) / n).toFixed(2).padStart(6)} µs/row`);
    }
  }
  await c.end();
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
}
