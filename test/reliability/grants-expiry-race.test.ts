// Guarantee: grant expiries are applied exactly once when everything races them. Two server processes on one
// PostgreSQL database, both with their background jobs running, and many balances whose grants (three each) all
// expire at the same instant T. Both processes' test clocks are moved to T at once: each advance runs the
// `apply-grant-instants` job, so do the interval workers of both, and reads (GET balance, which applies what is due;
// GET grants) and events (whose lock applies what is due) hit both processes all along. Then the same with a
// `kill -9` of one process in the middle of its job's transaction (seen in pg_stat_activity), the other process and
// the restarted one finishing the work.
//
// Judged exactly: every read shows a balance wholly before or wholly after its expiries (never half), and after T
// on its process wholly after; each expired grant with unheld units has one `grant_expiry` transaction of −unheld
// at T (unheld replayed from the usage before T against the drawing order) and every other grant none; nothing is
// drawn from an expired grant; every balance ends at initial + Σ grants − Σ usage − Σ expiries; the grants invariant
// holds in the store (checkInvariant) and through the API; the ledger audit is clean.
import assert from 'node:assert/strict';
import { type TestContext, describe, test } from 'node:test';
import pg from 'pg';
import { type TestDatabase, freshDatabase } from '../cli/support.js';
import { POSTGRES_ONLY_SKIP } from '../support/stores.js';
import { until } from '../support/wait.js';
import { report, rng, seed, size } from './support/config.js';
import {
  type BalanceJson,
  type GrantJson,
  type TxLite,
  apiMatchesStore,
  auditGrantLedger,
  listBalanceGrants,
  storeBalances,
  storeInvariant,
} from './support/grants.js';
import { type Answer, send } from './support/http.js';
import { judge } from './support/judge.js';
import { type Targets, closeTargets, sendRetried, targets } from './support/load.js';
import { type ChildServer, startChildServer } from './support/server.js';
import { type Company, signUp } from './support/setup.js';

const ACCOUNTS = size(60, 400);
const DENOMINATIONS = 10;
const INITIAL = 1_000;
const HOUR_MS = 3_600_000;
/** Read loops per process (each a GET balance, then GET grants). */
const READERS = 6;

interface Bal {
  accountId: string;
  denomination: string;
  /** Odd denominations take events during the race; even ones are only read. */
  written: boolean;
  initialGrant: string;
  /** The three grants expiring at T, in drawing order (distinct priorities below the initial grant's 50). */
  expiring: { grantId: string; amount: number; priority: number }[];
  preUsage: number;
  /** The state a read may show: before T's expiries (next_expiry set unless nothing is left), and after. */
  before: { amount: number; remaining: Map<string, number> };
  after: { amount: number };
}

const key = (accountId: string, denomination: string) => `${accountId}\u0000${denomination}`;

/** Runs `f` over `items` with at most `n` at once. */
async function pool<T>(items: readonly T[], n: number, f: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await f(items[i]!, i);
      }
    }),
  );
}

function ok(a: Answer, status: number, what: string): Answer {
  assert.equal(a.status, status, `${what}: ${a.status} ${a.text.slice(0, 300)}`);
  return a;
}

async function clockOf(url: string, co: Company): Promise<number> {
  const a = ok(await send(url, { method: 'GET', path: '/v1/test_clock', auth: co.auth }), 200, 'GET test_clock');
  return Date.parse(a.json.data.now);
}

