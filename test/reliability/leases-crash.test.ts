// Guarantee (contract "Leases"): `kill -9` of a server while events draw from leases loses nothing and charges
// nothing twice, on SQLite (one server killed and restarted on its file) and PostgreSQL (two servers, a random one
// killed each time). On several accounts, a lease the load overdraws and one it never fills; batches of events with
// client ids name them (the `{events, lease_id}` form, or `lease_id` on some events), each sent once, concurrently,
// across kills. Then every batch that got no 200 is sent again with the same event ids (a client's retries), and
// every lease closed. Judged: each event id recorded once, with its cost and lease; each lease's `used` is Σ of the
// costs of its events recorded while it was open, up to its amount, and used + released = amount; each balance is
// its start less Σ of its events' costs, nothing pending, its spend of the day the same (a lease counts once); the
// ledger audit is clean.
// The variant: leases of one second on the test clock (frozen while a server runs) are drawn from, every server is
// killed with batches in flight and started again once the real clock (where a restarted clock starts) is past their
// expires_at: a first read sees each expired at its expires_at, its rest released; the batches sent again are charged
// to the balance alone; closes are 409 lease_expired; each lease is released exactly once.
import assert from 'node:assert/strict';
import { type TestContext, describe, test } from 'node:test';
import { CLI_DIALECTS, type TestDatabase, freshDatabase } from '../cli/support.js';
import { until } from '../support/wait.js';
import { FULL, report, rng, seed, size } from './support/config.js';
import { type Answer, type Send, send } from './support/http.js';
import { judge } from './support/judge.js';
import { type Attempted, type Paced, type Targets, closeTargets } from './support/load.js';
import { sendRetried, startPaced, targets } from './support/load.js';
import { type ChildServer, startChildServer } from './support/server.js';
import { type Company, account, signUp } from './support/setup.js';

const KILLS = size(3, 10);
const ACCOUNTS = 4;
/** The leases of each account: one the load overdraws, one it never fills. */
const LEASE_AMOUNTS = [300, 1_000_000];
const INITIAL = 10_000_000;
const BATCHES_PER_SECOND = 150;
const EVENTS_PER_BATCH = 5;
/** Batches answered 200 after a restart before the next kill. */
const ACKED_BETWEEN_KILLS = size(40, 150);
const DAY_MS = 86_400_000;

type Random = ReturnType<typeof rng>;

type Lease = { leaseId: string; accountId: string; amount: number; expiresAtMs: number };

interface Batch {
  accountId: string;
  send: Send;
  events: { id: string; cost: number; leaseId: string | null }[];
  /** The answer of its one send while the servers were killed (null: none, the connection failed). */
  first?: Answer | null;
  /** Its send again, with the same event ids, when the first got no 200. */
  again?: Attempted;
}

interface Outcome {
  /** Acknowledged events missing, events recorded twice or with another cost or lease, wrong figures. */
  lost: string[];
  unexpected: string[];
  problems: string[];
  /** The used-up lease of the variant (see its test). */
  usedUp: string[];
  figures: Record<string, number | string>;
}

/** How the first sends were answered: `200×n 503×n none×n`. */
function statuses(batches: Batch[]): string {
  const n = new Map<string, number>();
  for (const k of batches.map((b) => String(b.first?.status ?? 'none'))) n.set(k, (n.get(k) ?? 0) + 1);
  return [...n].map(([k, v]) => `${k}×${v}`).join(' ');
}

const getLease = (url: string, co: Company, l: Lease) =>
  send(url, { method: 'GET', path: `/v1/leases/${l.leaseId}`, auth: co.auth });
const closing = (co: Company, l: Lease) => ({ method: 'POST', path: `/v1/leases/${l.leaseId}/close`, auth: co.auth });
const shown = (a: Answer | null | undefined) => (a ? `${a.status} ${a.text.slice(0, 200)}` : 'no answer');

