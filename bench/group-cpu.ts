/**
 * CPU per ingest group commit, of several builds in one process, alternated in short blocks: the
 * store's own ingest code (`ingestGroup`, as the server's group commit runs it, without HTTP) on a
 * fresh database per build, each group one request per account (`--accounts` requests of
 * `--events` events each, the shape of the HTTP bench's events-1 scenario by default). A build is
 * a checkout (this one, or a worktree of an older commit) reached through its own
 * `bench/lib/engine.ts`; the first is the base the others are compared with. A build before credit
 * grants (no `bench/lib/grants.ts`) funds its balances without grants, whatever `--grants` says.
 *
 *   npx tsx bench/group-cpu.ts --build before=../ab-old --build after=. [--db sqlite|postgres]
 *     [--grants 1] [--events 1] [--accounts 100] [--rounds 20] [--block 50] [--pg-admin-url <url>]
 *
 * Reported per group: this process's CPU (user + system: on SQLite the whole store; on PostgreSQL
 * the client side), the machine's busy CPU from /proc/stat (PostgreSQL's backends included: keep
 * the machine otherwise quiet) and the wall time. Builds alternate every `--block` groups, in
 * reversed order every other round, so that drift of the machine falls on all of them alike.
 * Figures are reported, never asserted.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ADMIN_POSTGRES_URL, parseGrantCount, positiveInteger } from './lib/options.js';
import { createBenchDatabase } from './lib/postgres.js';
import { machineBusySeconds } from './lib/procstats.js';

type Engine = typeof import('./lib/engine.js');
type Bodies = typeof import('./lib/bodies.js');
type Grants = typeof import('./lib/grants.js');
/** `seedFundedAccounts` of a build before credit grants took a reason where it now takes the funding. */
type Seed = (tx: unknown, companyId: string, accounts: string[], d: string, units: number, more: unknown) => unknown;

const { values } = parseArgs({
  options: {
    build: { type: 'string', multiple: true },
    db: { type: 'string' },
    grants: { type: 'string' },
    events: { type: 'string' },
    accounts: { type: 'string' },
    rounds: { type: 'string' },
    block: { type: 'string' },
    'pg-admin-url': { type: 'string' },
  },
  strict: true,
});

/** A whole number ≥ 1 from `--flag`, or `fallback` when it is not given. */
function whole(flag: string, raw: string | undefined, fallback: number): number {
  return raw === undefined ? fallback : positiveInteger(`--${flag}`, raw);
}

const builds = (values.build ?? []).map((spec) => {
  const eq = spec.indexOf('=');
  if (eq <= 0) throw new Error(`--build takes LABEL=CHECKOUT, got "${spec}"`);
  return { label: spec.slice(0, eq), root: resolve(spec.slice(eq + 1)) };
});
if (builds.length === 0) throw new Error('name at least one --build LABEL=CHECKOUT (the first is the base)');
const db = values.db ?? 'sqlite';
if (db !== 'sqlite' && db !== 'postgres') throw new Error(`--db is sqlite or postgres, got "${db}"`);
const grants = values.grants === undefined ? 1 : parseGrantCount(values.grants);
const events = whole('events', values.events, 1);
const accounts = whole('accounts', values.accounts, 100);
const rounds = whole('rounds', values.rounds, 20);
const block = whole('block', values.block, 50);
const WARMUP_GROUPS = 200;
const UNITS = 1_000_000_000_000;

/** The whole machine's busy CPU, in µs (PostgreSQL's backends included). */
const machineBusyUs = (): number => machineBusySeconds() * 1e6;

interface Runner {
  label: string;
  group: () => Promise<void>;
  close: () => Promise<void>;
  cpuUs: number;
  machineUs: number;
  wallUs: number;
  groups: number;
}

async function databaseFor(): Promise<{ url: string; drop: () => Promise<void> }> {
  if (db === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'group-cpu-'));
    return { url: `sqlite:${join(dir, 'store.sqlite')}`, drop: async () => rmSync(dir, { recursive: true }) };
  }
  return createBenchDatabase(values['pg-admin-url'] ?? ADMIN_POSTGRES_URL);
}

