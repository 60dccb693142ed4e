/** Portal sessions: a company opens the customer portal for an account, or ends a session. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { createPortalSession, revokePortalSession } from '../../operations/portal-sessions.js';
import { requireCompany } from '../auth.js';
import { runCommand } from '../idempotency.js';
import { companyRoute, type RouteContext } from '../route-context.js';
import {
  createPortalSessionSchema,
  presentPortalSession,
  revokePortalSessionSchema,
} from '../schemas/portal-sessions.js';

export function portalSessionRoutes(scope: FastifyInstance, { deps }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/v1/accounts/:account_id/portal_sessions',
    { config: companyRoute, schema: createPortalSessionSchema },
    async (request, reply) => {
      const create = createPortalSession(deps, requireCompany(request), request.params.account_id, request.body);
      reply.code(201);
      return runCommand(request, reply, deps, create, ({ session, url }) => ({
        data: { ...presentPortalSession(session), url },
      }));
    },
  );

  app.delete(
    '/v1/portal_sessions/:session_id',
    { config: companyRoute, schema: revokePortalSessionSchema },
    async (request, reply) => {
      const revoke = revokePortalSession(deps, requireCompany(request), request.params.session_id);
      return runCommand(request, reply, deps, revoke, (s) => ({ data: presentPortalSession(s) }));
    },
  );
}
