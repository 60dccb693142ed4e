/**
 * Load from autocannon with a body built per request, and an outcome for every request sent.
 *
 * autocannon's own stop closes every socket at once, so requests in flight at the end would
 * be neither acknowledged nor known to have failed, and the ledger could not be checked to the
 * unit. So the duration is ours: when it is up, each connection sends nothing more and closes
 * after its response has arrived (a drain). autocannon's duration is only a backstop. What
 * still has no response at the end (a timeout, a reset) is reported as unanswered: the ledger
 * check then allows exactly what those requests could have done.
 */
import autocannon from 'autocannon';
import { LatencyRecorder, type LatencyFigures } from './latency.js';
import { REQUEST_TIMEOUT_S } from './options.js';

export { LatencyRecorder, type LatencyFigures };

/** After our duration, connections get this long to receive their last responses. */
const DRAIN_BACKSTOP_S = REQUEST_TIMEOUT_S + 5;
/**
 * How often autocannon looks whether it is done. Its default (1 s) would leave the server idle
 * for up to a second after the drain, inside the window its CPU is measured over.
 */
const AUTOCANNON_SAMPLE_MS = 50;
/** Distinct non-2xx bodies kept per phase for the report. */
const MAX_ERROR_SAMPLES = 3;
const ERROR_SAMPLE_CHARS = 300;

export interface Shot<T> {
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  body?: Buffer;
  /** Headers of this request alone (an Idempotency-Key). */
  headers?: Record<string, string>;
  tag: T;
}

export interface LoadSpec<T> {
  baseUrl: string;
  authorization: string | undefined;
  connections: number;
  durationS: number;
  /** The next request to send; undefined when there is nothing left (the load then drains early). */
  next(): Shot<T> | undefined;
  /**
   * Instead of `next`: the requests connection `connection` (of `connections`) sends, over and
   * over, in order. Their bytes are built once, before the load: for each request `next` makes
   * autocannon build the request from its parts, which cost this process (the load generator,
   * on the server's cores) about as much CPU as writing it to the socket.
   */
  cycle?(connection: number, connections: number): Shot<T>[];
  /** Every response, with the tag of the request it answers. */
  onResponse(tag: T, status: number, body: string): void;
}

export interface LoadOutcome<T> {
  /** From the first request to the last response, in seconds. */
  elapsedS: number;
  /** When the load started and when its last response arrived, on the `performance.now()` clock (ms). */
  startedAtMs: number;
  endedAtMs: number;
  responses: number;
  ok: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  /** Connection errors and timeouts counted by autocannon. */
  errors: number;
  timeouts: number;
  latencyMs: LatencyFigures;
  /** Every response time behind `latencyMs`, for merging the loads of several generators. */
  latencies: LatencyRecorder;
  /** Requests sent that never got a response: their effect on the server is unknown. */
  unanswered: T[];
  errorSamples: string[];
  /** CPU of the bench process itself (the load generator) as % of one core. */
  generatorCpuPercent: number;
  /** `runLoads`: the 2xx answers of each of its loads, in the order of its specs. */
  okPerLoad?: number[];
}

/** The parts of autocannon's client we steer the drain with (not in its public types). */
interface DrainableClient {
  reqsMade: number;
  responseMax: number | undefined;
}

interface InFlight<T> {
  tag: T;
}

interface ShotContext<T> {
  current?: InFlight<T> | undefined;
}

/** The parts of autocannon's client a connection's fixed cycle of requests is set up with. */
interface CyclingClient {
  requestIterator: { currentRequest: unknown };
  getRequestBuffer(): Buffer;
  setRequests(requests: autocannon.Request[]): void;
}

/** A request of a connection's cycle: autocannon keeps these fields on the object it sends. */
interface CycledRequest<T> {
  tag: T;
  connection: { sent: InFlight<T> | undefined };
}

