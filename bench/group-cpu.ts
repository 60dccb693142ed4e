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
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ADMIN_POSTGRES_URL, parseGrantCount } from './lib/options.js';
import {
  alternate,
  compareLines,
  freshDatabase,
  parseBuilds,
  parseBuildsDb,
  wholeFlag as whole,
  type Contender,
} from './lib/builds.js';

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

const builds = parseBuilds(values.build);
const db = parseBuildsDb(values.db);
const grants = values.grants === undefined ? 1 : parseGrantCount(values.grants);
const events = whole('events', values.events, 1);
const accounts = whole('accounts', values.accounts, 100);
const rounds = whole('rounds', values.rounds, 20);
const block = whole('block', values.block, 50);
const WARMUP_GROUPS = 200;
const UNITS = 1_000_000_000_000;

async function runnerOf(label: string, root: string): Promise<Contender> {
  const e = (await import(join(root, 'bench/lib/engine.ts'))) as Engine;
  const bodies = (await import(join(root, 'bench/lib/bodies.ts'))) as Bodies;
  const grantsModule = join(root, 'bench/lib/grants.ts');
  const { url, drop } = await freshDatabase(db, values['pg-admin-url'] ?? ADMIN_POSTGRES_URL);
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
  return { label, step: group, unitsPerStep: 1, close, cpuUs: 0, machineUs: 0, wallUs: 0, units: 0 };
}

const runners: Contender[] = [];
try {
  for (const b of builds) runners.push(await runnerOf(b.label, b.root));
  await alternate(runners, rounds, block);
  console.log(
    `${db}, groups of ${accounts} requests × ${events} event(s), ${grants} grant(s) per balance; ` +
      `${rounds} rounds of ${block} groups per build`,
  );
  for (const line of compareLines(runners, 'group', 0)) console.log(line);
} finally {
  for (const x of runners) await x.close();
}