/** Accounts with DENOMINATIONS balances each, three grants expiring at `expiresAt` per balance, usage before T. */
async function seedBalances(
  servers: ChildServer[],
  co: Company,
  expiresAtMs: number,
  random: ReturnType<typeof rng>,
): Promise<Bal[]> {
  const url = (i: number) => servers[i % servers.length]!.url;
  const accounts: string[] = [];
  await pool(
    Array.from({ length: ACCOUNTS }, (_, i) => i),
    16,
    async (i) => {
      const a = await send(url(i), {
        method: 'POST',
        path: `/v1/companies/${co.companyId}/accounts`,
        auth: co.auth,
        body: { name: `race ${i}` },
      });
      accounts[i] = ok(a, 200, 'create account').json.data.account_id;
    },
  );
  const bals: Bal[] = [];
  for (const accountId of accounts)
    for (let d = 0; d < DENOMINATIONS; d++) {
      const priorities = [10 + random.int(10), 20 + random.int(10), 30 + random.int(10)];
      bals.push({
        accountId,
        denomination: `d${d}`,
        written: d % 2 === 1,
        initialGrant: '',
        // Created in a shuffled order, so the drawing order is the priorities', not the creation's.
        expiring: priorities.map((p) => ({ grantId: '', amount: 20 + random.int(200), priority: p })),
        preUsage: 0,
        before: { amount: 0, remaining: new Map() },
        after: { amount: 0 },
      });
    }
  const expiresAt = new Date(expiresAtMs).toISOString();
  await pool(bals, 24, async (b, i) => {
    const path = `/v1/accounts/${b.accountId}/balance/${b.denomination}`;
    ok(await send(url(i), { method: 'POST', path, auth: co.auth, body: { amount: INITIAL } }), 200, 'create balance');
    const order = [2, 0, 1];
    for (const j of order) {
      const g = b.expiring[j]!;
      const a = await send(url(i + j), {
        method: 'POST',
        path: `${path}/grants`,
        auth: co.auth,
        body: { amount: g.amount, priority: g.priority, expires_at: expiresAt, name: `race ${j}` },
      });
      g.grantId = ok(a, 201, 'create grant').json.data.grant_id;
    }
  });
  // Usage before T: two events per balance.
  const byAccount = new Map<string, Bal[]>();
  for (const b of bals) byAccount.set(b.accountId, [...(byAccount.get(b.accountId) ?? []), b]);
  await pool([...byAccount.values()], 16, async (mine, i) => {
    const events: Record<string, unknown>[] = [];
    for (const b of mine) {
      const total = b.expiring.reduce((s, g) => s + g.amount, 0);
      // Most balances keep units in their grants until T; one in eight uses them up (and some of the initial grant).
      const usage = random.int(8) === 0 ? total + random.int(150) : random.int(total);
      const first = random.int(usage + 1);
      for (const amount of [first, usage - first])
        if (amount > 0) events.push({ type: 'pre', cost_override: { amount, denomination: b.denomination } });
      b.preUsage = usage;
    }
    if (events.length > 0)
      ok(
        await send(url(i), {
          method: 'POST',
          path: `/v1/accounts/${mine[0]!.accountId}/events`,
          auth: co.auth,
          body: { events },
        }),
        200,
        'usage before T',
      );
  });
  // What each balance must read before and after T, from the client's own figures.
  await pool(bals, 16, async (b, i) => {
    const listed = await listBalanceGrants(url(i), co.auth, b.accountId, b.denomination);
    assert.ok('grants' in listed, 'GET grants');
    const initial = listed.grants.find((g) => g.source === 'initial');
    assert.ok(initial, 'the initial grant is listed');
    b.initialGrant = initial.grant_id;
    let left = b.preUsage;
    for (const g of b.expiring) {
      const drawn = Math.min(g.amount, left);
      left -= drawn;
      b.before.remaining.set(g.grantId, g.amount - drawn);
    }
    const unheld = [...b.before.remaining.values()].reduce((s, n) => s + n, 0);
    b.before.remaining.set(b.initialGrant, INITIAL - left);
    b.before.amount = INITIAL - left + unheld;
    b.after.amount = INITIAL - left;
  });
  return bals;
}

interface Reads {
  problems: string[];
  count: number;
  /** Reads that showed the balance before its expiries (sent before their process reached T, or racing it). */
  before: number;
  after: number;
  connectionErrors: number;
}

/**
 * One read of a balance (GET balance, then GET grants), judged: each answer wholly before or wholly after T's
 * expiries, and after them when the process was known to be at T (`atT`) when it was sent.
 */
