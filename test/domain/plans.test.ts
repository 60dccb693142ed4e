// Guarantees: a plan body its schema accepted becomes a plan unless it breaks a rule the schema
// cannot state (reported with a reason code and the field); a renewal charges overage for exactly
// the units below zero and leaves the included amount (or adds it, with rollover); and the
// threshold alert fires once per period, compared exactly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  isBelowPercentage,
  parsePercentage,
  parsePlan,
  renewPlanBalance,
  thresholdAlertCrossed,
  type PlanRenewal,
  type PlanRenewalInput,
} from '../../src/domain/plans.js';

const validBody = () => ({
  name: 'Pro',
  charge_amount: 2000,
  charge_denomination: 'USD',
  billing_period: 'month',
  overage_charge_mode: 'postpay',
  threshold_alert_percentage: '20',
  rollover: true,
  balances: [
    { amount: '100000', denomination: 'tokens', overage_charge_amount: 1, overage_charge_denomination: 'usd' },
    { amount: 50, denomination: 'gpu.seconds', overage_charge_amount: 3, overage_charge_denomination: 'USD' },
  ],
});

test('a full plan body parses, USD normalised to usd', () => {
  const r = parsePlan(validBody());
  assert.ok(r.ok);
  assert.deepEqual(r.plan, {
    name: 'Pro',
    chargeAmountUsdCents: 2000,
    chargeDenomination: 'usd',
    billingPeriod: 'month',
    overageChargeMode: 'postpay',
    thresholdAlertPercentage: { text: '20', numerator: 20n, scaleDigits: 0 },
    rollover: true,
    balances: [
      { amount: 100000, denomination: 'tokens', overageUnitUsdCents: 1, overageChargeDenomination: 'usd' },
      { amount: 50, denomination: 'gpu.seconds', overageUnitUsdCents: 3, overageChargeDenomination: 'usd' },
    ],
  });
});

test('defaults: rollover false, usd, month, postpay, no alert', () => {
  const r = parsePlan({
    name: 'Basic',
    charge_amount: 0,
    balances: [{ amount: 0, denomination: 't', overage_charge_amount: 0 }],
  });
  assert.ok(r.ok);
  assert.equal(r.plan.rollover, false);
  assert.equal(r.plan.chargeDenomination, 'usd');
  assert.equal(r.plan.billingPeriod, 'month');
  assert.equal(r.plan.overageChargeMode, 'postpay');
  assert.equal(r.plan.thresholdAlertPercentage, null);
  assert.equal(r.plan.balances[0]?.overageChargeDenomination, 'usd');
});

test('billing_period "monthly" is accepted as "month"; percentages are canonicalised', () => {
  const r = parsePlan({ ...validBody(), billing_period: 'monthly', threshold_alert_percentage: '012.50' });
  assert.ok(r.ok);
  assert.equal(r.plan.billingPeriod, 'month');
  assert.deepEqual(r.plan.thresholdAlertPercentage, { text: '12.5', numerator: 125n, scaleDigits: 1 });
  const n = parsePlan({ ...validBody(), threshold_alert_percentage: 12.5 });
  assert.ok(n.ok);
  assert.equal(n.plan.thresholdAlertPercentage?.text, '12.5');
  const z = parsePlan({ ...validBody(), threshold_alert_percentage: null });
  assert.ok(z.ok);
  assert.equal(z.plan.thresholdAlertPercentage, null);
});