export async function runLoad<T>(spec: LoadSpec<T>): Promise<LoadOutcome<T>> {
  const clients: DrainableClient[] = [];
  const inFlight = new Set<InFlight<T>>();
  const errorSamples = new Set<string>();
  let draining = false;
  const statusCodes: Record<string, number> = {};
  let responses = 0;
  let ok = 0;
  let lastResponseAt = 0;
  const latencies = new LatencyRecorder();
  let timeNextResponse = false;

  const stopAfterCurrent = (client: DrainableClient): void => {
    // autocannon closes a client whose reqsMade has reached responseMax before it sends again.
    client.responseMax = Math.max(1, client.reqsMade);
  };
  const drain = (): void => {
    if (draining) return;
    draining = true;
    for (const client of clients) stopAfterCurrent(client);
  };

  const baseHeaders: Record<string, string> = {};
  if (spec.authorization !== undefined) baseHeaders.authorization = spec.authorization;
  const headersOf = (shot: Shot<T>): Record<string, string> => ({
    ...baseHeaders,
    ...(shot.body === undefined ? {} : { 'content-type': 'application/json' }),
    ...shot.headers,
  });

  const request: autocannon.Request = {
    setupRequest: (req, rawContext) => {
      const context = rawContext as ShotContext<T>;
      const shot = draining ? undefined : spec.next();
      if (shot === undefined) {
        // Nothing left to send: drain, and fill this one slot with a request that changes nothing.
        drain();
        context.current = undefined;
        return { ...req, method: 'GET', path: '/healthz', headers: {}, body: Buffer.alloc(0) };
      }
      const flight: InFlight<T> = { tag: shot.tag };
      inFlight.add(flight);
      context.current = flight;
      return {
        ...req,
        method: shot.method,
        path: shot.path,
        headers: headersOf(shot),
        body: shot.body ?? Buffer.alloc(0),
      };
    },
    onResponse: (status, body, rawContext) => {
      const context = rawContext as ShotContext<T>;
      const flight = context.current;
      context.current = undefined;
      if (flight !== undefined) answered(flight, status, body);
    },
  };

  const answered = (flight: InFlight<T>, status: number, body: string): void => {
    inFlight.delete(flight);
    timeNextResponse = true;
    responses++;
    lastResponseAt = performance.now();
    statusCodes[status] = (statusCodes[status] ?? 0) + 1;
    if (status >= 200 && status <= 299) ok++;
    else if (errorSamples.size < MAX_ERROR_SAMPLES) errorSamples.add(`${status} ${body.slice(0, ERROR_SAMPLE_CHARS)}`);
    spec.onResponse(flight.tag, status, body);
  };

  // A fixed cycle per connection: autocannon calls a request's onResponse as its method, so one
  // function serves them all. With one request at a time per connection, a response answers
  // the request the connection sent last; a request still unanswered when the connection sends
  // another (after a timeout, autocannon reconnects and goes on) will never be.
  function cycledResponse(this: CycledRequest<T>, status: number, body: string): void {
    const flight = this.connection.sent;
    this.connection.sent = undefined;
    if (flight !== undefined) answered(flight, status, body);
  }
  const cycle = spec.cycle?.bind(spec);
  const setUpCycle = (client: CyclingClient, connection: number): void => {
    const state: CycledRequest<T>['connection'] = { sent: undefined };
    client.setRequests(
      (cycle as NonNullable<typeof cycle>)(connection, spec.connections).map((shot) => {
        const request: autocannon.Request & CycledRequest<T> = {
          method: shot.method,
          path: shot.path,
          headers: headersOf(shot),
          body: shot.body ?? Buffer.alloc(0),
          onResponse: cycledResponse,
          tag: shot.tag,
          connection: state,
        };
        return request;
      }),
    );
    const requestBuffer = client.getRequestBuffer.bind(client);
    client.getRequestBuffer = () => {
      // A request sent before and not answered was abandoned: it stays in `inFlight`, unanswered.
      const flight: InFlight<T> = { tag: (client.requestIterator.currentRequest as CycledRequest<T>).tag };
      state.sent = flight;
      inFlight.add(flight);
      return requestBuffer();
    };
  };

  const cpuBefore = process.cpuUsage();
  const startedAt = performance.now();
  const drainTimer = setTimeout(drain, spec.durationS * 1000);
  let result: autocannon.Result;
  try {
    result = await new Promise<autocannon.Result>((resolve, reject) => {
      const instance = autocannon(
        {
          url: spec.baseUrl,
          connections: spec.connections,
          duration: spec.durationS + DRAIN_BACKSTOP_S,
          timeout: REQUEST_TIMEOUT_S,
          sampleInt: AUTOCANNON_SAMPLE_MS,
          // With a cycle, this placeholder is replaced by each connection's own requests.
          requests: cycle === undefined ? [request] : [{ method: 'GET', path: '/healthz' }],
          setupClient: (client) => {
            const drainable = client as unknown as DrainableClient;
            if (cycle !== undefined) setUpCycle(client as unknown as CyclingClient, clients.length);
            clients.push(drainable);
            if (draining) stopAfterCurrent(drainable);
          },
        },
        (error, done) => (error ? reject(error as Error) : resolve(done)),
      );
      // Emitted right after the request's onResponse hook for the same response.
      instance.on('response', (_client, _status, _bytes, responseTimeMs) => {
        if (!timeNextResponse) return;
        timeNextResponse = false;
        latencies.push(responseTimeMs);
      });
    });
  } finally {
    clearTimeout(drainTimer);
  }
  const cpu = process.cpuUsage(cpuBefore);
  const endedAt = lastResponseAt > 0 ? lastResponseAt : performance.now();
  const elapsedS = Math.max(1e-6, (endedAt - startedAt) / 1000);

  return {
    elapsedS,
    startedAtMs: startedAt,
    endedAtMs: endedAt,
    responses,
    ok,
    non2xx: responses - ok,
    statusCodes,
    errors: result.errors,
    timeouts: result.timeouts,
    latencyMs: latencies.figures(),
    latencies,
    unanswered: [...inFlight].map((f) => f.tag),
    errorSamples: [...errorSamples],
    generatorCpuPercent: (100 * (cpu.user + cpu.system)) / 1e6 / ((performance.now() - startedAt) / 1000),
  };
}

