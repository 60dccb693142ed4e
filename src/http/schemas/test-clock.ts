/** The test clock (BILLING_TEST_CLOCK=1 only): reading it, and moving it forward with all work due. */
import { Type } from '@sinclair/typebox';
import { companyAuth, errorResponses } from './common.js';

/** Furthest one advance may jump: ten years is more than any scenario needs. */
const ADVANCE_SECONDS_MAX = 10 * 366 * 24 * 3600;

const ClockResponse = Type.Object(
  { data: Type.Object({ now: Type.String({ format: 'date-time' }) }) },
  { description: 'What the server clock reads now' },
);

export const getClockSchema = {
  operationId: 'getTestClock',
  tags: ['test clock'],
  summary: 'The server clock (test clock only)',
  description:
    'What the server reads as now: every time it stores and every hold expiry, renewal and refill schedule ' +
    'follows it, and it moves only at POST /v1/test_clock/advance. One clock for the whole server, shared by ' +
    'every company. Exists only when the server runs with BILLING_TEST_CLOCK=1; otherwise 404.',
  security: companyAuth,
  response: { 200: ClockResponse, ...errorResponses() },
};

export const advanceClockSchema = {
  operationId: 'advanceTestClock',
  tags: ['test clock'],
  summary: 'Move the clock forward and run all work due by then',
  description: 'Answers only after every renewal, refill and hold expiry due by the new time is done. Backwards: 400.',
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
};
