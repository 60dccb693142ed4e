/**
 * The OpenAPI 3.1 document at /openapi.json: @fastify/swagger builds it from the route schemas;
 * this module adds what the schemas do not say, derived from the routes themselves, so that a
 * route added later is documented alike without repeating it:
 *
 * - `security` from the route's `config.auth` (what auth.ts enforces); `[]` on public routes;
 * - the `Idempotency-Key` header on every POST, PUT, PATCH and DELETE, and `Idempotent-Replayed`
 *   on their answers;
 * - 429 with `Retry-After` and the `X-RateLimit-*` headers on routes with a `config.rateLimit`; 429 with
 *   `Retry-After` on routes that check a password (failed attempts) or a company key (per-company limits);
 * - one description per error status, the global `tags` list, `servers`, and the alias paths of
 *   each operation (`x-aliases`, aliases.ts).
 *
 * Every operation names its `operationId` in its schema, by the convention in docs/ARCHITECTURE.md
 * ("OpenAPI operation ids"), and a `description` of what a user of it must know; test/http/openapi.test.ts
 * refuses a document without either.
 */
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { AuthMode } from './auth.js';
import { aliasesByOperation } from './aliases.js';
import { IDEMPOTENCY_KEY_LENGTH_MAX } from './idempotency.js';
import { BODY_DEPTH_MAX } from './json-body.js';

/** Every tag an operation may carry, in the order the reference shows them. */
export const TAGS: readonly { name: string; description: string }[] = [
  { name: 'system', description: 'Liveness, readiness, metrics and this document.' },
  { name: 'users', description: 'Sign-up and the people who manage companies (email:password).' },
  { name: 'companies', description: 'Companies and their API keys (company_id:api_key authenticates the rest).' },
  {
    name: 'sessions',
    description: "The web console's log-in: a cookie that acts as a user (and as one of its companies), with CSRF.",
  },
  { name: 'accounts', description: "A company's end users: the owners of balances. Search and page through them." },
  { name: 'balances', description: 'One balance per account and denomination: amount, pending, available.' },
  { name: 'transactions', description: 'The ledger: every change of a balance amount, newest first.' },
  { name: 'prices', description: 'Unit price of each event type, used when an event has no cost_override.' },
  {
    name: 'grants',
    description:
      'Credit grants: the lots every unit of a balance belongs to, each with its remainder, priority, start and ' +
      'expiry, drawn in a stated order.',
  },
  {
    name: 'alerts',
    description:
      "Alerts on a balance's available or spend, decided in the transaction of every change, notified by webhook.",
  },
  {
    name: 'features',
    description:
      'Features (boolean, config, metered), what plans include, per-account overrides, and the exact, immediate ' +
      'answer to "may this account do X?".',
  },
  { name: 'events', description: 'Usage events: recorded in groups, held while pending, settled once.' },
  { name: 'usage', description: 'Usage read back by hour, day or month, per type, denomination or account.' },
  {
    name: 'leases',
    description:
      'Units held on a balance for a short time, so that a client decides in its own process and reports events ' +
      'after: they are charged to the lease first, then to the balance.',
  },
  { name: 'test clock', description: 'The server clock, moved forward by hand (BILLING_TEST_CLOCK=1 only).' },
  { name: 'cards', description: 'The card that refills, plan charges and prorations are charged to.' },
  { name: 'auto-refill', description: 'Refills when a balance falls below a threshold, or every month.' },
  { name: 'plans', description: 'Plans: included amounts per denomination, a monthly charge, overage.' },
  { name: 'charges', description: 'USD charges made to an account card, with their outcome and receipt.' },
  {
    name: 'credit packs',
    description: "A company's offers of units for a USD charge, bought by its customers in the portal.",
  },
  {
    name: 'portal sessions',
    description: "A company lets one account's end customer into the customer portal, until the session ends.",
  },
  {
    name: 'portal',
    description:
      "The customer portal's API: one account's balances, grants, usage, transactions, charges and receipts, " +
      'for its end customer (Authorization: Bearer pt_…, a portal session token, and nothing else).',
  },
  { name: 'webhooks', description: 'Subscriptions to notifications, their delivery log and resend.' },
];