async function readOnce(tg: Targets, server: ChildServer, co: Company, b: Bal, atT: boolean, reads: Reads) {
  const agent = tg.agents.get(server);
  const at = `${server.url} ${b.accountId} ${b.denomination}${atT ? ' (process at T)' : ''}`;
  let balance: Answer;
  let listed: Awaited<ReturnType<typeof listBalanceGrants>>;
  try {
    balance = await send(
      server.url,
      { method: 'GET', path: `/v1/accounts/${b.accountId}/balance/${b.denomination}`, auth: co.auth },
      agent,
    );
    listed = await listBalanceGrants(server.url, co.auth, b.accountId, b.denomination, agent);
  } catch {
    reads.connectionErrors++;
    return;
  }
  reads.count++;
  if (balance.status !== 200 || 'refused' in listed) {
    const a = balance.status !== 200 ? balance : (listed as { refused: Answer }).refused;
    reads.problems.push(`${at}: ${a.status} ${a.text.slice(0, 200)}`);
    return;
  }
  const bj = balance.json.data as BalanceJson;
  const unheldBefore = b.expiring.reduce((s, g) => s + b.before.remaining.get(g.grantId)!, 0);
  // GET balance: before (the expiring units still there, next_expiry naming them) or after (gone, no next expiry).
  if (!b.written) {
    const isBefore =
      bj.amount === b.before.amount &&
      (unheldBefore === 0 ? bj.next_expiry === null : bj.next_expiry?.amount === unheldBefore);
    const isAfter = bj.amount === b.after.amount && bj.next_expiry === null;
    if ((!isBefore && !isAfter) || (atT && !isAfter))
      reads.problems.push(
        `${at}: GET balance ${JSON.stringify(bj)}; before T ${b.before.amount} (next ${unheldBefore}), ` +
          `after ${b.after.amount}`,
      );
    if (isBefore && !isAfter) reads.before++;
    else reads.after++;
  } else if (bj.amount > b.before.amount) reads.problems.push(`${at}: GET balance ${bj.amount} > ${b.before.amount}`);
  // GET grants: the three expiring grants all before (their remainders) or all after (nothing left).
  const mine = b.expiring.map((g) => listed.grants.find((x: GrantJson) => x.grant_id === g.grantId));
  if (mine.some((g) => g === undefined)) {
    reads.problems.push(`${at}: GET grants lacks an expiring grant: ${JSON.stringify(listed.grants)}`);
    return;
  }
  const shown = mine as GrantJson[];
  const allBefore = shown.every((g) => g.remaining === b.before.remaining.get(g.grant_id) && g.held === 0);
  const allAfter = shown.every((g) => g.remaining === 0 && g.held === 0);
  if ((!allBefore && !allAfter) || (atT && (!allAfter || shown.some((g) => g.status !== 'expired'))))
    reads.problems.push(
      `${at}: GET grants shows ${JSON.stringify(shown.map((g) => [g.grant_id, g.remaining, g.held, g.status]))}; ` +
        `before T ${JSON.stringify([...b.before.remaining])}`,
    );
  if (!b.written) {
    const initial = listed.grants.find((g) => g.grant_id === b.initialGrant);
    if (initial?.remaining !== b.after.amount)
      reads.problems.push(`${at}: the initial grant shows ${initial?.remaining}, expected ${b.after.amount}`);
  }
}

interface Writes {
  ops: { id: string; key: string; amount: number; bal: Bal; answer: Answer | null; stuck: boolean }[];
}

