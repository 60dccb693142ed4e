/**
 * The server's Prometheus metrics (prom-client). One `Metrics` per server, made in the composition
 * root (server.ts) with its own registry: nothing is registered on prom-client's global default
 * registry, so that several servers in one process (tests) never share figures.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { errorBody } from './errors.js';

/** A queue's backlog (the store's outboxBacklog / webhookDeliveryBacklog). */
export interface Backlog {
  pending: number;
  oldestDueAtMs: number | null;
}

/** The queues whose backlog is read at scrape time. */
export type BacklogSource = (nowMs: number) => Promise<{ outbox: Backlog; webhook_deliveries: Backlog }>;

/** A scrape reads the backlog at most this often (two scrapers at once share one query). */
const BACKLOG_CACHE_MS = 1_000;

/** Request latency buckets in seconds: from a cached read to a slow processor call. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Group sizes: requests (settle) or events (ingest) per transaction, up to GROUP_EVENTS_MAX. */
const GROUP_SIZE_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000];
const GROUP_SECONDS_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export type GroupKind = 'ingest' | 'settle';

export class Metrics {
  readonly registry = new Registry();
  /** By route pattern (never the raw URL: ids would make a series per account); its _count is the request count. */
  readonly requestDuration: Histogram<'method' | 'route' | 'status'>;
  readonly eventsIngested: Counter;
  readonly groupSize: Histogram<'kind'>;
  readonly groupDuration: Histogram<'kind'>;
  readonly charges: Counter<'reason' | 'outcome'>;
  #backlog: { atMs: number; value: Promise<Awaited<ReturnType<BacklogSource>> | undefined> } | undefined;

  constructor(
    backlog: BacklogSource,
    private readonly now: () => number,
    private readonly onScrapeError: (err: unknown) => void,
  ) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requestDuration = new Histogram({
      name: 'billing_http_request_duration_seconds',
      help: 'HTTP requests by method, route pattern and status: latency (its _count is the number of requests)',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.eventsIngested = new Counter({
      name: 'billing_events_ingested_total',
      help: 'Usage events committed by ingest requests (replays of known client ids included)',
      registers,
    });
    this.groupSize = new Histogram({
      name: 'billing_group_commit_size',
      help: 'Group commits: events (ingest) or settles (settle) per transaction',
      labelNames: ['kind'],
      buckets: GROUP_SIZE_BUCKETS,
      registers,
    });
    this.groupDuration = new Histogram({
      name: 'billing_group_commit_duration_seconds',
      help: 'Group commits: time from the group leaving the queue to its commit',
      labelNames: ['kind'],
      buckets: GROUP_SECONDS_BUCKETS,
      registers,
    });
    this.charges = new Counter({
      name: 'billing_charges_total',
      help: 'Charges carried out by the workers, by reason (refill, plan, overage, proration) and outcome',
      labelNames: ['reason', 'outcome'],
      registers,
    });
    const read = () => {
      const nowMs = Date.now();
      if (!this.#backlog || nowMs - this.#backlog.atMs >= BACKLOG_CACHE_MS) {
        const value = backlog(this.now()).catch((err: unknown) => {
          this.onScrapeError(err);
          return undefined;
        });
        this.#backlog = { atMs: nowMs, value };
      }
      return this.#backlog.value;
    };
    const queues = ['outbox', 'webhook_deliveries'] as const;
    const clockNow = () => this.now();
    new Gauge({
      name: 'billing_queue_pending',
      help: 'Unfinished items of a background queue (outbox rows, webhook deliveries), due or scheduled',
      labelNames: ['queue'],
      registers,
      async collect() {
        const b = await read();
        this.reset();
        if (b) for (const q of queues) this.set({ queue: q }, b[q].pending);
      },
    });
    new Gauge({
      name: 'billing_queue_oldest_due_age_seconds',
      help: 'How long the longest-waiting due item of a background queue has been due (0: none due)',
      labelNames: ['queue'],
      registers,
      async collect() {
        const b = await read();
        this.reset();
        if (!b) return;
        for (const q of queues) {
          const at = b[q].oldestDueAtMs;
          this.set({ queue: q }, at === null ? 0 : Math.max(0, clockNow() - at) / 1000);
        }
      },
    });
  }

  /** Records one answered request (an onResponse hook). */
  observeRequest(request: FastifyRequest, reply: FastifyReply): void {
    this.requestDuration.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  }

  /** Wraps a group writer so that each group's size and duration are recorded. */
  timeGroups<Req, Res>(
    kind: GroupKind,
    sizeOf: (req: Req) => number,
    write: (nowMs: number, requests: Req[]) => Promise<Res[]>,
    onDone?: (outcomes: Res[]) => void,
  ): (nowMs: number, requests: Req[]) => Promise<Res[]> {
    return async (nowMs, requests) => {
      const end = this.groupDuration.startTimer({ kind });
      const outcomes = await write(nowMs, requests);
      end();
      let size = 0;
      for (const r of requests) size += sizeOf(r);
      this.groupSize.observe({ kind }, size);
      onDone?.(outcomes);
      return outcomes;
    };
  }
}

/** The bearer check of /metrics when BILLING_METRICS_TOKEN is set (constant time in the token). */
function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  if (!m) return false;
  const given = Buffer.from(m[1]!);
  const wanted = Buffer.from(token);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

/** Records every answered request and serves GET /metrics (open, or behind a bearer token). */
export function registerMetrics(app: FastifyInstance, metrics: Metrics, token: string | null): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observeRequest(request, reply);
    done();
  });
  app.get(
    '/metrics',
    {
      schema: {
        operationId: 'getMetrics',
        tags: ['system'],
        summary: 'Prometheus metrics (text exposition format)',
        description:
          'Requests by route pattern and status, events ingested, group commits, background queue backlog ' +
          'and age, charges by outcome, and the process figures. Open unless the server sets ' +
          'BILLING_METRICS_TOKEN; then it wants `Authorization: Bearer <token>` (401 otherwise). ' +
          'Labels carry route patterns, never ids: nothing in it belongs to one company.',
        security: token ? [{ metricsToken: [] }] : [],
        response: {
          200: {
            description: 'The metrics',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
          400: Type.Ref('Error'),
          401: Type.Ref('Error'),
        },
      },
    },
    async (request, reply) => {
      if (token !== null && !bearerMatches(request.headers.authorization, token)) {
        const out = errorBody('authentication_required', 'send Authorization: Bearer <BILLING_METRICS_TOKEN>');
        return reply
          .code(401)
          .header('www-authenticate', 'Bearer realm="metrics"')
          .type('application/json; charset=utf-8')
          .send(out.body);
      }
      const text = await metrics.registry.metrics();
      return reply.type(metrics.registry.contentType).send(text);
    },
  );
}
