/**
 * System routes: liveness and readiness for orchestrators, and this server's OpenAPI document.
 * They answer 400 only to a malformed URL (a NUL character), as every route does.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { errorBody } from '../errors.js';
import { READINESS_CACHE_MS, READINESS_TIMEOUT_MS } from '../readiness.js';
import type { RouteContext } from '../route-context.js';

export function systemRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'getHealth',
        tags: ['system'],
        summary: 'Liveness: 200 as soon as the port is open, while starting too',
        description:
          'Liveness only: 200 {"status":"ok"} as soon as the port is open, while the server is still reaching or ' +
          'migrating its database too, and without asking the database. Whether requests can be served is ' +
          '/readyz. No credentials.',
        response: {
          200: Type.Object({ status: Type.Literal('ok') }, { description: 'The server is up' }),
          400: Type.Ref('Error'),
        },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'getReadiness',
        tags: ['system'],
        summary: 'Readiness: 200 while this server can serve requests, 503 otherwise',
        description:
          'The port opens before the database is reached and migrated: until then this answers 503 `not_ready` ' +
          '(message `starting: waiting for the database` or `starting: running migrations`), /healthz 200 and ' +
          'every other request 503 `not_ready` with `Retry-After`. Once started, ' +
          `503 \`not_ready\` while the database does not answer \`SELECT 1\` within ${READINESS_TIMEOUT_MS} ms ` +
          `(checked at most once per ${READINESS_CACHE_MS} ms), and from SIGTERM on (the server is draining). ` +
          'Liveness is /healthz: it does not depend on the database.',
        response: {
          200: Type.Object({ status: Type.Literal('ready') }, { description: 'The server can serve requests' }),
          400: Type.Ref('Error'),
          503: Type.Ref('Error'),
        },
      },
    },
    async (_request, reply) => {
      const state = ctx.readiness ? await ctx.readiness.check() : { ready: true as const };
      if (state.ready) return { status: 'ready' as const };
      const out = errorBody('not_ready', state.reason);
      return reply.code(503).send(out.body);
    },
  );

  app.get(
    '/openapi.json',
    {
      schema: {
        operationId: 'getOpenApiDocument',
        tags: ['system'],
        summary: 'This OpenAPI 3.1 document',
        description:
          'The OpenAPI 3.1 document of this server, generated from its route schemas; the same as a reference at ' +
          '/docs. `servers` names BILLING_PUBLIC_URL when the server sets it, else `/`. Older spellings of a path ' +
          'are not paths of their own: each operation lists its own in `x-aliases`. No credentials.',
        response: {
          200: Type.Object({}, { additionalProperties: true, description: 'The OpenAPI 3.1 document' }),
          400: Type.Ref('Error'),
        },
      },
    },
    async () => app.swagger(),
  );
}
