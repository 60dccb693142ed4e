// Guarantees: a mid-month increase charges exactly usd_charge minus the half-up cent value of the unused units, never
// less than 0, and conserves units (new balance = old − remaining + new amount).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  divideRoundHalfUp,
  parseModifyMidMonthAmounts,
  prorateMidMonth,
  remainingValueUsdCents,
  type MidMonthInput,
  type MidMonthProration,
} from '../../src/domain/proration.js';
import { parseNonNegativeInteger } from '../../src/domain/numeric-input.js';

function ok(input: MidMonthInput): MidMonthProration {
  const r = prorateMidMonth(input);
  assert.ok(r.ok, `expected success, got ${JSON.stringify(r)}`);
  return r;
}

test(
  'contract example: balance 400 of a 1,000-unit / 1,000¢ ' +
    'refill, new 2,000 for 1,800¢ → charged 1400, balance 2,000',
  () => {
    const r = ok({ refillAmount: 1000, refillUsdCents: 1000, balanceAmount: 400, newAmount: 2000, newUsdCents: 1800 });
    assert.equal(r.remaining, 400);
    assert.equal(r.valueUsdCents, 400);
    assert.equal(r.chargedUsdCents, 1400);
    assert.equal(r.newBalanceAmount, 2000);
    assert.equal(r.balanceDelta, 1600);
  },
);

test('contract example: balance 1,200 instead → remaining clamped to 1,000, charged 800, balance 2,200', () => {
  const r = ok({ refillAmount: 1000, refillUsdCents: 1000, balanceAmount: 1200, newAmount: 2000, newUsdCents: 1800 });
  assert.equal(r.remaining, 1000);
  assert.equal(r.valueUsdCents, 1000);
  assert.equal(r.chargedUsdCents, 800);
  assert.equal(r.newBalanceAmount, 2200);
});

test('a negative balance has nothing remaining: the full new charge, the debt kept', () => {
  const r = ok({ refillAmount: 1000, refillUsdCents: 1000, balanceAmount: -50, newAmount: 2000, newUsdCents: 1800 });
  assert.equal(r.remaining, 0);
  assert.equal(r.chargedUsdCents, 1800);
  assert.equal(r.newBalanceAmount, 1950);
});

test('value rounds half up to a cent', () => {
  // 1 unit of a 3-unit / 100¢ refill is 33.33¢ → 33; 2 units are 66.67¢ → 67
  assert.equal(remainingValueUsdCents(1, 3, 100), 33);
  assert.equal(remainingValueUsdCents(2, 3, 100), 67);
  // exactly half: 1 unit of a 2-unit / 1¢ refill is 0.5¢ → 1
  assert.equal(remainingValueUsdCents(1, 2, 1), 1);
  assert.equal(remainingValueUsdCents(1, 4, 1), 0);
  assert.equal(divideRoundHalfUp(5n, 2n), 3n);
  assert.equal(divideRoundHalfUp(7n, 2n), 4n);
});

test('the value can exceed the new charge: charged is 0, not negative', () => {
  const r = ok({ refillAmount: 1000, refillUsdCents: 5000, balanceAmount: 900, newAmount: 1001, newUsdCents: 100 });
  assert.equal(r.valueUsdCents, 4500);
  assert.equal(r.chargedUsdCents, 0);
});

test('refill_amount 0 or unset: value 0, the whole usd_charge is charged', () => {
  assert.equal(
    ok({ refillAmount: 0, refillUsdCents: 700, balanceAmount: 10, newAmount: 5, newUsdCents: 300 }).chargedUsdCents,
    300,
  );
  const r = ok({ refillAmount: null, refillUsdCents: null, balanceAmount: 10, newAmount: 5, newUsdCents: 300 });
  assert.equal(r.valueUsdCents, 0);
  assert.equal(r.newBalanceAmount, 15);
});

