/**
 * Baseline: the store alone, no HTTP. Opens the project's real store on DATABASE_URL (the
 * migrations run as the server runs them), seeds a company and funded accounts through the
 * engine seam (`seedCompany`, `seedFundedAccounts`: the initial grant and, with `--grants N`, the
 * N − 1 others the HTTP scenarios' balances hold), then runs N-event transactions back to
 * back for `--duration` seconds, each `store.write(tx => ingestGroup(ledger, tx, now, [request]))` (the
 * seam's groupWriter): the server's own ingest code with one request per transaction (the server groups
 * many requests per transaction; this does not). `--lanes` such loops run at once. Every balance
 * is then read back and checked against what the committed transactions took.
 *
 * Run by the bench as its own process (see lib/storeonly.ts for the protocol on stdout):
 *   DATABASE_URL=sqlite:/tmp/x.sqlite node --import tsx bench/baselines/store.ts --events 100 --duration 5
 * It reaches the engine through bench/lib/engine.ts only: the public Store interface and the
 * operations, never a store's internals.
 */
import { parseArgs } from 'node:util';
import {
  groupWriter,
  ingestRequest,
  newId,
  normalizeEvent,
  openStore,
  ANY_TIME,
  balanceEffects,
  EngineLedger,
  seedCompany,
  seedFundedAccounts,
  systemClock,
  type EventInput,
  type IngestRequest,
  type NormalizedEvent,
  type Store,
} from '../lib/engine.js';
import { eventBatches, type EventBatch } from '../lib/bodies.js';
import { LatencyRecorder } from '../lib/latency.js';
import { extraGrants, grantedUnits, type BenchGrant } from '../lib/grants.js';
import { compareBalance, Ledger, type Finding } from '../lib/ledger.js';
import {
  DEFAULT_GRANT_UNITS,
  DEFAULT_GRANTS,
  DENOMINATION,
  INITIAL_GRANT,
  parseGrantCount,
  POOL_ACCOUNTS,
} from '../lib/options.js';
import { scatter } from '../lib/scatter.js';
import {
  CHILD_FLAGS,
  runBaselineChild,
  sendStoreOnlyMessage,
  type StoreOnlyFigures,
  timedRun,
} from '../lib/storeonly.js';

const DEFAULT_EVENTS = 100;
const DEFAULT_DURATION_S = 5;
const DEFAULT_WARMUP_S = 1;
const DEFAULT_LANES = 1;
const DEFAULT_PG_POOL_SIZE = 8;
/** Accounts created (with their grant) per seeding transaction. */
const SEED_ACCOUNTS_PER_TX = 100;
const MAX_ERROR_SAMPLES = 3;
const ERROR_SAMPLE_CHARS = 300;
const LEDGER_LABEL = 'store-only';

function count(flag: string, raw: string | undefined, fallback: number, allowZero = false): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || (!allowZero && n === 0))
    throw new Error(`${flag}: not a usable number: "${raw}"`);
  return n;
}

function wholeCount(flag: string, raw: string | undefined, fallback: number): number {
  const n = count(flag, raw, fallback);
  if (!Number.isInteger(n)) throw new Error(`${flag} needs a whole number, got "${raw}"`);
  return n;
}

const { values } = parseArgs({
  options: {
    ...CHILD_FLAGS,
    grants: { type: 'string' },
    'grant-units': { type: 'string' },
    'pg-pool-size': { type: 'string' },
  },
  strict: true,
  allowPositionals: false,
});
const eventsPerTransaction = wholeCount('--events', values.events, DEFAULT_EVENTS);
const durationS = count('--duration', values.duration, DEFAULT_DURATION_S);
const warmupS = count('--warmup', values.warmup, DEFAULT_WARMUP_S, true);
const lanes = wholeCount('--lanes', values.lanes, DEFAULT_LANES);
const accountCount = wholeCount('--accounts', values.accounts, POOL_ACCOUNTS);
const grantCount = values.grants === undefined ? DEFAULT_GRANTS : parseGrantCount(values.grants);
const grantUnits = wholeCount('--grant-units', values['grant-units'], DEFAULT_GRANT_UNITS);
const pgPoolSize = wholeCount('--pg-pool-size', values['pg-pool-size'], DEFAULT_PG_POOL_SIZE);
const databaseUrl = process.env.DATABASE_URL;
if (databaseUrl === undefined || databaseUrl === '') throw new Error('DATABASE_URL is required');

/**
 * A user, their company, and `count` accounts each granted INITIAL_GRANT and the `grants` others,
 * through the engine's seam.
 */
async function seed(
  store: Store,
  count: number,
  grants: readonly BenchGrant[],
): Promise<{ companyId: string; accounts: string[] }> {
  const companyId = await seedCompany(store, 'Bench Store Inc');
  const accounts = Array.from({ length: count }, () => newId('a'));
  for (let start = 0; start < accounts.length; start += SEED_ACCOUNTS_PER_TX) {
    const chunk = accounts.slice(start, start + SEED_ACCOUNTS_PER_TX);
    await store.write((tx) =>
      seedFundedAccounts(tx, companyId, chunk, DENOMINATION, INITIAL_GRANT, {
        reason: 'bench store-only seed',
        grants: () => grants,
      }),
    );
  }
  return { companyId, accounts };
}

