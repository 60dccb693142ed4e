/**
 * Group commit: the machinery that makes ingest (and settles) one transaction for many requests.
 * Requests queue while a group is being written; when it commits, the next group takes what is
 * queued. What a group does is the operations' business (operations/events.ts: ingestGroup,
 * settleGroup); how it is written (this thread's store, or SQLite's writer thread) is the writer's
 * (writers.ts). Each request is answered only after its group has committed.
 */
import type { Clock } from '../lib/clock.js';
import { CommitOutcomeUnknownError } from '../store/types.js';

/** Applies a group in one transaction and returns each request's outcome, in order. */
export type GroupWriter<Req, Res> = (nowMs: number, requests: Req[]) => Promise<Res[]>;

interface Queued<Req, Res> {
  req: Req;
  resolve: (r: Res) => void;
  reject: (err: unknown) => void;
}

/**
 * Requests queue while a group is being written; when it commits, the next group takes what is
 * queued (up to `maxSize`, counted by `sizeOf`). `concurrency` groups may be in flight at once (on
 * SQLite's writer thread two, applied one after the other; more on PostgreSQL, whose row locks
 * keep overlapping groups correct).
 *
 * Fair: each tenant (`tenantOf`: the company) has its own queue, and a group takes one request
 * of each waiting tenant in turn, so a tenant with a backlog of thousands of requests cannot fill
 * every group: another tenant's request goes into the next group, whatever the backlog.
 *
 * Isolated: a group whose transaction fails (nothing of it applied) is split in two halves that
 * are written again, each in its own transaction, down to single requests; so a request that
 * cannot be written fails alone, with its own error, and every other request of its group
 * commits, once. Only an error after which the commit may have happened (see
 * CommitOutcomeUnknownError) fails the whole group without a retry: a retry could apply twice.
 */
export class GroupCommit<Req, Res> {
  /** Waiting requests by tenant, tenants in turn order. */
  readonly #queues = new Map<string, Queued<Req, Res>[]>();
  #waiting = 0;
  #running = 0;
  #scheduled = false;
  /** Who waits for the queue to be empty and nothing in flight (shutdown). */
  #idle: (() => void)[] = [];

  constructor(
    private readonly clock: Clock,
    private readonly concurrency: number,
    private readonly writeGroup: GroupWriter<Req, Res>,
    private readonly sizeOf: (req: Req) => number,
    private readonly maxSize: number,
    private readonly tenantOf: (req: Req) => string,
  ) {}

  /** Resolves once nothing is queued or being written (shutdown waits for it). */
  drained(): Promise<void> {
    if (this.#running === 0 && this.#waiting === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  submit(req: Req): Promise<Res> {
    return new Promise((resolve, reject) => {
      const tenant = this.tenantOf(req);
      const queue = this.#queues.get(tenant);
      if (queue) queue.push({ req, resolve, reject });
      else this.#queues.set(tenant, [{ req, resolve, reject }]);
      this.#waiting++;
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#running >= this.concurrency || this.#waiting === 0) return;
    this.#scheduled = true;
    // setImmediate: let every request already read from the sockets join this group.
    setImmediate(() => {
      this.#scheduled = false;
      this.#drain();
    });
  }

  #drain(): void {
    while (this.#running < this.concurrency && this.#waiting > 0) {
      const group = this.#nextGroup();
      this.#running++;
      void this.#run(this.clock.now(), group).finally(() => {
        this.#running--;
        this.#schedule();
        if (this.#running === 0 && this.#waiting === 0) for (const wake of this.#idle.splice(0)) wake();
      });
    }
  }

  /**
   * The next group: one request of each waiting tenant in turn (a tenant's own requests in
   * arrival order), while they fit in `maxSize`. A tenant that took a request moves to the back
   * of the turn order, so the next group starts with the tenants this one served last.
   */
  #nextGroup(): Queued<Req, Res>[] {
    const group: Queued<Req, Res>[] = [];
    let size = 0;
    for (let added = true; added && this.#waiting > 0; ) {
      added = false;
      for (const tenant of [...this.#queues.keys()]) {
        const queue = this.#queues.get(tenant)!;
        const next = this.sizeOf(queue[0]!.req);
        if (group.length > 0 && size + next > this.maxSize) continue;
        group.push(queue.shift()!);
        size += next;
        this.#waiting--;
        added = true;
        this.#queues.delete(tenant);
        if (queue.length > 0) this.#queues.set(tenant, queue);
      }
    }
    return group;
  }

  async #run(nowMs: number, group: Queued<Req, Res>[]): Promise<void> {
    let outcomes: Res[];
    try {
      outcomes = await this.writeGroup(
        nowMs,
        group.map((q) => q.req),
      );
    } catch (err) {
      if (group.length === 1 || err instanceof CommitOutcomeUnknownError) {
        for (const q of group) q.reject(err);
        return;
      }
      // Nothing of the group was applied: write each half again, in order, in its own transaction.
      const half = Math.ceil(group.length / 2);
      await this.#run(nowMs, group.slice(0, half));
      await this.#run(nowMs, group.slice(half));
      return;
    }
    for (const [i, q] of group.entries()) q.resolve(outcomes[i]!);
  }
}
