// Guarantee: credit grants come through `kill -9` of a server under load exact. The crash test's machinery
// (crash.test.ts: SQLite with one server killed and restarted on its file; PostgreSQL with two servers, a random one
// killed each time), on one balance that the load draws from while, beside it, grants are created with expiries a
// few seconds ahead (on the real clock shared by every process: a restarted server's test clock would start over),
// some of them voided (POST /v1/grants/{id}/void with an Idempotency-Key, retried after a crash like every request),
// and holds (pending events) are taken from the grants and settled below, at or above their cost, or cancelled,
// before or after their grants expire or are voided. The background job (every process runs it) applies the
// expiries nobody touches.
//
// After the last restart every interrupted request is retried with its key and the run settles (every expiry
// passed and applied). Then: nothing acknowledged is lost and nothing applied twice (events, holds, settles, grant
// creations, voids); each grant has at most one expiry or void at its instant, plus one per settle of units held
// from it, and its units add up (support/grants.ts); the grants invariant holds in the store (checkInvariant on the
// balance row's lots) and through the API; the ledger audit is clean.
import assert from 'node:assert/strict';
import { type TestContext, describe, test } from 'node:test';
import { CLI_DIALECTS, type TestDatabase, freshDatabase } from '../cli/support.js';
import { until } from '../support/wait.js';
import { FULL, report, rng, seed, size } from './support/config.js';
import { apiMatchesStore, auditGrantLedger, grantRows, storeBalances, storeInvariant } from './support/grants.js';
import { type Answer, type Send, sleep } from './support/http.js';
import { judge } from './support/judge.js';
import {
  type Attempted,
  type Load,
  type Paced,
  type Targets,
  closeTargets,
  sendRetried,
  startLoad,
  startPaced,
  targets,
} from './support/load.js';
import { type ChildServer, startChildServer } from './support/server.js';
import { type Company, account, signUp } from './support/setup.js';

const KILLS = size(3, 20);
const EVENTS_PER_SECOND = 400;
const EVENTS_PER_REQUEST = 10;
/** Load between two kills. */
const BETWEEN_KILLS_MS = size(1500, 3000);
const INITIAL = 1_000_000_000;
const GRANTS_PER_SECOND = 8;
const HOLDS_PER_SECOND = 6;
/** A grant expires this long after it is asked for, plus up to EXPIRY_SPREAD_MS. */
const EXPIRY_MIN_MS = 2_500;
const EXPIRY_SPREAD_MS = 4_000;

interface GrantOp {
  key: string;
  body: { amount: number; priority: number; expires_at: string; name: string };
  expiresAtMs: number;
  create?: Attempted;
  grantId?: string;
  /**
   * When it is voided: this long after its creation was answered, or `at expiry` (within a few tens of milliseconds
   * of its expires_at, racing the expiry); null: left to expire.
   */
  voidAfterMs: number | 'at expiry' | null;
  void?: Attempted;
}

interface HoldOp {
  key: string;
  id: string;
  cost: number;
  settle: { state: 'complete'; cost_override: { amount: number; denomination: string } } | { state: 'cancelled' };
  settleAfterMs: number;
  hold?: Attempted;
  settled?: Attempted;
}

const retried = (tg: Targets, s: Send, random: () => number, aborted?: () => boolean) =>
  sendRetried(tg, s, { random, inUseBudgetMs: 3_000, deadlineMs: 400_000, ...(aborted ? { aborted } : {}) });

const createGrant = (co: Company, accountId: string, op: GrantOp): Send => ({
  method: 'POST',
  path: `/v1/accounts/${accountId}/balance/tokens/grants`,
  auth: co.auth,
  body: op.body,
  headers: { 'idempotency-key': op.key },
});

const voidGrant = (co: Company, op: GrantOp): Send => ({
  method: 'POST',
  path: `/v1/grants/${op.grantId}/void`,
  auth: co.auth,
  body: { reason: op.key },
  headers: { 'idempotency-key': `${op.key}-void` },
});

const takeHold = (co: Company, accountId: string, op: HoldOp): Send => ({
  method: 'POST',
  path: `/v1/accounts/${accountId}/events`,
  auth: co.auth,
  body: {
    events: [{ id: op.id, type: 'hold', state: 'pending', cost_override: { amount: op.cost, denomination: 'tokens' } }],
  },
  headers: { 'idempotency-key': op.key },
});