/** The description of every error status a route can document. */
const ERROR_STATUS: Record<string, string> = {
  '400':
    'The request is invalid (`invalid_request`): malformed JSON, a field of the wrong type or unknown, or a rule ' +
    'it breaks; `code` says which and `param` names the field.',
  '401': 'Credentials are missing or wrong (`authentication_required`).',
  '402':
    'A payment or a higher limit is needed: `insufficient_balance` (gate_on_balance), `spend_limit_reached` (a ' +
    "balance's spend limit; `details` say which) or `payment_failed` (the card was declined).",
  '403': 'Not allowed on this server (`forbidden`), e.g. sign-up is closed.',
  '404': 'No such resource, or it belongs to another company (`not_found`).',
  '409': 'Conflicts with the current state (`conflict`); `code` says how.',
  '413': 'The body is larger than the server accepts (`payload_too_large`).',
  '415': 'The body is not application/json (`unsupported_media_type`).',
  '429': 'Too many requests (`rate_limited`); retry after `Retry-After` seconds.',
  '500': 'A bug on the server (`internal`); nothing was applied.',
  '503': 'The payment processor cannot be reached (`service_unavailable`); nothing was applied, retry later.',
};

const MUTATING = new Set(['post', 'put', 'patch', 'delete']);
const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': { $ref: '#/components/headers/RateLimitLimit' },
  'X-RateLimit-Remaining': { $ref: '#/components/headers/RateLimitRemaining' },
  'X-RateLimit-Reset': { $ref: '#/components/headers/RateLimitReset' },
};

function securityOf(auth: AuthMode | undefined): { [scheme: string]: string[] }[] {
  switch (auth) {
    case 'company':
      return [{ companyKey: [] }];
    case 'user':
      return [{ userPassword: [] }];
    case 'either':
      return [{ userPassword: [] }, { companyKey: [] }];
    case 'portal':
      return [{ portalToken: [] }];
    default:
      return [];
  }
}

/** `/v1/accounts/:account_id` as the document writes it: `/v1/accounts/{account_id}`. */
const openapiPath = (url: string) => url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');

// biome-ignore lint/suspicious/noExplicitAny: the generated document is walked as plain JSON.
type Json = Record<string, any>;

export interface OpenapiOptions {
  version: string;
  /** BILLING_PUBLIC_URL: where clients reach this server; default `/` (the document's own origin). */
  publicUrl?: string | undefined;
}

/** The options of @fastify/swagger. */
export function swaggerOptions(opts: OpenapiOptions): FastifyDynamicSwaggerOptions {
  const rateLimited = new Set<string>();
  /** Routes that may answer 429 without the X-RateLimit-* headers: password attempts, per-company limits. */
  const throttled = new Set<string>();
  const aliases = aliasesByOperation();
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Billing engine API',
        version: opts.version,
        description:
          'Prepaid balances and real-time usage billing. Amounts are integers (USD in cents). ' +
          'Errors: {"error":{"type","code","message","param"?,"details"?}}. ' +
          `A JSON body may be nested at most ${BODY_DEPTH_MAX} levels and name each key once per object ` +
          '(else 400 invalid_request: json_nested_too_deeply, json_key_appears_twice). ' +
          'Every POST, PUT, PATCH and DELETE accepts an Idempotency-Key header; while its first request runs, ' +
          'a repeat is 409 idempotency_key_in_use. If that request died (a crash), a repeat after ' +
          'BILLING_IDEMPOTENCY_LEASE_MS (30 s) replays its answer when its change was committed (the answer is ' +
          'recorded in the same transaction as the change), finishes it when it was halfway (a mid-month ' +
          'charge written but not settled is settled, not charged again), and runs it otherwise. ' +
          'Each company has request and event rate limits: 429 rate_limited with Retry-After. ' +
          'Lists page with limit and starting_after and answer {data, has_more, next_cursor}, newest first. ' +
          'Some operations answer at older spellings too, listed in their `x-aliases`; use the documented path.',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: [{ url: opts.publicUrl ?? '/', description: 'This server' }],
      tags: TAGS.map((t) => ({ ...t })),
      components: {
        securitySchemes: {
          companyKey: { type: 'http', scheme: 'basic', description: 'company_id:api_key' },
          userPassword: { type: 'http', scheme: 'basic', description: 'email:password of a user' },
          portalToken: {
            type: 'http',
            scheme: 'bearer',
            description:
              "A portal session's token (pt_…, in the fragment of the session's url): the portal's routes only, " +
              'for its account only, within its scopes',
          },
          sessionCookie: {
            type: 'apiKey',
            in: 'cookie',
            name: 'billing_session',
            description:
              'A console session (POST /v1/sessions), when no Authorization header is sent. It acts as its user; on ' +
              'company routes as the company named by the Billing-Company header. POST, PUT, PATCH and DELETE ' +
              "must send the session's csrf_token in X-CSRF-Token (else 403).",
          },
        },
      },
    },
    stripBasePath: false,
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
    transform: ({ schema, url, route }) => {
      if (!schema || schema.hide) return { schema, url };
      const config = (route.config ?? {}) as { auth?: AuthMode; rateLimit?: unknown };
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (config.rateLimit !== undefined)
        for (const m of methods) rateLimited.add(`${m.toLowerCase()} ${openapiPath(url)}`);
      if (config.auth !== undefined && config.auth !== 'none')
        for (const m of methods) throttled.add(`${m.toLowerCase()} ${openapiPath(url)}`);
      return { schema: { ...schema, security: securityOf(config.auth) }, url };
    },
    transformObject: (documentObject) => {
      const doc = (documentObject as { openapiObject: Json }).openapiObject;
      completeDocument(doc, rateLimited, throttled, aliases);
      return doc;
    },
  };
}

