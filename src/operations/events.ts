/**
 * Usage events: ingest (group commit), read, settle. The ingest path is the hot one: a request
 * is validated by its schema, queued, and applied together with every other request that
 * arrived meanwhile, in ONE transaction with a handful of statements for the whole group; each
 * request is still all-or-nothing, and is answered only after the commit is durable.
 */
import {
  balanceKey,
  companyScopedKey,
  ingestAnswer,
  planIngest,
  type IngestContext,
  type IngestRequest,
  type KnownEvent,
  type NormalizedEvent,
} from '../domain/events.js';
import { decideSettle, isHoldExpired, settleHold } from '../domain/holds.js';
import { fail, failure, idempotencyKeyInUse, OutcomeError, type Failure, type Outcome } from '../domain/outcome.js';
import type { Price } from '../domain/pricing.js';
import { usageOf } from '../domain/usage.js';
import { newId } from '../lib/ids.js';
import { CommitOutcomeUnknownError, type BalanceKey, type EventRow } from '../store/types.js';
import type { Deps } from './deps.js';
import { cancelHolds, expireHolds } from './holds.js';
import { lockBalanceMap, type NetDelta, type Posting, type PostedEntry } from './ledger.js';

/** Most events one group transaction carries; more waiting requests form the next group. */
export const GROUP_EVENTS_MAX = 10_000;

export interface IngestResult {
  eventIds: string[];
}

/** Most settles one group transaction carries. */
export const GROUP_SETTLES_MAX = 1_000;

interface Queued<Req, Res> {
  req: Req;
  resolve: (r: Res) => void;
  reject: (err: unknown) => void;
}

/** Applies a group in one transaction and returns each request's outcome, in order. */
export type GroupWriter<Req, Res> = (nowMs: number, requests: Req[]) => Promise<Res[]>;

