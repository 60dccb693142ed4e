/**
 * The worker thread of an open-loop load (lib/paced.ts): warms up, waits for `begin`, then starts
 * request i at begin + i / rate on keep-alive sockets (at most `maxSockets` per server; more requests
 * in flight wait in the client's queue), whatever earlier requests are doing. On `stop` it sends
 * nothing more, waits for the answers still due, and posts what it measured.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import type { PacedRaw, PacedRequest, PacedSpec } from './paced.js';

const MAX_ERROR_SAMPLES = 3;
const ERROR_SAMPLE_CHARS = 300;
/** Beyond the request timeout, how long `stop` waits for the last answers. */
const DRAIN_MARGIN_MS = 5_000;

interface Target {
  host: string;
  port: number;
  agent: http.Agent;
}

interface Answer {
  status: number;
  body: string;
}

const spec = workerData as PacedSpec;
const port = parentPort;
if (port === null) throw new Error('paced-worker runs as a worker thread');

const targets: Target[] = spec.baseUrls.map((base) => {
  const url = new URL(base);
  return {
    host: url.hostname,
    port: Number(url.port),
    agent: new http.Agent({ keepAlive: true, maxSockets: spec.maxSockets }),
  };
});
const kindNames = [...new Set(spec.requests.map((r) => r.kind))];
const kindOf = spec.requests.map((r) => kindNames.indexOf(r.kind));
const sockets = new Set<unknown>();

/** Sends one GET; resolves with its answer, rejects on a connection error or the timeout. */
function get(target: Target, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.host,
        port: target.port,
        path,
        method: 'GET',
        agent: target.agent,
        headers: { authorization: spec.authorization },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('socket', (socket) => sockets.add(socket));
    req.setTimeout(spec.timeoutMs, () => req.destroy(Object.assign(new Error('timeout'), { timeout: true })));
    req.on('error', reject);
    req.end();
  });
}

/** Whether a 2xx answer says what the request asked; `access` is its has_access. */
function judge(request: PacedRequest, body: string): { ok: boolean; access: boolean | undefined } {
  try {
    const data = (JSON.parse(body) as { data?: { feature?: unknown; has_access?: unknown; balance?: unknown } }).data;
    if (data === undefined) return { ok: false, access: undefined };
    const access = typeof data.has_access === 'boolean' ? data.has_access : undefined;
    const featureOk = request.expectFeature === undefined || data.feature === request.expectFeature;
    const balanceOk = request.expectBalance !== true || (typeof data.balance === 'object' && data.balance !== null);
    return { ok: featureOk && balanceOk && access !== undefined, access };
  } catch {
    return { ok: false, access: undefined };
  }
}

async function warmUp(): Promise<void> {
  for (let i = 0; i < spec.warmupRequests; i++) {
    const target = targets[i % targets.length] as Target;
    const request = spec.requests[i % spec.requests.length] as PacedRequest;
    const answer = await get(target, request.path);
    if (answer.status < 200 || answer.status > 299)
      throw new Error(`warm-up ${request.path} answered ${answer.status}: ${answer.body.slice(0, ERROR_SAMPLE_CHARS)}`);
  }
}

