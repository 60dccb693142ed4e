/** System routes: liveness for load balancers, and this server's OpenAPI document. */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { RouteContext } from '../route-context.js';

export function systemRoutes(app: FastifyInstance, _ctx: RouteContext): void {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['system'],
        summary: 'Liveness: 200 as soon as the server accepts requests',
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/openapi.json',
    {
      schema: {
        tags: ['system'],
        summary: 'This OpenAPI 3.1 document',
        response: { 200: Type.Object({}, { additionalProperties: true }) },
      },
    },
    async () => app.swagger(),
  );
}