/**
 * `total` connections split as evenly as possible over `parts` load generators (one per
 * server); the first ones take the remainder. Fewer connections than parts: only `total`
 * generators, one connection each.
 */
export function splitConnections(total: number, parts: number): number[] {
  if (!Number.isInteger(total) || total < 1 || !Number.isInteger(parts) || parts < 1) {
    throw new Error(`splitConnections needs positive whole numbers, got ${total} over ${parts}`);
  }
  const used = Math.min(total, parts);
  const base = Math.floor(total / used);
  return Array.from({ length: used }, (_, i) => base + (i < total % used ? 1 : 0));
}

/** One load spec per server, the phase's connections split over them by `splitConnections`. */
export function spreadOver<T>(
  baseUrls: readonly string[],
  connections: number,
  make: (baseUrl: string, connections: number) => LoadSpec<T>,
): LoadSpec<T>[] {
  return splitConnections(connections, baseUrls.length).map((n, i) => make(baseUrls[i] as string, n));
}

/**
 * The outcomes of load generators that ran at the same time (one per server) as one phase:
 * counts summed, the window from the first start to the last response, percentiles over every
 * response time of all of them (exactly as for one generator). The generators share this
 * process, so its CPU is measured once around all of them and passed in.
 */
export function mergeOutcomes<T>(outcomes: readonly LoadOutcome<T>[], generatorCpuPercent: number): LoadOutcome<T> {
  if (outcomes.length === 0) throw new Error('mergeOutcomes needs at least one outcome');
  const startedAtMs = Math.min(...outcomes.map((o) => o.startedAtMs));
  const endedAtMs = Math.max(...outcomes.map((o) => o.endedAtMs));
  const latencies = new LatencyRecorder();
  const statusCodes: Record<string, number> = {};
  const errorSamples = new Set<string>();
  for (const o of outcomes) {
    latencies.pushAll(o.latencies);
    for (const [code, n] of Object.entries(o.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
    for (const sample of o.errorSamples) if (errorSamples.size < MAX_ERROR_SAMPLES) errorSamples.add(sample);
  }
  const sum = (pick: (o: LoadOutcome<T>) => number): number => outcomes.reduce((total, o) => total + pick(o), 0);
  return {
    elapsedS: Math.max(1e-6, (endedAtMs - startedAtMs) / 1000),
    startedAtMs,
    endedAtMs,
    responses: sum((o) => o.responses),
    ok: sum((o) => o.ok),
    non2xx: sum((o) => o.non2xx),
    statusCodes,
    errors: sum((o) => o.errors),
    timeouts: sum((o) => o.timeouts),
    latencyMs: latencies.figures(),
    latencies,
    unanswered: outcomes.flatMap((o) => o.unanswered),
    errorSamples: [...errorSamples],
    generatorCpuPercent,
  };
}

/** Runs one load per spec at the same time (one autocannon per server) and merges them. */
export async function runLoads<T>(specs: readonly LoadSpec<T>[]): Promise<LoadOutcome<T>> {
  if (specs.length === 1) {
    const outcome = await runLoad(specs[0] as LoadSpec<T>);
    return { ...outcome, okPerLoad: [outcome.ok] };
  }
  const cpuBefore = process.cpuUsage();
  const startedAt = performance.now();
  const outcomes = await Promise.all(specs.map((spec) => runLoad(spec)));
  const cpu = process.cpuUsage(cpuBefore);
  const generatorCpuPercent = (100 * (cpu.user + cpu.system)) / 1e6 / ((performance.now() - startedAt) / 1000);
  return { ...mergeOutcomes(outcomes, generatorCpuPercent), okPerLoad: outcomes.map((o) => o.ok) };
}
