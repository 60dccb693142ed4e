// Guarantee: `kill -9` of a server under load loses nothing that was acknowledged and applies nothing twice, on
// SQLite (one server, killed and restarted on the same file) and on PostgreSQL (two servers on one database, a
// random one killed each time); the ledger audit stays clean, and after the restart a retry of every request the
// crash interrupted gets its answer (no Idempotency-Key left claimed by a dead process). Beside the events, balance
// adjustments with Idempotency-Keys run on another account: each is applied exactly once, however it was cut.
// Alerts on both accounts (available alerts the adjustments resolve one by one, spend alerts the load triggers):
// each crossing's notification is written exactly once, neither lost nor doubled by a kill.
import assert from 'node:assert/strict';
import { type TestContext, describe, test } from 'node:test';
import { CLI_DIALECTS, type TestDatabase, freshDatabase } from '../cli/support.js';
import { FULL, report, rng, seed, size } from './support/config.js';
import { judge } from './support/judge.js';
import {
  type Attempted,
  type Load,
  type LoadOp,
  type Paced,
  type Targets,
  closeTargets,
  sendRetried,
  startLoad,
  startPaced,
  targets,
} from './support/load.js';
import { type ChildServer, startChildServer } from './support/server.js';
import { type Company, account, balanceOf, signUp } from './support/setup.js';
import { send, sleep } from './support/http.js';

const KILLS = size(3, 20);
const EVENTS_PER_SECOND = 1500;
const EVENTS_PER_REQUEST = 10;
/** Load between two kills. */
const BETWEEN_KILLS_MS = size(1200, 3000);
const INITIAL = 1_000_000_000_000;
const ADJUSTMENTS_PER_SECOND = 50;

interface AdjustOp {
  key: string;
  result?: Attempted;
}

/** Paced adjustments of +1 on `accountId`, each with its Idempotency-Key as its reason, retried like the events. */
function startAdjustments(
  tg: Targets,
  auth: [string, string],
  accountId: string,
  run: string,
  random: ReturnType<typeof rng>,
): Paced<AdjustOp> {
  return startPaced<AdjustOp>({
    perSecond: ADJUSTMENTS_PER_SECOND,
    concurrency: 4,
    make: (i) => ({ key: `${run}-adj${i}` }),
    async send(op, aborted) {
      op.result = await sendRetried(tg, adjustment(auth, accountId, op.key), {
        random: random.next,
        inUseBudgetMs: 2_000,
        deadlineMs: 400_000,
        aborted,
      });
    },
  });
}

const adjustment = (auth: [string, string], accountId: string, key: string) => ({
  method: 'POST',
  path: `/v1/accounts/${accountId}/balance/tokens/adjustments`,
  auth,
  body: { amount: 1, reason: key },
  headers: { 'idempotency-key': key },
});

/** Thresholds of the available alerts on the adjusted account (created triggered at 0; resolved as it rises). */
const AVAILABLE_THRESHOLDS = [10, 60, 150, 100_000];
/** Thresholds of the load account's spend alerts of the day (all usage, and of type `load`). */
const SPEND_THRESHOLDS = [1000, 10_000];

interface AlertOutcome {
  alertId: string;
  expected: { triggered: number; resolved: number };
  actual: { triggered: number; resolved: number };
}

async function createAlert(url: string, co: Company, accountId: string, body: object): Promise<string> {
  const r = await send(url, {
    method: 'POST',
    path: `/v1/accounts/${accountId}/alerts`,
    auth: co.auth,
    body: { denomination: 'tokens', ...body },
  });
  assert.equal(r.status, 201, r.text);
  return r.json.data.alert_id;
}

/** The alert notifications written, per alert and type, as the database holds them. */
async function alertNotes(db: TestDatabase): Promise<Map<string, { triggered: number; resolved: number }>> {
  const out = new Map<string, { triggered: number; resolved: number }>();
  for (const r of await db.sql(
    "SELECT type, payload FROM webhook_deliveries WHERE type IN ('alert_triggered', 'alert_resolved')",
    [],
  )) {
    const id = JSON.parse(String(r.payload)).alert_id as string;
    const n = out.get(id) ?? { triggered: 0, resolved: 0 };
    if (r.type === 'alert_triggered') n.triggered++;
    else n.resolved++;
    out.set(id, n);
  }
  return out;
}

interface Outcome {
  lost: string[];
  duplicated: string[];
  unexpected: string[];
  wrongIds: string[];
  stuck: string[];
  /** Adjustments acknowledged but not applied, or applied more than once. */
  adjustments: { lost: string[]; duplicated: string[]; stuck: string[]; acknowledged: number };
  problems: string[];
  fiveXx: number;
  balance: { expected: number; actual: number };
  /** Each alert's notifications, as its metric's final value says they must be and as written. */
  alerts: AlertOutcome[];
  /** The balance's spend of the UTC day and month, as the server shows it and as the recorded events add up. */
  spend: { expected: Spend; actual: Spend };
}

