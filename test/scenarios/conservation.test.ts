// Guarantee: units are conserved through grants, usage, adjustments, threshold refills and mid-month prorations in any
// order — every unit on a balance is accounted for by exactly one transaction, and every refill by one successful
// charge — on both databases.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { HTTP_DIALECTS, signUpCompany, startHarness, type Harness } from '../support/harness.js';
import {
  attachCard,
  balance,
  charges,
  createAccount,
  createBalance,
  putAutoRefill,
  runDue,
  spend,
  transactions,
  type Co,
} from '../support/money.js';

type Op =
  | { kind: 'spend'; amount: number; count: number }
  | { kind: 'adjust'; amount: number }
  | { kind: 'run' }
  | { kind: 'increase'; extra: number; usd: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant('spend' as const),
    amount: fc.integer({ min: 0, max: 400 }),
    count: fc.integer({ min: 1, max: 5 }),
  }),
  fc.record({
    kind: fc.constant('adjust' as const),
    amount: fc.integer({ min: -300, max: 300 }).filter((n) => n !== 0),
  }),
  fc.record({ kind: fc.constant('run' as const) }),
  fc.record({
    kind: fc.constant('increase' as const),
    extra: fc.integer({ min: 1, max: 500 }),
    usd: fc.integer({ min: 0, max: 3000 }),
  }),
);

const RUNS = 25;

for (const dialect of HTTP_DIALECTS) {
  describe(`conservation of units (${dialect})`, () => {
    let h: Harness;
    let co: Co;
    before(async () => {
      h = await startHarness(dialect);
      co = await signUpCompany(h);
    });
    after(async () => h.close());

    test('property: amount = grants − usage + adjustments + refills + prorations, each refill paid once', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 2000 }),
          fc.integer({ min: 0, max: 1500 }),
          fc.integer({ min: 1, max: 1000 }),
          fc.integer({ min: 0, max: 2000 }),
          fc.array(op, { minLength: 1, maxLength: 12 }),
          async (grant, threshold, refillAmount, refillUsd, ops) => {
            const acc = (await createAccount(h, co)).account_id;
            await createBalance(h, co, acc, 'tokens', grant);
            await attachCard(h, co, acc, 'tok_visa');
            // modifymidmonth increases a monthly refill: it is on from the start (refill 0 is paid at once).
            await putAutoRefill(h, co, acc, 'tokens', {
              threshold,
              amount: refillAmount,
              usd_charge: refillUsd,
              refill_monthly: true,
            });
            let spent = 0;
            let adjusted = 0;
            let currentRefill = refillAmount;
            const refillAmounts = new Set([refillAmount]);
            const prorations: number[] = [];
            for (const o of ops) {
              if (o.kind === 'spend') {
                await spend(h, co, acc, o.amount, 'tokens', o.count);
                spent += o.amount * o.count;
              } else if (o.kind === 'adjust') {
                const r = await h.request('POST', `/v1/accounts/${acc}/balance/tokens/adjustments`, {
                  auth: co.auth,
                  body: { amount: o.amount },
                });
                assert.equal(r.status, 200, r.text);
                adjusted += o.amount;
              } else if (o.kind === 'run') {
                await runDue(h, co);
              } else {
                const before = (await balance(h, co, acc)).amount;
                const amount = currentRefill + o.extra;
                const r = await h.request('POST', `/v1/accounts/${acc}/modifymidmonth`, {
                  auth: co.auth,
                  body: { denomination: 'tokens', amount: String(amount), usd_charge: String(o.usd) },
                });
                assert.equal(r.status, 200, r.text);
                const remaining = Math.min(Math.max(before, 0), currentRefill);
                assert.equal(r.body.data.amount, before - remaining + amount);
                prorations.push(amount - remaining);
                currentRefill = amount;
                refillAmounts.add(amount);
              }
            }
            await runDue(h, co);
            const txs = await transactions(h, co, acc);
            const sum = (kind: string) => txs.filter((t) => t.kind === kind).reduce((a, t) => a + t.amount, 0);
            const refills = txs.filter((t) => t.kind === 'refill');
            assert.equal(sum('grant'), grant);
            assert.equal(sum('usage') + spent, 0);
            assert.equal(sum('adjustment'), adjusted);
            assert.deepEqual(
              txs.filter((t) => t.kind === 'proration').map((t) => t.amount),
              prorations,
            );
            assert.ok(
              refills.every((t) => refillAmounts.has(t.amount)),
              'each refill adds a configured amount',
            );
            const paid = (await charges(h, co, acc)).filter((c) => c.reason === 'refill' && c.status === 'succeeded');
            assert.equal(refills.length, paid.length, 'one successful charge per refill');
            const b = await balance(h, co, acc);
            assert.equal(b.amount, grant - spent + adjusted + sum('refill') + sum('proration'));
            assert.deepEqual(await h.store.read((tx) => tx.transactions.auditLedger()), []);
          },
        ),
        { numRuns: RUNS },
      );
    });
  });
}