/** Adds to the generated document what is derived from the routes (see the module comment). */
function completeDocument(
  doc: Json,
  rateLimited: Set<string>,
  throttled: Set<string>,
  aliases: Map<string, string[]>,
): void {
  doc.components ??= {};
  doc.components.parameters = {
    ...doc.components.parameters,
    IdempotencyKey: {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'Makes a retry safe: the same key with the same request replays the first answer (with ' +
        '`Idempotent-Replayed: true`) instead of applying it again; with another request it is 409. Scoped to ' +
        'the company (or user), kept at least 24 hours. A request that ended in a 5xx may be retried with it.',
      schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_LENGTH_MAX },
      example: 'adj-2026-11-23-0001',
    },
  };
  doc.components.headers = {
    ...doc.components.headers,
    IdempotentReplayed: {
      description:
        'Present (`true`) when this answer is the replay of an earlier request with the same Idempotency-Key',
      schema: { type: 'string', enum: ['true'] },
    },
    RetryAfter: { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 0 } },
    RateLimitLimit: { description: 'Requests allowed in the current window', schema: { type: 'integer' } },
    RateLimitRemaining: { description: 'Requests left in the current window', schema: { type: 'integer' } },
    RateLimitReset: { description: 'Seconds until the window resets', schema: { type: 'integer' } },
  };
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const key = `${method} ${path}`;
      const limited = rateLimited.has(key);
      if ((limited || throttled.has(key)) && !op.responses['429'])
        op.responses['429'] = { content: op.responses['400']?.content };
      if (op.responses['429'] && !op.responses['429'].content)
        op.responses['429'].content = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        if (ERROR_STATUS[status]) response.description = ERROR_STATUS[status];
        else if (!response.description || response.description === 'Default Response')
          response.description = op.summary ?? 'Success';
        const headers: Json = { ...response.headers };
        // Replayed: what the handler answered; refusals before it (credentials, rate limit, 5xx) never are.
        if (MUTATING.has(method) && Number(status) < 500 && status !== '401' && status !== '429')
          headers['Idempotent-Replayed'] = { $ref: '#/components/headers/IdempotentReplayed' };
        if (limited) Object.assign(headers, RATE_LIMIT_HEADERS);
        if (status === '429') headers['Retry-After'] = { $ref: '#/components/headers/RetryAfter' };
        if (Object.keys(headers).length > 0) response.headers = headers;
      }
      if (MUTATING.has(method))
        op.parameters = [...(op.parameters ?? []), { $ref: '#/components/parameters/IdempotencyKey' }];
      const alias = aliases.get(`${method.toUpperCase()} ${path}`);
      if (alias) op['x-aliases'] = alias;
    }
  }
}
