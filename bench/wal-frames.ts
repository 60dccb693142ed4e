/**
 * What an ingest commit writes on SQLite, by B-tree: runs the store-only baseline
 * (`bench/baselines/store.ts`) of a checkout on a fresh file, reads the WAL while it runs, and maps
 * each frame (a page) of every commit that writes the events table to the B-tree it belongs to
 * (`dbstat`). A deterministic figure where throughput on a shared machine is not: compare builds
 * (`--root` of another worktree) by their frames per commit.
 *
 *   npx tsx bench/wal-frames.ts [--events 100] [--duration 5] [--root <checkout>]
 *
 * A connection of this process stays open on the file, so that the store's close leaves the WAL
 * in place; the WAL is read every POLL_MS (a checkpoint restarts it every ~1,000 frames) and
 * commits are told apart by the WAL's salts and their offset. Reads the database file directly
 * (like growth-explain.ts), never the store's code.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';

const POLL_MS = 50;
const WAL_HEADER = 32;
const FRAME_HEADER = 24;
/** B-trees written by fewer than this share of the commits are left out of the listing. */
const LISTED_SHARE = 0.05;

const { values } = parseArgs({
  options: { events: { type: 'string' }, duration: { type: 'string' }, root: { type: 'string' } },
  strict: true,
});
const root = resolve(values.root ?? '.');
const dir = mkdtempSync(join(tmpdir(), 'wal-frames-'));
const file = join(dir, 'store.sqlite');

/** Page numbers of each complete commit seen, keyed by the WAL generation's salts and the commit's offset. */
const commits = new Map<string, number[]>();

function readWal(): void {
  let wal: Buffer;
  try {
    wal = readFileSync(`${file}-wal`);
  } catch {
    return;
  }
  if (wal.length < WAL_HEADER) return;
  const pageSize = wal.readUInt32BE(8);
  const salt1 = wal.readUInt32BE(16);
  const salt2 = wal.readUInt32BE(20);
  let pages: number[] = [];
  for (let at = WAL_HEADER; at + FRAME_HEADER + pageSize <= wal.length; at += FRAME_HEADER + pageSize) {
    if (wal.readUInt32BE(at + 8) !== salt1 || wal.readUInt32BE(at + 12) !== salt2) break; // an older generation
    pages.push(wal.readUInt32BE(at));
    if (wal.readUInt32BE(at + 4) !== 0) {
      commits.set(`${salt1}:${salt2}:${at}`, pages); // the frame that ends a commit holds the database size
      pages = [];
    }
  }
}

async function main(): Promise<void> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'bench/baselines/store.ts',
      '--events',
      values.events ?? '100',
      '--duration',
      values.duration ?? '5',
    ],
    { cwd: root, env: { ...process.env, DATABASE_URL: `sqlite:${file}` }, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  let exited = false;
  child.on('exit', () => {
    exited = true;
  });
  let db: Database.Database | undefined;
  while (!exited) {
    await new Promise((r) => setTimeout(r, POLL_MS));
    if (db === undefined && existsSync(`${file}-wal`)) {
      db = new Database(file);
      db.prepare('SELECT count(*) FROM sqlite_master').get(); // joins the WAL: the store's close keeps it
    }
    if (db !== undefined) readWal();
  }
  readWal();
  if (db === undefined) throw new Error('the store-only run wrote no WAL');
  const owner = new Map(
    (db.prepare('SELECT name, pageno FROM dbstat').all() as { name: string; pageno: number }[]).map((r) => [
      r.pageno,
      r.name,
    ]),
  );
  db.close();
  rmSync(dir, { recursive: true, force: true });
  const byTree = new Map<string, number>();
  let counted = 0;
  let frames = 0;
  for (const pages of commits.values()) {
    const trees = pages.map((p) => owner.get(p) ?? '(freed since)');
    if (!trees.includes('events') || trees.includes('accounts')) continue; // ingest commits only, not seeding
    counted++;
    frames += pages.length;
    for (const t of trees) byTree.set(t, (byTree.get(t) ?? 0) + 1);
  }
  if (counted === 0) throw new Error('no ingest commit seen');
  const listed = [...byTree]
    .filter(([, n]) => n / counted >= LISTED_SHARE)
    .sort((a, b) => b[1] - a[1])
    .map(([t, n]) => `${t} ${(n / counted).toFixed(1)}`);
  console.log(
    `${root}: ${counted} commits of ${values.events ?? '100'}-event transactions, ` +
      `${(frames / counted).toFixed(1)} WAL frames per commit: ${listed.join(', ')}`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
