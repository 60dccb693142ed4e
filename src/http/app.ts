/**
 * buildApp(): the HTTP surface. Fastify with strict JSON Schema validation (no coercion of
 * bodies, unknown fields refused), one error registry, Basic auth and console sessions (auth.ts),
 * idempotency, the OpenAPI 3.1 document at /openapi.json and an interactive reference at /docs.
 */
import cookie from '@fastify/cookie';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyRequest } from 'fastify';
import { OutcomeError, failure } from '../domain/outcome.js';
import type { Deps } from '../operations/deps.js';
import { ApiKeyCache } from '../operations/identity.js';
import type { BalanceReads } from '../operations/balances.js';
import type { EntitlementChecks } from '../operations/features.js';
import type { EventWriters } from '../operations/events.js';
import type { TestClock } from '../lib/clock.js';
import { AttemptLimiter } from './attempts.js';
import { companyAuthHook, userAuthHook } from './auth.js';
import { registerConsole } from './console.js';
import { registerPortalPage } from './portal-page.js';
import { errorBody } from './errors.js';
import { BodyRefused, bodyViolation } from './json-body.js';
import { registerIdempotency } from './idempotency.js';
import { rewriteAlias } from './aliases.js';
import { swaggerOptions } from './openapi.js';
import { COMPANY_RATE_LIMITED, type CompanyRateLimits, registerCompanyRateLimits } from './rate-limit.js';
import { clientErrorHandler, onSendConnection, requestIdOf } from './connection.js';
import { registerMetrics, type Metrics } from './metrics.js';
import type { Readiness } from './readiness.js';
import { compilers, validationErrorBody } from './validation.js';
import type { RouteContext } from './route-context.js';
import { ErrorResponse } from './schemas/common.js';
import { SHARED_SCHEMAS } from './schemas/shared.js';
import { UsageGroup } from './schemas/usage.js';
import { usageRoutes } from './routes/usage.js';
import { sessionRoutes } from './routes/sessions.js';
import { accountRoutes } from './routes/accounts.js';
import { refillRoutes } from './routes/refills.js';
import { balanceRoutes } from './routes/balances.js';
import { cardRoutes } from './routes/cards.js';
import { chargeRoutes } from './routes/charges.js';
import { portalRoutes } from './routes/portal.js';
import { portalSessionRoutes } from './routes/portal-sessions.js';
import { topupOfferRoutes } from './routes/topup-offers.js';
import { leaseRoutes } from './routes/leases.js';
import { sandboxRoutes } from './routes/sandbox.js';
import { stripeRoutes } from './routes/stripe.js';
import { eventRoutes } from './routes/events.js';
import { planRoutes } from './routes/plans.js';
import { priceRoutes } from './routes/prices.js';
import { grantRoutes } from './routes/grants.js';
import { alertRoutes } from './routes/alerts.js';
import { featureRoutes } from './routes/features.js';
import { systemRoutes } from './routes/system.js';
import { testClockRoutes } from './routes/test-clock.js';
import { transactionRoutes } from './routes/transactions.js';
import { companyRoutes, emailRoutes, userRoutes } from './routes/identity.js';
import { webhookRoutes } from './routes/webhooks.js';

/** Largest request body: 1,000 events with room for their metadata. */
export const BODY_LIMIT_BYTES = 4 * 1024 * 1024;
/** Failed password checks allowed per email and per client address per minute. */
export const PASSWORD_ATTEMPTS_PER_MINUTE_DEFAULT = 30;
/** Password-reset emails asked for per address per hour. */
export const PASSWORD_RESETS_PER_EMAIL_PER_HOUR = 5;

