/**
 * buildApp(): the HTTP surface. Fastify with strict JSON Schema validation (no coercion of
 * bodies, unknown fields refused), one error registry, Basic auth, idempotency, the OpenAPI
 * 3.1 document at /openapi.json and an interactive reference at /docs.
 */
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { OutcomeError, failure } from '../domain/outcome.js';
import type { Deps } from '../operations/deps.js';
import { ApiKeyCache } from '../operations/identity.js';
import { settleInTx, type IngestBatcher, type SettleWriter } from '../operations/events.js';
import type { TestClock } from '../lib/clock.js';
import { companyAuthHook, userAuthHook } from './auth.js';
import { errorBody } from './errors.js';
import { BODY_DEPTH_MAX, bodyViolation } from './json-body.js';
import { registerIdempotency } from './idempotency.js';
import { compilers, validationErrorBody } from './validation.js';
import type { RouteContext } from './route-context.js';
import { ErrorResponse } from './schemas/common.js';
import { SHARED_SCHEMAS } from './schemas/resources.js';
import { UsageGroup } from './schemas/usage.js';
import { usageRoutes } from './routes/usage.js';
import { accountRoutes } from './routes/accounts.js';
import { autoRefillRoutes } from './routes/auto-refill.js';
import { balanceRoutes } from './routes/balances.js';
import { cardRoutes } from './routes/cards.js';
import { chargeRoutes } from './routes/charges.js';
import { companyRoutes } from './routes/companies.js';
import { eventRoutes } from './routes/events.js';
import { midMonthRoutes } from './routes/mid-month.js';
import { planRoutes } from './routes/plans.js';
import { priceRoutes } from './routes/prices.js';
import { systemRoutes } from './routes/system.js';
import { testClockRoutes } from './routes/test-clock.js';
import { transactionRoutes } from './routes/transactions.js';
import { userRoutes } from './routes/users.js';
import { webhookRoutes } from './routes/webhooks.js';

/** Largest request body: 1,000 events with room for their metadata. */
export const BODY_LIMIT_BYTES = 4 * 1024 * 1024;
/** Password checks (scrypt) allowed per client address per minute. */
export const PASSWORD_ATTEMPTS_PER_MINUTE_DEFAULT = 30;

export interface AppOptions {
  deps: Deps;
  ingest: IngestBatcher;
  /** How a settle is applied (grouped on SQLite's writer thread); default: its own transaction. */
  settle?: SettleWriter;
  apiKeyCacheMs: number;
  /** Present only with BILLING_TEST_CLOCK=1. */
  testClock?: { clock: TestClock; runDue: (nowMs: number) => Promise<void> };
  passwordAttemptsPerMinute?: number;
  /** BILLING_SIGNUP=closed: POST /v1/users and POST /v1/companies answer 403 (default: open). */
  signupOpen?: boolean;
  logLevel?: string;
  version?: string;
}

export type App = FastifyInstance;

const ROUTES = new WeakMap<object, { method: string; url: string }[]>();
/** Every route the app registered (method and URL pattern). */
export function registeredRoutes(app: App): { method: string; url: string }[] {
  return ROUTES.get(app) ?? [];
}

const NUL_IN_URL = /%00/i;

