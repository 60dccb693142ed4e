// Guarantee: the plan body's schema refuses every malformed plan with 400 and the contract's error
// body, naming the field (`param`) and the reason code the rule has always had; no body at all,
// however malformed, gets a 5xx, and a refused plan creates nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { HTTP_DIALECTS, assertError, signUpCompany, startHarness, type Harness } from '../support/harness.js';

const validBody = (): Record<string, unknown> => ({
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
const without = (b: Record<string, unknown>, key: string) =>
  Object.fromEntries(Object.entries(b).filter(([k]) => k !== key));
/** A body whose one balance entry is `entry` on top of a valid one. */
const withEntry = (b: Record<string, unknown>, entry: Record<string, unknown>) => ({
  ...b,
  balances: [{ amount: 1, denomination: 't', overage_charge_amount: 0, ...entry }],
});
const withoutInEntry = (b: Record<string, unknown>, key: string) => ({
  ...b,
  balances: [without({ amount: 1, denomination: 't', overage_charge_amount: 0 }, key)],
});

type Mutate = (b: Record<string, unknown>) => unknown;
/** [what, body, code, param]: a wrong JSON type stays `invalid_request`; the rules keep their codes. */
const refused: Array<[string, Mutate, string, string | undefined]> = [
  ['not an object', () => [], 'invalid_request', undefined],
  ['unknown field', (b) => ({ ...b, colour: 'red' }), 'invalid_request', 'colour'],
  ['no name', (b) => without(b, 'name'), 'name_is_required', 'name'],
  ['empty name', (b) => ({ ...b, name: '' }), 'name_must_be_a_non_empty_string', 'name'],
  ['blank name', (b) => ({ ...b, name: ' \t ' }), 'name_must_be_a_non_empty_string', 'name'],
  ['name not a string', (b) => ({ ...b, name: 5 }), 'invalid_request', 'name'],
  ['long name', (b) => ({ ...b, name: 'x'.repeat(201) }), 'name_is_too_long', 'name'],
  ['no charge_amount', (b) => without(b, 'charge_amount'), 'charge_amount_is_required', 'charge_amount'],
  [
    'negative charge',
    (b) => ({ ...b, charge_amount: -1 }),
    'charge_amount_must_be_a_non_negative_integer',
    'charge_amount',
  ],
  ['fractional charge', (b) => ({ ...b, charge_amount: 1.5 }), 'invalid_request', 'charge_amount'],
  ['string charge', (b) => ({ ...b, charge_amount: '2000' }), 'invalid_request', 'charge_amount'],
  ['huge charge', (b) => ({ ...b, charge_amount: 2 ** 60 }), 'charge_amount_exceeds_maximum', 'charge_amount'],
  ['euro', (b) => ({ ...b, charge_denomination: 'eur' }), 'charge_denomination_must_be_usd', 'charge_denomination'],
  ['yearly', (b) => ({ ...b, billing_period: 'year' }), 'unknown_billing_period', 'billing_period'],
  ['Month', (b) => ({ ...b, billing_period: 'Month' }), 'unknown_billing_period', 'billing_period'],
  ['billing_period a number', (b) => ({ ...b, billing_period: 1 }), 'invalid_request', 'billing_period'],
  ['prepay', (b) => ({ ...b, overage_charge_mode: 'prepay' }), 'unknown_overage_charge_mode', 'overage_charge_mode'],
  [
    'percentage true',
    (b) => ({ ...b, threshold_alert_percentage: true }),
    'invalid_request',
    'threshold_alert_percentage',
  ],
  ['rollover "true"', (b) => ({ ...b, rollover: 'true' }), 'invalid_request', 'rollover'],
  ['no balances', (b) => without(b, 'balances'), 'plan_needs_at_least_one_balance', 'balances'],
  ['empty balances', (b) => ({ ...b, balances: [] }), 'plan_needs_at_least_one_balance', 'balances'],
  ['balances object', (b) => ({ ...b, balances: {} }), 'invalid_request', 'balances'],
  [
    'too many balances',
    (b) => ({
      ...b,
      balances: Array.from({ length: 101 }, (_, i) => ({ amount: 1, denomination: `d${i}`, overage_charge_amount: 0 })),
    }),
    'plan_has_too_many_balances',
    'balances',
  ],
  ['entry not an object', (b) => ({ ...b, balances: ['x'] }), 'invalid_request', 'balances[0]'],
  ['entry unknown field', (b) => withEntry(b, { x: 1 }), 'invalid_request', 'balances[0].x'],
  ['entry no amount', (b) => withoutInEntry(b, 'amount'), 'plan_balance_amount_is_required', 'balances[0].amount'],
  [
    'entry amount "1.5"',
    (b) => withEntry(b, { amount: '1.5' }),
    'plan_balance_amount_must_be_a_non_negative_integer',
    'balances[0].amount',
  ],
  [
    'entry amount -1',
    (b) => withEntry(b, { amount: -1 }),
    'plan_balance_amount_must_be_a_non_negative_integer',
    'balances[0].amount',
  ],
  [
    'entry amount 2^60',
    (b) => withEntry(b, { amount: 2 ** 60 }),
    'plan_balance_amount_exceeds_maximum',
    'balances[0].amount',
  ],
  ['entry amount 1.5', (b) => withEntry(b, { amount: 1.5 }), 'invalid_request', 'balances[0].amount'],
  [
    'entry no denomination',
    (b) => withoutInEntry(b, 'denomination'),
    'denomination_is_required',
    'balances[0].denomination',
  ],
  [
    'entry bad denomination',
    (b) => withEntry(b, { denomination: 'a b' }),
    'denomination_is_invalid',
    'balances[0].denomination',
  ],
  [
    'entry long denomination',
    (b) => withEntry(b, { denomination: 'x'.repeat(65) }),
    'denomination_is_invalid',
    'balances[0].denomination',
  ],
  [
    'entry no overage price',
    (b) => withoutInEntry(b, 'overage_charge_amount'),
    'overage_charge_amount_is_required',
    'balances[0].overage_charge_amount',
  ],
  [
    'entry overage -1',
    (b) => withEntry(b, { overage_charge_amount: -1 }),
    'overage_charge_amount_must_be_a_non_negative_integer',
    'balances[0].overage_charge_amount',
  ],
  [
    'entry overage 2^60',
    (b) => withEntry(b, { overage_charge_amount: 2 ** 60 }),
    'overage_charge_amount_exceeds_maximum',
    'balances[0].overage_charge_amount',
  ],
  [
    'entry overage "1"',
    (b) => withEntry(b, { overage_charge_amount: '1' }),
    'invalid_request',
    'balances[0].overage_charge_amount',
  ],
  [
    'entry overage in eur',
    (b) => withEntry(b, { overage_charge_denomination: 'EUR' }),
    'overage_charge_denomination_must_be_usd',
    'balances[0].overage_charge_denomination',
  ],
];

for (const dialect of HTTP_DIALECTS) {
  describe(`plan body schema (${dialect})`, () => {
    let h: Harness;
    let co: Awaited<ReturnType<typeof signUpCompany>>;
    const post = (body: unknown) => h.request('POST', `/v1/companies/${co.companyId}/plan`, { auth: co.auth, body });
    /** Every plan of the company, page by page. */
    const planCount = async () => {
      let count = 0;
      let cursor: string | null = null;
      do {
        const after = cursor === null ? '' : `&starting_after=${cursor}`;
        const page = await h.request('GET', `/v1/companies/${co.companyId}/plans?limit=100${after}`, { auth: co.auth });
        count += page.body.data.length;
        cursor = page.body.next_cursor;
      } while (cursor !== null);
      return count;
    };
    before(async () => {
      h = await startHarness(dialect);
      co = await signUpCompany(h);
    });
    after(async () => h.close());

    for (const [what, mutate, code, param] of refused) {
      test(`plan refused: ${what} → 400 ${code}${param === undefined ? '' : ` (${param})`}`, async () => {
        const r = await post(mutate(validBody()));
        assertError(r, 400, 'invalid_request');
        assert.equal(r.body.error.code, code, r.text);
        assert.equal(r.body.error.param, param, r.text);
      });
    }

    test('the edges the schema accepts: any case of usd, null for optional fields, 100 entries, "0001"', async () => {
      const accepted = [
        { ...validBody(), charge_denomination: 'Usd', billing_period: 'monthly' },
        {
          ...validBody(),
          charge_denomination: null,
          billing_period: null,
          overage_charge_mode: null,
          threshold_alert_percentage: null,
          rollover: null,
        },
        { ...validBody(), name: 'x'.repeat(200), charge_amount: Number.MAX_SAFE_INTEGER },
        {
          ...validBody(),
          balances: Array.from({ length: 100 }, (_, i) => ({
            amount: '0001',
            denomination: `d${i}`,
            overage_charge_amount: 0,
          })),
        },
      ];
      for (const body of accepted) {
        const r = await post(body);
        assert.equal(r.status, 200, r.text);
      }
    });

    test('property: any plan body gets 200 or a 400 error body, never a 5xx; refusals create nothing', async () => {
      const created = await planCount();
      let accepted = 0;
      const answer = async (body: unknown) => {
        const r = await post(body);
        if (r.status === 200) accepted++;
        else assertError(r, 400, 'invalid_request');
      };
      const field = fc.constantFrom(...Object.keys(validBody()));
      await fc.assert(fc.asyncProperty(fc.jsonValue(), answer), { numRuns: 500 });
      // Closer to valid: one field of a valid body, or of its first entry, replaced by any JSON value.
      await fc.assert(
        fc.asyncProperty(field, fc.jsonValue(), (k, v) => answer({ ...validBody(), [k]: v })),
        { numRuns: 300 },
      );
      const entryField = fc.constantFrom(
        'amount',
        'denomination',
        'overage_charge_amount',
        'overage_charge_denomination',
      );
      await fc.assert(
        fc.asyncProperty(entryField, fc.jsonValue(), (k, v) => answer(withEntry(validBody(), { [k]: v }))),
        { numRuns: 200 },
      );
      assert.equal(await planCount(), created + accepted, 'only accepted plans were created');
    });
  });
}