/**
 * Group commit. Requests queue while a group is being written; when it commits, the next
 * group takes what is queued (up to `maxSize`, counted by `sizeOf`). `concurrency` groups may
 * be in flight at once (on SQLite's writer thread two, applied one after the other; more on
 * PostgreSQL, whose row locks keep overlapping groups correct). `writeGroup` is where a group is
 * applied: through the store on this thread, or (SQLite) on the writer thread, so that COMMIT's
 * fsync never blocks HTTP. Each request is answered only after its group has committed.
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

  constructor(
    private readonly clock: Deps['clock'],
    private readonly concurrency: number,
    private readonly writeGroup: GroupWriter<Req, Res>,
    private readonly sizeOf: (req: Req) => number,
    private readonly maxSize: number,
    private readonly tenantOf: (req: Req) => string,
  ) {}

  /** Resolves once nothing is queued or being written (shutdown waits for it). */
  async drained(): Promise<void> {
    while (this.#running > 0 || this.#waiting > 0) await new Promise((r) => setTimeout(r, 5));
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

/** Ingest requests, grouped by events (up to GROUP_EVENTS_MAX per group). */
export class IngestBatcher extends GroupCommit<IngestRequest, Outcome<IngestResult>> {
  constructor(deps: Deps, concurrency: number, writeGroup?: GroupWriter<IngestRequest, Outcome<IngestResult>>) {
    super(
      deps.clock,
      concurrency,
      writeGroup ??
        ((nowMs, requests) => deps.store.write((tx) => ingestGroup(deps.ledger.begin(tx, nowMs), requests))),
      (r) => r.events.length,
      GROUP_EVENTS_MAX,
      (r) => r.companyId,
    );
  }
}

/** Applies one settle, however the server does it (alone, or in a group); refusals are values. */
export type SettleWriter = (req: SettleRequest) => Promise<Outcome<EventRow>>;

/** Settles, grouped: on SQLite's writer thread, or through the store (see server.ts). */
export class SettleBatcher extends GroupCommit<SettleRequest, Outcome<EventRow>> {
  constructor(deps: Deps, concurrency: number, writeGroup: GroupWriter<SettleRequest, Outcome<EventRow>>) {
    super(
      deps.clock,
      concurrency,
      writeGroup,
      () => 1,
      GROUP_SETTLES_MAX,
      (r) => r.companyId,
    );
  }
}

/** Plans and writes a whole group in one transaction; returns each request's outcome in order. */
export async function ingestGroup(p: Posting, requests: IngestRequest[]): Promise<Outcome<IngestResult>[]> {
  const { tx, nowMs } = p;
  const outcomes: (Outcome<IngestResult> | undefined)[] = new Array(requests.length);

  // 1. Which accounts exist, and whose are they: a foreign account is answered like a missing one.
  const owners = new Map(
    (await tx.findAccountOwners([...new Set(requests.map((r) => r.accountId))])).map((o) => [o.accountId, o.companyId]),
  );
  requests.forEach((r, i) => {
    if (owners.get(r.accountId) !== r.companyId)
      outcomes[i] = failure('not_found', `no such account: ${r.accountId}`, 'account_id');
  });

  // 2. Prices and known client ids, per company: one query each for the whole group.
  const prices = new Map<string, Price>();
  const known = new Map<string, KnownEvent>();
  for (const [companyId, reqs] of groupByCompany(requests, outcomes)) {
    const types = new Set<string>();
    const ids = new Set<string>();
    for (const r of reqs)
      for (const e of r.events) {
        if (!e.override) types.add(e.type);
        if (e.clientId !== null) ids.add(e.clientId);
      }
    for (const p of await tx.findPrices(companyId, [...types])) prices.set(companyScopedKey(companyId, p.type), p);
    for (const e of await tx.findEventsByIds(companyId, [...ids]))
      known.set(companyScopedKey(companyId, e.eventId), { accountId: e.accountId, contentHash: e.contentHash });
  }

  // 3. Lock every balance the group may draw from, then cancel their expired holds. Only a
  // balance with something pending can have a hold to cancel: usually none has, and the group
  // saves that query (a round trip on PostgreSQL). Locking first waits for nothing new: a hold
  // another transaction has locked is skipped, as the sweeper's are.
  const keys: BalanceKey[] = [];
  requests.forEach((r, i) => {
    if (outcomes[i]) return;
    for (const e of r.events) {
      const denomination = e.override?.denomination ?? prices.get(companyScopedKey(r.companyId, e.type))?.denomination;
      if (denomination !== undefined) keys.push({ accountId: r.accountId, denomination });
    }
  });
  let locked = await lockBalanceMap(tx, keys);
  const holding = [...locked.values()].filter((b) => b.pending !== 0);
  if (holding.length > 0 && (await expireHolds(p, holding)).length > 0) locked = await lockBalanceMap(tx, keys);

  // 4. Plan each request against the running figures (all-or-nothing per request).
  const ctx: IngestContext = {
    nowMs,
    prices,
    known,
    newEventId: () => newId('ev'),
    balances: new Map([...locked].map(([k, b]) => [k, { amount: b.amount, pending: b.pending }])),
  };
  const events: EventRow[] = [];
  const entries: PostedEntry[] = [];
  const deltas = new Map<string, NetDelta>();
  requests.forEach((r, i) => {
    if (outcomes[i]) return;
    const planned = planIngest(r, ctx);
    if (!planned.ok) {
      outcomes[i] = planned;
      return;
    }
    for (const e of planned.value.events) events.push(e);
    for (const l of planned.value.ledger) entries.push(l);
    for (const [k, d] of planned.value.deltas) {
      const sum = deltas.get(k) ?? { amount: 0, pending: 0 };
      sum.amount += d.amount;
      sum.pending += d.pending;
      deltas.set(k, sum);
    }
    outcomes[i] = { ok: true, value: { eventIds: planned.value.eventIds } };
  });

  // 5. Write: events, balances (atomic deltas), ledger rows and the usage rollup of the events
  // recorded complete; one statement on PostgreSQL.
  await p.post(locked, entries, deltas, events, usageOf(events.filter((e) => e.state === 'complete')));
  // 6. The answers of the requests with an Idempotency-Key, in the same transaction as their events.
  // A request whose key was taken from it (its lease lapsed; a retry holds it now) must apply nothing:
  // the group is aborted, and the batcher writes it again in halves until that request fails alone.
  for (let i = 0; i < requests.length; i++) {
    const r = requests[i]!;
    const o = outcomes[i]!;
    if (!r.idempotency || !o.ok) continue;
    const { scope, key, owner } = r.idempotency;
    const answer = JSON.stringify(ingestAnswer(r.events.length, o.value.eventIds));
    if (!(await tx.completeIdempotency(scope, key, owner, 200, answer))) throw new OutcomeError(idempotencyKeyInUse());
  }
  return outcomes as Outcome<IngestResult>[];
}

function groupByCompany(
  requests: IngestRequest[],
  outcomes: (Outcome<IngestResult> | undefined)[],
): Map<string, IngestRequest[]> {
  const by = new Map<string, IngestRequest[]>();
  requests.forEach((r, i) => {
    if (outcomes[i]) return;
    const list = by.get(r.companyId) ?? [];
    list.push(r);
    by.set(r.companyId, list);
  });
  return by;
}

export async function getEvent(deps: Deps, companyId: string, eventId: string): Promise<EventRow> {
  const now = deps.clock.now();
  let event = await deps.store.read((tx) => tx.findEvent(companyId, eventId));
  if (!event) fail('not_found', `no such event: ${eventId}`, 'event_id');
  if (event.state === 'pending' && isHoldExpired(event.expiresAtMs, now)) {
    event = await deps.store.write(async (tx) => {
      await expireHolds(deps.ledger.begin(tx, now), [
        { accountId: event!.accountId, denomination: event!.denomination },
      ]);
      return (await tx.findEvent(companyId, eventId))!;
    });
  }
  return event;
}

export interface SettleInput {
  state: 'complete' | 'completed' | 'cancelled';
  cost_override?: { amount: number; denomination: string };
}

export interface SettleRequest {
  companyId: string;
  eventId: string;
  input: SettleInput;
}

/**
 * Settles pending events, several in one transaction, each all or nothing and in order (a later
 * settle of the same event sees the earlier one). Every event of the group is locked first, then
 * every balance they hold from, each set in sorted order on PostgreSQL: so concurrent groups never
 * wait on each other in a cycle (the sweeper also locks an event before its balance; ingest locks
 * balances, then takes only holds nobody has locked). An expired hold is cancelled first, and that
 * cancellation is kept even when the settle is then refused (409); repeating the state an event
 * already has is a no-op. The group's ledger rows, balance deltas and event updates are then
 * written together, as ingest writes a group.
 */
export async function settleGroup(p: Posting, requests: SettleRequest[]): Promise<Outcome<EventRow>[]> {
  const { tx, nowMs: now } = p;
  const found = await tx.lockEvents(requests.map((r) => ({ companyId: r.companyId, eventId: r.eventId })));
  const events = new Map(found.map((e) => [companyScopedKey(e.companyId, e.eventId), e]));
  let locked = await lockBalanceMap(tx, found);
  const expired = found.filter((e) => e.state === 'pending' && isHoldExpired(e.expiresAtMs, now));
  if (expired.length > 0) {
    await cancelHolds(p, expired);
    for (const e of expired)
      events.set(companyScopedKey(e.companyId, e.eventId), {
        ...e,
        state: 'cancelled',
        updatedAtMs: now,
        expiresAtMs: null,
      });
    locked = await lockBalanceMap(tx, found);
  }

  const entries: PostedEntry[] = [];
  const deltas = new Map<string, NetDelta>();
  const changed = new Map<string, EventRow>();
  const outcomes = requests.map(({ companyId, eventId, input }): Outcome<EventRow> => {
    const key = companyScopedKey(companyId, eventId);
    const event = events.get(key);
    if (!event) return failure('not_found', `no such event: ${eventId}`, 'event_id');
    const requested = input.state === 'completed' ? 'complete' : input.state;
    const decision = decideSettle(event.state, requested);
    if (decision === 'noop') {
      // Repeating the state an event has is a no-op only with no final cost or the same one: a
      // different cost cannot be applied any more, and must not be silently ignored (contract).
      const o = input.cost_override;
      if (o && requested === 'complete' && (o.amount !== event.costAmount || o.denomination !== event.denomination)) {
        return failure(
          'event_completed_at_another_cost',
          `event ${eventId} is already complete at ${event.costAmount} ${event.denomination}; its cost cannot change`,
          'cost_override',
        );
      }
      return { ok: true, value: event };
    }
    if (decision === 'not_pending') return notPending(event);
    if (input.cost_override && input.cost_override.denomination !== event.denomination) {
      return failure(
        'cost_override_denomination_mismatch',
        `the event holds "${event.denomination}"; a final cost must be in the same denomination`,
        'cost_override.denomination',
      );
    }
    const finalCost = requested === 'complete' ? (input.cost_override?.amount ?? event.costAmount) : event.costAmount;
    const s = settleHold(event.costAmount, requested, finalCost);
    if (s.amountDelta !== 0)
      entries.push({
        accountId: event.accountId,
        denomination: event.denomination,
        amount: s.amountDelta,
        kind: 'usage',
        eventId,
      });
    const balance = balanceKey(event.accountId, event.denomination);
    const sum = deltas.get(balance) ?? { amount: 0, pending: 0 };
    sum.amount += s.amountDelta;
    sum.pending += s.pendingDelta;
    deltas.set(balance, sum);
    const settled: EventRow = {
      ...event,
      state: requested,
      costAmount: finalCost,
      updatedAtMs: now,
      expiresAtMs: null,
    };
    events.set(key, settled);
    changed.set(key, settled);
    return { ok: true, value: settled };
  });

  if (changed.size > 0) {
    // An event settled to complete counts in the usage from now, at its final cost.
    await p.post(locked, entries, deltas, [], usageOf([...changed.values()].filter((e) => e.state === 'complete')));
    await tx.updateEvents(
      [...changed.values()].map((e) => ({
        companyId: e.companyId,
        eventId: e.eventId,
        state: e.state,
        costAmount: e.costAmount,
        updatedAtMs: now,
      })),
    );
  }
  return outcomes;
}

/** One settle in a transaction of the caller's. */
export async function settleInTx(p: Posting, request: SettleRequest): Promise<Outcome<EventRow>> {
  return (await settleGroup(p, [request]))[0]!;
}

/** One settle in its own transaction; a refusal is thrown as an OutcomeError. */
export async function settleEvent(
  deps: Deps,
  companyId: string,
  eventId: string,
  input: SettleInput,
): Promise<EventRow> {
  const outcome = await deps.store.write((tx) =>
    settleInTx(deps.ledger.begin(tx, deps.clock.now()), { companyId, eventId, input }),
  );
  if (!outcome.ok) fail(outcome.reason, outcome.message, outcome.param, outcome.details);
  return outcome.value;
}

function notPending(event: EventRow): Failure {
  return failure(
    'event_not_pending',
    `event ${event.eventId} is ${event.state}; only a pending event can be settled`,
    'state',
    { state: event.state },
  );
}

export type { NormalizedEvent };
