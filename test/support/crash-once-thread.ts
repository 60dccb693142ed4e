/**
 * A writer thread that crashes (exits 1) on the first group it is sent, once per database file,
 * and behaves as the real thread ever after: for the respawn test of the SQLite writer thread.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';

const marker = `${(workerData as { filename: string }).filename}.crashed`;
if (!existsSync(marker)) {
  parentPort!.once('message', () => {
    writeFileSync(marker, '');
    process.exit(1);
  });
  parentPort!.postMessage('ready');
} else {
  await import('../../src/ingest/writer-thread-main.js');
}