// The rules a JSON Schema cannot state. Every other refusal (a missing field, a wrong type, an
// unknown vocabulary word, a length or range) is the plan body schema's, tested through HTTP in
// test/http/plans.test.ts.
const rejects: Array<[string, (b: Record<string, unknown>) => unknown, string, string]> = [
  ...(['101', '-1', '1e1', '12.', '.5', 'abc', ' 5', '1.0000001', 200, 100.5, 1.0000001, -0.5].map((p) => [
    `percentage ${String(p)}`,
    (b: Record<string, unknown>) => ({ ...b, threshold_alert_percentage: p }),
    'threshold_alert_percentage_must_be_a_number_from_0_to_100',
    'threshold_alert_percentage',
  ]) as Array<[string, (b: Record<string, unknown>) => unknown, string, string]>),
  [
    'entry amount huge',
    (b) => ({ ...b, balances: [{ amount: '9007199254740993', denomination: 't', overage_charge_amount: 0 }] }),
    'plan_balance_amount_exceeds_maximum',
    'balances[0].amount',
  ],
  [
    'duplicate denomination',
    (b) => ({
      ...b,
      balances: [
        { amount: 1, denomination: 't', overage_charge_amount: 0 },
        { amount: 2, denomination: 't', overage_charge_amount: 0 },
      ],
    }),
    'denomination_appears_twice_in_plan',
    'balances[1].denomination',
  ],
  [
    'duplicate denomination after a valid third',
    (b) => ({
      ...b,
      balances: [
        { amount: 1, denomination: 't', overage_charge_amount: 0 },
        { amount: 1, denomination: 'u', overage_charge_amount: 0 },
        { amount: 2, denomination: 'u', overage_charge_amount: 0 },
      ],
    }),
    'denomination_appears_twice_in_plan',
    'balances[2].denomination',
  ],
];

for (const [what, mutate, reason, param] of rejects) {
  test(`plan refused: ${what} → ${reason}`, () => {
    assert.deepEqual(parsePlan(mutate(validBody())), { ok: false, reason, param });
  });
}

test('entry amounts: digit strings with leading zeros and the largest safe integer are accepted', () => {
  const r = parsePlan({
    ...validBody(),
    balances: [
      { amount: '0001', denomination: 'a', overage_charge_amount: 0 },
      { amount: '9007199254740991', denomination: 'b', overage_charge_amount: 0 },
    ],
  });
  assert.ok(r.ok);
  assert.deepEqual(
    r.plan.balances.map((b) => b.amount),
    [1, Number.MAX_SAFE_INTEGER],
  );
});

/** Plan bodies the schema accepts: every field present where required and of its type. */
const schemaShapedBody = fc.record(
  {
    name: fc.string({ minLength: 1, maxLength: 200 }),
    charge_amount: fc.nat(),
    charge_denomination: fc.constantFrom('usd', 'USD', 'uSd', null),
    billing_period: fc.constantFrom('month', 'monthly', null),
    overage_charge_mode: fc.constantFrom('postpay', null),
    threshold_alert_percentage: fc.oneof(fc.string(), fc.double(), fc.constant(null)),
    rollover: fc.option(fc.boolean()),
    balances: fc.array(
      fc.record(
        {
          amount: fc.oneof(fc.stringMatching(/^[0-9]{1,20}$/), fc.maxSafeNat()),
          denomination: fc.constantFrom('tokens', 'gpu.seconds', 'a', 'b'),
          overage_charge_amount: fc.maxSafeNat(),
          overage_charge_denomination: fc.constantFrom('usd', 'USD', null),
        },
        { requiredKeys: ['amount', 'denomination', 'overage_charge_amount'] },
      ),
      { minLength: 1, maxLength: 5 },
    ),
  },
  { requiredKeys: ['name', 'charge_amount', 'balances'] },
);

test('property: on any body its schema accepts, parsePlan never throws and accepts or names a rule', () => {
  fc.assert(
    fc.property(schemaShapedBody, (body) => {
      const r = parsePlan(body);
      if (!r.ok) assert.match(r.param, /^(threshold_alert_percentage|balances\[\d+\]\.(amount|denomination))$/);
    }),
    { numRuns: 1000 },
  );
});

function renewed(input: PlanRenewalInput): PlanRenewal {
  const r = renewPlanBalance(input);
  assert.ok(r.ok, JSON.stringify(r));
  return r;
}

