/**
 * Baseline, PostgreSQL only: the plain-SQL limit of a ledger. No engine: two tables of its own in the bench's
 * database (`plain_balances`, one row per account; `plain_ledger`, one row per event with the balance after it,
 * its primary key only) and transactions back to back through node-postgres (the server's driver), each
 *
 *   BEGIN; UPDATE plain_balances … RETURNING amount; INSERT INTO plain_ledger … (N rows); COMMIT
 *
 * as prepared statements: one balance update and N ledger rows per transaction, `--lanes` connections at once.
 * What a hand-written ledger on the same database and driver commits is the ceiling the engine's events route is
 * held against (`vs plain SQL events/s`). Every balance is read back and checked against its ledger rows and
 * what the committed transactions took.
 *
 * Run by the bench as its own process, with the store-only baseline's protocol on stdout (lib/storeonly.ts):
 *   DATABASE_URL=postgres://… node --import tsx bench/baselines/plain-sql.ts --events 1 --lanes 8 --duration 5
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { LatencyRecorder } from '../lib/latency.js';
import type { Finding } from '../lib/ledger.js';
import { INITIAL_GRANT, POOL_ACCOUNTS, positiveInteger } from '../lib/options.js';
import {
  CHILD_FLAGS,
  runBaselineChild,
  sendStoreOnlyMessage,
  type StoreOnlyFigures,
  timedRun,
} from '../lib/storeonly.js';

const LEDGER_LABEL = 'plain SQL';
/** Units each event takes (the bench's events cost a few units each; the figure changes nothing here). */
const EVENT_COST = 3;
const MAX_ERROR_SAMPLES = 3;

