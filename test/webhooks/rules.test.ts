// Guarantee: the pure webhook rules — which change notifies which type, the payload's fields, derived callback ids, and
// a backoff that grows, jitters within bounds and keeps retrying for at least 24 hours.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  RETRY_BASE_DELAY_MS,
  RETRY_MAX_DELAY_MS,
  RETRY_WINDOW_MS,
  changeNotifies,
  nextAttemptAt,
  notificationPayload,
} from '../../src/webhooks/notifications.js';

const b = (amount: number, pending = 0) => ({ amount, pending });

test('balance_change: any change of amount or pending, holds included', () => {
  const t = { type: 'balance_change' as const, threshold: null };
  assert.equal(changeNotifies(t, b(10), b(5)), true);
  assert.equal(changeNotifies(t, b(10), b(10, 3)), true, 'a hold');
  assert.equal(
    changeNotifies(t, b(10, 3), b(7, 0)),
    true,
    'settling at the held cost: available unchanged, amount changed',
  );
  assert.equal(changeNotifies(t, b(10, 3), b(10, 3)), false);
});

test('negative_balance: a change that lowers available and leaves it below zero', () => {
  const t = { type: 'negative_balance' as const, threshold: null };
  assert.equal(changeNotifies(t, b(5), b(-1)), true);
  assert.equal(changeNotifies(t, b(-1), b(-3)), true, 'further down');
  assert.equal(changeNotifies(t, b(-3), b(-1)), false, 'a credit, still negative');
  assert.equal(changeNotifies(t, b(5), b(5, 6)), true, 'a hold takes available below zero');
  assert.equal(changeNotifies(t, b(5), b(0)), false);
});

test('threshold: available crosses from ≥ threshold to < threshold; no threshold, no crossing', () => {
  const t = { type: 'threshold' as const, threshold: 100 };
  assert.equal(changeNotifies(t, b(100), b(99)), true);
  assert.equal(changeNotifies(t, b(150), b(150, 60)), true, 'by a hold');
  assert.equal(changeNotifies(t, b(99), b(50)), false, 'already below');
  assert.equal(changeNotifies(t, b(150), b(100)), false, 'at the threshold is not below it');
  assert.equal(changeNotifies({ type: 'threshold', threshold: null }, b(150), b(0)), false);
  assert.equal(changeNotifies({ type: 'auto_refill', threshold: null }, b(150), b(0)), false);
});

test('payload: the spec fields first, extras never override them', () => {
  const body = notificationPayload({
    companyId: 'c_1',
    callbackId: 'cl_1',
    accountId: 'a_1',
    type: 'balance_change',
    accountBalance: -5,
    denomination: 'tokens',
    createdAtMs: 0,
    extra: { available: -7, company_id: 'c_evil', type: 'x' },
  });
  assert.deepEqual(JSON.parse(body), {
    company_id: 'c_1',
    callback_id: 'cl_1',
    account_id: 'a_1',
    type: 'balance_change',
    account_balance: -5,
    account_denomination: 'tokens',
    created_at: '1970-01-01T00:00:00.000Z',
    available: -7,
  });
  assert.ok(body.startsWith('{"company_id":"c_1","callback_id":"cl_1"'));
});

test('backoff: exponential with jitter between half and all of the step, capped', () => {
  for (let attempt = 1; attempt <= 20; attempt++) {
    const step = Math.min(RETRY_MAX_DELAY_MS, RETRY_BASE_DELAY_MS * 2 ** (attempt - 1));
    const low = nextAttemptAt(0, attempt, 1000, 0)! - 1000;
    const high = nextAttemptAt(0, attempt, 1000, 1)! - 1000;
    assert.equal(low, Math.ceil(step / 2));
    assert.equal(high, step);
    const mid = nextAttemptAt(0, attempt, 1000, 0.5)! - 1000;
    assert.ok((mid > low && mid < high) || step === 1);
  }
});

test('retries span at least the 24-hour window, then stop', () => {
  for (const random of [0, 0.5, 0.999]) {
    let now = 0;
    let attempt = 1;
    for (;;) {
      const next = nextAttemptAt(0, attempt, now, random);
      if (next === null) break;
      assert.ok(next > now);
      now = next;
      attempt++;
    }
    assert.ok(now >= RETRY_WINDOW_MS, `last attempt at ${now / 3_600_000} h`);
    assert.ok(now < RETRY_WINDOW_MS + RETRY_MAX_DELAY_MS + 1);
    assert.ok(attempt < 40, `${attempt} attempts`);
  }
});
