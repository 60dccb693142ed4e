/**
 * The load generator: usage events at a paced rate (each request several events, most with client event ids,
 * every request with an Idempotency-Key), spread over one or more servers. A request that meets a connection
 * error or a 5xx is retried with the same key (on any server) until it gets an answer; so is `503 not_ready`
 * (a server starting: its port is open before it is migrated, and it applies nothing); `409
 * idempotency_key_in_use` is retried for a bounded time, then the key is reported stuck.
 */
import http from 'node:http';
import type { ChildServer } from './server.js';
import { type Answer, type Send, send, sleep } from './http.js';
import type { rng } from './config.js';

export interface Attempted {
  answer: Answer | null;
  attempts: number;
  /** A connection error or a 5xx happened on the way: the request may or may not have been applied. */
  interrupted: boolean;
  connectionErrors: number;
  /** 5xx answers other than `503 not_ready`. */
  fiveXx: number;
  /** `503 not_ready` answers: a restarted server still starting (nothing applied). */
  notReady: number;
  /** `409 idempotency_key_in_use` answers received. */
  inUse: number;
  /** Still `409 idempotency_key_in_use` when the budget ran out. */
  stuck: boolean;
}

export const isNotReady = (a: Answer): boolean => a.status === 503 && a.json?.error?.code === 'not_ready';

export const isKeyInUse = (a: Answer): boolean => a.status === 409 && a.json?.error?.code === 'idempotency_key_in_use';

export interface Targets {
  servers: ChildServer[];
  agents: Map<ChildServer, http.Agent>;
}

export function targets(servers: ChildServer[], maxSockets = 64): Targets {
  return {
    servers,
    agents: new Map(servers.map((s) => [s, new http.Agent({ keepAlive: true, maxSockets })])),
  };
}

export function closeTargets(t: Targets): void {
  for (const a of t.agents.values()) a.destroy();
}

/**
 * Sends until an answer that is neither a connection error nor a 5xx, on a random server each attempt;
 * `deadlineMs` bounds the whole (a server that never comes back), `inUseBudgetMs` the 409-in-use retries.
 */
export async function sendRetried(
  t: Targets,
  s: Send,
  opts: { deadlineMs?: number; inUseBudgetMs?: number; random?: () => number; aborted?: () => boolean } = {},
): Promise<Attempted> {
  const deadline = Date.now() + (opts.deadlineMs ?? 120_000);
  const random = opts.random ?? Math.random;
  const r: Attempted = {
    answer: null,
    attempts: 0,
    interrupted: false,
    connectionErrors: 0,
    fiveXx: 0,
    notReady: 0,
    inUse: 0,
    stuck: false,
  };
  let inUseSince: number | undefined;
  let wait = 20;
  while (Date.now() < deadline && !opts.aborted?.()) {
    const server = t.servers[Math.floor(random() * t.servers.length)]!;
    r.attempts++;
    let a: Answer;
    try {
      a = await send(server.url, s, t.agents.get(server));
    } catch {
      r.interrupted = true;
      r.connectionErrors++;
      await sleep(wait);
      wait = Math.min(wait * 2, 250);
      continue;
    }
    r.answer = a;
    if (isNotReady(a)) {
      r.notReady++;
      await sleep(wait);
      wait = Math.min(wait * 2, 250);
      continue;
    }
    if (a.status >= 500) {
      r.interrupted = true;
      r.fiveXx++;
      await sleep(wait);
      wait = Math.min(wait * 2, 250);
      continue;
    }
    if (isKeyInUse(a)) {
      r.inUse++;
      inUseSince ??= Date.now();
      if (Date.now() - inUseSince >= (opts.inUseBudgetMs ?? 5_000)) {
        r.stuck = true;
        return r;
      }
      await sleep(100);
      continue;
    }
    return r;
  }
  return r;
}

export interface LoadOp {
  key: string;
  path: string;
  body: { events: Record<string, unknown>[] };
  /** The client event ids sent (empty: the server chooses them). */
  clientIds: string[];
  cost: number;
  result?: Attempted;
}