export interface AppOptions {
  deps: Deps;
  /** How ingest requests and settles are applied (group-committed) and checks answered (ingest/group-commits.ts). */
  events: EventWriters;
  /** How balance reads are answered: grouped reads (src/ingest/group-commits.ts). */
  balances: BalanceReads;
  /** How entitlement checks are answered: grouped reads (src/ingest/group-commits.ts). */
  entitlements: EntitlementChecks;
  apiKeyCacheMs: number;
  /** Present only with BILLING_TEST_CLOCK=1. */
  testClock?: { clock: TestClock; runDue: (nowMs: number) => Promise<void> };
  /** Failed password attempts per email and per client address per minute (default 30). */
  passwordAttemptsPerMinute?: number;
  /** Sign-ups per client address per minute; 0 or left out: none (server: BILLING_SIGNUP_LIMIT_PER_MINUTE). */
  signupLimitPerMinute?: number;
  /**
   * Fastify's `trustProxy` (BILLING_TRUST_PROXY): whose X-Forwarded-For/-Proto to believe; true, a hop
   * count, or addresses and CIDRs comma-separated. Default false: the peer's address is the client's.
   */
  trustProxy?: boolean | number | string;
  /** BILLING_SIGNUP=closed: POST /v1/users and POST /v1/companies answer 403 (default: open). */
  signupOpen?: boolean;
  logLevel?: string;
  version?: string;
  /** BILLING_PUBLIC_URL: the `servers` entry of the OpenAPI document (default `/`). */
  publicUrl?: string;
  /** BILLING_IDEMPOTENCY_LEASE_MS (default IDEMPOTENCY_LEASE_MS). */
  idempotencyLeaseMs?: number;
  /** Per-company request and event limits (default: none). */
  rateLimits?: CompanyRateLimits;
  /** Prometheus metrics (GET /metrics), made by the composition root; `metricsToken` guards them. */
  metrics?: Metrics;
  metricsToken?: string | null;
  /** What GET /readyz answers (default: always ready). */
  readiness?: Readiness;
  /** The HTTP server's timeouts (config.ts: BILLING_HTTP_*); Node's and Fastify's defaults otherwise. */
  timeouts?: { connectionMs: number; headersMs: number; requestMs: number; keepAliveMs: number };
}

export type App = FastifyInstance;

const ROUTES = new WeakMap<object, { method: string; url: string }[]>();
/** Every route the app registered (method and URL pattern). */
export function registeredRoutes(app: App): { method: string; url: string }[] {
  return ROUTES.get(app) ?? [];
}

const NUL_IN_URL = /%00/i;

export async function buildApp(opts: AppOptions): Promise<App> {
  const app = Fastify(fastifyOptions(opts)).withTypeProvider<TypeBoxTypeProvider>();
  const routes: { method: string; url: string }[] = [];
  ROUTES.set(app, routes);
  app.addHook('onRoute', (r) => {
    for (const method of Array.isArray(r.method) ? r.method : [r.method]) routes.push({ method, url: r.url });
  });
  registerParsing(app);
  app.setErrorHandler((err: FastifyError | OutcomeError | BodyRefused, request, reply) => {
    const out = errorOf(err, request);
    // A browser answered with a Basic challenge would prompt for a password: not on session requests; the portal's
    // routes take a Bearer token.
    if (out.status === 401 && !request.viaSession)
      reply.header(
        'www-authenticate',
        request.routeOptions.config.auth === 'portal' ? 'Bearer realm="portal"' : 'Basic realm="billing"',
      );
    return reply.code(out.status).type('application/json; charset=utf-8').send(out.body);
  });
  app.setNotFoundHandler((request, reply) => {
    const out = errorBody('route_not_found', `no route ${request.method} ${request.url.split('?')[0]}`);
    return reply.code(out.status).send(out.body);
  });

  await app.register(swagger, swaggerOptions({ version: opts.version ?? '0.1', publicUrl: opts.publicUrl }));
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  await app.register(rateLimit, { global: false });
  await app.register(cookie);
  app.addHook('onSend', onSendConnection);
  if (opts.metrics) registerMetrics(app, opts.metrics, opts.metricsToken ?? null);
  const ctx = registerRequestHooks(app, opts);
  // Registration order is the order of the paths in the OpenAPI document.
  await app.register(async (scope) => {
    systemRoutes(scope, ctx);
    userRoutes(scope, ctx);
    emailRoutes(scope, ctx);
    sessionRoutes(scope, ctx);
    companyRoutes(scope, ctx);
    accountRoutes(scope, ctx);
    balanceRoutes(scope, ctx);
    transactionRoutes(scope, ctx);
    priceRoutes(scope, ctx);
    grantRoutes(scope, ctx);
    alertRoutes(scope, ctx);
    featureRoutes(scope, ctx);
    eventRoutes(scope, ctx);
    usageRoutes(scope, ctx);
    if (opts.testClock) testClockRoutes(scope, ctx, opts.testClock);
    cardRoutes(scope, ctx);
    refillRoutes(scope, ctx);
    planRoutes(scope, ctx);
    chargeRoutes(scope, ctx);
    portalSessionRoutes(scope, ctx);
    topupOfferRoutes(scope, ctx);
    leaseRoutes(scope, ctx);
    sandboxRoutes(scope, ctx);
    stripeRoutes(scope, ctx);
    portalRoutes(scope, ctx);
    webhookRoutes(scope, ctx);
  });
  registerPortalPage(app, opts.deps);
  await registerConsole(app);
  return app;
}