const settleHold = (co: Company, op: HoldOp): Send => ({
  method: 'PUT',
  path: `/v1/events/${op.id}`,
  auth: co.auth,
  body: op.settle,
  headers: { 'idempotency-key': `${op.key}-settle` },
});

/** Grants created at a steady pace, each expiring a few seconds later; some voided while (or after) they run. */
function startGrants(
  tg: Targets,
  co: Company,
  accountId: string,
  run: string,
  random: ReturnType<typeof rng>,
): Paced<GrantOp> {
  return startPaced<GrantOp>({
    perSecond: GRANTS_PER_SECOND,
    // Most of a worker's time is the wait before its void: enough workers to keep the pace.
    concurrency: 48,
    make: (i) => {
      const key = `${run}-g${i}`;
      const expiresAtMs = Date.now() + EXPIRY_MIN_MS + random.int(EXPIRY_SPREAD_MS);
      return {
        key,
        // Priorities below the initial grant's 50 are drawn first; 70 is drawn after it (never here): it expires whole.
        body: {
          amount: 50 + random.int(400),
          priority: random.pick([10, 20, 30, 30, 70]),
          expires_at: new Date(expiresAtMs).toISOString(),
          name: key,
        },
        expiresAtMs,
        // Half the grants are voided soon after their creation; some at their expiry (racing it: either may come
        // first), some at any time (after it: refused as expired); the rest are left to expire.
        voidAfterMs: random.pick([
          null,
          null,
          'at expiry',
          'at expiry',
          random.int(1_000),
          random.int(1_000),
          random.int(EXPIRY_MIN_MS + EXPIRY_SPREAD_MS),
        ]),
      };
    },
    async send(op, aborted) {
      op.create = await retried(tg, createGrant(co, accountId, op), random.next, aborted);
      if (op.create.answer?.status !== 201) return;
      op.grantId = op.create.answer.json.data.grant_id;
      if (op.voidAfterMs === null) return;
      await sleep(
        op.voidAfterMs === 'at expiry'
          ? Math.max(0, op.expiresAtMs - 40 + random.int(60) - Date.now())
          : op.voidAfterMs,
      );
      op.void = await retried(tg, voidGrant(co, op), random.next, aborted);
    },
  });
}

/** Holds taken at a steady pace from the grants, each settled (or cancelled) up to a few seconds later. */
function startHolds(
  tg: Targets,
  co: Company,
  accountId: string,
  run: string,
  random: ReturnType<typeof rng>,
): Paced<HoldOp> {
  return startPaced<HoldOp>({
    perSecond: HOLDS_PER_SECOND,
    concurrency: 48,
    make: (i) => {
      const cost = 20 + random.int(300);
      const roll = random.int(4);
      const final = roll === 0 ? Math.floor(cost / 2) : roll === 1 ? cost : cost + 1 + random.int(200);
      return {
        key: `${run}-h${i}`,
        id: `${run}-hold${i}`,
        cost,
        settle:
          roll === 3 && random.int(2) === 0
            ? { state: 'cancelled' }
            : { state: 'complete', cost_override: { amount: final, denomination: 'tokens' } },
        settleAfterMs: random.int(EXPIRY_MIN_MS + EXPIRY_SPREAD_MS),
      };
    },
    async send(op, aborted) {
      op.hold = await retried(tg, takeHold(co, accountId, op), random.next, aborted);
      if (op.hold.answer?.status !== 200) return;
      await sleep(op.settleAfterMs);
      op.settled = await retried(tg, settleHold(co, op), random.next, aborted);
    },
  });
}

/** The refusals of a grant whose expires_at has passed when it is created. */
const PASSED_EXPIRY = ['expires_at_must_be_in_the_future', 'expires_at_must_be_after_effective_at'];

const cutShort = (r: Attempted | undefined) =>
  r === undefined || r.interrupted || r.stuck || r.answer === null || r.answer.status >= 500;

interface Outcome {
  lost: string[];
  duplicated: string[];
  unexpected: string[];
  stuck: string[];
  problems: string[];
  figures: Record<string, number>;
}