async function runnerOf(label: string, root: string): Promise<Runner> {
  const e = (await import(join(root, 'bench/lib/engine.ts'))) as Engine;
  const bodies = (await import(join(root, 'bench/lib/bodies.ts'))) as Bodies;
  const grantsModule = join(root, 'bench/lib/grants.ts');
  const { url, drop } = await databaseFor();
  const store = await e.openStore(url, { pgPoolSize: 4 });
  const ledger = new e.EngineLedger(e.balanceEffects());
  // A build before the ledger room had no `groupWriter`/`ingestRequest`: its own calls, as its server made them.
  const old = e as unknown as { ingestGroup: (p: unknown, r: unknown[]) => Promise<{ ok: boolean }[]> };
  const oldLedger = ledger as unknown as { begin: (tx: unknown, nowMs: number) => unknown };
  const write: ReturnType<Engine['groupWriter']> =
    typeof e.groupWriter === 'function'
      ? e.groupWriter(ledger)
      : (((tx, nowMs, requests) => old.ingestGroup(oldLedger.begin(tx, nowMs), requests)) as ReturnType<
          Engine['groupWriter']
        >);
  const request: Engine['ingestRequest'] =
    typeof e.ingestRequest === 'function'
      ? e.ingestRequest
      : (companyId, accountId, events) => ({ companyId, accountId, events, gate: false }) as never;
  const companyId = await e.seedCompany(store, 'Group CPU Inc');
  const ids = Array.from({ length: accounts }, () => e.newId('a'));
  let funding: unknown = 'group-cpu seed';
  if (existsSync(grantsModule)) {
    const extra = ((await import(grantsModule)) as Grants).extraGrants(grants, UNITS, Date.now());
    funding = { reason: 'group-cpu seed', grants: () => extra };
  } else console.log(`${label}: a build before credit grants: its balances hold no grants`);
  const seed = e.seedFundedAccounts as unknown as Seed;
  await store.write((tx) => Promise.resolve(seed(tx, companyId, ids, 'tokens', UNITS, funding)));
  const variants = bodies.eventBatches(events).map((b) =>
    (JSON.parse(b.body.toString()) as unknown[]).map((input, i) => {
      const n = e.normalizeEvent(input as Parameters<Engine['normalizeEvent']>[0], i, e.ANY_TIME);
      if (!n.ok) throw new Error(`${label}: a bench event does not normalise: ${n.message}`);
      return n.value;
    }),
  );
  let sent = 0;
  const group = async () => {
    const requests = ids.map((accountId) => request(companyId, accountId, variants[sent++ % variants.length]!));
    const outcomes = await store.write((tx) => write(tx, Date.now(), requests));
    const refused = outcomes.find((o) => !o.ok);
    if (refused) throw new Error(`${label}: a request was refused: ${JSON.stringify(refused)}`);
  };
  for (let i = 0; i < WARMUP_GROUPS; i++) await group();
  const close = async () => {
    await store.close();
    await drop();
  };
  return { label, group, close, cpuUs: 0, machineUs: 0, wallUs: 0, groups: 0 };
}

const runners: Runner[] = [];
try {
  for (const b of builds) runners.push(await runnerOf(b.label, b.root));
  for (let r = 0; r < rounds; r++) {
    for (const x of r % 2 === 0 ? runners : [...runners].reverse()) {
      const cpu = process.cpuUsage();
      const machine = machineBusyUs();
      const wall = performance.now();
      for (let g = 0; g < block; g++) await x.group();
      const used = process.cpuUsage(cpu);
      x.cpuUs += used.user + used.system;
      x.machineUs += machineBusyUs() - machine;
      x.wallUs += (performance.now() - wall) * 1000;
      x.groups += block;
    }
  }
  const base = runners[0]!;
  const per = (x: Runner, k: 'cpuUs' | 'machineUs' | 'wallUs') => x[k] / x.groups;
  const cell = (x: Runner, k: 'cpuUs' | 'machineUs' | 'wallUs') => {
    // /proc/stat counts in 10 ms ticks: a short run may see none (no change to give then).
    const change = x === base || per(base, k) === 0 ? '' : ` (${((per(x, k) / per(base, k) - 1) * 100).toFixed(1)} %)`;
    return `${Math.round(per(x, k))} µs${change}`;
  };
  console.log(
    `${db}, groups of ${accounts} requests × ${events} event(s), ${grants} grant(s) per balance; ` +
      `${rounds} rounds of ${block} groups per build`,
  );
  for (const x of runners)
    console.log(
      `${x.label.padEnd(12)} process CPU ${cell(x, 'cpuUs')}, machine ${cell(x, 'machineUs')}, ` +
        `wall ${cell(x, 'wallUs')} per group`,
    );
} finally {
  for (const x of runners) await x.close();
}