async function openLease(url: string, co: Company, accountId: string, body: object): Promise<Lease> {
  const path = `/v1/accounts/${accountId}/leases`;
  const r = await send(url, { method: 'POST', path, auth: co.auth, body: { denomination: 'tokens', ...body } });
  assert.equal(r.status, 201, r.text);
  const { lease_id: leaseId, amount, expires_at } = r.json.data;
  return { leaseId, accountId, amount, expiresAtMs: Date.parse(expires_at) };
}

/** A batch of these events on `accountId`'s balance, `lease` naming the lease of all of them (the `{events}` form). */
function batchOf(co: Company, accountId: string, events: Batch['events'], lease?: string): Batch {
  const body = {
    events: events.map((e) => ({
      ...{ id: e.id, type: 'leased', cost_override: { amount: e.cost, denomination: 'tokens' } },
      ...(lease === undefined && e.leaseId !== null ? { lease_id: e.leaseId } : {}),
    })),
    ...(lease !== undefined ? { lease_id: lease } : {}),
  };
  return { accountId, events, send: { method: 'POST', path: `/v1/accounts/${accountId}/events`, auth: co.auth, body } };
}

/** Batch `i` on `leases[i % n]`'s account: all of it naming that lease, or (one in four) some of its events. */
function makeBatch(co: Company, run: string, i: number, leases: Lease[], random: Random): Batch {
  const lease = leases[i % leases.length]!;
  const whole = random.int(4) !== 0;
  const events = Array.from({ length: EVENTS_PER_BATCH }, (_, j) => ({
    id: `${run}-b${i}-${j}`,
    cost: 1 + random.int(9),
    leaseId: whole || random.int(2) === 0 ? lease.leaseId : null,
  }));
  return batchOf(co, lease.accountId, events, whole ? lease.leaseId : undefined);
}

/** Sends batches once each, to a random server: `b.first` (null: the connection failed); counts them. */
class Sender {
  inFlight = 0;
  answered = 0;
  acked = 0;
  constructor(readonly to: { tg: Targets; random: Random }) {}
  async once(b: Batch): Promise<void> {
    const { tg, random } = this.to;
    const server = tg.servers[random.int(tg.servers.length)]!;
    this.inFlight++;
    b.first = await send(server.url, b.send, tg.agents.get(server)).catch(() => null);
    this.inFlight--;
    this.answered++;
    if (b.first?.status === 200) this.acked++;
  }
}

// Of the batches that got no 200, how many were recorded all the same (killed between its commit and its answer:
// sent again, they must not be charged twice); a batch partly recorded is a problem.
async function recordedUnanswered(db: TestDatabase, co: Company, batches: Batch[], problems: string[]) {
  const sql = 'SELECT event_id FROM events WHERE company_id = ?';
  const recorded = new Set((await db.sql(sql, [co.companyId])).map((r) => String(r.event_id)));
  let n = 0;
  for (const b of batches.filter((x) => x.first?.status !== 200)) {
    const k = b.events.filter((e) => recorded.has(e.id)).length;
    if (k === b.events.length) n++;
    else if (k > 0) problems.push(`batch ${b.events[0]!.id}: ${k} of its ${b.events.length} events recorded`);
  }
  return n;
}

/** Every batch that got no 200, sent again with its event ids until it is answered. */
async function sendAgain(tg: Targets, batches: Batch[], random: Random): Promise<number> {
  const cut = batches.filter((b) => b.first?.status !== 200);
  await Promise.all(cut.map(async (b) => (b.again = await sendRetried(tg, b.send, { random: random.next }))));
  return cut.length;
}

type Run = { db: TestDatabase; url: string; co: Company; leases: Lease[]; batches: Batch[]; startedMs: number };

