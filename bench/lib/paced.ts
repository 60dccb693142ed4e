/**
 * Open-loop load: GET requests started on a fixed schedule (request i at start + i / rate), whatever
 * the answers of the earlier ones, beside the closed-loop load autocannon drives. A closed loop waits
 * for each answer before it sends again, so a slow server slows its own load down and its latencies
 * leave out the requests it never sent; a client checking an entitlement before each action does not
 * wait for other clients. The schedule runs in a worker thread (lib/paced-worker.ts) with its own
 * event loop and keep-alive sockets: in this thread, autocannon's burst of answers would delay its
 * timers, and the delay would show as latency.
 *
 * Each answer is timed from the moment its request was handed to the HTTP client (as autocannon times
 * its own, so that the figures compare) and from the moment it was due: the second includes how late
 * the worker sent it (`sendLagMs`), which stays near a millisecond (timer granularity) unless the
 * machine's CPUs are full.
 */
import { Worker } from 'node:worker_threads';
import { LatencyRecorder, type LatencyFigures } from './latency.js';
import { REQUEST_TIMEOUT_S } from './options.js';

/** Sockets per server the worker may open: in-flight requests beyond it wait in the client's queue. */
export const PACED_MAX_SOCKETS = 64;
/** Sequential requests each worker sends before the schedule starts (JIT of the route, sockets open). */
export const PACED_WARMUP_REQUESTS = 200;

/** One request of the schedule's cycle: a path, and what a 2xx answer must say. */
export interface PacedRequest {
  path: string;
  /** The answers are counted and timed per kind (e.g. `boolean`, `metered`). */
  kind: string;
  /** `data.feature` of a 2xx answer must be this (an entitlement check), when given. */
  expectFeature?: string;
  /** A 2xx answer must carry `data.balance` (a metered feature's check). */
  expectBalance?: boolean;
}

/** What the worker is given (structured-cloned: plain data only). */
export interface PacedSpec {
  /** Request i goes to baseUrls[i mod n]. */
  baseUrls: readonly string[];
  authorization: string;
  /** Requests started per second, over all servers. */
  perSecond: number;
  /** Request i is requests[i mod length]. */
  requests: readonly PacedRequest[];
  maxSockets: number;
  warmupRequests: number;
  timeoutMs: number;
}

/** What the worker sends back when the schedule is stopped and its requests have their answers. */
export interface PacedRaw {
  sent: number;
  responses: number;
  ok: number;
  statusCodes: Record<string, number>;
  errors: number;
  timeouts: number;
  unanswered: number;
  malformed: number;
  /** 2xx answers with `has_access: true` / `false`. */
  granted: number;
  denied: number;
  errorSamples: string[];
  /** From the first request due to the last answer (or the stop, if later). */
  elapsedS: number;
  /** From the first request due to the stop: the time requests were started over. */
  scheduleS: number;
  /** Per answer: ms from handing the request to the client to its last byte, from its due time, and the kind. */
  fromSend: Float64Array;
  fromDue: Float64Array;
  kinds: Uint8Array;
  /** Per request sent: ms between its due time and its hand-over to the client. */
  sendLag: Float64Array;
  kindNames: string[];
  socketsOpened: number;
  /** Share of the phase the worker's event loop was busy (near 1: the generator, not the server, sets the pace). */
  loopUtilization: number;
}

export interface PacedFigures {
  /** The rate asked for and the rate of requests actually started. */
  targetPerS: number;
  sentPerS: number;
  sent: number;
  /** Latency from the due time (the open-loop figure: a request sent late waited too). */
  fromDueMs: LatencyFigures;
  sendLagMs: LatencyFigures;
  /** Latency from the hand-over to the client, per kind of request. */
  byKind: Record<string, { requests: number; latencyMs: LatencyFigures }>;
  granted: number;
  denied: number;
  maxSocketsPerServer: number;
  socketsOpened: number;
  /** See PacedRaw.loopUtilization. */
  workerLoopUtilization: number;
}

export interface PacedOutcome {
  elapsedS: number;
  ok: number;
  responses: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  errors: number;
  timeouts: number;
  unanswered: number;
  malformed: number;
  errorSamples: string[];
  /** From the hand-over to the client: as autocannon times the closed-loop phases. */
  latencyMs: LatencyFigures;
  figures: PacedFigures;
}

type FromWorker = { type: 'ready' } | { type: 'done'; raw: PacedRaw } | { type: 'failed'; message: string };

/** Percentiles of a Float64Array of ms (or of the entries whose kind is `kind`). */
export function figuresOf(values: Float64Array, kinds?: Uint8Array, kind?: number): LatencyFigures {
  const recorder = new LatencyRecorder();
  for (let i = 0; i < values.length; i++) if (kinds === undefined || kinds[i] === kind) recorder.push(values[i] ?? 0);
  return recorder.figures();
}

