/** Alerts: create one on a balance of an account, list an account's (or the company's triggered), read, delete. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { createAlert, deleteAlert, getAlert, listAlerts, listTriggeredAlerts } from '../../operations/alerts.js';
import { PAGE_LIMIT_DEFAULT } from '../../domain/limits.js';
import { requireCompany } from '../auth.js';
import { runCommand } from '../idempotency.js';
import { presentPage } from '../schemas/common.js';
import {
  createAlertSchema,
  deleteAlertSchema,
  getAlertSchema,
  listAlertsSchema,
  listTriggeredAlertsSchema,
  presentAlert,
} from '../schemas/alerts.js';
import { companyRoute, type RouteContext } from '../route-context.js';

export function alertRoutes(scope: FastifyInstance, { deps }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/v1/accounts/:account_id/alerts',
    { config: companyRoute, schema: createAlertSchema },
    async (request, reply) => {
      const create = createAlert(deps, requireCompany(request), request.params.account_id, request.body);
      reply.code(201);
      return runCommand(request, reply, deps, create, (a) => ({ data: presentAlert(a) }));
    },
  );

  app.get('/v1/accounts/:account_id/alerts', { config: companyRoute, schema: listAlertsSchema }, async (request) => {
    const { limit = PAGE_LIMIT_DEFAULT, starting_after } = request.query;
    const page = await listAlerts(deps, requireCompany(request), request.params.account_id, {
      limit,
      startingAfter: starting_after,
    });
    return presentPage(page, presentAlert, (a) => a.row.alertId);
  });

  app.get('/v1/alerts', { config: companyRoute, schema: listTriggeredAlertsSchema }, async (request) => {
    const { limit = PAGE_LIMIT_DEFAULT, starting_after } = request.query;
    const page = await listTriggeredAlerts(deps, requireCompany(request), { limit, startingAfter: starting_after });
    return presentPage(page, presentAlert, (a) => a.row.alertId);
  });

  app.get('/v1/alerts/:alert_id', { config: companyRoute, schema: getAlertSchema }, async (request) => ({
    data: presentAlert(await getAlert(deps, requireCompany(request), request.params.alert_id)),
  }));

  app.delete('/v1/alerts/:alert_id', { config: companyRoute, schema: deleteAlertSchema }, async (request, reply) => {
    const run = deleteAlert(deps, requireCompany(request), request.params.alert_id);
    return runCommand(request, reply, deps, run, (id) => ({ alerts_deleted: id }));
  });
}
