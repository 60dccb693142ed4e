/** The test clock (BILLING_TEST_CLOCK=1 only; without it these paths do not exist: 404). */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { fail } from '../../domain/outcome.js';
import { toIso, type TestClock } from '../../lib/clock.js';
import type { RouteContext } from '../route-context.js';
import { requireCompany } from '../auth.js';
import { companyAuth, errorResponses } from '../schemas/common.js';

const ClockResponse = Type.Object({ data: Type.Object({ now: Type.String({ format: 'date-time' }) }) });
/** Furthest one advance may jump: ten years is more than any scenario needs. */
const ADVANCE_SECONDS_MAX = 10 * 366 * 24 * 3600;

export function testClockRoutes(
  scope: FastifyInstance,
  _ctx: RouteContext,
  t: { clock: TestClock; runDue: (nowMs: number) => Promise<void> },
): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  let advancing: Promise<void> = Promise.resolve();

  app.get(
    '/v1/test_clock',
    {
      config: { auth: 'company' },
      schema: {
        tags: ['test clock'],
        summary: 'The server clock (test clock only)',
        security: companyAuth,
        response: { 200: ClockResponse, ...errorResponses() },
      },
    },
    async (request) => {
      requireCompany(request);
      return { data: { now: toIso(t.clock.now()) } };
    },
  );

  app.post(
    '/v1/test_clock/advance',
    {
      config: { auth: 'company' },
      schema: {
        tags: ['test clock'],
        summary: 'Move the clock forward and run all work due by then',
        description:
          'Answers only after every renewal, refill and hold expiry due by the new time is done. Backwards: 400.',
        security: companyAuth,
        body: Type.Union([
          Type.Object(
            { seconds: Type.Integer({ minimum: 0, maximum: ADVANCE_SECONDS_MAX }) },
            { additionalProperties: false },
          ),
          Type.Object(
            { to: Type.String({ minLength: 1, maxLength: 64, description: 'ISO-8601 instant' }) },
            { additionalProperties: false },
          ),
        ]),
        response: { 200: ClockResponse, ...errorResponses() },
      },
    },
    async (request) => {
      requireCompany(request);
      const body = request.body;
      // One advance at a time: each sees the clock where the previous one left it.
      const run = advancing.then(async () => {
        let to: number;
        if ('seconds' in body) to = t.clock.now() + body.seconds * 1000;
        else {
          if (!/^\d{4}-\d{2}-\d{2}T/.test(body.to)) fail('invalid_timestamp', 'to must be an ISO-8601 date-time', 'to');
          to = Date.parse(body.to);
          if (!Number.isFinite(to)) fail('invalid_timestamp', 'to must be an ISO-8601 date-time', 'to');
        }
        if (!t.clock.advanceTo(to))
          fail('clock_cannot_go_backwards', 'the test clock only moves forward', 'seconds' in body ? 'seconds' : 'to');
        await t.runDue(to);
      });
      advancing = run.catch(() => undefined);
      await run;
      return { data: { now: toIso(t.clock.now()) } };
    },
  );
}