// What the database and the API show against what was sent: `whileOpen(lease, createdAtMs)` says whether an event
// recorded at that instant found its lease open (its cost then taken from it first).
async function judgeRun(run: Run, whileOpen: (l: Lease, createdAtMs: number) => boolean) {
  const { db, url, co, leases, batches } = run;
  const out = { lost: [] as string[], unexpected: [] as string[], problems: await judge(db), spendJudged: false };
  const rows = new Map<string, Record<string, unknown>[]>();
  const columns = 'event_id, account_id, cost_amount, lease_id, state, created_at';
  for (const r of await db.sql(`SELECT ${columns} FROM events WHERE company_id = ?`, [co.companyId]))
    rows.set(String(r.event_id), [...(rows.get(String(r.event_id)) ?? []), r]);
  const sent = new Set<string>();
  const costOf = new Map<string, number>();
  const usedOf = new Map<string, number>();
  for (const b of batches) {
    const last = b.again?.answer ?? b.first;
    const ids = b.events.map((e) => e.id);
    if (last?.status !== 200) out.unexpected.push(`batch ${ids[0]}: ${shown(last)}`);
    else if (JSON.stringify(last.json.event_ids) !== JSON.stringify(ids)) out.unexpected.push(`${ids[0]}: other ids`);
    for (const e of b.events) {
      sent.add(e.id);
      const mine = rows.get(e.id) ?? [];
      const r = mine[0];
      if (mine.length !== 1) out.lost.push(`event ${e.id}: recorded ${mine.length} times`);
      else if (Number(r!.cost_amount) !== e.cost || (r!.lease_id ?? null) !== e.leaseId || r!.state !== 'complete')
        out.lost.push(`event ${e.id}: sent ${JSON.stringify(e)}, recorded ${JSON.stringify(r)}`);
      if (r === undefined) continue;
      costOf.set(b.accountId, (costOf.get(b.accountId) ?? 0) + Number(r.cost_amount));
      const l = leases.find((x) => x.leaseId === e.leaseId);
      if (l !== undefined && whileOpen(l, Number(r.created_at)))
        usedOf.set(l.leaseId, (usedOf.get(l.leaseId) ?? 0) + Number(r.cost_amount));
    }
  }
  for (const id of rows.keys()) if (!sent.has(id)) out.unexpected.push(`event ${id} recorded, never sent`);
  // Each lease: what its events took while it was open, up to its amount; the rest released once.
  for (const l of leases) {
    const used = Math.min(l.amount, usedOf.get(l.leaseId) ?? 0);
    const want = { used, released: l.amount - used, remaining: 0 };
    const a = await getLease(url, co, l);
    const [row] = await db.sql('SELECT used, released FROM leases WHERE lease_id = ?', [l.leaseId]);
    const got = { used: a.json?.data?.used, released: a.json?.data?.released, remaining: a.json?.data?.remaining };
    if (JSON.stringify(got) !== JSON.stringify(want))
      out.lost.push(`lease ${l.leaseId}: want ${JSON.stringify(want)}, answered ${JSON.stringify(got)}`);
    if (Number(row?.used) !== used || Number(row?.released) !== l.amount - used)
      out.lost.push(`lease ${l.leaseId}: want used ${used}, stored ${JSON.stringify(row)}`);
  }
  // Each balance: its start less its events' costs, nothing pending, and (within one UTC day) its spend the same.
  for (const accountId of new Set(leases.map((l) => l.accountId))) {
    const b = (await send(url, { method: 'GET', path: `/v1/accounts/${accountId}/balance/tokens`, auth: co.auth })).json
      .data;
    const [stored] = await db.sql('SELECT amount, pending FROM balances WHERE account_id = ?', [accountId]);
    const cost = costOf.get(accountId) ?? 0;
    const want = { amount: INITIAL - cost, pending: 0 };
    const got = [b.amount, b.pending, Number(stored?.amount), Number(stored?.pending)];
    if (JSON.stringify(got) !== JSON.stringify([want.amount, 0, want.amount, 0]))
      out.lost.push(`balance ${accountId}: want ${JSON.stringify(want)}, answered and stored ${JSON.stringify(got)}`);
    if (Math.floor(run.startedMs / DAY_MS) === Math.floor(Date.now() / DAY_MS)) {
      out.spendJudged = true;
      if (b.spend?.day !== cost) out.lost.push(`balance ${accountId}: spend of the day ${b.spend?.day}, costs ${cost}`);
    }
  }
  return out;
}

