/** Leases: open one on an account's balance, close it, read one and an account's list (contract "Leases"). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { PAGE_LIMIT_DEFAULT } from '../../domain/limits.js';
import { closeLease, getLease, listLeases, openLease } from '../../operations/leases.js';
import { requireCompany } from '../auth.js';
import { runCommand } from '../idempotency.js';
import { companyRoute, type RouteContext } from '../route-context.js';
import { presentPage } from '../schemas/common.js';
import {
  closeLeaseSchema,
  getLeaseSchema,
  listAccountLeasesSchema,
  openLeaseSchema,
  presentLease,
} from '../schemas/leases.js';

export function leaseRoutes(scope: FastifyInstance, { deps }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/v1/accounts/:account_id/leases',
    { config: companyRoute, schema: openLeaseSchema },
    async (request, reply) => {
      const open = openLease(deps, requireCompany(request), request.params.account_id, request.body);
      reply.code(201);
      return runCommand(request, reply, deps, open, (l) => ({ data: presentLease(l) }));
    },
  );

  app.get(
    '/v1/accounts/:account_id/leases',
    { config: companyRoute, schema: listAccountLeasesSchema },
    async (request) => {
      const { limit = PAGE_LIMIT_DEFAULT, starting_after, status } = request.query;
      const page = await listLeases(deps, requireCompany(request), request.params.account_id, status, {
        limit,
        startingAfter: starting_after,
      });
      return presentPage(page, presentLease, (l) => l.leaseId);
    },
  );

  app.get('/v1/leases/:lease_id', { config: companyRoute, schema: getLeaseSchema }, async (request) => ({
    data: presentLease(await getLease(deps, requireCompany(request), request.params.lease_id)),
  }));

  app.post(
    '/v1/leases/:lease_id/close',
    { config: { ...companyRoute, optionalBody: true }, schema: closeLeaseSchema },
    async (request, reply) => {
      const close = closeLease(deps, requireCompany(request), request.params.lease_id);
      return runCommand(request, reply, deps, close, (l) => ({ data: presentLease(l) }));
    },
  );
}