test('an amount not above the current refill_amount is refused (decreases go through auto-refill)', () => {
  for (const newAmount of [1000, 999, 0]) {
    assert.deepEqual(
      prorateMidMonth({ refillAmount: 1000, refillUsdCents: 1000, balanceAmount: 400, newAmount, newUsdCents: 1800 }),
      { ok: false, reason: 'amount_must_exceed_current_refill_amount' },
    );
  }
});

test('a resulting balance beyond the safe maximum is refused, not rounded', () => {
  assert.deepEqual(
    prorateMidMonth({
      refillAmount: 0,
      refillUsdCents: 0,
      balanceAmount: Number.MAX_SAFE_INTEGER,
      newAmount: 1,
      newUsdCents: 0,
    }),
    { ok: false, reason: 'resulting_balance_exceeds_maximum' },
  );
});

test('stored values that can never be valid are bugs and throw', () => {
  assert.throws(
    () => prorateMidMonth({ refillAmount: -1, refillUsdCents: 0, balanceAmount: 0, newAmount: 1, newUsdCents: 0 }),
    RangeError,
  );
  assert.throws(
    () => prorateMidMonth({ refillAmount: 1, refillUsdCents: 0.5, balanceAmount: 0, newAmount: 2, newUsdCents: 0 }),
    RangeError,
  );
});

test('parsing: integers and digit strings are accepted', () => {
  assert.deepEqual(parseModifyMidMonthAmounts({ amount: '2000', usd_charge: '1800' }), {
    ok: true,
    amount: 2000,
    usdCents: 1800,
  });
  assert.deepEqual(parseModifyMidMonthAmounts({ amount: 2000, usd_charge: 0 }), {
    ok: true,
    amount: 2000,
    usdCents: 0,
  });
  assert.deepEqual(parseModifyMidMonthAmounts({ amount: '0002000', usd_charge: '0' }), {
    ok: true,
    amount: 2000,
    usdCents: 0,
  });
  assert.deepEqual(parseNonNegativeInteger(String(Number.MAX_SAFE_INTEGER)), {
    ok: true,
    value: Number.MAX_SAFE_INTEGER,
  });
  assert.deepEqual(parseNonNegativeInteger(Number.MAX_SAFE_INTEGER), { ok: true, value: Number.MAX_SAFE_INTEGER });
});

test('parsing: anything but plain digits is refused with a reason naming the field', () => {
  for (const bad of [
    '2e3',
    '1.5',
    ' 12',
    '12 ',
    '-5',
    '+5',
    '',
    '0x10',
    '1_000',
    '١٢',
    1.5,
    -1,
    Number.NaN,
    Infinity,
    true,
    {},
    [],
    '1,000',
  ]) {
    const r = parseModifyMidMonthAmounts({ amount: bad, usd_charge: '1' });
    assert.deepEqual(
      r,
      { ok: false, reason: 'amount_must_be_a_non_negative_integer', param: 'amount' },
      `amount ${String(bad)}`,
    );
    const s = parseModifyMidMonthAmounts({ amount: '1', usd_charge: bad });
    assert.deepEqual(
      s,
      { ok: false, reason: 'usd_charge_must_be_a_non_negative_integer', param: 'usd_charge' },
      `usd_charge ${String(bad)}`,
    );
  }
});

test('parsing: beyond Number.MAX_SAFE_INTEGER is refused as too large', () => {
  for (const big of ['9007199254740992', '99999999999999999999999', 9007199254740992, 1e300]) {
    assert.deepEqual(parseModifyMidMonthAmounts({ amount: big, usd_charge: 1 }), {
      ok: false,
      reason: 'amount_exceeds_maximum',
      param: 'amount',
    });
    assert.deepEqual(parseModifyMidMonthAmounts({ amount: 1, usd_charge: big }), {
      ok: false,
      reason: 'usd_charge_exceeds_maximum',
      param: 'usd_charge',
    });
  }
});