export async function buildApp(opts: AppOptions): Promise<App> {
  const app = Fastify({
    logger: { level: opts.logLevel ?? 'warn' },
    bodyLimit: BODY_LIMIT_BYTES,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 256 },
    return503OnClosing: true,
    ajv: { customOptions: { coerceTypes: false } },
    // Errors raised before routing (bad URL encoding, over-long path parameters) get our body too.
    frameworkErrors: (err, _request, reply) => {
      const out = errorBody('malformed_request', err.message);
      void (reply as unknown as { code(n: number): { type(t: string): { send(b: unknown): void } } })
        .code(out.status)
        .type('application/json; charset=utf-8')
        .send(out.body);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  const routes: { method: string; url: string }[] = [];
  ROUTES.set(app, routes);
  app.addHook('onRoute', (r) => {
    for (const method of Array.isArray(r.method) ? r.method : [r.method]) routes.push({ method, url: r.url });
  });
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
      // Depth, NUL characters and keys given twice, before anything recursive sees the value.
      const refused = err ? undefined : bodyViolation(text, parsed);
      if (refused) return done(new OutcomeError(refused), undefined);
      done(err, parsed);
    });
  });
  app.removeContentTypeParser('text/plain');

  app.setErrorHandler((err: FastifyError | OutcomeError, request, reply) => {
    let out: ReturnType<typeof errorBody>;
    if (err instanceof OutcomeError) {
      out = errorBody(err.failure.reason, err.failure.message, err.failure.param, err.failure.details);
    } else if (err.validation) {
      out = validationErrorBody(err, request.routeOptions.config.bodyViolationReasons);
    } else if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      out = errorBody('payload_too_large', `request body is larger than ${BODY_LIMIT_BYTES} bytes`);
    } else if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      out = errorBody('unsupported_media_type', 'send the body as application/json');
    } else if (err.statusCode === 429) {
      out = errorBody('rate_limited', 'too many attempts; retry later');
    } else if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
      // Fastify's own client errors: malformed JSON, bad content length, prototype poisoning…
      out = errorBody(
        err.statusCode === 413
          ? 'payload_too_large'
          : err.statusCode === 415
            ? 'unsupported_media_type'
            : 'malformed_request',
        err.message,
      );
    } else {
      request.log.error({ err }, 'unhandled error');
      out = errorBody('internal', 'internal error');
    }
    if (out.status === 401) reply.header('www-authenticate', 'Basic realm="billing"');
    return reply.code(out.status).type('application/json; charset=utf-8').send(out.body);
  });
  app.setNotFoundHandler((request, reply) => {
    const out = errorBody('route_not_found', `no route ${request.method} ${request.url.split('?')[0]}`);
    return reply.code(out.status).send(out.body);
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Billing engine API',
        version: opts.version ?? '0.1',
        description:
          'Prepaid balances and real-time usage billing. Amounts are integers (USD in cents). ' +
          'Errors: {"error":{"type","code","message","param"?,"details"?}}. ' +
          `A JSON body may be nested at most ${BODY_DEPTH_MAX} levels and name each key once per object ` +
          '(else 400 invalid_request: json_nested_too_deeply, json_key_appears_twice). ' +
          'Every POST, PUT, PATCH and DELETE accepts an Idempotency-Key header. ' +
          'Lists page with limit and starting_after and answer {data, has_more, next_cursor}, newest first.',
      },
      components: {
        securitySchemes: {
          companyKey: { type: 'http', scheme: 'basic', description: 'company_id:api_key' },
          userPassword: { type: 'http', scheme: 'basic', description: 'email:password of a user' },
        },
      },
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  await app.register(rateLimit, { global: false });

  const deps = opts.deps;
  const keys = new ApiKeyCache(deps, opts.apiKeyCacheMs);
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request) => {
    if (NUL_IN_URL.test(request.url))
      throw new OutcomeError(failure('nul_character_not_allowed', 'the URL may not contain the NUL character (%00)'));
  });
  app.addHook('onRequest', companyAuthHook(keys));
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && request.routeOptions.config.optionalBody) request.body = {};
  });
  app.addHook('preHandler', userAuthHook(deps));
  registerIdempotency(app, deps);

  const ctx: RouteContext = {
    deps,
    keys,
    ingest: opts.ingest,
    settle:
      opts.settle ?? ((req) => deps.store.write((tx) => settleInTx(deps.ledger.begin(tx, deps.clock.now()), req))),
    passwordRateLimit: {
      max: opts.passwordAttemptsPerMinute ?? PASSWORD_ATTEMPTS_PER_MINUTE_DEFAULT,
      timeWindow: 60_000,
    },
    signupOpen: opts.signupOpen ?? true,
  };
  // Registration order is the order of the paths in the OpenAPI document.
  await app.register(async (scope) => {
    systemRoutes(scope, ctx);
    userRoutes(scope, ctx);
    companyRoutes(scope, ctx);
    accountRoutes(scope, ctx);
    balanceRoutes(scope, ctx);
    transactionRoutes(scope, ctx);
    priceRoutes(scope, ctx);
    eventRoutes(scope, ctx);
    usageRoutes(scope, ctx);
    if (opts.testClock) testClockRoutes(scope, ctx, opts.testClock);
    cardRoutes(scope, ctx);
    autoRefillRoutes(scope, ctx);
    midMonthRoutes(scope, ctx);
    planRoutes(scope, ctx);
    chargeRoutes(scope, ctx);
    webhookRoutes(scope, ctx);
  });
  return app;
}