function fastifyOptions(opts: AppOptions) {
  return {
    logger: { level: opts.logLevel ?? 'warn' },
    bodyLimit: BODY_LIMIT_BYTES,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 256 },
    // The older spellings of some paths answer as their canonical route (aliases.ts).
    rewriteUrl: (req: { method?: string; url?: string }) => rewriteAlias(req.method, req.url),
    // While closing, requests already on an open connection are still answered (with Connection:
    // close) rather than refused with a body outside our envelope; new connections are not accepted.
    return503OnClosing: false,
    requestIdHeader: false as const,
    genReqId: requestIdOf,
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    clientErrorHandler,
    ...(opts.timeouts
      ? {
          connectionTimeout: opts.timeouts.connectionMs,
          keepAliveTimeout: opts.timeouts.keepAliveMs,
          requestTimeout: opts.timeouts.requestMs,
          http: {
            headersTimeout: opts.timeouts.headersMs,
            // How often Node looks for connections past their headers/request timeout (its default: 30 s).
            connectionsCheckingInterval: Math.min(1_000, opts.timeouts.headersMs),
          },
        }
      : {}),
    // A hop count is accepted at run time (proxy-addr), though Fastify's type leaves it out.
    trustProxy: (opts.trustProxy ?? false) as boolean | string,
    ajv: { customOptions: { coerceTypes: false } },
    // Errors raised before routing (bad URL encoding, over-long path parameters) get our body too.
    frameworkErrors: (err: Error, _request: unknown, reply: unknown) => {
      const out = errorBody('malformed_request', err.message);
      void (reply as { code(n: number): { type(t: string): { send(b: unknown): void } } })
        .code(out.status)
        .type('application/json; charset=utf-8')
        .send(out.body);
    },
  };
}

/** Validation (Ajv, no coercion), the shared schemas, and JSON bodies checked before anything recursive sees them. */
function registerParsing(app: App): void {
  const { strict, query } = compilers();
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'querystring' ? query : strict).compile(schema));
  app.addSchema(ErrorResponse);
  for (const s of SHARED_SCHEMAS) app.addSchema(s);
  app.addSchema(UsageGroup);
  // JSON bodies; an empty body with a JSON content type counts as no body (optional bodies).
  const defaultJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    defaultJson(req, text, (err, parsed) => {
      // Depth, NUL characters, keys given twice and numbers beyond a double, before anything recursive sees the value.
      const refused = err ? undefined : bodyViolation(text, parsed, req.routeOptions.config.bodyForms?.arrayParam);
      if (refused) return done(new BodyRefused(refused), undefined);
      done(err, parsed);
    });
  });
  app.removeContentTypeParser('text/plain');
}

