/**
 * Baseline: the events route with no database. It parses and schema-validates a body shaped
 * like ours (an array of up to 1,000 events; unknown fields and wrong types refused, never
 * coerced or dropped) and answers `{events_submitted: n}`. The gap between this and the real
 * route is what storage, pricing and the ledger cost.
 * Run by the bench as its own process: `PORT=… HOST=… node --import tsx bench/baselines/validate.ts`.
 */
import Fastify from 'fastify';
import { listenFromEnv } from './listen.js';

const MAX_EVENTS_PER_REQUEST = 1_000;
const DENOMINATION_PATTERN = '^[A-Za-z0-9_.:-]{1,64}$';

const costOverride = {
  type: 'object',
  additionalProperties: false,
  required: ['amount', 'denomination'],
  properties: {
    amount: { type: 'integer', minimum: 0 },
    denomination: { type: 'string', pattern: DENOMINATION_PATTERN },
  },
} as const;

const event = {
  type: 'object',
  additionalProperties: false,
  required: ['type'],
  properties: {
    type: { type: 'string', minLength: 1, maxLength: 128 },
    id: { type: 'string', minLength: 1, maxLength: 128 },
    quantity: { type: 'number', minimum: 0 },
    cost_override: costOverride,
    cost_override_amount: { type: 'integer', minimum: 0 },
    cost_override_denomination: { type: 'string', pattern: DENOMINATION_PATTERN },
    metadata: { type: 'object' },
    state: { type: 'string', enum: ['pending', 'complete', 'completed', 'cancelled'] },
    gate_on_balance: { type: 'boolean' },
  },
} as const;

const app = Fastify({
  logger: false,
  ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false } },
});

app.get('/healthz', async () => ({ ok: true }));

app.post<{ Params: { account_id: string }; Body: unknown[] }>(
  '/v1/accounts/:account_id/events',
  {
    schema: {
      params: {
        type: 'object',
        required: ['account_id'],
        properties: { account_id: { type: 'string', minLength: 1, maxLength: 64 } },
      },
      body: { type: 'array', minItems: 1, maxItems: MAX_EVENTS_PER_REQUEST, items: event },
      response: {
        200: {
          type: 'object',
          required: ['events_submitted'],
          properties: { events_submitted: { type: 'integer' } },
        },
      },
    },
  },
  async (request) => ({ events_submitted: request.body.length }),
);

await listenFromEnv(app);
