// Guarantee: the SQLite writer thread failing mid-group fails that group's requests (nothing of
// them applied) and a new thread takes the next group, which is applied exactly once; a thread
// that cannot start fails the groups sent meanwhile, and a later group starts another.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { normalizeEvent, type IngestRequest } from '../../src/domain/events.js';
import { SqliteWriterThread } from '../../src/ingest/writer-thread.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { seedBalance, seedCompanyAndAccount } from '../support/stores.js';

/** Requests here carry no `timestamp`: no limit applies. */
const ANY_TIME = { nowMs: 0, maxAgeMs: Number.POSITIVE_INFINITY };

/**
 * Long enough that the groups the test sends "before the backoff is over" are sent before it,
 * even while a loaded machine takes a second or more to start a thread.
 */
const RESTART_BACKOFF_MS = 8_000;

/**
 * A store on a fresh file, a writer thread started from `entry`, an account holding 1,000
 * tokens and a 7-token request for it; all closed and removed after `body`.
 */
async function withThread(
  entry: string,
  body: (ctx: {
    store: SqliteStore;
    worker: SqliteWriterThread;
    accountId: string;
    req: IngestRequest;
  }) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'billing-thread-'));
  const store = new SqliteStore(join(dir, 'billing.sqlite'));
  const worker = await SqliteWriterThread.start(store, {
    entry: new URL(entry, import.meta.url),
    restartBackoffMs: RESTART_BACKOFF_MS,
  });
  try {
    const s = await seedCompanyAndAccount(store);
    await seedBalance(store, s.companyId, s.accountId, 'tokens', 1000);
    const n = normalizeEvent({ type: 'x', cost_override: { amount: 7, denomination: 'tokens' } }, 0, ANY_TIME);
    assert.ok(n.ok);
    await body({
      store,
      worker,
      accountId: s.accountId,
      req: {
        companyId: s.companyId,
        accountId: s.accountId,
        events: [n.value],
        eventIds: ['ev_thread_1'],
        gate: false,
      },
    });
  } finally {
    await worker.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a writer thread that dies mid-group is replaced; the lost group changed nothing', {
  timeout: 30_000,
}, async () => {
  await withThread('../support/crash-once-thread.ts', async ({ store, worker, accountId, req }) => {
    const s = { accountId, companyId: req.companyId };

    await assert.rejects(worker.ingest(Date.now(), [req]), /writer thread exited \(code 1\)/);
    assert.equal(
      (await store.read((tx) => tx.balances.findBalance(s.accountId, 'tokens')))!.amount,
      1000,
      'the lost group applied nothing',
    );

    const [outcome] = await worker.ingest(Date.now(), [req]);
    assert.ok(outcome?.ok, JSON.stringify(outcome));
    assert.equal(
      (await store.read((tx) => tx.balances.findBalance(s.accountId, 'tokens')))!.amount,
      993,
      'the next group, on a new thread, applied once',
    );
    assert.deepEqual(await store.read((tx) => tx.transactions.auditLedger()), []);

    // The writer lock was let go with the failed group: the main connection can write.
    await seedBalance(store, s.companyId, s.accountId, 'credits', 5);
  });
});

test('a writer thread that cannot start fails the groups sent meanwhile; a group after the backoff starts a new one', {
  timeout: 30_000,
}, async () => {
  await withThread('../support/crash-then-fail-start-thread.ts', async ({ store, worker, accountId, req }) => {
    const s = { accountId };

    await assert.rejects(worker.ingest(Date.now(), [req]), /writer thread exited \(code 1\)/);
    // The replacement thread fails to start: the next group says why, and so does one sent
    // before the backoff is over (no new thread yet).
    await assert.rejects(worker.ingest(Date.now(), [req]), /this thread cannot start/);
    await assert.rejects(worker.ingest(Date.now(), [req]), /this thread cannot start/);
    assert.equal((await store.read((tx) => tx.balances.findBalance(s.accountId, 'tokens')))!.amount, 1000);

    await sleep(RESTART_BACKOFF_MS + 100);
    const [outcome] = await worker.ingest(Date.now(), [req]);
    assert.ok(outcome?.ok, JSON.stringify(outcome));
    assert.equal(
      (await store.read((tx) => tx.balances.findBalance(s.accountId, 'tokens')))!.amount,
      993,
      'applied once, by the thread started after the backoff',
    );
    assert.deepEqual(await store.read((tx) => tx.transactions.auditLedger()), []);
  });
});