/** Reads (and, on a process known to be at T, events on written balances) until `stop()`; one loop per worker. */
function startRacers(
  tg: Targets,
  server: ChildServer,
  co: Company,
  bals: Bal[],
  o: {
    /** The process is known to be at T (its clock said so since its last start). */
    atT: () => boolean;
    /** This process may be sent requests (reads; events too once at T). */
    enabled: () => boolean;
    stop: () => boolean;
    reads: Reads;
    writes: Writes;
    random: ReturnType<typeof rng>;
  },
): Promise<void> {
  const written = bals.filter((b) => b.written);
  let n = 0;
  const reader = async () => {
    while (!o.stop()) {
      if (!server.running() || !o.enabled()) {
        await until('the process serves', () => (server.running() && o.enabled()) || o.stop(), {
          everyMs: 10,
          attempts: 100_000,
        });
        continue;
      }
      const atT = o.atT();
      await readOnce(tg, server, co, o.random.pick(bals), atT, o.reads);
    }
  };
  const writer = async () => {
    while (!o.stop()) {
      if (!o.atT() || !server.running() || !o.enabled()) {
        await until('the process is at T', () => (o.atT() && server.running() && o.enabled()) || o.stop(), {
          everyMs: 10,
          attempts: 100_000,
        });
        continue;
      }
      const bal = o.random.pick(written);
      const id = `race-${server.port}-${n++}`;
      const amount = 1 + o.random.int(3);
      const op = { id, key: id, amount, bal, answer: null as Answer | null, stuck: false };
      o.writes.ops.push(op);
      const r = await sendRetried(
        { servers: [server], agents: tg.agents },
        {
          method: 'POST',
          path: `/v1/accounts/${bal.accountId}/events`,
          auth: co.auth,
          body: { events: [{ id, type: 'race', cost_override: { amount, denomination: bal.denomination } }] },
          headers: { 'idempotency-key': id },
        },
        { deadlineMs: 1_000, inUseBudgetMs: 1_000, aborted: () => !server.running() },
      );
      op.answer = r.answer;
      op.stuck = r.stuck;
    }
  };
  return Promise.all([...Array.from({ length: READERS }, reader), writer()]).then(() => undefined);
}

/** Balances whose grant instants are due at T and not yet applied, as the store says. */
async function dueAt(client: pg.Client, atMs: number): Promise<number> {
  const r = await client.query('SELECT COUNT(*) AS n FROM balances WHERE grants_due_at <= $1', [atMs]);
  return Number(r.rows[0].n);
}

/** A transaction of the grant job in flight (no other transaction writes balances then): its backend pid. */
async function jobInFlight(client: pg.Client): Promise<number | undefined> {
  const r = await client.query(
    `SELECT pid, state, left(query, 80) AS query FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL
        AND (query ILIKE '%FOR UPDATE OF b%' OR query ILIKE '%UPDATE grants SET%'
             OR query ILIKE '%grants_due_at = CASE%')`,
  );
  return r.rows.length > 0 ? Number(r.rows[0].pid) : undefined;
}

interface RaceOutcome {
  reads: Reads;
  writes: Writes;
  problems: string[];
  figures: Record<string, unknown>;
}