async function startServers(db: TestDatabase, env: Record<string, string>): Promise<ChildServer[]> {
  const servers: ChildServer[] = [];
  const pool: Record<string, string> = db.dialect === 'postgres' ? { BILLING_PG_POOL_SIZE: '8' } : {};
  for (let i = 0; i < (db.dialect === 'postgres' ? 2 : 1); i++)
    servers.push(await startChildServer(db.url, { ...env, ...pool }));
  return servers;
}

/** Accounts of INITIAL tokens, each with a lease of every LEASE_AMOUNTS (client ids `${run}-l…`). */
async function openLeases(servers: ChildServer[], co: Company, run: string, ttlSeconds: number): Promise<Lease[]> {
  const leases: Lease[] = [];
  for (let a = 0; a < ACCOUNTS; a++) {
    const acc = await account(servers[0]!.url, co, 'tokens', INITIAL);
    for (const [k, amount] of LEASE_AMOUNTS.entries()) {
      const body = { amount, ttl_seconds: ttlSeconds, id: `${run}-l${a}-${k}` };
      leases.push(await openLease(servers[(a + k) % servers.length]!.url, co, acc, body));
    }
  }
  return leases;
}

async function crashRun(dialect: 'sqlite' | 'postgres', t: TestContext): Promise<Outcome> {
  const s = seed(dialect === 'sqlite' ? 16_301 : 16_302);
  t.diagnostic(`seed ${s} (RELIABILITY_SEED=${s} replays the same kill schedule and batches)`);
  const random = rng(s);
  const db = await freshDatabase(dialect);
  let servers: ChildServer[] = [];
  let load: Paced<Batch> | undefined;
  try {
    const startedMs = Date.now();
    // The real clock, shared by every process and a restart; the background jobs run as in production.
    servers = await startServers(db, { BILLING_TEST_CLOCK: '0', BILLING_WORKERS: '1' });
    const run = `leases-${dialect}`;
    const co = await signUp(servers[0]!.url);
    const leases = await openLeases(servers, co, run, 3600);
    const tg = targets(servers);
    const sender = new Sender({ tg, random: rng(s + 2) });
    const batchRandom = rng(s + 1);
    load = startPaced<Batch>({
      perSecond: BATCHES_PER_SECOND,
      concurrency: 32,
      make: (i) => makeBatch(co, run, i, leases, batchRandom),
      send: (b) => sender.once(b),
    });
    const inFlightAtKill: number[] = [];
    for (let k = 0; k < KILLS; k++) {
      const acked = sender.acked;
      const serving = () => sender.acked >= acked + ACKED_BETWEEN_KILLS;
      await until('batches acknowledged since the last restart', serving, { attempts: 20_000 });
      await until('batches in flight', () => sender.inFlight >= 2, { everyMs: 1, attempts: 100_000 });
      const victim = servers[random.int(servers.length)]!;
      inFlightAtKill.push(sender.inFlight);
      await victim.kill9();
      await victim.restart();
    }
    const acked = sender.acked;
    await until('the servers answer again', () => sender.acked > acked, { attempts: 20_000 });
    const batches = await load.finish();
    const loadMs = Date.now() - startedMs;
    const partly: string[] = [];
    const unanswered = await recordedUnanswered(db, co, batches, partly);
    const resent = await sendAgain(tg, batches, rng(s + 3));
    const unexpected: string[] = [...partly];
    for (const l of leases) {
      const a = await getLease(servers[0]!.url, co, l);
      if (a.json?.data?.status !== 'open') unexpected.push(`before the close: ${shown(a)}`);
    }
    // Every lease closed (retried like any request), once its events are all in.
    for (const l of leases) {
      const c = await sendRetried(tg, closing(co, l), { random: random.next });
      if (c.answer?.status !== 200 || c.answer.json.data.status !== 'closed')
        unexpected.push(`close ${l.leaseId}: ${shown(c.answer)}`);
    }
    const judged = await judgeRun({ db, url: servers[0]!.url, co, leases, batches, startedMs }, () => true);
    closeTargets(tg);
    const figures = {
      seed: s,
      servers: servers.length,
      load_ms: loadMs,
      batches: batches.length,
      acknowledged_first: batches.filter((b) => b.first?.status === 200).length,
      cut_and_sent_again: resent,
      recorded_but_unanswered: unanswered,
      first_answers: statuses(batches),
      in_flight_at_kills: inFlightAtKill.join(' '),
      spend_judged: String(judged.spendJudged),
      lost: judged.lost.length,
      problems: judged.problems.length,
    };
    report(t, `leases-crash-${dialect}`, figures);
    return { ...judged, unexpected: [...unexpected, ...judged.unexpected], usedUp: [], figures };
  } finally {
    load?.abort();
    for (const x of servers) await x.kill9();
    await db.drop();
  }
}