interface Spend {
  day: number;
  month: number;
}

const DAY_MS = 86_400_000;
const dayStart = (ms: number) => ms - (ms % DAY_MS);
const monthStart = (ms: number) => Date.UTC(new Date(ms).getUTCFullYear(), new Date(ms).getUTCMonth(), 1);

/**
 * The balance's spend as the server shows it, against the units its complete events took in the same windows
 * (their `created_at`: when they were taken). Read again if the read spans a UTC midnight.
 */
async function spendAgainstEvents(db: TestDatabase, url: string, co: Company, accountId: string) {
  for (;;) {
    const before = Date.now();
    const b = (await balanceOf(url, co, accountId)) as unknown as { spend: Spend };
    const after = Date.now();
    if (dayStart(before) !== dayStart(after)) continue;
    const expected: Spend = { day: 0, month: 0 };
    for (const r of await db.sql(
      "SELECT created_at, cost_amount FROM events WHERE account_id = ? AND state = 'complete'",
      [accountId],
    )) {
      const at = Number(r.created_at);
      if (at >= dayStart(after)) expected.day += Number(r.cost_amount);
      if (at >= monthStart(after)) expected.month += Number(r.cost_amount);
    }
    return { expected, actual: b.spend };
  }
}

async function crashRun(dialect: 'sqlite' | 'postgres', t: TestContext): Promise<Outcome> {
  const s = seed(dialect === 'sqlite' ? 16_001 : 16_002);
  t.diagnostic(`seed ${s} (RELIABILITY_SEED=${s} replays the same kill schedule and requests)`);
  const random = rng(s);
  const db: TestDatabase = await freshDatabase(dialect);
  const servers: ChildServer[] = [];
  let load: Load | undefined;
  let adjusting: Paced<AdjustOp> | undefined;
  try {
    // A key claimed by a killed request is taken over after its lease: 2 s here, within the retry budget.
    const env: Record<string, string> = {
      BILLING_IDEMPOTENCY_LEASE_MS: '2000',
      ...(dialect === 'postgres' ? { BILLING_PG_POOL_SIZE: '8' } : {}),
    };
    for (let i = 0; i < (dialect === 'postgres' ? 2 : 1); i++) servers.push(await startChildServer(db.url, env));
    const co = await signUp(servers[0]!.url);
    const accountId = await account(servers[0]!.url, co, 'tokens', INITIAL);
    const adjusted = await account(servers[0]!.url, co, 'tokens', 0);
    for (const type of ['alert_triggered', 'alert_resolved']) {
      const w = await send(servers[0]!.url, {
        method: 'POST',
        path: '/v1/webhooks',
        auth: co.auth,
        body: { type, url: 'http://127.0.0.1:9/alerts' },
      });
      assert.equal(w.status, 200, w.text);
    }
    const availableAlerts = [];
    for (const threshold of AVAILABLE_THRESHOLDS)
      availableAlerts.push({
        threshold,
        id: await createAlert(servers[0]!.url, co, adjusted, { metric: 'available', threshold }),
      });
    const spendAlerts = [
      {
        threshold: SPEND_THRESHOLDS[0]!,
        id: await createAlert(servers[0]!.url, co, accountId, {
          metric: 'spend',
          window: 'day',
          threshold: SPEND_THRESHOLDS[0],
        }),
      },
      {
        threshold: SPEND_THRESHOLDS[1]!,
        id: await createAlert(servers[0]!.url, co, accountId, {
          metric: 'spend',
          window: 'day',
          threshold: SPEND_THRESHOLDS[1],
          event_type: 'load',
        }),
      },
    ];
    const tg = targets(servers);
    const started = Date.now();
    load = startLoad(tg, {
      auth: co.auth,
      accountId,
      run: `crash-${dialect}`,
      eventsPerSecond: EVENTS_PER_SECOND,
      eventsPerRequest: EVENTS_PER_REQUEST,
      concurrency: 24,
      random,
    });
    adjusting = startAdjustments(tg, co.auth, adjusted, `crash-${dialect}`, rng(s + 1));
    // Each kill comes after the server has served load for a while: a restart counts from its first answer.
    const serving = async () => {
      const before = load!.acked();
      const limit = Date.now() + 180_000;
      while (load!.acked() === before && Date.now() < limit) await sleep(50);
      await sleep(BETWEEN_KILLS_MS);
    };
    for (let k = 0; k < KILLS; k++) {
      await serving();
      const victim = servers[random.int(servers.length)]!;
      await victim.kill9();
      await sleep(50 + random.int(250));
      await victim.restart();
    }
    await serving();
    const rate = load.rate();
    const ops = await load.finish();
    const adjustOps = await adjusting.finish();
    const loadMs = Date.now() - started;

    // After the last restart: a retry of every request that was interrupted (or still stuck) must get its answer.
    const finals = new Map<LoadOp, Attempted>();
    const interruptedOps = ops.filter((op) => op.result!.interrupted || op.result!.stuck || op.result!.answer === null);
    await Promise.all(
      interruptedOps.map(async (op) => {
        const retry = await sendRetried(
          tg,
          { method: 'POST', path: op.path, auth: co.auth, body: op.body, headers: { 'idempotency-key': op.key } },
          { inUseBudgetMs: 3_000, deadlineMs: 400_000 },
        );
        finals.set(op, retry);
      }),
    );
    const adjustFinals = new Map<AdjustOp, Attempted>();
    await Promise.all(
      adjustOps
        .filter((op) => op.result!.interrupted || op.result!.stuck || op.result!.answer === null)
        .map(async (op) => {
          const retry = await sendRetried(tg, adjustment(co.auth, adjusted, op.key), {
            inUseBudgetMs: 3_000,
            deadlineMs: 400_000,
          });
          adjustFinals.set(op, retry);
        }),
    );
    closeTargets(tg);

    const unexpected: string[] = [];
    const rows = await db.sql('SELECT event_id, cost_amount, state, metadata FROM events WHERE account_id = ?', [
      accountId,
    ]);
    const byOp = new Map<string, Set<string>>();
    let applied = 0;
    for (const r of rows) {
      const key = JSON.parse(String(r.metadata)).op as string;
      byOp.set(key, (byOp.get(key) ?? new Set()).add(String(r.event_id)));
      if (r.state === 'complete') applied += Number(r.cost_amount);
    }
    const appliedAdjustments = new Map<string, number>();
    for (const r of await db.sql(
      "SELECT reason, COUNT(*) AS n FROM transactions WHERE account_id = ? AND kind = 'adjustment' GROUP BY reason",
      [adjusted],
    ))
      appliedAdjustments.set(String(r.reason), Number(r.n));
    const adjustments: Outcome['adjustments'] = { lost: [], duplicated: [], stuck: [], acknowledged: 0 };
    for (const op of adjustOps) {
      const last = adjustFinals.get(op) ?? op.result!;
      const n = appliedAdjustments.get(op.key) ?? 0;
      if (n > 1) adjustments.duplicated.push(`${op.key}: applied ${n} times`);
      if (last.stuck) adjustments.stuck.push(op.key);
      else if (last.answer?.status === 200) {
        adjustments.acknowledged++;
        if (n !== 1) adjustments.lost.push(`${op.key}: acknowledged, applied ${n} times`);
      } else unexpected.push(`${op.key}: ${last.answer?.status} ${last.answer?.text.slice(0, 200)}`);
    }
    const out: Outcome = {
      lost: [],
      duplicated: [],
      unexpected: unexpected,
      wrongIds: [],
      stuck: [],
      adjustments,
      problems: await judge(db),
      fiveXx: 0,
      balance: { expected: INITIAL - applied, actual: (await balanceOf(servers[0]!.url, co, accountId)).amount },
      spend: await spendAgainstEvents(db, servers[0]!.url, co, accountId),
      alerts: [],
    };
    // Every alert notification the run wrote, against what the metric's final value says: the available alerts
    // were created triggered (at 0) and each is resolved once the adjustments reach its threshold; the spend
    // alerts are triggered once the day's spend reaches theirs (a run that spans a UTC midnight is not judged).
    const notes = await alertNotes(db);
    const adjustedAmount = (await balanceOf(servers[0]!.url, co, adjusted)).amount;
    for (const a of availableAlerts)
      out.alerts.push({
        alertId: a.id,
        expected: { triggered: 1, resolved: adjustedAmount >= a.threshold ? 1 : 0 },
        actual: notes.get(a.id) ?? { triggered: 0, resolved: 0 },
      });
    if (dayStart(started) === dayStart(Date.now()))
      for (const a of spendAlerts)
        out.alerts.push({
          alertId: a.id,
          expected: { triggered: out.spend.actual.day >= a.threshold ? 1 : 0, resolved: 0 },
          actual: notes.get(a.id) ?? { triggered: 0, resolved: 0 },
        });
    let interrupted = 0;
    let attempts = 0;
    let notReady = 0;
    for (const op of ops) {
      const first = op.result!;
      const last = finals.get(op) ?? first;
      attempts += first.attempts + (finals.has(op) ? last.attempts : 0);
      out.fiveXx += first.fiveXx + (finals.has(op) ? last.fiveXx : 0);
      notReady += first.notReady + (finals.has(op) ? last.notReady : 0);
      if (first.interrupted) interrupted++;
      const inDb = byOp.get(op.key) ?? new Set<string>();
      if (inDb.size > EVENTS_PER_REQUEST) out.duplicated.push(`${op.key}: ${inDb.size} events`);
      if (last.stuck) {
        out.stuck.push(op.key);
        continue;
      }
      const a = last.answer;
      if (a === null || a.status !== 200) {
        out.unexpected.push(`${op.key}: ${a?.status} ${a?.text.slice(0, 200)}`);
        continue;
      }
      const ids: string[] = a.json.event_ids;
      if (inDb.size !== EVENTS_PER_REQUEST || !ids.every((id) => inDb.has(id)))
        out.lost.push(`${op.key}: acknowledged ${ids.length}, ${inDb.size} in the database`);
      if (op.clientIds.length > 0 && JSON.stringify(ids) !== JSON.stringify(op.clientIds))
        out.wrongIds.push(`${op.key}: ${JSON.stringify(ids)}`);
    }
    report(t, `crash-${dialect}`, {
      seed: s,
      servers: servers.length,
      kills: KILLS,
      requests: ops.length,
      attempts,
      events: ops.length * EVENTS_PER_REQUEST,
      offered_events_per_s: Math.round(rate),
      load_ms: loadMs,
      interrupted,
      lost: out.lost.length,
      duplicated: out.duplicated.length,
      five_xx: out.fiveXx,
      not_ready: notReady,
      stuck_keys: out.stuck.length,
      adjustments: adjustOps.length,
      adjustments_acknowledged: adjustments.acknowledged,
      adjustments_lost: adjustments.lost.length,
      adjustments_duplicated: adjustments.duplicated.length,
      adjustments_stuck: adjustments.stuck.length,
      audit_problems: out.problems.length,
      spend_day: out.spend.actual.day,
      spend_day_expected: out.spend.expected.day,
      adjusted_amount: adjustedAmount,
      alert_notifications: [...notes.values()].reduce((n, x) => n + x.triggered + x.resolved, 0),
    });
    return out;
  } finally {
    load?.abort();
    adjusting?.abort();
    for (const s of servers) await s.kill9();
    await db.drop();
  }
}

