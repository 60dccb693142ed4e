/**
 * A writer thread that, once per database file, crashes (exits 1) on the first group it is sent;
 * the thread started after that fails to start (throws while loading); every later one behaves
 * as the real thread: for the restart test of the SQLite writer thread.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';

const { filename } = workerData as { filename: string };
if (!existsSync(`${filename}.crashed`)) {
  parentPort!.once('message', () => {
    writeFileSync(`${filename}.crashed`, '');
    process.exit(1);
  });
  parentPort!.postMessage('ready');
} else if (!existsSync(`${filename}.failed`)) {
  writeFileSync(`${filename}.failed`, '');
  throw new Error('this thread cannot start');
} else {
  await import('../../src/ingest/writer-thread-main.js');
}
