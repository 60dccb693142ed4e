/**
 * The SQLite ingest writer, on its own thread. It opens its own connection to the database
 * file and applies each group the main thread sends (ingest requests, or settles) in one transaction,
 * COMMIT (and its fsync) included, so the HTTP thread keeps parsing and validating the next
 * requests meanwhile. The main thread holds the store's writer lock while a group runs here,
 * so this connection and the main one never contend for SQLite's write lock.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { IngestRequest } from '../domain/events.js';
import type { SettleRequest } from '../operations/events.js';
import { balanceEffects } from '../compose.js';
import { Ledger } from '../ledger/ledger.js';
import { AccountOwners } from '../operations/account-owners.js';
import { SqliteStore } from '../store/sqlite.js';
import { OutcomeError } from '../domain/outcome.js';
import { transactionWriters } from './group-commits.js';
import type {
  GroupError,
  GroupKind,
  GroupKinds,
  GroupReply,
  GroupRequest,
  WorkerInit,
} from './writer-thread-protocol.js';

const port = parentPort;
if (!port) throw new Error('ingest/writer-thread-main.ts runs as a worker thread');

const init = workerData as WorkerInit;
// The same balance effects as the server's (refill decisions, plan alerts, notifications).
const store = new SqliteStore(init.filename, { reader: false });
const writers = transactionWriters(store, new Ledger(balanceEffects()), new AccountOwners());

port.on('message', (msg: GroupRequest | 'close') => {
  if (msg === 'close') {
    void store.close().then(() => process.exit(0));
    return;
  }
  const written: Promise<GroupKinds[GroupKind]['outcome'][]> =
    msg.kind === 'ingest'
      ? writers.ingest(msg.nowMs, msg.requests as IngestRequest[])
      : writers.settle(msg.nowMs, msg.requests as SettleRequest[]);
  written.then(
    (outcomes) => {
      try {
        port.postMessage({ id: msg.id, outcomes } satisfies GroupReply);
      } catch (err) {
        // Committed, but the answer cannot be sent: the group must not be written again.
        port.postMessage({ id: msg.id, error: errorOf(err), committed: true } satisfies GroupReply);
      }
    },
    (err: unknown) => port.postMessage({ id: msg.id, error: errorOf(err) } satisfies GroupReply),
  );
});

function errorOf(err: unknown): GroupError {
  if (err instanceof OutcomeError) return { message: err.message, stack: err.stack ?? '', failure: err.failure };
  return err instanceof Error ? { message: err.message, stack: err.stack ?? '' } : { message: String(err), stack: '' };
}
port.postMessage('ready');
