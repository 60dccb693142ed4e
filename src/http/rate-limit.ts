/**
 * Per-company rate limits, so that one company's flood cannot take the server from the others:
 * requests per second (every route a company authenticates to with its API key) and events per
 * second (the two ingest routes, counted by the events a request carries). Over either, the answer
 * is 429 `rate_limited` with `Retry-After` (whole seconds), before the request's Idempotency-Key is
 * claimed or anything is applied. `0` turns a limit off. The limits are per process: N processes
 * behind a balancer let a company through N times as much.
 *
 * Both are token buckets per company, in memory, checked synchronously in the request's hooks: a
 * request takes one token of the request bucket, and an ingest request as many tokens of the event
 * bucket as it carries events (@fastify/rate-limit, which keeps the password and sign-up limits,
 * counts one per request and cannot weigh a request; its asynchronous store also cost the ingest
 * path measurably). Buckets are keyed by company, so these never touch the identity routes.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { systemClock, type Clock } from '../lib/clock.js';

export interface CompanyRateLimits {
  /** BILLING_RATE_LIMIT_REQUESTS_PER_SECOND; 0: off. */
  requestsPerSecond: number;
  /** BILLING_RATE_LIMIT_EVENTS_PER_SECOND; 0: off. */
  eventsPerSecond: number;
  /** The clock of the event buckets (the wall clock; tests may pass another). */
  clock?: Clock;
}

/** Companies tracked at once (least recently seen forgotten first); far more than one process serves. */
const COMPANIES_TRACKED = 100_000;
const EVENT_ROUTES = new Set(['/v1/accounts/:account_id/events', '/v1/events']);

function companyOf(request: FastifyRequest): string | undefined {
  const p = request.principal;
  return p?.kind === 'company' ? p.companyId : undefined;
}

/** The error code by which the error handler tells this 429 (its message is for the client) from others. */
export const COMPANY_RATE_LIMITED = 'BILLING_COMPANY_RATE_LIMITED';

function rateLimited(reply: FastifyReply, retryAfterSeconds: number, what: string): Error {
  reply.header('retry-after', String(retryAfterSeconds));
  return Object.assign(new Error(`this company is over its limit of ${what}; retry after ${retryAfterSeconds} s`), {
    statusCode: 429,
    code: COMPANY_RATE_LIMITED,
  });
}

/**
 * A token bucket per company: `ratePerSecond` tokens a second, holding at most one second's worth.
 * A request takes as many tokens as it weighs (one, or its events); it passes when the bucket holds
 * them (or, for a request larger than the bucket, when the bucket is full) and may leave it in debt.
 */
export class CompanyBuckets {
  readonly #rate: number;
  readonly #clock: Clock;
  readonly #buckets = new Map<string, { tokens: number; atMs: number }>();
  /** The company seen last: its bucket is already last in the map's order. */
  #last: string | undefined;

  constructor(ratePerSecond: number, clock: Clock = systemClock) {
    this.#rate = ratePerSecond;
    this.#clock = clock;
  }

  /** Takes `n` tokens of the company's bucket; returns 0, or the seconds to wait when it may not. */
  take(companyId: string, n: number): number {
    const now = this.#clock.now();
    let b = this.#buckets.get(companyId);
    if (b === undefined) {
      if (this.#buckets.size >= COMPANIES_TRACKED) {
        const oldest = this.#buckets.keys().next().value!;
        this.#buckets.delete(oldest);
        if (oldest === this.#last) this.#last = undefined;
      }
      b = { tokens: this.#rate, atMs: now };
    } else {
      b.tokens = Math.min(this.#rate, b.tokens + ((now - b.atMs) * this.#rate) / 1000);
      b.atMs = now;
    }
    // Map order is least recently seen first: a bucket seen again moves last, unless it is last already (a delete
    // and a set in V8's ordered table leave a hole that its next compaction copies).
    if (companyId !== this.#last) {
      this.#buckets.delete(companyId);
      this.#buckets.set(companyId, b);
      this.#last = companyId;
    }
    const needed = Math.min(n, this.#rate);
    if (b.tokens < needed) return Math.max(1, Math.ceil((needed - b.tokens) / this.#rate));
    b.tokens -= n;
    return 0;
  }
}

const retryAfterHeader = {
  'retry-after': { type: 'integer', minimum: 1, description: 'Seconds to wait before sending again' },
};

/** The 429 every route a company calls may answer, as the OpenAPI document shows it. */
function tooManyRequests(eventRoute: boolean) {
  return {
    $ref: 'Error',
    description:
      'rate_limited: this company sent more than its requests per second (BILLING_RATE_LIMIT_REQUESTS_PER_SECOND)' +
      (eventRoute ? ' or its events per second (BILLING_RATE_LIMIT_EVENTS_PER_SECOND)' : '') +
      ', counted per process; nothing was applied, and the Idempotency-Key is not used. ' +
      'Retry after Retry-After seconds.',
    headers: retryAfterHeader,
  };
}

/**
 * Registers the request limit (after company authentication) and the event limit (after validation),
 * and documents their 429 on every route a company may call. Call before the routes are registered.
 */
export function registerCompanyRateLimits(app: FastifyInstance, limits: CompanyRateLimits): void {
  app.addHook('onRoute', (route) => {
    const auth = (route.config as { auth?: string } | undefined)?.auth;
    const response = (route.schema as { response?: Record<string, unknown> } | undefined)?.response;
    if ((auth === 'company' || auth === 'either') && response) {
      const eventRoute = route.method === 'POST' && EVENT_ROUTES.has(route.url);
      response[429] = tooManyRequests(eventRoute);
    }
  });
  if (limits.requestsPerSecond > 0) {
    const buckets = new CompanyBuckets(limits.requestsPerSecond, limits.clock);
    app.addHook('onRequest', (request, reply, done) => {
      const companyId = companyOf(request);
      const wait = companyId === undefined ? 0 : buckets.take(companyId, 1);
      done(wait > 0 ? rateLimited(reply, wait, `${limits.requestsPerSecond} requests per second`) : undefined);
    });
  }
  if (limits.eventsPerSecond > 0) {
    const buckets = new CompanyBuckets(limits.eventsPerSecond, limits.clock);
    app.addHook('preHandler', (request, reply, done) => {
      const companyId = companyOf(request);
      if (companyId === undefined || request.method !== 'POST' || !EVENT_ROUTES.has(request.routeOptions.url ?? '')) {
        return done();
      }
      const body = request.body as unknown[] | { events?: unknown[] } | undefined;
      const n = Array.isArray(body) ? body.length : Array.isArray(body?.events) ? body.events.length : 1;
      const wait = buckets.take(companyId, n);
      done(wait > 0 ? rateLimited(reply, wait, `${limits.eventsPerSecond} events per second`) : undefined);
    });
  }
}