for (const dialect of CLI_DIALECTS) {
  const shape = dialect === 'sqlite' ? 'one server' : 'two servers, a random one killed';
  describe(`crash under load: kill -9 ${KILLS} times at ~${EVENTS_PER_SECOND} events/s (${dialect}, ${shape})`, () => {
    let out: Outcome | undefined;

    test('nothing acknowledged is lost, nothing is applied twice, the ledger audit is clean, no 5xx', {
      timeout: FULL ? 3_600_000 : 900_000,
    }, async (t) => {
      const o = await crashRun(dialect, t);
      out = o;
      assert.deepEqual(o.lost, [], 'acknowledged and lost');
      assert.deepEqual(o.duplicated, [], 'applied twice');
      assert.deepEqual(o.wrongIds, [], 'a replay answered other event ids');
      assert.deepEqual(o.adjustments.duplicated, [], 'an adjustment applied twice');
      assert.deepEqual(o.adjustments.lost, [], 'an adjustment acknowledged and not applied');
      assert.ok(o.adjustments.acknowledged > 0, 'adjustments were acknowledged');
      assert.deepEqual(o.unexpected, [], 'answered with an error');
      assert.deepEqual(o.problems, [], 'ledger audit');
      assert.equal(o.balance.actual, o.balance.expected, 'balance = initial − Σ cost of the events applied');
      assert.deepEqual(o.spend.actual, o.spend.expected, 'spend = Σ cost of the events taken in the window');
      for (const a of o.alerts) assert.deepEqual(a.actual, a.expected, `notifications of alert ${a.alertId}`);
      assert.ok(
        o.alerts.some((a) => a.expected.resolved === 1),
        'the adjustments resolved an available alert during the load',
      );
      assert.equal(o.fiveXx, 0, '5xx answers');
    });

    test('no key stuck: after the restart, a retry of every interrupted Idempotency-Key gets its answer', () => {
      assert.ok(out, 'the run above completed');
      assert.deepEqual(out.stuck, [], 'keys still answered 409 idempotency_key_in_use after the restart');
      assert.deepEqual(out.adjustments.stuck, [], 'adjustment keys still in use after the restart');
    });
  });
}