async function raceRun(t: TestContext, withKill: boolean): Promise<RaceOutcome> {
  const s = seed(withKill ? 16_302 : 16_301);
  t.diagnostic(`seed ${s} (RELIABILITY_SEED=${s} replays the same balances and requests)`);
  const random = rng(s);
  const db: TestDatabase = await freshDatabase('postgres');
  const seeders: ChildServer[] = [];
  const servers: ChildServer[] = [];
  const watcher = new pg.Client({ connectionString: db.url });
  let stopping = false;
  let tg: Targets | undefined;
  try {
    const env = {
      BILLING_WORKERS: '1',
      BILLING_WORKER_INTERVAL_MS: '20',
      BILLING_IDEMPOTENCY_LEASE_MS: '2000',
      BILLING_PG_POOL_SIZE: '8',
    };
    // Seeded through two servers of their own, without background jobs: nothing is due before T, and two processes
    // polling every 20 ms for nothing would take the CPU the seeding needs. The race runs on two servers started
    // after it, jobs running.
    const seedEnv = { ...env, BILLING_WORKERS: '0' };
    seeders.push(await startChildServer(db.url, seedEnv), await startChildServer(db.url, seedEnv));
    const co = await signUp(seeders[0]!.url);
    const started = Date.now();
    const T = Math.max(await clockOf(seeders[0]!.url, co), await clockOf(seeders[1]!.url, co)) + HOUR_MS;
    const bals = await seedBalances(seeders, co, T, random);
    const seededMs = Date.now() - started;
    for (const x of seeders) await x.stop();
    servers.push(await startChildServer(db.url, env), await startChildServer(db.url, env));
    const [a, b] = servers as [ChildServer, ChildServer];
    tg = targets(servers);
    await watcher.connect();
    const total = bals.length;
    // A grant the usage before T used up has left its balance's lots: nothing of it expires.
    const due = bals.filter((x) => x.expiring.some((g) => x.before.remaining.get(g.grantId)! > 0)).length;
    t.diagnostic(`seeded ${total} balances in ${seededMs} ms; ${due} with units expiring at T`);
    assert.equal(await dueAt(watcher, T), due, 'every balance with units left in its grants has them due at T');
    assert.equal(await dueAt(watcher, T - 1), 0, 'nothing is due before T');

    const reads: Reads = { problems: [], count: 0, before: 0, after: 0, connectionErrors: 0 };
    const writes: Writes = { ops: [] };
    const atT = new Map<ChildServer, boolean>(servers.map((x) => [x, false]));
    // In the kill run, `a` is sent nothing until it is back at T: any transaction writing balances before the kill
    // is then its grant job's.
    const enabled = new Map<ChildServer, boolean>(servers.map((x) => [x, !withKill || x === b]));
    const advance = (x: ChildServer) =>
      send(x.url, {
        method: 'POST',
        path: '/v1/test_clock/advance',
        auth: co.auth,
        body: { to: new Date(T).toISOString() },
      });
    /** Marks `x` at T once its clock says so (its advance sets the clock first, then runs the jobs). */
    const reachT = async (x: ChildServer) => {
      await until(`${x.url} at T`, async () => (await clockOf(x.url, co)) >= T, { everyMs: 5 });
      atT.set(x, true);
    };
    const racers = servers.map((x, i) =>
      startRacers(tg!, x, co, bals, {
        atT: () => atT.get(x) === true,
        enabled: () => enabled.get(x) === true,
        stop: () => stopping,
        reads,
        writes,
        random: rng(s + 1 + i),
      }),
    );
    const raceStarted = Date.now();
    let dueAtKill: number | undefined;
    let killedPid: number | undefined;
    let killedAnswer: number | null = null;
    const advances: Promise<Answer | null>[] = [];
    if (!withKill) {
      // Both processes move to T at once; their jobs, interval workers, reads and events race.
      for (const x of servers) advances.push(advance(x));
      await Promise.all(servers.map(reachT));
    } else {
      // Only `a` moves to T first; `b` reads at its own (earlier) clock. `a` is killed inside its job's transaction.
      const killed = advance(a).then(
        (r) => r,
        () => null,
      );
      await reachT(a);
      killedPid = await until('a grant job transaction in flight', () => jobInFlight(watcher), {
        everyMs: 1,
        attempts: 20_000,
      });
      await a.kill9();
      atT.set(a, false);
      killedAnswer = (await killed)?.status ?? null;
      // The dead backend's transaction is rolled back once PostgreSQL sees its client gone.
      await until('the killed job transaction ended', async () => (await jobInFlight(watcher)) === undefined, {
        everyMs: 10,
      });
      dueAtKill = await dueAt(watcher, T);
      // `b` and the interval workers finish the work; `a` comes back (its clock restarts before T) and is moved to T.
      advances.push(advance(b));
      await reachT(b);
      await a.restart();
      advances.push(advance(a));
      await reachT(a);
      enabled.set(a, true);
    }
    const answers = await Promise.all(advances);
    for (const r of answers) assert.equal(r?.status, 200, `advance: ${r?.status} ${r?.text.slice(0, 200)}`);
    await until('every expiry due at T applied', async () => (await dueAt(watcher, T)) === 0, { everyMs: 20 });
    const appliedMs = Date.now() - raceStarted;
    // Reads and events go on for as many reads again after the work is done, then stop.
    const readsAtDone = reads.count;
    await until('reads after the expiries', () => reads.count >= readsAtDone + 200, { everyMs: 10 });
    stopping = true;
    await Promise.all(racers);

    // Events whose answer a kill cut off: sent again with their key until answered.
    for (const op of writes.ops.filter((w) => w.answer === null || w.answer.status >= 500 || w.stuck)) {
      const r = await sendRetried(tg, {
        method: 'POST',
        path: `/v1/accounts/${op.bal.accountId}/events`,
        auth: co.auth,
        body: {
          events: [
            { id: op.id, type: 'race', cost_override: { amount: op.amount, denomination: op.bal.denomination } },
          ],
        },
        headers: { 'idempotency-key': op.key },
      });
      op.answer = r.answer;
      op.stuck = r.stuck;
    }

    const problems: string[] = [];
    problems.push(...(await judge(db)));
    const balances = await storeBalances(db, [...new Set(bals.map((x) => x.accountId))]);
    problems.push(...storeInvariant(balances, T));
    const ledger = await auditGrantLedger(db, co.companyId, balances, T);
    problems.push(...ledger.problems);
    problems.push(...exactly(bals, balances, ledger.transactions, writes, T));
    problems.push(...(await apiMatchesStore(db, b.url, co.auth, balances, T, tg.agents.get(b))));
    const figures = {
      seed: s,
      kill: withKill,
      balances: total,
      balances_due: due,
      grants_expiring: total * 3,
      seed_ms: seededMs,
      applied_ms: appliedMs,
      due_after_kill: dueAtKill ?? null,
      killed_backend: killedPid ?? null,
      killed_advance_answer: killedAnswer,
      reads: reads.count,
      reads_before: reads.before,
      reads_after: reads.after,
      read_connection_errors: reads.connectionErrors,
      events: writes.ops.length,
      expired_at_instant: ledger.figures.expiredAtInstant,
      problems: problems.length,
    };
    report(t, withKill ? 'grants-expiry-kill' : 'grants-expiry-race', figures);
    return { reads, writes, problems, figures };
  } finally {
    stopping = true;
    if (tg) closeTargets(tg);
    await watcher.end().catch(() => undefined);
    for (const x of [...seeders, ...servers]) await x.kill9();
    await db.drop();
  }
}