test('parsing: missing fields are named', () => {
  assert.deepEqual(parseModifyMidMonthAmounts({ usd_charge: 1 }), {
    ok: false,
    reason: 'amount_is_required',
    param: 'amount',
  });
  assert.deepEqual(parseModifyMidMonthAmounts({ amount: 1, usd_charge: null }), {
    ok: false,
    reason: 'usd_charge_is_required',
    param: 'usd_charge',
  });
});

test('property: parsing a digit string gives the same number as the integer', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (n) => {
      assert.deepEqual(parseNonNegativeInteger(String(n)), { ok: true, value: n });
      assert.deepEqual(parseNonNegativeInteger(n), { ok: true, value: n });
    }),
  );
});

const SAFE = Number.MAX_SAFE_INTEGER;
const amountArb = fc.integer({ min: 0, max: 2 ** 40 });
const centsArb = fc.integer({ min: 0, max: 2 ** 40 });
const inputArb = fc
  .record({
    refillAmount: amountArb,
    refillUsdCents: centsArb,
    balanceAmount: fc.integer({ min: -(2 ** 41), max: 2 ** 41 }),
    extra: fc.integer({ min: 1, max: 2 ** 40 }),
    newUsdCents: centsArb,
  })
  .map(({ extra, ...r }) => ({ ...r, newAmount: r.refillAmount + extra }));

test('property: charged ≥ 0, whole cents, value ≤ refill_usd_amount, units conserved', () => {
  fc.assert(
    fc.property(inputArb, (input) => {
      const r = ok(input);
      assert.ok(Number.isSafeInteger(r.chargedUsdCents) && r.chargedUsdCents >= 0);
      assert.ok(Number.isSafeInteger(r.valueUsdCents) && r.valueUsdCents >= 0);
      assert.ok(r.valueUsdCents <= input.refillUsdCents);
      assert.ok(r.remaining >= 0 && r.remaining <= input.refillAmount);
      assert.equal(r.chargedUsdCents, Math.max(0, input.newUsdCents - r.valueUsdCents));
      assert.equal(r.newBalanceAmount, input.balanceAmount - r.remaining + input.newAmount);
      assert.equal(r.newBalanceAmount, input.balanceAmount + r.balanceDelta);
      assert.ok(r.newBalanceAmount <= SAFE);
    }),
    { numRuns: 2000 },
  );
});

test('property: value is the exact ratio rounded half up (|value − exact| ≤ ½¢, ties up)', () => {
  fc.assert(
    fc.property(inputArb, (input) => {
      const r = ok(input);
      if (input.refillAmount === 0) return assert.equal(r.valueUsdCents, 0);
      // 2·value·A compared with 2·R·U: value − ½ ≤ R·U/A < value + ½
      const twiceExact = 2n * BigInt(r.remaining) * BigInt(input.refillUsdCents);
      const A = BigInt(input.refillAmount);
      const v = BigInt(r.valueUsdCents);
      assert.ok((2n * v - 1n) * A <= twiceExact && twiceExact < (2n * v + 1n) * A);
    }),
    { numRuns: 2000 },
  );
});

test('property: charged is monotone non-decreasing in usd_charge', () => {
  fc.assert(
    fc.property(inputArb, centsArb, (input, more) => {
      const low = ok(input);
      const high = ok({ ...input, newUsdCents: input.newUsdCents + more });
      assert.ok(high.chargedUsdCents >= low.chargedUsdCents);
    }),
    { numRuns: 2000 },
  );
});

test('property: more units left means a smaller (or equal) charge', () => {
  fc.assert(
    fc.property(inputArb, fc.integer({ min: 0, max: 2 ** 40 }), (input, more) => {
      const a = ok(input);
      const b = ok({ ...input, balanceAmount: input.balanceAmount + more });
      assert.ok(b.chargedUsdCents <= a.chargedUsdCents);
    }),
    { numRuns: 1000 },
  );
});