const { values } = parseArgs({
  options: {
    ...CHILD_FLAGS,
  },
  strict: true,
  allowPositionals: false,
});
const eventsPerTransaction = positiveInteger('--events', values.events ?? '1');
const durationS = Number(values.duration ?? '5');
const warmupS = Number(values.warmup ?? '1');
if (!(durationS > 0) || !(warmupS >= 0)) throw new Error('--duration must be > 0 and --warmup ≥ 0 seconds');
const lanes = positiveInteger('--lanes', values.lanes ?? '8');
const accountCount = positiveInteger('--accounts', values.accounts ?? String(POOL_ACCOUNTS));
const databaseUrl = process.env.DATABASE_URL ?? '';
if (!/^postgres(ql)?:\/\//.test(databaseUrl)) throw new Error('DATABASE_URL must be a PostgreSQL URL');

const SCHEMA = `
  CREATE TABLE plain_balances (account_id TEXT PRIMARY KEY, amount BIGINT NOT NULL);
  CREATE TABLE plain_ledger (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    amount BIGINT NOT NULL,
    balance_after BIGINT NOT NULL,
    created_at BIGINT NOT NULL
  );`;
const DEBIT = {
  name: 'plain_debit',
  text: 'UPDATE plain_balances SET amount = amount - $2 WHERE account_id = $1 RETURNING amount',
};
const RECORD = {
  name: 'plain_record',
  text:
    'INSERT INTO plain_ledger (account_id, event_id, amount, balance_after, created_at) ' +
    'SELECT $1, e.id, $2, e.after, $4 FROM unnest($3::text[], $5::bigint[]) AS e(id, after)',
};

interface Tally {
  transactions: number;
  errors: number;
  errorSamples: Set<string>;
  latencies: LatencyRecorder | undefined;
  lastEndedAt: number;
  /** Units each account's committed transactions took. */
  taken: Map<string, number>;
  /** Accounts with a transaction in doubt (an error after BEGIN: rolled back, or its COMMIT unanswered). */
  doubtful: Set<string>;
}

function tally(timed: boolean): Tally {
  return {
    transactions: 0,
    errors: 0,
    errorSamples: new Set(),
    latencies: timed ? new LatencyRecorder() : undefined,
    lastEndedAt: 0,
    taken: new Map(),
    doubtful: new Set(),
  };
}

async function main(): Promise<void> {
  const setup = new pg.Client({ connectionString: databaseUrl });
  await setup.connect();
  await setup.query(SCHEMA);
  const accounts = Array.from({ length: accountCount }, (_, i) => `plain_${i}`);
  await setup.query('INSERT INTO plain_balances (account_id, amount) SELECT a, $2 FROM unnest($1::text[]) AS a', [
    accounts,
    INITIAL_GRANT,
  ]);
  const clients = await Promise.all(
    Array.from({ length: lanes }, async () => {
      const c = new pg.Client({ connectionString: databaseUrl });
      await c.connect();
      return c;
    }),
  );
  let next = 0;
  let eventSeq = 0;
  const units = eventsPerTransaction * EVENT_COST;

  /** Each lane's connection runs transactions back to back until `deadline`; lanes take accounts in turn. */
  const drive = async (deadline: number, t: Tally): Promise<void> => {
    const lane = async (client: pg.Client): Promise<void> => {
      while (performance.now() < deadline) {
        const accountId = accounts[next++ % accounts.length] as string;
        const ids = Array.from({ length: eventsPerTransaction }, () => `ev_plain_${eventSeq++}`);
        const startedAt = performance.now();
        try {
          await client.query('BEGIN');
          const { rows } = await client.query<{ amount: string }>({ ...DEBIT, values: [accountId, units] });
          const after = Number(rows[0]!.amount);
          // Each event's row carries the balance after it: the last one, the balance the update left.
          const afters = ids.map((_, i) => after + (ids.length - 1 - i) * EVENT_COST);
          await client.query({ ...RECORD, values: [accountId, EVENT_COST, ids, Date.now(), afters] });
          await client.query('COMMIT');
          t.transactions++;
          t.taken.set(accountId, (t.taken.get(accountId) ?? 0) + units);
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined);
          t.errors++;
          t.doubtful.add(accountId);
          if (t.errorSamples.size < MAX_ERROR_SAMPLES) t.errorSamples.add(String(error).slice(0, 300));
        }
        const endedAt = performance.now();
        t.latencies?.push(endedAt - startedAt);
        t.lastEndedAt = endedAt;
      }
    };
    await Promise.all(clients.map(lane));
  };

  const { warm, timed, elapsedS } = await timedRun(drive, tally, warmupS, durationS);

  // Every balance: its start less what the committed transactions took, equal to its start less its ledger rows,
  // and its last ledger row's balance_after.
  const findings: Finding[] = [];
  const { rows } = await setup.query<{
    account_id: string;
    amount: string;
    booked: string | null;
    last: string | null;
  }>(
    `SELECT b.account_id, b.amount,
            (SELECT sum(l.amount) FROM plain_ledger l WHERE l.account_id = b.account_id) AS booked,
            (SELECT l.balance_after FROM plain_ledger l WHERE l.account_id = b.account_id ORDER BY l.id DESC LIMIT 1)
              AS last
       FROM plain_balances b`,
  );
  for (const r of rows) {
    const amount = Number(r.amount);
    const booked = Number(r.booked ?? 0);
    const taken = (warm.taken.get(r.account_id) ?? 0) + (timed.taken.get(r.account_id) ?? 0);
    const problems = [
      amount !== INITIAL_GRANT - booked ? `amount ${amount}, start less its ledger rows ${INITIAL_GRANT - booked}` : '',
      r.last !== null && Number(r.last) !== amount ? `amount ${amount}, last balance_after ${r.last}` : '',
      !warm.doubtful.has(r.account_id) && !timed.doubtful.has(r.account_id) && booked !== taken
        ? `ledger rows ${booked}, committed transactions took ${taken}`
        : '',
    ].filter((p) => p !== '');
    for (const message of problems)
      findings.push({ accountId: r.account_id, label: LEDGER_LABEL, check: 'amount', message });
  }

  const events = timed.transactions * eventsPerTransaction;
  const figures: StoreOnlyFigures = {
    type: 'result',
    baseline: 'plain-sql',
    dialect: 'postgres',
    eventsPerTransaction,
    lanes,
    accounts: accounts.length,
    grants: 1,
    durationS,
    elapsedS,
    transactions: timed.transactions,
    transactionsPerS: timed.transactions / elapsedS,
    events,
    eventsPerS: events / elapsedS,
    refused: 0,
    errors: timed.errors,
    errorSamples: [...timed.errorSamples],
    latencyMs: (timed.latencies as LatencyRecorder).figures(),
    ledger: { accountsChecked: rows.length, findings },
  };
  sendStoreOnlyMessage(figures);
  await Promise.all([...clients, setup].map((c) => c.end()));
}

runBaselineChild('plain-SQL baseline', main);