/**
 * The client's own expectation, balance by balance: the usage before T drew the expiring grants in drawing order
 * (as the client replays it, transaction by transaction), each expiring grant then left with one `grant_expiry`
 * of −unheld at T (none when nothing was left), nothing after T came from them, and the amount is initial +
 * Σ grants − Σ usage − Σ expiries. Every event answered 200 is in the ledger once.
 */
function exactly(
  bals: Bal[],
  balances: { accountId: string; denomination: string; amount: number }[],
  txs: TxLite[],
  writes: Writes,
  T: number,
): string[] {
  const v: string[] = [];
  const stored = new Map(balances.map((x) => [key(x.accountId, x.denomination), x]));
  const ledger = new Map<string, TxLite[]>();
  for (const t of txs) {
    const k = key(t.accountId, t.denomination);
    ledger.set(k, [...(ledger.get(k) ?? []), t]);
  }
  const usageEvents = new Map<string, number>();
  for (const t of txs)
    if (t.kind === 'usage' && t.eventId !== null) usageEvents.set(t.eventId, (usageEvents.get(t.eventId) ?? 0) + 1);
  for (const op of writes.ops) {
    const n = usageEvents.get(op.id) ?? 0;
    if (n > 1 || (op.answer?.status === 200 && n !== 1))
      v.push(`event ${op.id}: answered ${op.answer?.status}, ${n} usage transactions`);
    else if (op.answer?.status !== 200)
      v.push(`event ${op.id}: answered ${op.answer?.status ?? 'nothing'} ${op.answer?.text.slice(0, 200) ?? ''}`);
  }
  for (const b of bals) {
    const at = `${b.accountId} ${b.denomination}`;
    const mine = ledger.get(key(b.accountId, b.denomination)) ?? [];
    const left = new Map(b.expiring.map((g) => [g.grantId, g.amount]));
    let usage = 0;
    let expired = 0;
    for (const t of mine) {
      if (t.kind === 'usage') {
        usage -= t.amount;
        // The client's replay of the drawing order: before T the expiring grants in order, then the initial grant.
        let cost = -t.amount;
        const expect: [string, number][] = [];
        if (t.createdAtMs < T)
          for (const g of b.expiring) {
            const n = Math.min(left.get(g.grantId)!, cost);
            if (n > 0) expect.push([g.grantId, n]);
            left.set(g.grantId, left.get(g.grantId)! - n);
            cost -= n;
          }
        if (cost > 0) expect.push([b.initialGrant, cost]);
        if (JSON.stringify(t.drawnFrom) !== JSON.stringify(expect))
          v.push(
            `${at}: usage ${t.seq} at ${t.createdAtMs} drew ${JSON.stringify(t.drawnFrom)}, ` +
              `${JSON.stringify(expect)} expected`,
          );
      }
      if (t.kind === 'grant_expiry') expired -= t.amount;
    }
    for (const g of b.expiring) {
      const closings = mine.filter(
        (t) => t.grantId === g.grantId && (t.kind === 'grant_expiry' || t.kind === 'grant_void'),
      );
      const unheld = left.get(g.grantId)!;
      const want = unheld > 0 ? [{ kind: 'grant_expiry', amount: -unheld, createdAtMs: T }] : [];
      const got = closings.map((t) => ({ kind: t.kind, amount: t.amount, createdAtMs: t.createdAtMs }));
      if (JSON.stringify(got) !== JSON.stringify(want))
        v.push(`${at}: grant ${g.grantId} closed by ${JSON.stringify(got)}, ${JSON.stringify(want)} expected`);
    }
    const total = b.expiring.reduce((s, g) => s + g.amount, 0);
    const expected = INITIAL + total - usage - [...left.values()].reduce((s, n) => s + n, 0);
    const actual = stored.get(key(b.accountId, b.denomination))?.amount;
    if (actual !== expected || expired !== [...left.values()].reduce((s, n) => s + n, 0))
      v.push(`${at}: amount ${actual}, expected ${expected} (usage ${usage}, expired ${expired})`);
  }
  return v;
}

