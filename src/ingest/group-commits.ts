/**
 * The group commits of one server, and the one place that decides how a group is written: on
 * SQLite's writer thread when the database is a file (COMMIT's fsync never blocks HTTP), otherwise as
 * one transaction of the store on this thread (PostgreSQL, several groups at once; SQLite in memory).
 * Reads that every request of a gateway may make (the pre-flight check, a balance, an entitlement) are grouped the
 * same way: the requests that arrive meanwhile are answered from one read of the store, a handful of
 * statements for the group, so that a read costs less than the write it reads.
 * The server (server.ts), the OpenAPI script and the tests build their group commits here.
 */
import type { IngestRequest } from '../domain/events.js';
import type { Outcome } from '../domain/outcome.js';
import type { Clock } from '../lib/clock.js';
import type { Deps } from '../operations/deps.js';
import type { IngestResult } from '../ledger/ingest.js';
import type { Ledger } from '../ledger/ledger.js';
import { AccountOwners } from '../operations/account-owners.js';
import { type BalanceRead, type BalanceReads, readBalanceGroup } from '../operations/balances.js';
import {
  checkEntitlementGroup,
  type EntitlementCheck,
  type EntitlementCheckRequest,
  type EntitlementChecks,
} from '../operations/features.js';
import {
  type CheckResult,
  checkGroup,
  ingestGroup,
  settleGroup,
  type EventWriters,
  type SettleRequest,
} from '../operations/events.js';
import { SqliteStore } from '../store/sqlite.js';
import type { BalanceRow, EventRow, Store } from '../store/types.js';
import { GroupCommit, type GroupWriter } from './group-commit.js';
import { SqliteWriterThread } from './writer-thread.js';

/** Most events one group transaction carries; more waiting requests form the next group. */
export const GROUP_EVENTS_MAX = 10_000;
/** Most settles one group transaction carries. */
export const GROUP_SETTLES_MAX = 1_000;
/** Most reads (checks, balances) one group read carries. */
export const GROUP_READS_MAX = 500;

/** How groups of each kind are written. */
export interface GroupWriters {
  ingest: GroupWriter<IngestRequest, Outcome<IngestResult>>;
  settle: GroupWriter<SettleRequest, Outcome<EventRow>>;
}

/**
 * Each group one transaction of `store`, posted through `ledger` (this thread's, or the writer thread's own), its
 * accounts' owners remembered in `owners` (this thread's).
 */
export function transactionWriters(store: Store, ledger: Ledger, owners: AccountOwners): GroupWriters {
  return {
    ingest: (nowMs, requests) => store.write((tx) => ingestGroup(ledger, tx, nowMs, requests, owners)),
    settle: (nowMs, requests) => store.write((tx) => settleGroup(ledger, tx, nowMs, requests)),
  };
}

/** Ingest requests, grouped by events (up to GROUP_EVENTS_MAX per group), fair between companies. */
export class IngestBatcher extends GroupCommit<IngestRequest, Outcome<IngestResult>> {
  constructor(clock: Clock, concurrency: number, write: GroupWriters['ingest']) {
    super(
      clock,
      concurrency,
      write,
      (r) => r.events.length,
      GROUP_EVENTS_MAX,
      (r) => r.companyId,
    );
  }
}

/** Settles, grouped (up to GROUP_SETTLES_MAX per group), fair between companies. */
export class SettleBatcher extends GroupCommit<SettleRequest, Outcome<EventRow>> {
  constructor(clock: Clock, concurrency: number, write: GroupWriters['settle']) {
    super(
      clock,
      concurrency,
      write,
      () => 1,
      GROUP_SETTLES_MAX,
      (r) => r.companyId,
    );
  }
}

/** Reads of one kind, grouped (up to GROUP_READS_MAX per read of the store), fair between companies. */
class ReadBatcher<Req extends { companyId: string }, Res> extends GroupCommit<Req, Res> {
  constructor(clock: Clock, concurrency: number, read: (nowMs: number, requests: Req[]) => Promise<Res[]>) {
    super(
      clock,
      concurrency,
      read,
      () => 1,
      GROUP_READS_MAX,
      (r) => r.companyId,
    );
  }
}