/** The error body of anything a request throws (errors.ts maps reason codes to statuses). */
function errorOf(
  err: FastifyError | OutcomeError | BodyRefused,
  request: FastifyRequest,
): ReturnType<typeof errorBody> {
  if (err instanceof BodyRefused) return errorBody(err.refusal.reason, err.refusal.message, err.refusal.param);
  if (err instanceof OutcomeError)
    return errorBody(err.failure.reason, err.failure.message, err.failure.param, err.failure.details);
  if (err.validation) {
    const config = request.routeOptions.config;
    return validationErrorBody(err, config.bodyViolationReasons, config.bodyForms, request.body);
  }
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return errorBody('payload_too_large', `request body is larger than ${BODY_LIMIT_BYTES} bytes`);
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return errorBody('unsupported_media_type', 'send the body as application/json');
  if (err.statusCode === 429)
    return errorBody(
      'rate_limited',
      err.code === COMPANY_RATE_LIMITED ? err.message : 'too many attempts; retry later',
    );
  if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
    // Fastify's own client errors: malformed JSON, bad content length, prototype poisoning…
    const reason =
      err.statusCode === 413
        ? 'payload_too_large'
        : err.statusCode === 415
          ? 'unsupported_media_type'
          : 'malformed_request';
    return errorBody(reason, err.message);
  }
  request.log.error({ err }, 'unhandled error');
  return errorBody('internal', 'internal error');
}

/**
 * The hooks every request passes (URL check, company auth, rate limits, optional bodies, user auth,
 * idempotency), and the context the routes are given.
 */
function registerRequestHooks(app: App, opts: AppOptions): RouteContext {
  const deps = opts.deps;
  const keys = new ApiKeyCache(deps, opts.apiKeyCacheMs);
  // A key's last use being written when the server closes is written before the store closes.
  app.addHook('onClose', async () => keys.lastUsesWritten());
  const attempts = new AttemptLimiter(opts.passwordAttemptsPerMinute ?? PASSWORD_ATTEMPTS_PER_MINUTE_DEFAULT, 60_000);
  app.decorateRequest('principal', null);
  app.decorateRequest('session', null);
  app.decorateRequest('viaSession', false);
  app.addHook('onRequest', async (request) => {
    if (NUL_IN_URL.test(request.url))
      throw new OutcomeError(failure('nul_character_not_allowed', 'the URL may not contain the NUL character (%00)'));
  });
  app.addHook('onRequest', companyAuthHook(keys, deps));
  if (opts.rateLimits) registerCompanyRateLimits(app, opts.rateLimits);
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && request.routeOptions.config.optionalBody) request.body = {};
  });
  app.addHook('preHandler', userAuthHook(deps, attempts));
  registerIdempotency(app, deps, opts.idempotencyLeaseMs ? { leaseMs: opts.idempotencyLeaseMs } : {});
  const signupLimit = opts.signupLimitPerMinute ?? 0;
  return {
    deps,
    keys,
    events: opts.events,
    balances: opts.balances,
    entitlements: opts.entitlements,
    attempts,
    signupRateLimit: signupLimit === 0 ? false : { max: signupLimit, timeWindow: 60_000 },
    perAddressRateLimit: {
      max: opts.passwordAttemptsPerMinute ?? PASSWORD_ATTEMPTS_PER_MINUTE_DEFAULT,
      timeWindow: 60_000,
    },
    passwordResetsPerEmail: new AttemptLimiter(PASSWORD_RESETS_PER_EMAIL_PER_HOUR, 3_600_000),
    signupOpen: opts.signupOpen ?? true,
    ...(opts.readiness ? { readiness: opts.readiness } : {}),
  };
}