/**
 * A void whose transaction took its instant before the grant's expires_at, and reaches the balance only after the
 * expiry was applied (its read of the grant is slow: here another transaction holds the grants table, as a busy
 * database or a long lock queue would keep it). The expiry came first in the ledger, so the contract's answer is
 * 409 grant_expired, and the units still held from the grant leave as `grant_expiry` when their event settles.
 */
async function voidAcrossExpiry(t: TestContext): Promise<{ answer: Answer; problems: string[] }> {
  const db = await freshDatabase('postgres');
  const server = await startChildServer(db.url, {
    BILLING_TEST_CLOCK: '0',
    BILLING_WORKERS: '1',
    BILLING_WORKER_INTERVAL_MS: '20',
  });
  const blocker = new pg.Client({ connectionString: db.url });
  const watcher = new pg.Client({ connectionString: db.url });
  try {
    const co = await signUp(server.url);
    const accountId = (
      await send(server.url, {
        method: 'POST',
        path: `/v1/companies/${co.companyId}/accounts`,
        auth: co.auth,
        body: { name: 'void across expiry' },
      })
    ).json.data.account_id as string;
    const path = `/v1/accounts/${accountId}/balance/tokens`;
    ok(await send(server.url, { method: 'POST', path, auth: co.auth, body: { amount: 1_000 } }), 200, 'balance');
    const expiresAtMs = Date.now() + 4_000;
    const created = await send(server.url, {
      method: 'POST',
      path: `${path}/grants`,
      auth: co.auth,
      body: { amount: 100, priority: 10, expires_at: new Date(expiresAtMs).toISOString() },
    });
    const grantId = ok(created, 201, 'create grant').json.data.grant_id as string;
    // A hold takes 60 of its units: they stay held across the expiry, so the grant stays in its balance's lots.
    const hold = {
      method: 'POST',
      path: `/v1/accounts/${accountId}/events`,
      auth: co.auth,
      body: [{ id: 'hold-1', type: 'hold', state: 'pending', cost_override: { amount: 60, denomination: 'tokens' } }],
    };
    ok(await send(server.url, hold), 200, 'hold');

    await blocker.connect();
    await watcher.connect();
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE grants IN ACCESS EXCLUSIVE MODE');
    const voiding = send(server.url, {
      method: 'POST',
      path: `/v1/grants/${grantId}/void`,
      auth: co.auth,
      body: {},
      headers: { 'idempotency-key': 'void-1' },
    });
    await until('the void waits to read its grant', async () => {
      // From another session: inside the blocker's transaction, pg_stat_activity is one cached snapshot.
      const r = await watcher.query(
        `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
           AND wait_event_type = 'Lock' AND query ILIKE '%FROM grants%'`,
      );
      return r.rows.length > 0;
    });
    const waitingAt = Date.now();
    assert.ok(waitingAt < expiresAtMs, `the void took its instant before the expiry (${waitingAt} < ${expiresAtMs})`);
    // The job applies the expiry meanwhile: the held units stay, the 40 unheld ones leave.
    await until(
      'the expiry applied',
      async () =>
        (await db.sql("SELECT 1 FROM transactions WHERE grant_id = ? AND kind = 'grant_expiry'", [grantId])).length > 0,
      { everyMs: 20, attempts: 2_000 },
    );
    await blocker.query('ROLLBACK');
    const answer = await voiding;
    // The hold is cancelled: its 60 units go back to the grant, closed, and leave at once.
    const cancel = await send(server.url, {
      method: 'PUT',
      path: '/v1/events/hold-1',
      auth: co.auth,
      body: { state: 'cancelled' },
    });
    ok(cancel, 200, 'cancel the hold');

    const problems: string[] = [];
    const nowMs = Date.now();
    problems.push(...(await judge(db)));
    const balances = await storeBalances(db, [accountId]);
    problems.push(...storeInvariant(balances, nowMs));
    const ledger = await auditGrantLedger(db, co.companyId, balances, nowMs);
    problems.push(...ledger.problems);
    const closings = ledger.byGrant.get(grantId)!.closings.map((x) => `${x.kind} ${x.amount} at ${x.createdAtMs}`);
    const row = ledger.byGrant.get(grantId)!.row;
    t.diagnostic(
      `void answered ${answer.status} ${answer.text.slice(0, 300)}; grant voided_at ${row.voidedAtMs}, ` +
        `expires_at ${row.expiresAtMs}; closings: ${closings.join(', ')}`,
    );
    const want = ['grant_expiry -40', 'grant_expiry -60'];
    if (JSON.stringify(closings.map((c) => c.split(' at ')[0])) !== JSON.stringify(want))
      problems.push(`grant ${grantId} closed by ${closings.join(', ')}; ${want.join(', ')} expected`);
    return { answer, problems };
  } finally {
    await blocker.end().catch(() => undefined);
    await watcher.end().catch(() => undefined);
    await server.kill9();
    await db.drop();
  }
}

