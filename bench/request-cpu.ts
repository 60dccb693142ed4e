import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createFundedAccounts, createTenant } from './lib/api.js';
import { eventBatches } from './lib/bodies.js';
import {
  alternate,
  compareLines,
  freshDatabase,
  parseBuilds,
  parseBuildsDb,
  wholeFlag as whole,
  type Contender,
} from './lib/builds.js';
import { ADMIN_POSTGRES_URL } from './lib/options.js';
import { eventsPath } from './lib/scenarios.js';

type Engine = typeof import('./lib/engine.js');

const { values } = parseArgs({
  options: {
    build: { type: 'string', multiple: true },
    db: { type: 'string' },
    events: { type: 'string' },
    accounts: { type: 'string' },
    'in-flight': { type: 'string' },
    rounds: { type: 'string' },
    block: { type: 'string' },
    warmup: { type: 'string' },
    'pg-admin-url': { type: 'string' },
  },
  strict: true,
});

const builds = parseBuilds(values.build);
const db = parseBuildsDb(values.db);
const events = whole('events', values.events, 1);
const accounts = whole('accounts', values.accounts, 100);
const inFlight = whole('in-flight', values['in-flight'], 100);
const rounds = whole('rounds', values.rounds, 10);
const block = whole('block', values.block, 2_000);
/** Requests each build answers before the measured rounds (JIT, caches, the database's first pages). */
const warmup = whole('warmup', values.warmup, 5_000);

async function runnerOf(label: string, root: string): Promise<Contender> {
  const e = (await import(join(root, 'bench/lib/engine.ts'))) as Engine;
  const { url, drop } = await freshDatabase(db, values['pg-admin-url'] ?? ADMIN_POSTGRES_URL);
  const config = e.loadConfig({
    ...process.env,
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: url,
    // Above the server's default (warn): the set-up's development email lines stay out of the report; a request
    // logs nothing at either.
    LOG_LEVEL: 'error',
    BILLING_SECRET_KEY: `bench:${randomBytes(32).toString('base64')}`,
  });
  const server = await e.startServer(config);
  const tenant = await createTenant(server.url);
  const ids = await createFundedAccounts(tenant, accounts);
  const bodies = eventBatches(events).map((b) => b.body);
  const paths = ids.map(eventsPath);
  const headers = { authorization: tenant.authorization, 'content-type': 'application/json' };
  let sent = 0;
  /** Sends `n` requests, `inFlight` at a time; rejects on any answer but 200. */
  const send = (n: number) =>
    new Promise<void>((done, fail) => {
      let started = 0;
      let answered = 0;
      const next = (): void => {
        if (started === n) {
          if (answered === n) done();
          return;
        }
        started++;
        const i = sent++;
        server.app
          .inject({ method: 'POST', url: paths[i % paths.length]!, headers, payload: bodies[i % bodies.length]! })
          .then((res) => {
            if (res.statusCode !== 200) throw new Error(`${label}: answered ${res.statusCode}: ${res.body}`);
            answered++;
            next();
          })
          .catch(fail);
      };
      for (let k = 0; k < Math.min(inFlight, n); k++) next();
    });
  await send(warmup);
  const close = async () => {
    await server.close();
    await drop();
  };
  return { label, step: () => send(block), unitsPerStep: block, close, cpuUs: 0, machineUs: 0, wallUs: 0, units: 0 };
}

const runners: Contender[] = [];
try {
  for (const b of builds) runners.push(await runnerOf(b.label, b.root));
  await alternate(runners, rounds, 1);
  console.log(
    `${db}, requests of ${events} event(s) over ${accounts} accounts, ${inFlight} in flight; ` +
      `${rounds} rounds of ${block} requests per build`,
  );
  for (const line of compareLines(runners, 'request', 1)) console.log(line);
} finally {
  for (const x of runners) await x.close();
}
