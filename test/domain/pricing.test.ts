// Guarantees: usage cost is quantity × unit_amount computed exactly in decimal and rounded up to a whole unit, always
// an integer, monotone in quantity, and refused (never rounded) beyond the exact integer range.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  DECIMAL_SCALE_MAX,
  decimalFromNumber,
  formatDecimal,
  multiplyCeil,
  parseDecimal,
  type Decimal,
} from '../../src/lib/decimal.js';
import { AMOUNT_MAX } from '../../src/domain/money.js';
import { parseUnitAmount, priceCost } from '../../src/domain/pricing.js';

const d = (s: string): Decimal => {
  const x = parseDecimal(s);
  assert.ok(x, `${s} parses`);
  return x;
};

/** An independent exact reference: ceil(a/10^as × b/10^bs) with BigInt only. */
function ceilProduct(aCoef: bigint, aScale: number, bCoef: bigint, bScale: number): bigint {
  const num = aCoef * bCoef;
  const den = 10n ** BigInt(aScale + bScale);
  return (num + den - 1n) / den;
}

/** Spells coef / 10^scale in plain decimal notation (not normalised). */
function spell(coef: bigint, scale: number): string {
  if (scale === 0) return coef.toString();
  const s = coef.toString().padStart(scale + 1, '0');
  return `${s.slice(0, s.length - scale)}.${s.slice(s.length - scale)}`;
}

describe('decimal parsing and formatting', () => {
  test('plain decimals parse exactly and normalise', () => {
    assert.deepEqual(parseDecimal('12'), { coef: 12n, scale: 0 });
    assert.deepEqual(parseDecimal('0.0015'), { coef: 15n, scale: 4 });
    assert.deepEqual(parseDecimal('1.50'), { coef: 15n, scale: 1 });
    assert.deepEqual(parseDecimal('007.000'), { coef: 7n, scale: 0 });
    assert.deepEqual(parseDecimal('0'), { coef: 0n, scale: 0 });
    assert.deepEqual(parseDecimal('0.000'), { coef: 0n, scale: 0 });
    assert.deepEqual(parseDecimal('123456789012345678901234567890.5'), {
      coef: 1234567890123456789012345678905n,
      scale: 1,
    });
  });

  test('malformed or negative text is refused', () => {
    for (const bad of ['', '.5', '5.', '-1', '+1', '1,5', ' 1', '1 ', '1e3', '0x10', 'NaN', 'Infinity', '1.2.3', '١']) {
      assert.equal(parseDecimal(bad), null, JSON.stringify(bad));
    }
  });

  test('exponents only when allowed', () => {
    assert.equal(parseDecimal('1e-7'), null);
    assert.deepEqual(parseDecimal('1e-7', true), { coef: 1n, scale: 7 });
    assert.deepEqual(parseDecimal('2.5E+3', true), { coef: 2500n, scale: 0 });
    assert.deepEqual(parseDecimal('1.25e1', true), { coef: 125n, scale: 1 });
  });

  test('numbers convert through their shortest spelling', () => {
    assert.deepEqual(decimalFromNumber(0.1), { coef: 1n, scale: 1 });
    assert.deepEqual(decimalFromNumber(1e21), { coef: 10n ** 21n, scale: 0 });
    assert.deepEqual(decimalFromNumber(5e-324), { coef: 5n, scale: 324 });
    assert.deepEqual(decimalFromNumber(-0), { coef: 0n, scale: 0 });
    assert.equal(decimalFromNumber(-1), null);
    assert.equal(decimalFromNumber(Number.NaN), null);
    assert.equal(decimalFromNumber(Number.POSITIVE_INFINITY), null);
  });

  test('formatDecimal', () => {
    assert.equal(formatDecimal({ coef: 15n, scale: 4 }), '0.0015');
    assert.equal(formatDecimal({ coef: 12n, scale: 0 }), '12');
    assert.equal(formatDecimal({ coef: 1205n, scale: 2 }), '12.05');
    assert.equal(formatDecimal({ coef: 0n, scale: 0 }), '0');
  });

  test('property: format and parse round-trip a normalised decimal', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.integer({ min: 0, max: 30 }), (coef, scale) => {
        const parsed = parseDecimal(spell(coef, scale));
        assert.ok(parsed);
        assert.equal(parsed.coef * 10n ** BigInt(scale), coef * 10n ** BigInt(parsed.scale), 'same value');
        assert.ok(parsed.scale === 0 || parsed.coef % 10n !== 0n, 'normalised');
        assert.deepEqual(parseDecimal(formatDecimal(parsed)), parsed);
      }),
    );
  });
});

