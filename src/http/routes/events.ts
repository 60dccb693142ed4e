/** Usage events: the hot ingest route, reads and settling of pending holds. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import { EVENTS_PER_REQUEST_MAX, normalizeEvent, type EventInput, type NormalizedEvent } from '../../domain/events.js';
import { OutcomeError } from '../../domain/outcome.js';
import { getEvent } from '../../operations/events.js';
import type { RouteContext } from '../route-context.js';
import { requireCompany } from '../auth.js';
import { presentEvent } from '../present.js';
import {
  ClientEventId,
  Denomination,
  Metadata,
  SafeInteger,
  Text,
  companyAuth,
  errorResponses,
} from '../schemas/common.js';

const CostOverride = Type.Object(
  {
    amount: SafeInteger({ minimum: 0, description: 'Whole units ≥ 0' }),
    denomination: Denomination,
  },
  { additionalProperties: false, description: 'The cost to charge, stated by the caller' },
);

const EventBody = Type.Object(
  {
    type: Text('Kind of event, chosen by the company'),
    id: Type.Optional(ClientEventId),
    quantity: Type.Optional(
      Type.Number({ minimum: 0, description: "Default 1; cost = quantity × the type's unit_amount, rounded up" }),
    ),
    cost_override: Type.Optional(CostOverride),
    cost_override_amount: Type.Optional(
      SafeInteger({ minimum: 0, description: 'Flat spelling of cost_override.amount' }),
    ),
    cost_override_denomination: Type.Optional(Denomination),
    metadata: Type.Optional(Metadata),
    state: Type.Optional(
      Type.Union(
        ['pending', 'complete', 'completed', 'cancelled'].map((s) => Type.Literal(s)),
        { description: 'Default complete; completed = complete' },
      ),
    ),
    gate_on_balance: Type.Optional(
      Type.Boolean({ description: 'Refuse the whole request (402) if a balance it draws from has available < 0' }),
    ),
  },
  { additionalProperties: false },
);

const EventList = Type.Array(EventBody, { minItems: 1, maxItems: EVENTS_PER_REQUEST_MAX });
const Gate = Type.Optional(
  Type.Boolean({
    description: 'Refuse the whole request (402 insufficient_balance) if a balance it draws from has available < 0',
  }),
);
const IngestResponse = Type.Object({
  events_submitted: Type.Integer(),
  event_ids: Type.Array(Type.String(), { description: 'In request order: the client id where given, else ev_…' }),
});
const ingestDescription =
  `All or nothing, at most ${EVENTS_PER_REQUEST_MAX} events. Committed durably before the answer. ` +
  'A repeated client id with identical content is accepted again without a second deduction; with different content it is 409. ' +
  'Missing price or balance: 400 naming the event index.';

export function eventRoutes(scope: FastifyInstance, ctx: RouteContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const { deps } = ctx;
  const config = { auth: 'company' as const };

  async function ingest(companyId: string, accountId: string, events: Static<typeof EventList>, gate: boolean) {
    const normalized: NormalizedEvent[] = new Array(events.length);
    for (let i = 0; i < events.length; i++) {
      const n = normalizeEvent(events[i] as EventInput, i);
      if (!n.ok) throw new OutcomeError(n);
      normalized[i] = n.value;
    }
    const outcome = await ctx.ingest.submit({ companyId, accountId, events: normalized, gate });
    if (!outcome.ok) throw new OutcomeError(outcome);
    return { events_submitted: events.length, event_ids: outcome.value.eventIds };
  }

  app.post(
    '/v1/accounts/:account_id/events',
    {
      config,
      schema: {
        tags: ['events'],
        summary: 'Record usage events (an array, or {events})',
        description: ingestDescription,
        security: companyAuth,
        params: Type.Object({ account_id: Type.String({ maxLength: 64 }) }),
        querystring: Type.Object({ gate_on_balance: Gate }, { additionalProperties: false }),
        body: Type.Union([
          EventList,
          Type.Object({ events: EventList, gate_on_balance: Gate }, { additionalProperties: false }),
        ]),
        response: { 200: IngestResponse, ...errorResponses(402, 404, 409, 413, 415) },
      },
    },
    async (request) => {
      const companyId = requireCompany(request);
      const body = request.body;
      const events = Array.isArray(body) ? body : body.events;
      const gate = request.query.gate_on_balance === true || (!Array.isArray(body) && body.gate_on_balance === true);
      return ingest(companyId, request.params.account_id, events, gate);
    },
  );

  app.post(
    '/v1/events',
    {
      config,
      schema: {
        tags: ['events'],
        summary: 'Record usage events, account in the body',
        description: ingestDescription,
        security: companyAuth,
        querystring: Type.Object({ gate_on_balance: Gate }, { additionalProperties: false }),
        body: Type.Object(
          { account_id: Type.String({ minLength: 1, maxLength: 64 }), events: EventList, gate_on_balance: Gate },
          { additionalProperties: false },
        ),
        response: { 200: IngestResponse, ...errorResponses(402, 404, 409, 413, 415) },
      },
    },
    async (request) => {
      const companyId = requireCompany(request);
      const gate = request.query.gate_on_balance === true || request.body.gate_on_balance === true;
      return ingest(companyId, request.body.account_id, request.body.events, gate);
    },
  );

  const EventParams = Type.Object({ event_id: Type.String({ minLength: 1, maxLength: 128 }) });

  app.get(
    '/v1/events/:event_id',
    {
      config,
      schema: {
        tags: ['events'],
        summary: 'Get an event',
        security: companyAuth,
        params: EventParams,
        response: { 200: Type.Object({ data: Type.Ref('Event') }), ...errorResponses(404) },
      },
    },
    async (request) => ({ data: presentEvent(await getEvent(deps, requireCompany(request), request.params.event_id)) }),
  );

  app.put(
    '/v1/events/:event_id',
    {
      config,
      schema: {
        tags: ['events'],
        summary: 'Settle a pending event',
        description:
          'complete (optionally at a final cost that replaces the held one) or cancelled. Settling an event that is not pending is 409, except repeating its current state, which is a no-op.',
        security: companyAuth,
        params: EventParams,
        body: Type.Object(
          {
            state: Type.Union(['complete', 'completed', 'cancelled'].map((s) => Type.Literal(s))),
            cost_override: Type.Optional(CostOverride),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ data: Type.Ref('Event') }), ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const body = request.body as {
        state: 'complete' | 'completed' | 'cancelled';
        cost_override?: { amount: number; denomination: string };
      };
      const outcome = await ctx.settle({
        companyId: requireCompany(request),
        eventId: request.params.event_id,
        input: body,
      });
      if (!outcome.ok) throw new OutcomeError(outcome);
      return { data: presentEvent(outcome.value) };
    },
  );
}