function run(): { stop(): void; finished: Promise<PacedRaw> } {
  const intervalMs = 1000 / spec.perSecond;
  const fromSend: number[] = [];
  const fromDue: number[] = [];
  const kinds: number[] = [];
  const sendLag: number[] = [];
  const statusCodes: Record<string, number> = {};
  const errorSamples = new Set<string>();
  let sent = 0;
  let responses = 0;
  let ok = 0;
  let errors = 0;
  let timeouts = 0;
  let malformed = 0;
  let granted = 0;
  let denied = 0;
  let inFlight = 0;
  let lastAnswerAt = 0;
  let stopped = false;
  let stoppedAt = 0;
  let timer: NodeJS.Timeout | undefined;
  let drained: () => void = () => undefined;
  const allAnswered = new Promise<void>((resolve) => {
    drained = resolve;
  });
  const elu = performance.eventLoopUtilization();
  const zero = performance.now();

  const send = (i: number, dueAt: number): void => {
    const request = spec.requests[i % spec.requests.length] as PacedRequest;
    const target = targets[i % targets.length] as Target;
    const sentAt = performance.now();
    sendLag.push(sentAt - dueAt);
    sent++;
    inFlight++;
    get(target, request.path).then(
      (answer) => {
        const at = performance.now();
        lastAnswerAt = at;
        responses++;
        statusCodes[answer.status] = (statusCodes[answer.status] ?? 0) + 1;
        fromSend.push(at - sentAt);
        fromDue.push(at - dueAt);
        kinds.push(kindOf[i % kindOf.length] as number);
        if (answer.status >= 200 && answer.status <= 299) {
          ok++;
          const verdict = judge(request, answer.body);
          if (!verdict.ok) malformed++;
          if (verdict.access === true) granted++;
          else if (verdict.access === false) denied++;
        } else if (errorSamples.size < MAX_ERROR_SAMPLES)
          errorSamples.add(`${answer.status} ${answer.body.slice(0, ERROR_SAMPLE_CHARS)}`);
        settled();
      },
      (error: Error & { timeout?: boolean }) => {
        errors++;
        if (error.timeout === true) timeouts++;
        if (errorSamples.size < MAX_ERROR_SAMPLES) errorSamples.add(`error ${error.message}`);
        settled();
      },
    );
  };
  const settled = (): void => {
    inFlight--;
    if (stopped && inFlight === 0) drained();
  };

  let next = 0;
  const tick = (): void => {
    timer = undefined;
    if (stopped) return;
    const now = performance.now();
    // Every request due by now goes out now (late ones included: the schedule does not slip).
    while (zero + next * intervalMs <= now) {
      send(next, zero + next * intervalMs);
      next++;
    }
    timer = setTimeout(tick, Math.max(0, zero + next * intervalMs - performance.now()));
  };
  tick();

  let stopNow: () => void = () => undefined;
  const finished = (async (): Promise<PacedRaw> => {
    await new Promise<void>((resolve) => {
      stopNow = resolve;
    });
    const backstop = new Promise<void>((resolve) => setTimeout(resolve, spec.timeoutMs + DRAIN_MARGIN_MS).unref());
    if (inFlight > 0) await Promise.race([allAnswered, backstop]);
    const endedAt = Math.max(lastAnswerAt, stoppedAt);
    const utilization = performance.eventLoopUtilization(elu).utilization;
    return {
      sent,
      responses,
      ok,
      statusCodes,
      errors,
      timeouts,
      unanswered: inFlight,
      malformed,
      granted,
      denied,
      errorSamples: [...errorSamples],
      elapsedS: Math.max(1e-6, (endedAt - zero) / 1000),
      scheduleS: Math.max(1e-6, (stoppedAt - zero) / 1000),
      fromSend: Float64Array.from(fromSend),
      fromDue: Float64Array.from(fromDue),
      kinds: Uint8Array.from(kinds),
      sendLag: Float64Array.from(sendLag),
      kindNames,
      socketsOpened: sockets.size,
      loopUtilization: utilization,
    };
  })();
  return {
    stop: () => {
      stopped = true;
      stoppedAt = performance.now();
      if (timer !== undefined) clearTimeout(timer);
      stopNow();
    },
    finished,
  };
}

let running: ReturnType<typeof run> | undefined;
port.on('message', (message: { type: string }) => {
  if (message.type === 'begin' && running === undefined) running = run();
  else if (message.type === 'stop') {
    if (running === undefined) running = run();
    running.stop();
    running.finished.then(
      (raw) => {
        for (const t of targets) t.agent.destroy();
        port.postMessage({ type: 'done', raw }, [
          raw.fromSend.buffer,
          raw.fromDue.buffer,
          raw.kinds.buffer,
          raw.sendLag.buffer,
        ] as ArrayBuffer[]);
      },
      (error: unknown) => port.postMessage({ type: 'failed', message: String(error) }),
    );
  }
});

warmUp().then(
  () => port.postMessage({ type: 'ready' }),
  (error: unknown) =>
    port.postMessage({ type: 'failed', message: error instanceof Error ? error.message : String(error) }),
);