describe('exact multiplication with one rounding rule', () => {
  test('0.1 × 3 is exactly 0.3, so its cost is 1 and 0.1 × 30 is exactly 3', () => {
    assert.equal(0.1 * 3 === 0.3, false, 'binary floating point would get this wrong');
    assert.equal(multiplyCeil(d('0.1'), d('3')), 1n);
    assert.equal(multiplyCeil(d('0.1'), d('30')), 3n, 'not 4: no floating-point residue to round up');
    assert.equal(multiplyCeil(d('0.7'), d('10')), 7n);
    assert.deepEqual(priceCost(3, '0.1'), { ok: true, value: 1 });
    assert.deepEqual(priceCost(30, '0.1'), { ok: true, value: 3 });
    assert.deepEqual(priceCost(0.1, '30'), { ok: true, value: 3 });
    assert.deepEqual(
      priceCost(1.1, '100'),
      { ok: true, value: 110 },
      '1.1 × 100 = 110.00000000000001 in floating point',
    );
  });

  test('ceil rounding: any fraction of a unit rounds up, exact products do not', () => {
    assert.deepEqual(priceCost(1, '0.0015'), { ok: true, value: 1 });
    assert.deepEqual(priceCost(1000, '0.0015'), { ok: true, value: 2 });
    assert.deepEqual(priceCost(2000, '0.0015'), { ok: true, value: 3 });
    assert.deepEqual(priceCost(3, '1.5'), { ok: true, value: 5 });
    assert.deepEqual(priceCost(2, '1.5'), { ok: true, value: 3 });
    assert.deepEqual(priceCost(1, '0.000000000000000001'), { ok: true, value: 1 });
    assert.deepEqual(priceCost(0, '12.5'), { ok: true, value: 0 });
    assert.deepEqual(priceCost(123, '0'), { ok: true, value: 0 });
    assert.deepEqual(priceCost(5e-324, '1'), { ok: true, value: 1 });
  });

  test('priceCost: beyond the exact integer range is a failure value, not a rounded number', () => {
    assert.deepEqual(priceCost(AMOUNT_MAX, '1'), { ok: true, value: AMOUNT_MAX });
    const over = priceCost(AMOUNT_MAX, '1.0000001');
    assert.equal(over.ok, false);
    assert.equal(!over.ok && over.reason, 'amount_out_of_range');
    const huge = priceCost(1e300, '1');
    assert.equal(!huge.ok && huge.reason, 'amount_out_of_range');
    const bad = priceCost(Number.NaN, '1');
    assert.equal(!bad.ok && bad.reason, 'quantity_must_be_a_non_negative_number');
    const neg = priceCost(-1, '1');
    assert.equal(!neg.ok && neg.reason, 'quantity_must_be_a_non_negative_number');
  });

  test('parseUnitAmount: exact normalised spelling, refusals with reasons', () => {
    assert.deepEqual(parseUnitAmount('0.0015'), { ok: true, value: '0.0015' });
    assert.deepEqual(parseUnitAmount('2.50'), { ok: true, value: '2.5' });
    assert.deepEqual(parseUnitAmount(0.1), { ok: true, value: '0.1' });
    assert.deepEqual(parseUnitAmount(3), { ok: true, value: '3' });
    assert.deepEqual(parseUnitAmount(1e-7), { ok: true, value: '0.0000001' });
    assert.deepEqual(parseUnitAmount(`0.${'0'.repeat(DECIMAL_SCALE_MAX - 1)}1`), {
      ok: true,
      value: `0.${'0'.repeat(DECIMAL_SCALE_MAX - 1)}1`,
    });
    const reason = (r: ReturnType<typeof parseUnitAmount>) => (r.ok ? 'ok' : r.reason);
    assert.equal(reason(parseUnitAmount(`0.${'0'.repeat(DECIMAL_SCALE_MAX)}1`)), 'unit_amount_has_too_many_decimals');
    assert.equal(reason(parseUnitAmount(1e-19)), 'unit_amount_has_too_many_decimals');
    for (const bad of ['-1', ' 1', '1e3', '', 'abc'] as const)
      assert.equal(reason(parseUnitAmount(bad)), 'unit_amount_must_be_a_non_negative_decimal', bad);
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY])
      assert.equal(reason(parseUnitAmount(bad)), 'unit_amount_must_be_a_non_negative_decimal', String(bad));
    assert.equal(reason(parseUnitAmount(String(AMOUNT_MAX))), 'ok');
    assert.equal(reason(parseUnitAmount(`${AMOUNT_MAX}.1`)), 'amount_out_of_range');
    assert.equal(reason(parseUnitAmount(1e21)), 'amount_out_of_range');
  });
});

