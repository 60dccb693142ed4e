/** Usage events: the hot ingest route (two spellings), its pre-flight check, reads, and settling of pending holds. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type NormalizedEvent, normalizeEvent } from '../../domain/events.js';
import { newId } from '../../lib/ids.js';
import { OutcomeError } from '../../domain/outcome.js';
import { getEvent, listEvents } from '../../operations/events.js';
import { requireCompany } from '../auth.js';
import { answeredWithTheChange } from '../idempotency.js';
import {
  type EventList,
  getEventSchema,
  ingestSchema,
  ingestWithAccountSchema,
  checkSchema,
  listAccountEventsSchema,
  listEventsSchema,
  presentEvent,
  presentIngest,
  settleEventSchema,
} from '../schemas/events.js';
import { companyRoute, type RouteContext } from '../route-context.js';
import type { BodyForms } from '../validation.js';
import { PAGE_LIMIT_DEFAULT } from '../../domain/limits.js';
import type { EventState } from '../../domain/holds.js';
import { presentPage } from '../schemas/common.js';

/** The events and gate_on_balance of an events body in either form (an array, or `{events, gate_on_balance}`). */
function eventsOf(
  body: Static<typeof ingestSchema.body>,
  query: { gate_on_balance?: boolean | undefined },
): { events: Static<typeof EventList>; gate: boolean } {
  if (Array.isArray(body)) return { events: body, gate: query.gate_on_balance === true };
  return {
    events: withLease(body.events, body.lease_id),
    gate: query.gate_on_balance === true || body.gate_on_balance === true,
  };
}

/** The `{events, lease_id}` form: the lease of every event that names none. */
function withLease(events: Static<typeof EventList>, leaseId: string | undefined): Static<typeof EventList> {
  return leaseId === undefined
    ? events
    : events.map((e) => (e.lease_id === undefined ? { ...e, lease_id: leaseId } : e));
}

/** Every event normalised (the first problem names its index), each with its id: the client's, else a new one. */
function normalizeAll(deps: RouteContext['deps'], events: Static<typeof EventList>) {
  const normalized: NormalizedEvent[] = new Array(events.length);
  const eventIds: string[] = new Array(events.length);
  const time = { nowMs: deps.clock.now(), maxAgeMs: deps.usage.eventMaxAgeMs };
  for (let i = 0; i < events.length; i++) {
    const n = normalizeEvent(events[i]!, i, time);
    if (!n.ok) throw new OutcomeError(n);
    normalized[i] = n.value;
    eventIds[i] = n.value.clientId ?? newId('ev');
  }
  return { events: normalized, eventIds };
}

const bodyForms: BodyForms = {
  arrayParam: 'events',
  forms: 'an array of events, [{"type": …}, …], or {"events": [{"type": …}, …]}',
  isSingleItem: (body) =>
    typeof body === 'object' && body !== null && !Array.isArray(body) && 'type' in body && !('events' in body),
};

export function eventRoutes(scope: FastifyInstance, ctx: RouteContext): void {
  ingestRoutes(scope, ctx);
  eventRecordRoutes(scope, ctx);
}

/** The events call (two spellings) and its pre-flight check. */
function ingestRoutes(scope: FastifyInstance, ctx: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const { deps } = ctx;

  /**
   * Normalises every event, then submits them as one group-committed request. With an
   * Idempotency-Key, the answer is built here and recorded by the group, in the events' transaction.
   */
  async function ingest(
    request: FastifyRequest,
    reply: FastifyReply,
    accountId: string,
    body: Static<typeof EventList>,
    gate: boolean,
  ) {
    const companyId = requireCompany(request);
    const { events, eventIds } = normalizeAll(deps, body);
    const answer = presentIngest(events.length, eventIds);
    const claim = request.idempotency && !request.idempotency.replayed ? request.idempotency : undefined;
    const idempotency = claim && {
      scope: claim.scope,
      key: claim.key,
      owner: claim.owner,
      answer: reply.serialize(answer) as string,
    };
    const outcome = await ctx.events.ingest({ companyId, accountId, events, eventIds, gate, idempotency });
    if (!outcome.ok) throw new OutcomeError(outcome);
    if (claim) answeredWithTheChange(claim);
    return answer;
  }

  app.post(
    '/v1/accounts/:account_id/events',
    { config: { ...companyRoute, bodyForms }, schema: ingestSchema },
    async (request, reply) => {
      const { events, gate } = eventsOf(request.body, request.query);
      return ingest(request, reply, request.params.account_id, events, gate);
    },
  );

  app.post(
    '/v1/accounts/:account_id/check',
    { config: { ...companyRoute, bodyForms, idempotency: false }, schema: checkSchema },
    async (request) => {
      const { events, gate } = eventsOf(request.body, request.query);
      const outcome = await ctx.events.check({
        companyId: requireCompany(request),
        accountId: request.params.account_id,
        ...normalizeAll(deps, events),
        gate,
      });
      if (!outcome.ok) throw new OutcomeError(outcome);
      const checked = outcome.value;
      return {
        data: {
          allowed: checked.allowed,
          reason: checked.reason,
          events: checked.events,
          balances: checked.balances.map((b) => ({
            denomination: b.denomination,
            available: b.available,
            available_after: b.availableAfter,
          })),
        },
      };
    },
  );

  app.post('/v1/events', { config: companyRoute, schema: ingestWithAccountSchema }, async (request, reply) => {
    const gate = request.query.gate_on_balance === true || request.body.gate_on_balance === true;
    return ingest(request, reply, request.body.account_id, withLease(request.body.events, request.body.lease_id), gate);
  });
}

/** An event read and settled; the company's events and an account's. */
function eventRecordRoutes(scope: FastifyInstance, ctx: RouteContext): void {
  const { deps } = ctx;
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/v1/events/:event_id', { config: companyRoute, schema: getEventSchema }, async (request) => ({
    data: presentEvent(await getEvent(deps, requireCompany(request), request.params.event_id)),
  }));

  app.put('/v1/events/:event_id', { config: companyRoute, schema: settleEventSchema }, async (request) => {
    const { event_id: eventId } = request.params;
    const outcome = await ctx.events.settle({ companyId: requireCompany(request), eventId, input: request.body });
    if (!outcome.ok) throw new OutcomeError(outcome);
    return { data: presentEvent(outcome.value) };
  });

  app.get('/v1/events', { config: companyRoute, schema: listEventsSchema }, async (request) => {
    const { limit = PAGE_LIMIT_DEFAULT, starting_after, state, ...filters } = request.query;
    const page = await listEvents(
      deps,
      requireCompany(request),
      { ...filters, ...(state !== undefined ? { state: state as EventState } : {}) },
      { limit, startingAfter: starting_after },
    );
    return presentPage(page, presentEvent, (e) => e.eventId);
  });

  app.get(
    '/v1/accounts/:account_id/events',
    { config: companyRoute, schema: listAccountEventsSchema },
    async (request) => {
      const { limit = PAGE_LIMIT_DEFAULT, starting_after, state, ...filters } = request.query;
      const page = await listEvents(
        deps,
        requireCompany(request),
        {
          ...filters,
          account_id: request.params.account_id,
          ...(state !== undefined ? { state: state as EventState } : {}),
        },
        { limit, startingAfter: starting_after },
      );
      return presentPage(page, presentEvent, (e) => e.eventId);
    },
  );
}