describe('grant expiries racing on two PostgreSQL processes', { skip: POSTGRES_ONLY_SKIP }, () => {
  test(`${ACCOUNTS * DENOMINATIONS} balances, 3 grants each expiring at one instant: jobs of both processes, ` +
    'reads and events race; every expiry applied exactly once, reads never half-expired', {
    timeout: 300_000,
  }, async (t) => {
    const o = await raceRun(t, false);
    assert.deepEqual(o.reads.problems, [], 'reads');
    assert.deepEqual(o.problems, [], 'expiries, balances, invariant, audit');
    assert.ok(o.reads.count > 0 && o.writes.ops.length > 0, 'reads and events raced the expiries');
  });

  test('kill -9 of a process inside its grant job transaction: the rest is applied once, by the others', {
    timeout: 300_000,
  }, async (t) => {
    const o = await raceRun(t, true);
    assert.deepEqual(o.reads.problems, [], 'reads');
    assert.deepEqual(o.problems, [], 'expiries, balances, invariant, audit');
    assert.ok(Number(o.figures.due_after_kill) > 0, 'the kill left expiries to apply (it came mid-job)');
  });

  test('a void that reaches the balance after its grant expired is refused as expired (409), not applied', {
    timeout: 120_000,
  }, async (t) => {
    const o = await voidAcrossExpiry(t);
    assert.equal(o.answer.status, 409, `void after the expiry: ${o.answer.status} ${o.answer.text.slice(0, 300)}`);
    assert.equal(o.answer.json?.error?.code, 'grant_expired');
    assert.deepEqual(o.problems, [], 'closings, invariant, audit');
  });
});
