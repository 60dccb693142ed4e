/**
 * `npm test`'s test run: every test file on node's test runner, compiled first. Run through tsx, each of the hundred
 * test processes (and each SQLite writer thread they start) would spend a second or two of CPU in the TypeScript
 * loader, and the suite is bound by CPU on a two-core machine. So the sources are compiled once (tsc, no type check:
 * the type-check step before this one did it) into a temporary copy of the repository, whose other files are links
 * to the real ones, and the runner runs the compiled files there, from the repository (the tests' working directory).
 * The files run in the order of their names, as they did with `find test -name '*.test.ts' | sort`. A single file runs
 * from its source (`node --import tsx --test test/…/x.test.ts`), or compiled as here: `node --import tsx
 * test/support/suite.ts test/…/x.test.ts …`.
 */
import { execFileSync, spawn } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve('.');
/** Files at a time (README: "four files at a time"): the suite keeps both cores busy with it. */
const CONCURRENCY = 3;
/** Not linked into the copy: git's own files. */
const SKIP = new Set(['.git']);
const PREFIX = 'billing-tests-';
const STALE_MS = 24 * 3_600_000;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return testFiles(p);
    return e.name.endsWith('.test.ts') ? [relative(ROOT, p)] : [];
  });
}

/** The files named on the command line (some of the suite, as it runs in `npm test`), or every test file. */
function chosen(): string[] {
  const named = process.argv.slice(2).map((f) => relative(ROOT, resolve(f)));
  return named.length > 0 ? named : testFiles(join(ROOT, 'test')).sort();
}

/** Links into `to` every entry of `from` that the compiler did not write there (directories it wrote into: inside). */
function linkRest(from: string, to: string): void {
  for (const e of readdirSync(from, { withFileTypes: true })) {
    if (SKIP.has(e.name)) continue;
    const target = join(to, e.name);
    const there = lstatSync(target, { throwIfNoEntry: false });
    if (there === undefined) symlinkSync(join(from, e.name), target);
    else if (e.isDirectory() && there.isDirectory()) linkRest(join(from, e.name), target);
  }
}

/** A compiled copy of the repository: every .ts compiled to .js beside its source's link, the rest linked. */
function compiledCopy(): string {
  // Copies left by runs that were killed.
  for (const name of readdirSync(tmpdir()))
    if (
      name.startsWith(PREFIX) &&
      Date.now() - (statSync(join(tmpdir(), name), { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > STALE_MS
    )
      rmSync(join(tmpdir(), name), { recursive: true, force: true });
  const dir = mkdtempSync(join(tmpdir(), PREFIX));
  // Compiled first, linked after: a link never stands where the compiler writes (it would write through it).
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json', '--outDir', dir, '--noCheck', '--sourceMap'],
    { cwd: ROOT, stdio: 'inherit' },
  );
  linkRest(ROOT, dir);
  return dir;
}

const files = chosen();
const copy = compiledCopy();
const runner = spawn(
  process.execPath,
  [
    '--enable-source-maps',
    '--test',
    `--test-concurrency=${CONCURRENCY}`,
    ...files.map((f) => join(copy, f.replace(/\.ts$/, '.js'))),
  ],
  { cwd: ROOT, stdio: 'inherit', env: { ...process.env, BILLING_TEST_SUITE_COPY: copy } },
);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => runner.kill(signal));
runner.on('exit', (code, signal) => {
  rmSync(copy, { recursive: true, force: true });
  process.exit(code ?? (signal ? 1 : 0));
});
