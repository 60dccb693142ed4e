// Guarantees of the group commit on both databases (SQLite through its writer thread, as the server
// runs it): a request that cannot be written fails alone while every other request of its group
// commits exactly once, and a company with a backlog of requests cannot keep another's out of the
// next group.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { IngestRequest } from '../../src/domain/events.js';
import type { Outcome } from '../../src/domain/outcome.js';
import { GroupCommit, type GroupWriter } from '../../src/ingest/group-commit.js';
import { IngestBatcher, transactionWriters } from '../../src/ingest/group-commits.js';
import { AccountOwners } from '../../src/operations/account-owners.js';
import { SqliteWriterThread } from '../../src/ingest/writer-thread.js';
import { TestClock } from '../../src/lib/clock.js';
import type { Deps } from '../../src/operations/deps.js';
import type { IngestResult } from '../../src/ledger/ingest.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { forEachDialect, seedBalance, seedCompanyAndAccount } from '../support/stores.js';
import { T0, request, testDeps } from './contract-support.js';

type Writer = GroupWriter<IngestRequest, Outcome<IngestResult>>;

/** Metadata nested far deeper than any stack: JSON.stringify and structured clone both overflow on it. */
function deepMetadata(levels: number): Record<string, unknown> {
  let m: Record<string, unknown> = { leaf: true };
  for (let i = 0; i < levels; i++) m = { a: m };
  return m;
}

forEachDialect(
  (store, { dialect }) => {
    let deps: Deps;
    let thread: SqliteWriterThread | undefined;
    /** How the server writes a group: on the writer thread (SQLite), or through the store. */
    let write: Writer;

    before(async () => {
      deps = testDeps(store, new TestClock(T0));
      if (store instanceof SqliteStore) {
        const worker = await SqliteWriterThread.start(store);
        thread = worker;
        write = (nowMs, requests) => worker.ingest(nowMs, requests);
      } else {
        write = transactionWriters(store, deps.ledger, new AccountOwners()).ingest;
      }
    });
    after(async () => {
      await thread?.close();
    });

    test('a request the store cannot write fails alone; the rest of its busy group commits once', async () => {
      const busy = await seedCompanyAndAccount(store);
      await seedBalance(store, busy.companyId, busy.accountId, 'credits', 10_000);
      const bad = await seedCompanyAndAccount(store);
      await seedBalance(store, bad.companyId, bad.accountId, 'credits', 10_000);
      // Validation refuses such metadata (400): this request comes from below the HTTP layer, as a
      // request that passed validation and still cannot be written would.
      const poison = request(bad.companyId, bad.accountId, [
        { type: 't', cost_override: { amount: 1, denomination: 'credits' } },
      ]);
      poison.events[0]!.metadata = deepMetadata(200_000);

      const groups: IngestRequest[][] = [];
      const recording: Writer = (nowMs, requests) => {
        groups.push(requests);
        return write(nowMs, requests);
      };
      const batcher = new IngestBatcher(deps.clock, dialect === 'postgres' ? 3 : 2, recording);
      const N = 300;
      const ok = Array.from({ length: N }, (_, i) =>
        batcher.submit(
          request(busy.companyId, busy.accountId, [
            { type: 't', id: `busy-${i}`, cost_override: { amount: 3, denomination: 'credits' } },
          ]),
        ),
      );
      const refused = batcher.submit(poison).then(
        () => 'written',
        (err: unknown) => err,
      );
      const outcomes = await Promise.allSettled(ok);

      // The poison shared its first group with other requests: that is what this test is about.
      const first = groups.find((g) => g.includes(poison));
      assert.ok(first && first.length > 1, 'the poisoned request was written in a group with others');
      assert.notEqual(await refused, 'written', 'the poisoned request is refused');
      const failed = outcomes.filter((o) => o.status === 'rejected' || !o.value.ok);
      assert.equal(failed.length, 0, `every other request succeeds (${failed.length} of ${N} failed)`);

      const balance = await store.read((tx) => tx.balances.findBalance(busy.accountId, 'credits'));
      assert.equal(balance!.amount, 10_000 - 3 * N, 'each request deducted exactly once');
      const events = await store.read((tx) =>
        tx.events.findEventsByIds(
          busy.companyId,
          Array.from({ length: N }, (_, i) => `busy-${i}`),
        ),
      );
      assert.equal(events.length, N, 'each event recorded');
      const untouched = await store.read((tx) => tx.balances.findBalance(bad.accountId, 'credits'));
      assert.equal(untouched!.amount, 10_000, 'the refused request changed nothing');
      assert.deepEqual(await store.read((tx) => tx.transactions.auditLedger()), []);
    });

    test("a company's backlog does not keep another company's request out of the next group", async () => {
      const flood = await seedCompanyAndAccount(store);
      await seedBalance(store, flood.companyId, flood.accountId, 'credits', 0);
      const other = await seedCompanyAndAccount(store);
      await seedBalance(store, other.companyId, other.accountId, 'credits', 0);

      const groups: string[][] = [];
      let firstGroupStarted!: () => void;
      const started = new Promise<void>((resolve) => {
        firstGroupStarted = resolve;
      });
      const recording: Writer = (nowMs, requests) => {
        groups.push(requests.map((r) => r.companyId));
        firstGroupStarted();
        return write(nowMs, requests);
      };
      // Groups of at most 10 events, one in flight: the flood of 100 one-event requests is ten groups.
      const batcher = new GroupCommit(
        deps.clock,
        1,
        recording,
        (r: IngestRequest) => r.events.length,
        10,
        (r) => r.companyId,
      );
      const one = { type: 't', cost_override: { amount: 1, denomination: 'credits' } };
      const flooded = Array.from({ length: 100 }, () =>
        batcher.submit(request(flood.companyId, flood.accountId, [one])),
      );
      await started;
      const single = batcher.submit(request(other.companyId, other.accountId, [one]));
      const results = await Promise.all([...flooded, single]);
      assert.ok(results.every((o) => o.ok));

      assert.ok(groups.length >= 11, `the flood took ${groups.length} groups`);
      const placed = groups.findIndex((g) => g.includes(other.companyId));
      assert.equal(placed, 1, `the other company's request is in the group right after the one in flight (${placed})`);
      assert.equal(groups[0]!.length, 10);
    });
  },
  { title: 'group commit' },
);