export interface Load {
  ops: LoadOp[];
  /** Stops issuing new requests and waits for every request in flight to get its answer. */
  finish(): Promise<LoadOp[]>;
  /** Requests answered 200 so far. */
  acked(): number;
  /** Stops at once: requests in flight give up (for a run that failed). */
  abort(): void;
  /** Events sent per second so far (requests started × events per request / elapsed). */
  rate(): number;
}

/** Requests started at a steady pace by `concurrency` workers, each sent until it has its answer. */
export interface Paced<Op> {
  ops: Op[];
  /** Stops issuing new requests and waits for every request in flight to get its answer. */
  finish(): Promise<Op[]>;
  /** Stops at once: requests in flight give up (for a run that failed). */
  abort(): void;
  /** When the first request was due. */
  started: number;
}

/**
 * Starts request `i` at `started + i / perSecond` (later when every worker is busy), with at most
 * `concurrency` in flight; `send` carries one out (`aborted` tells it to give up).
 */
export function startPaced<Op>(o: {
  perSecond: number;
  concurrency: number;
  make(i: number): Op;
  send(op: Op, aborted: () => boolean): Promise<void>;
}): Paced<Op> {
  const ops: Op[] = [];
  const started = Date.now();
  let next = 0;
  let stopped = false;
  let aborted = false;
  const worker = async () => {
    while (!stopped) {
      const i = next++;
      const due = started + (i * 1000) / o.perSecond;
      const now = Date.now();
      if (due > now) await sleep(due - now);
      if (stopped) break;
      const op = o.make(i);
      ops.push(op);
      await o.send(op, () => aborted);
    }
  };
  const workers = Array.from({ length: o.concurrency }, worker);
  return {
    ops,
    started,
    async finish() {
      stopped = true;
      await Promise.all(workers);
      return ops;
    },
    abort() {
      stopped = true;
      aborted = true;
    },
  };
}

/**
 * Starts paced load on one account: `eventsPerSecond` in requests of `eventsPerRequest` events
 * (three in four with client ids), `concurrency` requests at most in flight.
 */
export function startLoad(
  t: Targets,
  o: {
    auth: [string, string];
    accountId: string;
    run: string;
    eventsPerSecond: number;
    eventsPerRequest: number;
    concurrency: number;
    random: ReturnType<typeof rng>;
  },
): Load {
  let acked = 0;
  const makeOp = (i: number): LoadOp => {
    const key = `${o.run}-k${i}`;
    const withIds = o.random.int(4) !== 0;
    const clientIds: string[] = [];
    let cost = 0;
    const events = Array.from({ length: o.eventsPerRequest }, (_, j) => {
      const amount = 1 + o.random.int(5);
      cost += amount;
      const id = withIds ? `${o.run}-e${i}-${j}` : undefined;
      if (id) clientIds.push(id);
      return {
        ...(id ? { id } : {}),
        type: 'load',
        cost_override: { amount, denomination: 'tokens' },
        metadata: { op: key },
      };
    });
    return { key, path: `/v1/accounts/${o.accountId}/events`, body: { events }, clientIds, cost };
  };
  const paced = startPaced({
    perSecond: o.eventsPerSecond / o.eventsPerRequest,
    concurrency: o.concurrency,
    make: makeOp,
    async send(op, aborted) {
      op.result = await sendRetried(
        t,
        { method: 'POST', path: op.path, auth: o.auth, body: op.body, headers: { 'idempotency-key': op.key } },
        { random: o.random.next, inUseBudgetMs: 2_000, deadlineMs: 400_000, aborted },
      );
      if (op.result.answer?.status === 200) acked++;
    },
  });
  return {
    ops: paced.ops,
    finish: () => paced.finish(),
    acked: () => acked,
    abort: () => paced.abort(),
    rate: () => (paced.ops.length * o.eventsPerRequest * 1000) / Math.max(1, Date.now() - paced.started),
  };
}
