// Guarantees: usage cost is quantity × unit_amount computed exactly in decimal and rounded up to a whole unit, always
// an integer, monotone in quantity, and refused (never rounded) beyond the exact integer range.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  addDecimal,
  ceilDecimal,
  compareDecimal,
  DECIMAL_SCALE_MAX,
  DECIMAL_ZERO,
  decimalFromNumber,
  formatDecimal,
  multiplyCeil,
  parseDecimal,
  type Decimal,
} from '../../src/lib/decimal.js';
import { AMOUNT_MAX } from '../../src/domain/money.js';
import {
  cumulativePrice,
  eventCost,
  parsePriceTerms,
  parseAmount,
  periodEventCost,
  TIERS_MAX,
  type PeriodCeiling,
  type PriceInput,
  type PriceTerms,
} from '../../src/domain/pricing.js';

/** A unit price's cost and amount, through the path ingest uses (eventCost, parseAmount). */
const priceCost = (quantity: number, unitAmount: string) =>
  eventCost({ model: 'unit', unitAmount }, DECIMAL_ZERO, quantity);
const parseUnitAmount = (raw: string | number) => parseAmount(raw, 'unit_amount');

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

// Guarantees (price models): the terms of a graduated or package price are checked field by field, each refusal
// naming the field; C(q) is exact and monotone; event costs telescope, so that any split of a period's usage into
// events costs ceil(C(total)); for integer quantities C agrees with a brute-force sum per unit.
describe('price models', () => {
  const graduated = (tiers: [number | null, string, string?][]): PriceTerms => {
    const parsed = parsePriceTerms({
      model: 'graduated',
      tiers: tiers.map(([up_to, unit_amount, flat_amount]) => ({ up_to, unit_amount, flat_amount })),
    });
    assert.ok(parsed.ok, JSON.stringify(parsed));
    return parsed.value;
  };
  const costs = (terms: PriceTerms, quantities: number[]): number[] => {
    let before = DECIMAL_ZERO;
    return quantities.map((q) => {
      const c = eventCost(terms, before, q);
      assert.ok(c.ok);
      before = addDecimal(before, decimalFromNumber(q)!);
      return c.value;
    });
  };

  test('worked examples: tier edges, a crossing of two tiers, a flat amount charged once', () => {
    // 0.5 per unit up to 100, 0.25 up to 1000 (+ 10 on entering), 0.1 beyond (+ 3 on entering).
    const t = graduated([
      [100, '0.5'],
      [1000, '0.25', '10'],
      [null, '0.1', '3'],
    ]);
    assert.equal(formatDecimal(cumulativePrice(t, d('100'))), '50', 'ending exactly on up_to stays in the tier');
    assert.equal(formatDecimal(cumulativePrice(t, d('100.5'))), '60.125', 'entering the next tier: its flat amount');
    assert.equal(formatDecimal(cumulativePrice(t, d('1001'))), '288.1', '50 + 225 + 10 + 0.1 + 3');
    // 50 | 60.25 → 61 | 285 | 288.1 → 289: the fraction paid early by the second is not paid again.
    assert.deepEqual(costs(t, [100, 1, 899, 1]), [50, 11, 224, 4], 'flat amounts once, when the tier is entered');
    assert.deepEqual(costs(t, [50, 1000]), [25, 268], 'one event crossing two tiers: 25 + 225 + 10 + 5 + 3');
    assert.deepEqual(costs(t, [0, 0]), [0, 0], 'no units enter no tier');
    assert.deepEqual(costs(t, [0.1, 0.1, 0.1]), [1, 0, 0], 'fractions: ceil(C(Q + q)) − ceil(C(Q))');
  });

  test('package: every started block costs package_amount', () => {
    const parsed = parsePriceTerms({ model: 'package', package_size: 1000, package_amount: '5' });
    assert.ok(parsed.ok);
    const p = parsed.value;
    assert.deepEqual(costs(p, [1, 999, 1, 1000, 0.5]), [5, 0, 5, 5, 0], 'blocks 1, 1, 2, 3, 3');
    assert.equal(formatDecimal(cumulativePrice(p, d('0'))), '0');
    assert.equal(formatDecimal(cumulativePrice(p, d('1000'))), '5');
    assert.equal(formatDecimal(cumulativePrice(p, d('1000.001'))), '10');
    const cents = parsePriceTerms({ model: 'package', package_size: 3, package_amount: '0.4' });
    assert.ok(cents.ok);
    assert.deepEqual(costs(cents.value, [1, 3, 3, 3]), [1, 0, 1, 0], 'ceil of 0.4, 0.8, 1.2, 1.6');
  });

  test('bad terms: 400 reasons naming the field; volume refused with why', () => {
    const bad: [PriceInput, string, string][] = [
      [{ model: 'volume', tiers: [] }, 'price_model_not_offered', 'model'],
      [{ model: 'tiered' }, 'unknown_price_model', 'model'],
      [{ model: 'graduated' }, 'price_field_required', 'tiers'],
      [{ model: 'graduated', tiers: [] }, 'tiers_invalid', 'tiers'],
      [{ model: 'graduated', tiers: [{ up_to: 10, unit_amount: '1' }] }, 'tiers_invalid', 'tiers[0].up_to'],
      [
        {
          model: 'graduated',
          tiers: [
            { up_to: 10, unit_amount: '1' },
            { up_to: 5, unit_amount: '1' },
            { up_to: null, unit_amount: '1' },
          ],
        },
        'tiers_invalid',
        'tiers[1].up_to',
      ],
      [
        {
          model: 'graduated',
          tiers: [
            { up_to: null, unit_amount: '1' },
            { up_to: null, unit_amount: '1' },
          ],
        },
        'tiers_invalid',
        'tiers[0].up_to',
      ],
      [
        {
          model: 'graduated',
          tiers: [
            { up_to: 1.5, unit_amount: '1' },
            { up_to: null, unit_amount: '1' },
          ],
        },
        'tiers_invalid',
        'tiers[0].up_to',
      ],
      [
        {
          model: 'graduated',
          tiers: [
            { up_to: 0, unit_amount: '1' },
            { up_to: null, unit_amount: '1' },
          ],
        },
        'tiers_invalid',
        'tiers[0].up_to',
      ],
      [
        { model: 'graduated', tiers: [{ up_to: null, unit_amount: '-1' }] },
        'unit_amount_must_be_a_non_negative_decimal',
        'tiers[0].unit_amount',
      ],
      [
        { model: 'graduated', tiers: [{ up_to: null, unit_amount: '1', flat_amount: 'ten' }] },
        'amount_must_be_a_non_negative_decimal',
        'tiers[0].flat_amount',
      ],
      [
        { model: 'graduated', tiers: [{ up_to: null, unit_amount: '1' }], unit_amount: '1' },
        'price_field_not_of_model',
        'unit_amount',
      ],
      [{ model: 'package', package_amount: '5' }, 'price_field_required', 'package_size'],
      [{ model: 'package', package_size: 10 }, 'price_field_required', 'package_amount'],
      [
        { model: 'package', package_size: 0, package_amount: '5' },
        'package_size_must_be_a_positive_integer',
        'package_size',
      ],
      [
        { model: 'package', package_size: 2.5, package_amount: '5' },
        'package_size_must_be_a_positive_integer',
        'package_size',
      ],
      [
        { model: 'package', package_size: 10, package_amount: '1e3' },
        'amount_must_be_a_non_negative_decimal',
        'package_amount',
      ],
      [{}, 'price_field_required', 'unit_amount'],
      [{ unit_amount: '1', package_size: 3 }, 'price_field_not_of_model', 'package_size'],
    ];
    for (const [input, reason, param] of bad) {
      const r = parsePriceTerms(input);
      assert.ok(!r.ok, JSON.stringify(input));
      assert.equal(r.reason, reason, JSON.stringify(input));
      assert.equal(r.param, param, JSON.stringify(input));
    }
    const tooMany = parsePriceTerms({
      model: 'graduated',
      tiers: Array.from({ length: TIERS_MAX + 1 }, (_, i) => ({
        up_to: i === TIERS_MAX ? null : i + 1,
        unit_amount: '1',
      })),
    });
    assert.ok(!tooMany.ok && tooMany.reason === 'tiers_invalid');
  });

  /** Random graduated terms: 1–5 tiers, amounts with up to 4 decimals, optional flat amounts. */
  const arbGraduated = fc
    .array(
      fc.record({
        width: fc.integer({ min: 1, max: 50 }),
        unit: fc.integer({ min: 0, max: 50_000 }),
        flat: fc.option(fc.integer({ min: 0, max: 5_000 }), { nil: undefined }),
      }),
      { minLength: 1, maxLength: 5 },
    )
    .map((tiers) => {
      let bound = 0;
      return graduated(
        tiers.map((t, i) => {
          bound += t.width;
          return [
            i === tiers.length - 1 ? null : bound,
            spell(BigInt(t.unit), 4),
            t.flat === undefined ? undefined : spell(BigInt(t.flat), 2),
          ];
        }),
      );
    });
  const arbPackage = fc
    .record({ size: fc.integer({ min: 1, max: 40 }), amount: fc.integer({ min: 0, max: 100_000 }) })
    .map(({ size, amount }) => {
      const p = parsePriceTerms({ model: 'package', package_size: size, package_amount: spell(BigInt(amount), 3) });
      assert.ok(p.ok);
      return p.value;
    });
  const arbTerms = fc.oneof(arbGraduated, arbPackage);
  /** Quantities with up to 3 decimals, as JSON numbers carry them. */
  const arbQuantity = fc.integer({ min: 0, max: 300_000 }).map((n) => n / 1000);

  test('property: any split of a period costs ceil(C(total)) (telescoping)', () => {
    fc.assert(
      fc.property(arbTerms, fc.array(arbQuantity, { minLength: 1, maxLength: 30 }), (terms, parts) => {
        let total = DECIMAL_ZERO;
        for (const q of parts) total = addDecimal(total, decimalFromNumber(q)!);
        const each = costs(terms, parts);
        assert.equal(BigInt(each.reduce((a, b) => a + b, 0)), ceilDecimal(cumulativePrice(terms, total)));
        // Ingest carries ceil(C(Q)) from one event of the period to the next: the same costs.
        let known: PeriodCeiling | undefined;
        let before = DECIMAL_ZERO;
        const carried = parts.map((q) => {
          const c = periodEventCost(terms, before, decimalFromNumber(q)!, known);
          assert.ok(c.ok);
          known = c.value.after;
          before = c.value.after.quantity;
          return c.value.cost;
        });
        assert.deepEqual(carried, each);
      }),
      { numRuns: 400 },
    );
  });

  test('property: C is monotone and every event costs ≥ 0', () => {
    fc.assert(
      fc.property(arbTerms, arbQuantity, arbQuantity, (terms, a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        assert.ok(
          compareDecimal(
            cumulativePrice(terms, decimalFromNumber(lo)!),
            cumulativePrice(terms, decimalFromNumber(hi)!),
          ) <= 0,
        );
        const c = eventCost(terms, decimalFromNumber(lo)!, Math.max(hi - lo, 0));
        assert.ok(c.ok && c.value >= 0);
      }),
      { numRuns: 400 },
    );
  });

  test('property: for integer quantities, C(n) = Σ each unit’s price + each entered tier’s flat', () => {
    fc.assert(
      fc.property(arbTerms, fc.integer({ min: 0, max: 400 }), (terms, n) => {
        let brute = DECIMAL_ZERO;
        for (let u = 1; u <= n; u++) {
          if (terms.model === 'package') {
            if ((u - 1) % terms.packageSize === 0) brute = addDecimal(brute, d(terms.packageAmount));
            continue;
          }
          if (terms.model !== 'graduated') continue;
          let lower = 0;
          for (const tier of terms.tiers) {
            if (tier.upTo === null || u <= tier.upTo) {
              brute = addDecimal(brute, d(tier.unitAmount));
              if (u === lower + 1 && tier.flatAmount !== null) brute = addDecimal(brute, d(tier.flatAmount));
              break;
            }
            lower = tier.upTo;
          }
        }
        assert.equal(formatDecimal(cumulativePrice(terms, decimalFromNumber(n)!)), formatDecimal(brute));
      }),
      { numRuns: 300 },
    );
  });
});
