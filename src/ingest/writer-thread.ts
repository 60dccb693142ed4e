/**
 * The main thread's side of the SQLite ingest writer thread: sends a group, gets each request's
 * outcome back once the group's transaction has committed. While a group is out, the store's
 * writer lock is held, so the main thread's own writes (accounts, settles, jobs) wait for it
 * instead of contending with it inside SQLite.
 */
import { Worker } from 'node:worker_threads';
import type { IngestRequest } from '../domain/events.js';
import { OutcomeError, type Outcome } from '../domain/outcome.js';
import type { IngestResult } from '../ledger/ingest.js';
import type { SettleRequest } from '../operations/events.js';
import { CommitOutcomeUnknownError } from '../store/types.js';
import type { EventRow } from '../store/types.js';
import type { SqliteStore } from '../store/sqlite.js';
import type { GroupKind, GroupKinds, GroupReply, GroupRequest, WorkerInit } from './writer-thread-protocol.js';

interface Pending {
  resolve: (outcomes: GroupKinds[GroupKind]['outcome'][]) => void;
  reject: (err: Error) => void;
}

/**
 * The thread's entry: the .ts source through a tsx boot file (tests, `npm run dev`), or writer-thread-main.js
 * when built. `entry` replaces it (tests start a thread that fails on purpose).
 */
function threadEntry(override?: URL): { url: URL; entry: string } {
  const ts = import.meta.url.endsWith('.ts');
  const entry = override ?? new URL(ts ? './writer-thread-main.ts' : './writer-thread-main.js', import.meta.url);
  return {
    url: entry.pathname.endsWith('.ts') ? new URL('./boot-tsx.mjs', import.meta.url) : entry,
    entry: entry.href,
  };
}

/** After a writer thread failed to start, how long until a group tries to start a new one. */
export const RESTART_BACKOFF_MS = 1_000;

export class SqliteWriterThread {
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #worker!: Worker;
  #ready!: Promise<void>;
  /** Why the current thread could not start, if it could not. */
  #startError: Error | undefined;
  #spawnedAt = 0;
  #closing = false;
  /** Groups sent and not yet answered. */
  #inFlight = 0;
  /** Releases the store's writer lock, while groups are in flight. */
  #release: (() => void) | undefined;

  private constructor(
    private readonly store: SqliteStore,
    private readonly entry: URL | undefined,
    private readonly restartBackoffMs: number,
  ) {}

  /** `restartBackoffMs`: how long after a thread failed to start the next one is tried (tests lengthen it). */
  static async start(
    store: SqliteStore,
    opts: { entry?: URL; restartBackoffMs?: number } = {},
  ): Promise<SqliteWriterThread> {
    const w = new SqliteWriterThread(store, opts.entry, opts.restartBackoffMs ?? RESTART_BACKOFF_MS);
    w.#spawn();
    await w.#ready;
    return w;
  }

  #spawn(): void {
    this.#spawnedAt = Date.now();
    this.#startError = undefined;
    const { url, entry } = threadEntry(this.entry);
    const worker = new Worker(url, {
      workerData: { entry, filename: this.store.filename } satisfies WorkerInit,
      // Only the CPU profiler's flags (the bench's --cpu-prof): the thread then writes its own profile.
      execArgv: process.execArgv.filter((arg) => /^--cpu-prof(?:$|-dir=|-interval=)/.test(arg)),
    });
    this.#worker = worker;
    this.#ready = new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      worker.once('error', onError);
      worker.once('message', (m: unknown) => {
        worker.off('error', onError);
        if (m === 'ready') resolve();
        else reject(new Error(`ingest writer thread: unexpected first message ${JSON.stringify(m)}`));
      });
    });
    this.#ready.then(
      () => {
        worker.on('message', (reply: GroupReply) => this.#answer(reply));
        // A thread that dies with groups out may have committed them: they are not written again.
        worker.on('error', (err) =>
          this.#failAll(new CommitOutcomeUnknownError(`ingest writer thread failed: ${err.message}`, { cause: err })),
        );
        worker.on('exit', (code) => {
          this.#failAll(new CommitOutcomeUnknownError(`ingest writer thread exited (code ${code})`));
          // A crash must not take ingest down with it: a new thread takes the next group.
          if (!this.#closing) this.#spawn();
        });
      },
      (err: unknown) => {
        // A thread that cannot start fails the groups sent meanwhile (they say why); the first
        // group after RESTART_BACKOFF_MS starts another, so ingest recovers once the cause is gone.
        this.#startError = err instanceof Error ? err : new Error(String(err));
      },
    );
  }

  #answer(reply: GroupReply): void {
    const p = this.#pending.get(reply.id);
    if (!p) return;
    this.#pending.delete(reply.id);
    if ('outcomes' in reply) p.resolve(reply.outcomes);
    else {
      const err = reply.committed
        ? new CommitOutcomeUnknownError(`committed, but its answer was lost: ${reply.error.message}`)
        : reply.error.failure
          ? new OutcomeError(reply.error.failure)
          : new Error(reply.error.message);
      err.stack = reply.error.stack;
      p.reject(err);
    }
  }

  #failAll(err: Error): void {
    for (const p of this.#pending.values()) p.reject(err);
    this.#pending.clear();
  }

  /**
   * Applies a group in one transaction on the writer thread. Groups are pipelined: a second one
   * may be sent while the first commits, so the thread starts it the moment the first is
   * durable instead of waiting for the HTTP round trip that brings the next requests. The
   * store's writer lock is held from the first group sent until none is left; a group joins
   * the held lock only when no other writer of this process is waiting for it, so the main
   * thread's own writes (accounts, settles, jobs) are never starved.
   */
  ingest(nowMs: number, requests: IngestRequest[]): Promise<Outcome<IngestResult>[]> {
    return this.#send('ingest', nowMs, requests);
  }

  /** Settles, one group per transaction, on the same thread and under the same rules. */
  settle(nowMs: number, requests: SettleRequest[]): Promise<Outcome<EventRow>[]> {
    return this.#send('settle', nowMs, requests);
  }

  async #send<K extends GroupKind>(
    kind: K,
    nowMs: number,
    requests: GroupKinds[K]['request'][],
  ): Promise<GroupKinds[K]['outcome'][]> {
    if (this.#release === undefined || this.store.writersWaiting > 0) {
      // Whoever held the lock before has let it go, so no group of ours is in flight now.
      this.#release = await this.store.lockWriter();
    }
    this.#inFlight++;
    try {
      if (this.#startError !== undefined && !this.#closing && Date.now() - this.#spawnedAt >= this.restartBackoffMs)
        this.#spawn();
      await this.#ready;
      return await new Promise<GroupKinds[K]['outcome'][]>((resolve, reject) => {
        const id = this.#nextId++;
        // A group that cannot be sent (structured clone fails) is refused here, sent nowhere.
        this.#worker.postMessage({ id, kind, nowMs, requests } satisfies GroupRequest);
        this.#pending.set(id, { resolve: resolve as Pending['resolve'], reject });
      });
    } finally {
      if (--this.#inFlight === 0) {
        const release = this.#release;
        this.#release = undefined;
        release?.();
      }
    }
  }

  async close(): Promise<void> {
    this.#closing = true;
    const release = await this.store.lockWriter();
    try {
      const exited = new Promise<void>((resolve) => this.#worker.once('exit', () => resolve()));
      this.#worker.postMessage('close');
      await exited;
    } finally {
      release();
    }
  }
}