async function expiryRun(dialect: 'sqlite' | 'postgres', t: TestContext): Promise<Outcome> {
  const s = seed(dialect === 'sqlite' ? 16_311 : 16_312);
  t.diagnostic(`seed ${s}`);
  const random = rng(s);
  const db = await freshDatabase(dialect);
  let servers: ChildServer[] = [];
  try {
    // The test clock: frozen while a server runs, so the leases of one second stay open until every server dies.
    const startedMs = Date.now();
    servers = await startServers(db, { BILLING_TEST_CLOCK: '1', BILLING_WORKERS: '0' });
    const run = `leases-expiry-${dialect}`;
    const co = await signUp(servers[0]!.url);
    // Every server's clock at one instant (each starts at its own start): a lease is open on all of them.
    const clock = { method: 'GET', path: '/v1/test_clock', auth: co.auth };
    const clocks = await Promise.all(servers.map(async (x) => Date.parse((await send(x.url, clock)).json.data.now)));
    const to = new Date(Math.max(...clocks)).toISOString();
    for (const x of servers) {
      const a = await send(x.url, { method: 'POST', path: '/v1/test_clock/advance', auth: co.auth, body: { to } });
      assert.equal(a.status, 200, a.text);
    }
    const leases = await openLeases(servers, co, run, 1);
    // And a lease used up at once (remaining 0) on an account with nothing else pending.
    const alone = await account(servers[0]!.url, co, 'tokens', INITIAL);
    const spent = await openLease(servers[0]!.url, co, alone, { amount: 10, ttl_seconds: 1 });
    const all = [...leases, spent];
    const tg = targets(servers);
    const sender = new Sender({ tg, random });
    const batches = [batchOf(co, alone, [{ id: `${run}-spent`, cost: 12, leaseId: spent.leaseId }], spent.leaseId)];
    let made = 0;
    const make = () => makeBatch(co, run, made++, leases, random);
    // Drawn from while open: these are answered before the kill.
    for (let i = 0; i < 4 * leases.length; i++) batches.push(make());
    for (const [i, b] of batches.entries()) {
      b.first = await send(servers[i % servers.length]!.url, b.send);
      assert.equal(b.first.status, 200, b.first.text);
    }
    // More in flight, and every server killed while they are.
    const flying = Array.from({ length: 100 }, () => make());
    batches.push(...flying);
    const sends = flying.map((b) => sender.once(b));
    await until('some of them answered', () => sender.answered >= 5, { everyMs: 1, attempts: 100_000 });
    const inFlight = sender.inFlight;
    await Promise.all(servers.map((x) => x.kill9()));
    await Promise.all(sends);
    const expiresAtMs = Math.max(...all.map((l) => l.expiresAtMs));
    await until("the real clock past the leases' expires_at", () => Date.now() > expiresAtMs, { everyMs: 50 });
    for (const x of servers) await x.restart();

    // A first read, through each server: expired at its expires_at, its rest released.
    const unexpected: string[] = [];
    const usedUp: string[] = [];
    for (const l of all)
      for (const x of servers) {
        const a = await getLease(x.url, co, l);
        const d = a.json?.data;
        if (d?.status !== 'expired' || d.remaining !== 0 || Date.parse(d.closed_at) !== l.expiresAtMs)
          unexpected.push(`read of ${l.leaseId} after the restart: ${shown(a)}`);
      }
    const writtenBeforeWrites = await db.sql("SELECT COUNT(*) AS n FROM leases WHERE status = 'expired'");
    // Then writes race on every server: the cut batches again, closes (409), a new batch naming each lease.
    const cut = [...batches];
    const unanswered = await recordedUnanswered(db, co, cut, unexpected);
    const fresh = leases.map(() => make());
    batches.push(...fresh);
    const closes = all.flatMap((l) => servers.map(async (x) => ({ l, a: await send(x.url, closing(co, l)) })));
    const [resent, closed] = await Promise.all([
      sendAgain(tg, cut, random),
      Promise.all(closes),
      Promise.all(fresh.map(async (b) => (b.again = await sendRetried(tg, b.send, { random: random.next })))),
    ]);
    for (const { l, a } of closed)
      if (a.status !== 409 || a.json?.error?.code !== 'lease_expired')
        (l === spent ? usedUp : unexpected).push(`close of ${l.leaseId}: ${shown(a)}`);
    const open = (l: Lease, at: number) => at < l.expiresAtMs;
    const judged = await judgeRun({ db, url: servers[0]!.url, co, leases: all, batches, startedMs }, open);
    // The job: what no write of a balance releases (a lease that holds nothing) it writes expired. The test clock's
    // advance runs every job that is due before it answers.
    const swept = await send(servers[0]!.url, {
      method: 'POST',
      path: '/v1/test_clock/advance',
      auth: co.auth,
      body: { seconds: 0 },
    });
    assert.equal(swept.status, 200, swept.text);
    // Written expired, at its expires_at, by whichever write came first.
    for (const r of await db.sql('SELECT lease_id, status, closed_at, expires_at FROM leases'))
      if (r.status !== 'expired' || Number(r.closed_at) !== Number(r.expires_at))
        (r.lease_id === spent.leaseId ? usedUp : judged.lost).push(`lease ${r.lease_id} stored ${JSON.stringify(r)}`);
    closeTargets(tg);
    const figures = {
      seed: s,
      servers: servers.length,
      in_flight_at_kill: inFlight,
      cut_and_sent_again: resent,
      recorded_but_unanswered: unanswered,
      leases_written_expired_by_reads: Number(writtenBeforeWrites[0]?.n),
      spend_judged: String(judged.spendJudged),
      lost: judged.lost.length,
      problems: judged.problems.length,
    };
    report(t, `leases-expiry-crash-${dialect}`, figures);
    return { ...judged, unexpected: [...unexpected, ...judged.unexpected], usedUp, figures };
  } finally {
    for (const x of servers) await x.kill9();
    await db.drop();
  }
}