/** The events of each body the HTTP scenarios send, normalised as the route normalises them. */
function normalized(batch: EventBatch): NormalizedEvent[] {
  const inputs = JSON.parse(batch.body.toString()) as EventInput[];
  return inputs.map((input, i) => {
    const n = normalizeEvent(input, i, ANY_TIME);
    if (!n.ok) throw new Error(`bench event does not normalise: ${n.message}`);
    return n.value;
  });
}

interface Tally {
  transactions: number;
  events: number;
  refused: number;
  errors: number;
  errorSamples: Set<string>;
  latencies: LatencyRecorder | undefined;
  lastEndedAt: number;
}

function tally(timed: boolean): Tally {
  return {
    transactions: 0,
    events: 0,
    refused: 0,
    errors: 0,
    errorSamples: new Set(),
    latencies: timed ? new LatencyRecorder() : undefined,
    lastEndedAt: 0,
  };
}

function sample(t: Tally, text: string): void {
  if (t.errorSamples.size < MAX_ERROR_SAMPLES) t.errorSamples.add(text.slice(0, ERROR_SAMPLE_CHARS));
}

async function main(): Promise<void> {
  const store = await openStore(databaseUrl as string, { pgPoolSize });
  // The balance effects the server composes at start (refills, plan alerts, webhooks), so that
  // every transaction runs what the server's does.
  const write = groupWriter(new EngineLedger(balanceEffects()));

  const grants = extraGrants(grantCount, grantUnits, Date.now());
  const { companyId, accounts } = await seed(store, accountCount, grants);
  const ledger = new Ledger();
  for (const accountId of accounts) ledger.open(accountId, LEDGER_LABEL, grantedUnits(grants));
  const batches = eventBatches(eventsPerTransaction);
  const events = batches.map(normalized);
  const pick = scatter(accounts.length);
  let sent = 0;

  /** `lanes` loops of back-to-back transactions until `deadline` (performance.now()). */
  const drive = async (deadline: number, t: Tally): Promise<void> => {
    const lane = async (): Promise<void> => {
      while (performance.now() < deadline) {
        const i = sent++;
        const accountId = accounts[pick(i)] as string;
        const variant = i % batches.length;
        const batch = batches[variant] as EventBatch;
        const request: IngestRequest = ingestRequest(companyId, accountId, events[variant] as NormalizedEvent[]);
        const startedAt = performance.now();
        try {
          const [outcome] = await store.write((tx) => write(tx, systemClock.now(), [request]));
          if (outcome?.ok === true) {
            ledger.debit(accountId, batch.total);
            t.transactions++;
            t.events += batch.costs.length;
          } else {
            t.refused++;
            sample(t, `refused: ${outcome?.reason ?? 'no outcome'}: ${outcome?.message ?? ''}`);
          }
        } catch (error) {
          // Rolled back, or (a lost commit acknowledgement) in doubt: the check allows either.
          ledger.uncertainDebit(accountId, batch.total);
          t.errors++;
          sample(t, `error: ${error instanceof Error ? error.message : String(error)}`);
        }
        const endedAt = performance.now();
        t.latencies?.push(endedAt - startedAt);
        t.lastEndedAt = endedAt;
      }
    };
    await Promise.all(Array.from({ length: lanes }, lane));
  };

  const { timed, elapsedS } = await timedRun(drive, tally, warmupS, durationS);

  const findings: Finding[] = [];
  for (const accountId of accounts) {
    const balance = await store.read((tx) => tx.balances.findBalance(accountId, DENOMINATION));
    if (balance === undefined) {
      findings.push({ accountId, label: LEDGER_LABEL, check: 'amount', message: 'balance missing' });
      continue;
    }
    findings.push(
      ...compareBalance(ledger.book(accountId), {
        amount: balance.amount,
        pending: balance.pending,
        available: balance.amount - balance.pending,
      }),
    );
  }

  const figures: StoreOnlyFigures = {
    type: 'result',
    dialect: store.dialect,
    eventsPerTransaction,
    lanes,
    accounts: accounts.length,
    grants: grantCount,
    durationS,
    elapsedS,
    transactions: timed.transactions,
    transactionsPerS: timed.transactions / elapsedS,
    events: timed.events,
    eventsPerS: timed.events / elapsedS,
    refused: timed.refused,
    errors: timed.errors,
    errorSamples: [...timed.errorSamples],
    latencyMs: (timed.latencies as LatencyRecorder).figures(),
    ledger: { accountsChecked: accounts.length, findings },
  };
  sendStoreOnlyMessage(figures);
  await store.close();
}

runBaselineChild('store-only baseline', main);
