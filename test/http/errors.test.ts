// Guarantee: the vocabulary of reason codes is closed and each code has one answer: codes are
// unique lower_snake_case sentences, each maps to a 4xx or 5xx with one of the contract's error
// types, and the codes the contract names get the statuses it names. (That every code has a
// mapping, and no mapping names an unknown code, the compiler checks: http/errors.ts.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REASONS } from '../../src/domain/reasons.js';
import { errorBody, statusOf } from '../../src/http/errors.js';

// The contract's error types, plus `forbidden` (403): the contract names BILLING_SIGNUP=closed but no status
// for it; the OpenAPI document records 403 forbidden, used for that alone.
const CONTRACT_TYPES = new Set([
  'invalid_request',
  'authentication_required',
  'forbidden',
  'insufficient_balance',
  'spend_limit_reached',
  'not_entitled',
  'payment_failed',
  'not_found',
  'conflict',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'internal',
  'service_unavailable',
]);

test('reason codes are unique lower_snake_case sentences', () => {
  assert.equal(new Set(REASONS).size, REASONS.length);
  for (const r of REASONS) assert.match(r, /^[a-z0-9]+(_[a-z0-9]+)+$/, r);
});

test('every reason code is a 4xx or 5xx with a contract error type', () => {
  for (const r of REASONS) {
    const { status, type } = statusOf(r);
    assert.ok(status >= 400 && status < 600, `${r}: ${status}`);
    assert.ok(CONTRACT_TYPES.has(type), `${r}: ${type}`);
  }
});

test('the statuses the contract names', () => {
  const expected: Array<[Parameters<typeof statusOf>[0], number, string]> = [
    ['invalid_request', 400, 'invalid_request'],
    ['name_is_required', 400, 'invalid_request'],
    ['authentication_required', 401, 'authentication_required'],
    ['insufficient_balance', 402, 'insufficient_balance'],
    ['spend_limit_reached', 402, 'spend_limit_reached'],
    ['card_declined', 402, 'payment_failed'],
    ['not_found', 404, 'not_found'],
    ['event_not_pending', 409, 'conflict'],
    ['idempotency_key_reused_with_different_request', 409, 'conflict'],
    ['payload_too_large', 413, 'payload_too_large'],
    ['unsupported_media_type', 415, 'unsupported_media_type'],
    ['rate_limited', 429, 'rate_limited'],
    ['internal', 500, 'internal'],
    ['processor_unavailable', 503, 'service_unavailable'],
  ];
  for (const [code, status, type] of expected) assert.deepEqual(statusOf(code), { status, type }, code);
  assert.deepEqual(errorBody('event_not_pending', 'm', 'event_id'), {
    status: 409,
    body: { error: { type: 'conflict', code: 'event_not_pending', message: 'm', param: 'event_id' } },
  });
});
