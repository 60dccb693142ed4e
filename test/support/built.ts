/**
 * The server and the CLI that the tests start as child processes run as production runs them: `src/` compiled to
 * JavaScript by `tsc -p tsconfig.build.json` (the build of `npm run build`), not the TypeScript through tsx, whose
 * loader costs about a second of CPU at every start (the suite starts a few hundred). One build per content of
 * src/ (and of the tsconfig and package files), made by the first test that needs it, under a lock, into
 * node_modules/.cache/billing-engine-tests/<hash>/ (beside package.json and console/, so that the paths the code
 * takes from its own location hold). A change in src/ makes a new build; builds unused for a day are removed.
 * `npm test` compiles the whole repository anyway (support/suite.ts): there, its copy of src/ is the build.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
} from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';

/** The repository: the tests' working directory (whether they run from their sources or compiled: support/suite.ts). */
const ROOT = resolve('.');
const SRC = join(ROOT, 'src');
const CACHE = join(ROOT, 'node_modules', '.cache', 'billing-engine-tests');
const INPUTS = ['tsconfig.json', 'tsconfig.build.json', 'package.json'];
const DONE = '.complete';
/** A lock older than this was left by a build that was killed. */
const STALE_LOCK_MS = 120_000;
const UNUSED_MS = 24 * 3_600_000;

function filesOf(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((e) => (e.isDirectory() ? filesOf(join(dir, e.name)) : [join(dir, e.name)]));
}

/** The content of everything the build reads. */
function sourceHash(): string {
  const h = createHash('sha256');
  for (const file of [...filesOf(SRC), ...INPUTS.map((f) => join(ROOT, f))])
    h.update(relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
  return h.digest('hex').slice(0, 16);
}

async function build(target: string): Promise<void> {
  const tmp = `${target}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  mkdirSync(tmp, { recursive: true });
  try {
    // Type errors are `npm test`'s type-check's to report; the tests run what the sources say, as tsx would.
    await promisify(execFile)(
      process.execPath,
      [
        join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
        '-p',
        'tsconfig.build.json',
        '--outDir',
        join(tmp, 'dist'),
        '--noCheck',
      ],
      { cwd: ROOT, timeout: 170_000 },
    ).catch((err: { stdout?: string }) => {
      if (!existsSync(join(tmp, 'dist', 'main.js')))
        throw new Error(`tsc -p tsconfig.build.json failed: ${err.stdout}`);
    });
    // dist/cli/run.js reads ../../package.json (its version); dist/http/console.js serves ../../console/dist.
    copyFileSync(join(ROOT, 'package.json'), join(tmp, 'package.json'));
    symlinkSync(join(ROOT, 'console'), join(tmp, 'console'));
    mkdirSync(join(tmp, DONE));
    renameSync(tmp, target);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

function prune(keep: string): void {
  for (const name of readdirSync(CACHE)) {
    const dir = join(CACHE, name);
    if (dir === keep || name.endsWith('.lock')) continue;
    const used = statSync(dir, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
    if (Date.now() - used > UNUSED_MS) rmSync(dir, { recursive: true, force: true });
  }
}

let built: Promise<string> | undefined;

/** The directory of the build of the current sources (made now unless it exists): its `dist/` is `npm run build`'s. */
function currentBuild(): Promise<string> {
  built ??= (async () => {
    const target = join(CACHE, sourceHash());
    const lock = `${target}.lock`;
    mkdirSync(CACHE, { recursive: true });
    while (!existsSync(join(target, DONE))) {
      try {
        mkdirSync(lock);
      } catch {
        // Another test process builds the same sources: wait for its build (or for its lock to be abandoned).
        const since = statSync(lock, { throwIfNoEntry: false })?.mtimeMs;
        if (since !== undefined && Date.now() - since > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
        await sleep(50);
        continue;
      }
      try {
        if (!existsSync(join(target, DONE))) {
          rmSync(target, { recursive: true, force: true });
          await build(target);
          prune(target);
        }
      } finally {
        rmSync(lock, { recursive: true, force: true });
      }
    }
    const now = new Date();
    utimesSync(target, now, now);
    return target;
  })();
  return built;
}

/** Under `npm test`: the compiled copy of the repository the suite runs (support/suite.ts), whose src/ is built. */
const SUITE_COPY = process.env.BILLING_TEST_SUITE_COPY;

/** The JavaScript that `src/<entry>.ts` compiles to, in the build of the current sources (made if need be). */
export async function builtEntry(source: string): Promise<string> {
  const rel = relative(SRC, resolve(source));
  if (rel.startsWith('..') || !rel.endsWith('.ts')) throw new Error(`not a source under src/: ${source}`);
  const js = rel.replace(/\.ts$/, '.js');
  return SUITE_COPY !== undefined ? join(SUITE_COPY, 'src', js) : join(await currentBuild(), 'dist', js);
}