async function crashRun(dialect: 'sqlite' | 'postgres', t: TestContext): Promise<Outcome> {
  const s = seed(dialect === 'sqlite' ? 16_201 : 16_202);
  t.diagnostic(`seed ${s} (RELIABILITY_SEED=${s} replays the same kill schedule and requests)`);
  const random = rng(s);
  const db: TestDatabase = await freshDatabase(dialect);
  const servers: ChildServer[] = [];
  let load: Load | undefined;
  let granting: Paced<GrantOp> | undefined;
  let holding: Paced<HoldOp> | undefined;
  try {
    const env: Record<string, string> = {
      // The real clock: expiries pass while the servers run, and a restarted server's clock goes on from them.
      BILLING_TEST_CLOCK: '0',
      BILLING_WORKERS: '1',
      BILLING_WORKER_INTERVAL_MS: '50',
      BILLING_IDEMPOTENCY_LEASE_MS: '2000',
      ...(dialect === 'postgres' ? { BILLING_PG_POOL_SIZE: '8' } : {}),
    };
    for (let i = 0; i < (dialect === 'postgres' ? 2 : 1); i++) servers.push(await startChildServer(db.url, env));
    const co = await signUp(servers[0]!.url);
    const accountId = await account(servers[0]!.url, co, 'tokens', INITIAL);
    const tg = targets(servers);
    const run = `grants-${dialect}`;
    const started = Date.now();
    load = startLoad(tg, {
      auth: co.auth,
      accountId,
      run,
      eventsPerSecond: EVENTS_PER_SECOND,
      eventsPerRequest: EVENTS_PER_REQUEST,
      concurrency: 16,
      random,
    });
    granting = startGrants(tg, co, accountId, run, rng(s + 1));
    holding = startHolds(tg, co, accountId, run, rng(s + 2));
    const serving = async () => {
      const before = load!.acked();
      await until('the servers answer again', () => load!.acked() > before, { everyMs: 50, attempts: 4_000 });
      await sleep(BETWEEN_KILLS_MS);
    };
    const restartMs: number[] = [];
    for (let k = 0; k < KILLS; k++) {
      await serving();
      const victim = servers[random.int(servers.length)]!;
      await victim.kill9();
      await sleep(50 + random.int(250));
      const restarting = Date.now();
      await victim.restart();
      restartMs.push(Date.now() - restarting);
    }
    await serving();
    const ops = await load.finish();
    const grantOps = await granting.finish();
    const holdOps = await holding.finish();
    const loadMs = Date.now() - started;

    // After the last restart: every request a crash cut short is sent again with its key until it is answered.
    const r = rng(s + 3).next;
    const finals = new Map<object, Attempted>();
    await Promise.all([
      ...ops
        .filter((op) => cutShort(op.result))
        .map(async (op) => {
          const send: Send = {
            method: 'POST',
            path: op.path,
            auth: co.auth,
            body: op.body,
            headers: { 'idempotency-key': op.key },
          };
          finals.set(op, await retried(tg, send, r));
        }),
      ...grantOps.map(async (op) => {
        if (cutShort(op.create)) {
          op.create = await retried(tg, createGrant(co, accountId, op), r);
          if (op.create.answer?.status === 201) op.grantId = op.create.answer.json.data.grant_id;
        }
        if (op.grantId !== undefined && op.voidAfterMs !== null && cutShort(op.void))
          op.void = await retried(tg, voidGrant(co, op), r);
      }),
      ...holdOps.map(async (op) => {
        if (cutShort(op.hold)) op.hold = await retried(tg, takeHold(co, accountId, op), r);
        if (op.hold?.answer?.status === 200 && cutShort(op.settled))
          op.settled = await retried(tg, settleHold(co, op), r);
      }),
    ]);

    // Settled: every expiry has passed, and the store shows none left to apply (the job's work: nobody else
    // touches the balance now).
    const lastExpiry = Math.max(...grantOps.map((op) => op.expiresAtMs));
    await until(
      'every grant expiry passed and applied',
      async () =>
        Date.now() > lastExpiry &&
        Number((await db.sql('SELECT COUNT(*) AS n FROM balances WHERE grants_due_at <= ?', [Date.now()]))[0]!.n) === 0,
      { everyMs: 50, attempts: 2_000 },
    );
    const nowMs = Date.now();
    const out: Outcome = { lost: [], duplicated: [], unexpected: [], stuck: [], problems: [], figures: {} };

    // Events of the load: each acknowledged request's events in the database once.
    const byOp = new Map<string, Set<string>>();
    for (const row of await db.sql("SELECT event_id, metadata FROM events WHERE account_id = ? AND type = 'load'", [
      accountId,
    ])) {
      const key = JSON.parse(String(row.metadata)).op as string;
      byOp.set(key, (byOp.get(key) ?? new Set()).add(String(row.event_id)));
    }
    for (const op of ops) {
      const last = finals.get(op) ?? op.result!;
      const inDb = byOp.get(op.key) ?? new Set<string>();
      if (inDb.size > EVENTS_PER_REQUEST) out.duplicated.push(`${op.key}: ${inDb.size} events`);
      if (last.stuck) out.stuck.push(op.key);
      else if (last.answer?.status !== 200) out.unexpected.push(`${op.key}: ${shown(last.answer)}`);
      else if (
        inDb.size !== EVENTS_PER_REQUEST ||
        !(last.answer.json.event_ids as string[]).every((id) => inDb.has(id))
      )
        out.lost.push(`${op.key}: acknowledged, ${inDb.size} events in the database`);
    }

    // Holds and their settles: each acknowledged one in the database, in the state its settle asked.
    const events = new Map(
      (
        await db.sql("SELECT event_id, state, cost_amount FROM events WHERE account_id = ? AND type = 'hold'", [
          accountId,
        ])
      ).map((row) => [String(row.event_id), { state: String(row.state), cost: Number(row.cost_amount) }]),
    );
    for (const op of holdOps) {
      const e = events.get(op.id);
      if (op.hold?.stuck || op.settled?.stuck) out.stuck.push(op.key);
      else if (op.hold?.answer?.status !== 200) out.unexpected.push(`hold ${op.key}: ${shown(op.hold?.answer)}`);
      else if (e === undefined) out.lost.push(`hold ${op.id}: acknowledged, not in the database`);
      else if (op.settled?.answer?.status !== 200)
        out.unexpected.push(`settle ${op.key}: ${shown(op.settled?.answer)}`);
      else {
        const want =
          op.settle.state === 'cancelled' ? ['cancelled', op.cost] : ['complete', op.settle.cost_override.amount];
        if (e.state !== want[0] || e.cost !== want[1])
          out.lost.push(`settle ${op.id}: acknowledged ${JSON.stringify(want)}, stored ${JSON.stringify(e)}`);
      }
    }

    // Grant creations and voids: each acknowledged one applied once, each refused one not at all.
    const rows = await grantRows(db, co.companyId, accountId);
    const byName = new Map<string, typeof rows>();
    for (const g of rows) if (g.name !== null) byName.set(g.name, [...(byName.get(g.name) ?? []), g]);
    let voided = 0;
    let voidRefused = 0;
    let createRefused = 0;
    for (const op of grantOps) {
      const mine = byName.get(op.key) ?? [];
      if (mine.length > 1) out.duplicated.push(`grant ${op.key}: created ${mine.length} times`);
      const a = op.create?.answer;
      if (op.create?.stuck) {
        out.stuck.push(op.key);
        continue;
      }
      if (a?.status === 400 && PASSED_EXPIRY.includes(a.json?.error?.code)) {
        // A creation cut short and run again after its expires_at: refused, and nothing was created. (Its
        // effective_at defaults to now, so the refusal may name either rule.)
        createRefused++;
        if (mine.length !== 0) out.duplicated.push(`grant ${op.key}: refused on retry, yet ${mine.length} created`);
        continue;
      }
      if (a?.status !== 201) {
        out.unexpected.push(`grant ${op.key}: ${shown(a)}`);
        continue;
      }
      if (mine.length !== 1 || mine[0]!.grantId !== op.grantId)
        out.lost.push(
          `grant ${op.key}: acknowledged ${op.grantId}, stored ${JSON.stringify(mine.map((g) => g.grantId))}`,
        );
      const row = mine[0];
      if (op.voidAfterMs === null) {
        if (row?.voidedAtMs !== null) out.unexpected.push(`grant ${op.key}: voided, no void was asked`);
        continue;
      }
      const v = op.void?.answer;
      if (op.void?.stuck) out.stuck.push(`${op.key}-void`);
      else if (v?.status === 200) {
        voided++;
        if (v.json.data.status !== 'voided') out.unexpected.push(`void ${op.key}: answered ${v.json.data.status}`);
        if (row?.voidedAtMs === null) out.lost.push(`void ${op.key}: acknowledged, the grant is not voided`);
      } else if (v?.status === 409 && ['grant_expired', 'grant_depleted'].includes(v.json?.error?.code)) {
        voidRefused++;
        if (row?.voidedAtMs !== null) out.duplicated.push(`void ${op.key}: refused (${v.json.error.code}), yet voided`);
      } else out.unexpected.push(`void ${op.key}: ${shown(v)}`);
    }

    // The grants: ledger audit, per-grant audit, invariant in the store and through the API.
    out.problems.push(...(await judge(db)));
    const balances = await storeBalances(db, [accountId]);
    out.problems.push(...storeInvariant(balances, nowMs));
    const ledger = await auditGrantLedger(db, co.companyId, balances, nowMs);
    out.problems.push(...ledger.problems);
    for (const line of ledger.inversions.slice(0, 5)) t.diagnostic(`void stamped before a draw: ${line}`);
    out.problems.push(...(await apiMatchesStore(db, servers[0]!.url, co.auth, balances, nowMs)));
    closeTargets(tg);

    out.figures = {
      seed: s,
      servers: servers.length,
      kills: KILLS,
      load_ms: loadMs,
      restart_ms: Math.max(...restartMs),
      requests: ops.length,
      interrupted: ops.filter((op) => op.result!.interrupted).length,
      holds: holdOps.length,
      grants_asked: grantOps.length,
      grants_created: rows.length - 1,
      grant_creations_refused_on_retry: createRefused,
      voids_asked: grantOps.filter((op) => op.void !== undefined).length,
      voids_acknowledged: voided,
      voids_refused: voidRefused,
      expired_at_instant: ledger.figures.expiredAtInstant,
      voided_at_instant: ledger.figures.voidedAtInstant,
      expired_at_settle: ledger.figures.expiredAtSettle,
      voided_at_settle: ledger.figures.voidedAtSettle,
      void_stamped_before_draws: ledger.inversions.length,
      lost: out.lost.length,
      duplicated: out.duplicated.length,
      stuck: out.stuck.length,
      problems: out.problems.length,
    };
    report(t, `grants-crash-${dialect}`, out.figures);
    return out;
  } finally {
    load?.abort();
    granting?.abort();
    holding?.abort();
    for (const x of servers) await x.kill9();
    await db.drop();
  }
}

function shown(a: Answer | null | undefined): string {
  return a ? `${a.status} ${a.text.slice(0, 200)}` : 'no answer';
}

for (const dialect of CLI_DIALECTS) {
  const shape = dialect === 'sqlite' ? 'one server' : 'two servers, a random one killed';
  const title = `grants under kill -9: expiries, voids and holds beside ${EVENTS_PER_SECOND} events/s`;
  describe(`${title} (${dialect}, ${shape})`, () => {
    test('nothing lost, nothing applied twice, the grants invariant and the ledger audit hold', {
      timeout: FULL ? 3_600_000 : 600_000,
    }, async (t) => {
      const o = await crashRun(dialect, t);
      assert.deepEqual(o.lost, [], 'acknowledged and lost');
      assert.deepEqual(o.duplicated, [], 'applied twice');
      assert.deepEqual(o.unexpected, [], 'answered with an error');
      assert.deepEqual(o.stuck, [], 'keys still in use after the restart');
      assert.deepEqual(o.problems, [], 'grants, invariant, ledger audit');
      assert.ok(o.figures.expired_at_instant! > 0, 'grants expired during the run');
      assert.ok(o.figures.voided_at_instant! > 0, 'grants were voided during the run');
    });
  });
}