test('renewal with overage: units below zero charged, balance reset to the included amount', () => {
  assert.deepEqual(renewed({ balanceAmount: -250, includedAmount: 1000, overageUnitUsdCents: 3, rollover: false }), {
    ok: true,
    overageUnits: 250,
    overageUsdCents: 750,
    resetDelta: 1250,
    balanceAfter: 1000,
    kind: 'period_reset',
  });
});

test('renewal without overage: unused units are dropped by the reset', () => {
  assert.deepEqual(renewed({ balanceAmount: 300, includedAmount: 1000, overageUnitUsdCents: 3, rollover: false }), {
    ok: true,
    overageUnits: 0,
    overageUsdCents: 0,
    resetDelta: 700,
    balanceAfter: 1000,
    kind: 'period_reset',
  });
  // a balance above the included amount (e.g. after a manual credit) is brought down
  assert.equal(
    renewed({ balanceAmount: 1500, includedAmount: 1000, overageUnitUsdCents: 3, rollover: false }).resetDelta,
    -500,
  );
});

test('renewal with rollover: the included amount is added to what is left', () => {
  assert.deepEqual(renewed({ balanceAmount: 300, includedAmount: 1000, overageUnitUsdCents: 3, rollover: true }), {
    ok: true,
    overageUnits: 0,
    overageUsdCents: 0,
    resetDelta: 1000,
    balanceAfter: 1300,
    kind: 'grant',
  });
});

test('renewal with rollover and overage: the charged overage is not carried into the next period too', () => {
  assert.deepEqual(renewed({ balanceAmount: -50, includedAmount: 1000, overageUnitUsdCents: 2, rollover: true }), {
    ok: true,
    overageUnits: 50,
    overageUsdCents: 100,
    resetDelta: 1050,
    balanceAfter: 1000,
    kind: 'grant',
  });
});

test('renewal amounts beyond the safe range are refused, not rounded', () => {
  const MAX = Number.MAX_SAFE_INTEGER;
  assert.deepEqual(
    renewPlanBalance({ balanceAmount: -MAX, includedAmount: 0, overageUnitUsdCents: 2, rollover: false }),
    {
      ok: false,
      reason: 'overage_charge_exceeds_maximum',
    },
  );
  assert.deepEqual(
    renewPlanBalance({ balanceAmount: MAX, includedAmount: 1, overageUnitUsdCents: 0, rollover: true }),
    {
      ok: false,
      reason: 'resulting_balance_exceeds_maximum',
    },
  );
  assert.deepEqual(
    renewPlanBalance({ balanceAmount: -MAX, includedAmount: MAX, overageUnitUsdCents: 0, rollover: false }),
    {
      ok: false,
      reason: 'reset_delta_exceeds_maximum',
    },
  );
});

test('property: renewal conserves units and charges exactly the overage', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
      fc.integer({ min: 0, max: 2 ** 40 }),
      fc.integer({ min: 0, max: 2 ** 12 }),
      fc.boolean(),
      (balanceAmount, includedAmount, overageUnitUsdCents, rollover) => {
        const r = renewed({ balanceAmount, includedAmount, overageUnitUsdCents, rollover });
        assert.equal(r.overageUnits, Math.max(0, -balanceAmount));
        assert.equal(r.overageUsdCents, r.overageUnits * overageUnitUsdCents);
        assert.equal(r.balanceAfter, balanceAmount + r.resetDelta);
        // after renewal: the included amount, plus (with rollover) what was left unused
        assert.equal(r.balanceAfter, includedAmount + (rollover ? Math.max(0, balanceAmount) : 0));
        // every unit is accounted for: units before + units paid as overage + delta from the plan
        assert.equal(
          r.balanceAfter,
          balanceAmount + r.overageUnits + (rollover ? includedAmount : includedAmount - Math.max(0, balanceAmount)),
        );
        assert.equal(r.kind, rollover ? 'grant' : 'period_reset');
        assert.ok(r.balanceAfter >= 0);
      },
    ),
    { numRuns: 2000 },
  );
});

