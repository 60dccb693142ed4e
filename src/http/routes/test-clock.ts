/** The test clock (BILLING_TEST_CLOCK=1 only; without it these paths do not exist: 404). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { fail } from '../../domain/outcome.js';
import { type TestClock, toIso } from '../../lib/clock.js';
import { requireCompany } from '../auth.js';
import { type RouteContext, companyRoute } from '../route-context.js';
import { advanceClockSchema, getClockSchema } from '../schemas/test-clock.js';

/** The instant a `{seconds}` or `{to}` advance asks for. */
function targetOf(clock: TestClock, body: { seconds: number } | { to: string }): number {
  if ('seconds' in body) return clock.now() + body.seconds * 1000;
  if (!/^\d{4}-\d{2}-\d{2}T/.test(body.to)) fail('invalid_timestamp', 'to must be an ISO-8601 date-time', 'to');
  const to = Date.parse(body.to);
  if (!Number.isFinite(to)) fail('invalid_timestamp', 'to must be an ISO-8601 date-time', 'to');
  return to;
}

export function testClockRoutes(
  scope: FastifyInstance,
  _ctx: RouteContext,
  t: { clock: TestClock; runDue: (nowMs: number) => Promise<void> },
): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  let advancing: Promise<void> = Promise.resolve();

  app.get('/v1/test_clock', { config: companyRoute, schema: getClockSchema }, async (request) => {
    requireCompany(request);
    return { data: { now: toIso(t.clock.now()) } };
  });

  app.post('/v1/test_clock/advance', { config: companyRoute, schema: advanceClockSchema }, async (request) => {
    requireCompany(request);
    const body = request.body;
    // One advance at a time: each sees the clock where the previous one left it.
    const run = advancing.then(async () => {
      const to = targetOf(t.clock, body);
      if (!t.clock.advanceTo(to))
        fail('clock_cannot_go_backwards', 'the test clock only moves forward', 'seconds' in body ? 'seconds' : 'to');
      await t.runDue(to);
    });
    advancing = run.catch(() => undefined);
    await run;
    return { data: { now: toIso(t.clock.now()) } };
  });
}
