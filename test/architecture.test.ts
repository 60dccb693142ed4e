// Guarantee: imports flow one way — http/jobs → operations → ledger → domain and the Store interface;
// domain rules stay pure (no I/O modules); only the composition root knows the concrete stores.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { LEDGER_PORT } from '../src/ledger/port.js';
import { SqliteStore } from '../src/store/sqlite.js';

const SRC = resolve('src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** "layer/file.ts" → imports, resolved to paths relative to src/ (or the package name). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [
    ...text.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/gm),
    ...text.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm),
  ].map((m) => m[1]!);
  return specs.map((s) => (s.startsWith('.') ? relative(SRC, resolve(dirname(file), s)).replace(/\.js$/, '.ts') : s));
}

const layerOf = (p: string) => (p.includes('/') ? p.split('/')[0]! : p);

const ALLOWED: Record<string, (target: string) => boolean> = {
  domain: (t) => ['domain', 'lib'].includes(layerOf(t)),
  lib: (t) => layerOf(t) === 'lib',
  // The store keeps the domain's records (events, grants, usage) and implements the ledger's port (ledger/port.ts:
  // its types and the key it is reached by).
  store: (t) => ['store', 'lib', 'domain'].includes(layerOf(t)) || t === 'ledger/port.ts',
  processors: (t) => ['processors', 'lib'].includes(layerOf(t)) || t === 'domain/money.ts',
  webhooks: (t) => ['webhooks', 'lib', 'domain'].includes(layerOf(t)) || t === 'store/types.ts',
  // The email sender: its interface and its two implementations (nodemailer SMTP, the log).
  email: (t) => ['email', 'lib'].includes(layerOf(t)),
  // The balance engine: a balance at an instant and how it changes, over the port it declares (ledger/port.ts).
  ledger: (t) => ['ledger', 'domain', 'lib'].includes(layerOf(t)) || t === 'store/types.ts',
  operations: (t) =>
    ['operations', 'ledger', 'domain', 'lib', 'webhooks'].includes(layerOf(t)) ||
    t === 'store/types.ts' ||
    t === 'processors/types.ts' ||
    t === 'email/types.ts',
  jobs: (t) =>
    ['jobs', 'operations', 'ledger', 'domain', 'lib', 'webhooks'].includes(layerOf(t)) ||
    t === 'store/types.ts' ||
    t === 'processors/types.ts',
  // The group commit, and the SQLite writer thread that composes the ingest operation with the concrete store
  // and the server's balance effects (compose.ts: a composition root of its own thread).
  ingest: (t) =>
    ['ingest', 'operations', 'ledger', 'domain', 'lib', 'store'].includes(layerOf(t)) || t === 'compose.ts',
  http: (t) =>
    ['http', 'operations', 'ledger', 'domain', 'lib', 'webhooks'].includes(layerOf(t)) ||
    t === 'store/types.ts' ||
    t === 'processors/types.ts',
};
/** Node modules that do I/O: the pure domain must not touch them. */
const IO_MODULES =
  /^(node:)?(fs|net|http|https|dns|child_process|worker_threads|dgram|tls)(\/|$)|^(pg|better-sqlite3|stripe|fastify)$/;

test('every src import goes in the allowed direction', () => {
  const violations: string[] = [];
  for (const file of files(SRC)) {
    const rel = relative(SRC, file);
    const layer = layerOf(rel);
    const allowed = ALLOWED[layer];
    for (const target of importsOf(file)) {
      if (!target.endsWith('.ts')) {
        if ((layer === 'domain' || layer === 'operations') && IO_MODULES.test(target))
          violations.push(`${rel} imports I/O module ${target}`);
        continue;
      }
      if (target.startsWith('..')) violations.push(`${rel} imports outside src: ${target}`);
      else if (allowed && !allowed(target)) violations.push(`${rel} → ${target}`);
    }
  }
  assert.deepEqual(violations, []);
});

test('the check itself sees imports (it cannot pass vacuously)', () => {
  const imports = importsOf(join(SRC, 'operations/events.ts'));
  assert.ok(imports.includes('domain/events.ts'));
  assert.ok(imports.includes('store/types.ts'));
  assert.equal(ALLOWED.domain!('store/sqlite.ts'), false);
  assert.equal(ALLOWED.http!('store/postgres.ts'), false);
});

/** Every TypeScript line of the project, in the folders Biome formats (comments and strings included). */
function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (['node_modules', 'dist', 'results', 'reference'].includes(name)) return [];
    // The client's types are generated (npm run openapi) from the OpenAPI document's long descriptions.
    if (p.endsWith(join('sdk', 'typescript', 'src', 'schema.ts'))) return [];
    return statSync(p).isDirectory() ? tsFiles(p) : /\.(ts|tsx|mjs)$/.test(p) ? [p] : [];
  });
}

test('no line is longer than 120 columns (the formatter cannot break comments and strings)', () => {
  const long: string[] = [];
  for (const dir of ['src', 'test', 'bench', 'console/src', 'sdk/typescript', 'scripts'])
    for (const file of tsFiles(resolve(dir)))
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (line.length > 120) long.push(`${relative(resolve('.'), file)}:${i + 1} (${line.length})`);
        });
  assert.deepEqual(long, []);
  assert.ok(tsFiles(resolve('src')).length > 50, 'the check sees the sources');
});

test('only src/ledger/ (and the store that implements it) reaches the ledger port', () => {
  const violations: string[] = [];
  for (const file of files(SRC)) {
    const rel = relative(SRC, file);
    if (['ledger', 'store'].includes(layerOf(rel))) continue;
    if (importsOf(file).includes('ledger/port.ts')) violations.push(rel);
  }
  assert.deepEqual(violations, []);
});

/** The port's writes: what changes a balance's figures or grants, or the rows recorded with them. */
const PORT_WRITES = [
  'lockBalances',
  'applyBalanceDeltas',
  'writeLedger',
  'insertEvents',
  'updateEvents',
  'insertTransactions',
  'insertGrants',
  'updateGrants',
  'addUsage',
];

test('balances and grants change only through the ledger: no aggregate of a transaction writes them', async () => {
  const store = new SqliteStore(':memory:');
  try {
    const offered = await store.write(async (tx) => {
      const out: string[] = [];
      for (const aggregate of Object.getOwnPropertyNames(Object.getPrototypeOf(tx))) {
        if (aggregate === 'constructor') continue;
        const part = (tx as unknown as Record<string, object>)[aggregate]!;
        for (let proto = Object.getPrototypeOf(part); proto !== Object.prototype; proto = Object.getPrototypeOf(proto))
          for (const method of Object.getOwnPropertyNames(proto))
            if (PORT_WRITES.includes(method)) out.push(`tx.${aggregate}.${method}`);
      }
      return out;
    });
    assert.deepEqual(offered, []);
    // The check sees the methods where they are: on the port.
    const port = await store.write(async (tx) => tx[LEDGER_PORT] as unknown as Record<string, unknown>);
    for (const method of PORT_WRITES) assert.equal(typeof port[method], 'function', method);
  } finally {
    await store.close();
  }
});