function assertClean(o: Outcome): void {
  assert.deepEqual(o.lost, [], 'lost, recorded twice, or wrong figures');
  assert.deepEqual(o.unexpected, [], 'answered otherwise than expected');
  assert.deepEqual(o.problems, [], 'ledger audit');
}

for (const dialect of CLI_DIALECTS) {
  const shape = dialect === 'sqlite' ? 'one server' : 'two servers, a random one killed';
  describe(`leases under kill -9 (${dialect}, ${shape})`, () => {
    test(`${KILLS} kills with batches naming leases in flight: each event once, each lease exact`, {
      timeout: FULL ? 3_600_000 : 600_000,
    }, async (t) => {
      const o = await crashRun(dialect, t);
      assertClean(o);
      assert.ok(Number(o.figures.cut_and_sent_again) > 0, 'batches were cut by the kills');
    });

    let expiry: Outcome | undefined;
    test('a lease expiring while every server is down: read expired after the restart, released once', {
      timeout: 300_000,
    }, async (t) => {
      expiry = await expiryRun(dialect, t);
      assertClean(expiry);
      assert.ok(Number(expiry.figures.cut_and_sent_again) > 0, 'batches were cut by the kill');
    });

    // A used-up lease (remaining 0) alone on its balance changes no balance when it expires: the sweeper writes it
    // expired, and a close after its expires_at is 409 like any expired lease's.
    test('a used-up lease alone on its balance: written expired at its expires_at, a close after it 409', () => {
      assert.ok(expiry, 'the run above completed');
      assert.deepEqual(expiry.usedUp, []);
    });
  });
}
