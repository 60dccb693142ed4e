/** Webhook subscriptions, their delivery log and the manual resend. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { PAGE_LIMIT_DEFAULT } from '../../domain/limits.js';
import {
  createWebhook,
  deleteWebhook,
  listDeliveries,
  listWebhooks,
  retryDelivery,
} from '../../operations/webhooks.js';
import { requireCompany } from '../auth.js';
import { runCommand } from '../idempotency.js';
import {
  createWebhookSchema,
  deleteWebhookSchema,
  listDeliveriesSchema,
  listWebhooksSchema,
  presentCreatedWebhook,
  presentDelivery,
  presentWebhook,
  retryDeliverySchema,
} from '../schemas/webhooks.js';
import { presentPage } from '../schemas/common.js';
import { companyRoute, type RouteContext } from '../route-context.js';

export function webhookRoutes(scope: FastifyInstance, { deps }: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/v1/webhooks', { config: companyRoute, schema: createWebhookSchema }, async (request, reply) => {
    const companyId = requireCompany(request);
    return runCommand(request, reply, deps, createWebhook(deps, companyId, request.body), (w) => ({
      data: presentCreatedWebhook(w),
    }));
  });

  app.get('/v1/webhooks', { config: companyRoute, schema: listWebhooksSchema }, async (request) => {
    const { limit = PAGE_LIMIT_DEFAULT, starting_after } = request.query;
    const page = await listWebhooks(deps, requireCompany(request), { limit, startingAfter: starting_after });
    return presentPage(page, presentWebhook, (w) => w.webhookId);
  });

  app.delete(
    '/v1/webhooks/:webhook_id',
    { config: companyRoute, schema: deleteWebhookSchema },
    async (request, reply) => {
      const companyId = requireCompany(request);
      const webhookId = request.params.webhook_id;
      return runCommand(request, reply, deps, deleteWebhook(deps, companyId, webhookId), () => ({
        webhooks_deleted: webhookId,
      }));
    },
  );

  app.get(
    '/v1/webhooks/:webhook_id/deliveries',
    { config: companyRoute, schema: listDeliveriesSchema },
    async (request) => {
      const { limit = PAGE_LIMIT_DEFAULT, starting_after } = request.query;
      const page = await listDeliveries(deps, requireCompany(request), request.params.webhook_id, {
        limit,
        startingAfter: starting_after,
      });
      return presentPage(page, presentDelivery, (v) => v.delivery.callbackId);
    },
  );

  app.post(
    '/v1/webhooks/deliveries/:callback_id/retry',
    { config: { ...companyRoute, optionalBody: true }, schema: retryDeliverySchema },
    async (request) => ({
      data: presentDelivery(await retryDelivery(deps, requireCompany(request), request.params.callback_id)),
    }),
  );
}