/** The worker's raw answer as the phase's figures. */
export function pacedOutcome(spec: Pick<PacedSpec, 'perSecond' | 'maxSockets'>, raw: PacedRaw): PacedOutcome {
  const byKind: PacedFigures['byKind'] = {};
  raw.kindNames.forEach((name, k) => {
    let requests = 0;
    for (const kind of raw.kinds) if (kind === k) requests++;
    byKind[name] = { requests, latencyMs: figuresOf(raw.fromSend, raw.kinds, k) };
  });
  return {
    elapsedS: raw.elapsedS,
    ok: raw.ok,
    responses: raw.responses,
    non2xx: raw.responses - raw.ok,
    statusCodes: raw.statusCodes,
    errors: raw.errors,
    timeouts: raw.timeouts,
    unanswered: raw.unanswered,
    malformed: raw.malformed,
    errorSamples: raw.errorSamples,
    latencyMs: figuresOf(raw.fromSend),
    figures: {
      targetPerS: spec.perSecond,
      sentPerS: raw.sent / raw.scheduleS,
      sent: raw.sent,
      fromDueMs: figuresOf(raw.fromDue),
      sendLagMs: figuresOf(raw.sendLag),
      byKind,
      granted: raw.granted,
      denied: raw.denied,
      maxSocketsPerServer: spec.maxSockets,
      socketsOpened: raw.socketsOpened,
      workerLoopUtilization: raw.loopUtilization,
    },
  };
}

/**
 * The worker runs under tsx like the bench: Node 20 does not apply a loader given with `--import` to
 * a worker's entry module, so the worker registers tsx's hooks itself, then imports the entry.
 */
function workerSource(entry: URL): string {
  const api = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  return `import(${api}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); })`;
}

/** An open-loop schedule in its own thread: `start` (warmed up, waiting), `begin`, then `finish`. */
export class PacedLoad {
  private constructor(
    private readonly worker: Worker,
    private readonly spec: PacedSpec,
    private readonly done: Promise<PacedRaw>,
  ) {}

  /** Starts the worker; resolves once it has sent its warm-up requests and waits for `begin`. */
  static async start(spec: PacedSpec): Promise<PacedLoad> {
    if (!(spec.perSecond > 0) || spec.baseUrls.length === 0 || spec.requests.length === 0)
      throw new Error('a paced load needs a rate, servers and requests');
    const worker = new Worker(workerSource(new URL('./paced-worker.ts', import.meta.url)), {
      eval: true,
      workerData: spec,
    });
    let readyResolve: () => void = () => undefined;
    let fail: (error: Error) => void = () => undefined;
    const ready = new Promise<void>((resolve, reject) => {
      readyResolve = resolve;
      fail = reject;
    });
    const done = new Promise<PacedRaw>((resolve, reject) => {
      worker.on('message', (message: FromWorker) => {
        if (message.type === 'ready') readyResolve();
        else if (message.type === 'done') resolve(message.raw);
        else {
          const error = new Error(`paced load: ${message.message}`);
          fail(error);
          reject(error);
        }
      });
      worker.on('error', (error) => {
        fail(error);
        reject(error);
      });
      worker.on('exit', (code) => {
        const error = new Error(`paced load: the worker exited (${code}) before its answer`);
        fail(error);
        reject(error);
      });
    });
    done.catch(() => undefined); // awaited by finish(); not unhandled meanwhile
    const load = new PacedLoad(worker, spec, done);
    try {
      await ready;
    } catch (error) {
      await worker.terminate();
      throw error;
    }
    return load;
  }

  /** The schedule's time zero: request i is due i / rate seconds after this. */
  begin(): void {
    this.worker.postMessage({ type: 'begin' });
  }

  /** Stops the schedule, waits for the answers of the requests in flight, and returns the figures. */
  async finish(): Promise<PacedOutcome> {
    this.worker.postMessage({ type: 'stop' });
    try {
      return pacedOutcome(this.spec, await this.done);
    } finally {
      await this.worker.terminate();
    }
  }

  /** Ends the worker without figures (a run that failed). */
  async abort(): Promise<void> {
    await this.worker.terminate();
  }
}

/** Defaults of a spec: sockets, warm-up and timeout. */
export function pacedSpec(
  baseUrls: readonly string[],
  authorization: string,
  perSecond: number,
  requests: readonly PacedRequest[],
): PacedSpec {
  return {
    baseUrls,
    authorization,
    perSecond,
    requests,
    maxSockets: PACED_MAX_SOCKETS,
    warmupRequests: PACED_WARMUP_REQUESTS,
    timeoutMs: REQUEST_TIMEOUT_S * 1000,
  };
}