export interface GroupCommitOptions {
  /** PostgreSQL's pool: half of it may write groups at once (default 1 group in flight). */
  pgPoolSize?: number;
  /** Wraps the writers (the server times groups and counts the events ingested: http/metrics.ts). */
  instrument?: (writers: GroupWriters) => GroupWriters;
}

/**
 * The server's ingest and settle group commits, its group reads of checks and balances, and the
 * writer thread when there is one.
 */
export class GroupCommits implements EventWriters, BalanceReads, EntitlementChecks {
  private constructor(
    readonly events: IngestBatcher,
    readonly settles: SettleBatcher,
    readonly checks: ReadBatcher<IngestRequest, Outcome<CheckResult>>,
    readonly balances: ReadBatcher<BalanceRead, Outcome<BalanceRow>>,
    readonly entitlements: ReadBatcher<EntitlementCheckRequest, Outcome<EntitlementCheck>>,
    private readonly thread: SqliteWriterThread | undefined,
  ) {}

  static async start(deps: Pick<Deps, 'store' | 'ledger' | 'clock' | 'usage'>, opts: GroupCommitOptions = {}) {
    const { store } = deps;
    // SQLite has one writer: groups written on its own thread (a file database), two in flight so
    // that the thread starts the next the moment one commits. PostgreSQL: several groups at once,
    // row locks keep them apart.
    const thread =
      store instanceof SqliteStore && store.filename !== ':memory:' ? await SqliteWriterThread.start(store) : undefined;
    const concurrency =
      store.dialect === 'sqlite' ? (thread ? 2 : 1) : Math.max(1, Math.floor((opts.pgPoolSize ?? 2) / 2));
    // The owners this thread has read (the writer thread keeps its own).
    const owners = new AccountOwners();
    const own: GroupWriters = thread
      ? { ingest: (nowMs, reqs) => thread.ingest(nowMs, reqs), settle: (nowMs, reqs) => thread.settle(nowMs, reqs) }
      : transactionWriters(store, deps.ledger, owners);
    const writers = opts.instrument ? opts.instrument(own) : own;
    // Reads: SQLite's are synchronous on this thread (one at a time); PostgreSQL's share the pool with the writes.
    const reads = store.dialect === 'sqlite' ? 1 : Math.max(1, Math.floor((opts.pgPoolSize ?? 2) / 4));
    const { ledger } = deps;
    return new GroupCommits(
      new IngestBatcher(deps.clock, concurrency, writers.ingest),
      new SettleBatcher(deps.clock, concurrency, writers.settle),
      new ReadBatcher(deps.clock, reads, (nowMs, reqs) =>
        store.read((tx) => checkGroup(ledger, tx, nowMs, reqs, owners)),
      ),
      new ReadBatcher(deps.clock, reads, (nowMs, reqs) =>
        store.read((tx) => readBalanceGroup(ledger, tx, nowMs, reqs, owners)),
      ),
      new ReadBatcher(deps.clock, reads, (nowMs, reqs) =>
        store.read((tx) => checkEntitlementGroup(ledger, deps.usage, tx, nowMs, reqs, owners)),
      ),
      thread,
    );
  }

  ingest(req: IngestRequest): Promise<Outcome<IngestResult>> {
    return this.events.submit(req);
  }

  settle(req: SettleRequest): Promise<Outcome<EventRow>> {
    return this.settles.submit(req);
  }

  check(req: IngestRequest): Promise<Outcome<CheckResult>> {
    return this.checks.submit(req);
  }

  read(req: BalanceRead): Promise<Outcome<BalanceRow>> {
    return this.balances.submit(req);
  }

  checkEntitlement(req: EntitlementCheckRequest): Promise<Outcome<EntitlementCheck>> {
    return this.entitlements.submit(req);
  }

  /** Waits for every queued group to commit, then stops the writer thread. */
  async close(): Promise<void> {
    await Promise.all([
      this.events.drained(),
      this.settles.drained(),
      this.checks.drained(),
      this.balances.drained(),
      this.entitlements.drained(),
    ]);
    await this.thread?.close();
  }
}
