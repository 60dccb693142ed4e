/**
 * System routes: liveness for load balancers, and this server's OpenAPI document. Both answer 400
 * only to a malformed URL (a NUL character), as every route does.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { RouteContext } from '../route-context.js';

export function systemRoutes(app: FastifyInstance, _ctx: RouteContext): void {
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'getHealth',
        tags: ['system'],
        summary: 'Liveness: 200 as soon as the server accepts requests',
        response: {
          200: Type.Object({ status: Type.Literal('ok') }, { description: 'The server is up' }),
          400: Type.Ref('Error'),
        },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/openapi.json',
    {
      schema: {
        operationId: 'getOpenApiDocument',
        tags: ['system'],
        summary: 'This OpenAPI 3.1 document',
        response: {
          200: Type.Object({}, { additionalProperties: true, description: 'The OpenAPI 3.1 document' }),
          400: Type.Ref('Error'),
        },
      },
    },
    async () => app.swagger(),
  );
}