describe('properties', () => {
  // A quantity as a client writes it in JSON: at most 15 significant digits, so the JSON
  // number's shortest spelling is exactly the decimal the client meant.
  const quantityArb = fc.record({
    coef: fc.bigInt({ min: 0n, max: 999_999_999_999_999n }),
    scale: fc.integer({ min: 0, max: 12 }),
  });
  const unitArb = fc.record({
    coef: fc.bigInt({ min: 0n, max: 10n ** 20n }),
    scale: fc.integer({ min: 0, max: DECIMAL_SCALE_MAX }),
  });

  test(
    'cost = ceil(quantity × unit_amount), exactly as BigInt ' + 'rational arithmetic says; an integer or a failure',
    () => {
      fc.assert(
        fc.property(quantityArb, unitArb, (q, u) => {
          const quantity = Number(spell(q.coef, q.scale));
          const expected = ceilProduct(q.coef, q.scale, u.coef, u.scale);
          const got = priceCost(quantity, spell(u.coef, u.scale));
          if (expected > BigInt(AMOUNT_MAX)) {
            assert.equal(got.ok, false);
            assert.equal(!got.ok && got.reason, 'amount_out_of_range');
          } else {
            assert.ok(got.ok);
            assert.ok(Number.isSafeInteger(got.value));
            assert.equal(BigInt(got.value), expected);
          }
        }),
        { numRuns: 2000 },
      );
    },
  );

  test('cost never undercharges and overcharges by less than one unit', () => {
    fc.assert(
      fc.property(quantityArb, unitArb, (q, u) => {
        const got = priceCost(Number(spell(q.coef, q.scale)), spell(u.coef, u.scale));
        if (!got.ok) return;
        const exactNum = q.coef * u.coef;
        const den = 10n ** BigInt(q.scale + u.scale);
        assert.ok(BigInt(got.value) * den >= exactNum, 'never below the exact cost');
        assert.ok((BigInt(got.value) - 1n) * den < exactNum || got.value === 0, 'less than one unit above it');
      }),
      { numRuns: 1000 },
    );
  });

  test('cost is monotone in quantity (any JavaScript number, not only short decimals)', () => {
    const qty = fc.double({ min: 0, max: 1e12, noNaN: true, noDefaultInfinity: true });
    fc.assert(
      fc.property(qty, qty, unitArb, (a, b, u) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        const unit = spell(u.coef, u.scale);
        const cl = priceCost(lo, unit);
        const ch = priceCost(hi, unit);
        if (!ch.ok) return; // the larger one overflowed: nothing to compare
        assert.ok(cl.ok, 'a smaller quantity never overflows when a larger one does not');
        assert.ok(Number.isSafeInteger(cl.value) && Number.isSafeInteger(ch.value));
        assert.ok(cl.value <= ch.value, `${lo} → ${cl.value} > ${hi} → ${ch.value} at ${unit}`);
      }),
      { numRuns: 2000 },
    );
  });

  test('cost of a number quantity equals the cost of its decimal spelling', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e15, noNaN: true, noDefaultInfinity: true }), unitArb, (quantity, u) => {
        const unit = spell(u.coef, u.scale);
        const got = priceCost(quantity, unit);
        const q = decimalFromNumber(quantity);
        assert.ok(q);
        const expected = ceilProduct(q.coef, q.scale, u.coef, u.scale);
        if (got.ok) assert.equal(BigInt(got.value), expected);
        else assert.ok(expected > BigInt(AMOUNT_MAX));
      }),
      { numRuns: 1000 },
    );
  });
});