test('threshold alert: fires on the first drop below the percentage, once per period', () => {
  const base = { includedAmount: 1000, percentage: '20', alreadyAlertedThisPeriod: false };
  assert.equal(thresholdAlertCrossed({ ...base, before: 300, after: 200 }), false, 'exactly 20% is not below');
  assert.equal(thresholdAlertCrossed({ ...base, before: 300, after: 199 }), true);
  assert.equal(thresholdAlertCrossed({ ...base, before: 199, after: 150, alreadyAlertedThisPeriod: true }), false);
  assert.equal(thresholdAlertCrossed({ ...base, before: 150, after: 160 }), false, 'an increase is not a drop');
  assert.equal(thresholdAlertCrossed({ ...base, percentage: null, before: 300, after: 0 }), false);
  assert.equal(thresholdAlertCrossed({ ...base, before: 300, after: -5 }), true);
});

test('threshold alert: decimal percentages are compared exactly', () => {
  const base = { includedAmount: 1000, alreadyAlertedThisPeriod: false, before: 1000 };
  assert.equal(thresholdAlertCrossed({ ...base, percentage: '12.5', after: 125 }), false);
  assert.equal(thresholdAlertCrossed({ ...base, percentage: '12.5', after: 124 }), true);
  // 33.333333% of 3 is 0.99999999: 1 is not below it, 0 is
  assert.equal(
    thresholdAlertCrossed({ ...base, includedAmount: 3, before: 3, percentage: '33.333333', after: 1 }),
    false,
  );
  assert.equal(
    thresholdAlertCrossed({ ...base, includedAmount: 3, before: 3, percentage: '33.333333', after: 0 }),
    true,
  );
  // 0.1% of 10^15 is 10^12, exactly
  const big = 10 ** 15;
  assert.equal(isBelowPercentage(10 ** 12, big, parsePercentage('0.1')!), false);
  assert.equal(isBelowPercentage(10 ** 12 - 1, big, parsePercentage('0.1')!), true);
  // 0%: only a negative balance is below
  assert.equal(thresholdAlertCrossed({ ...base, percentage: '0', after: 0 }), false);
  assert.equal(thresholdAlertCrossed({ ...base, percentage: '0', after: -1 }), true);
});

test('property: integer percentages agree with plain arithmetic', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: -1e6, max: 1e6 }),
      fc.integer({ min: 0, max: 1e6 }),
      fc.integer({ min: 0, max: 100 }),
      (after, included, pct) => {
        assert.equal(isBelowPercentage(after, included, parsePercentage(String(pct))!), after * 100 < included * pct);
      },
    ),
  );
});

const ALERT_ONCE =
  'property: along any sequence of balances in one period, the alert fires at most once, ' +
  'at the first drop below the mark';

test(ALERT_ONCE, () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 10_000 }),
      fc.integer({ min: 0, max: 100_000 }).map((n) => (n / 1000).toFixed(3)),
      fc.array(fc.integer({ min: -20_000, max: 20_000 }), { maxLength: 40 }),
      (included, percentage, balances) => {
        const p = parsePercentage(percentage)!;
        let alerted = false;
        let fired = 0;
        let before = included;
        for (const after of balances) {
          const crossed = thresholdAlertCrossed({
            before,
            after,
            includedAmount: included,
            percentage,
            alreadyAlertedThisPeriod: alerted,
          });
          if (crossed) {
            assert.ok(!alerted && after < before && isBelowPercentage(after, included, p));
            fired += 1;
            alerted = true;
          } else if (!alerted && after < before) {
            assert.ok(!isBelowPercentage(after, included, p));
          }
          before = after;
        }
        assert.ok(fired <= 1);
      },
    ),
  );
});
