// Guarantees (contract "Credit grants": plan renewal and mid-month increase): a renewal without rollover ends only
// the plan's own grant (its unheld units leave, held ones stay held), clears the debt and opens the new plan grant,
// all in one period_reset transaction of the net change, after what was due before the renewal instant and before
// what falls due after it; with rollover, the plan's grants keep their units and one `grant` transaction adds the
// period; a mid-month increase removes units from the monthly refills' grants first, then in drawing order (what no
// grant covers is debt the new grant repays), in one proration transaction naming the new grant; the soonest due
// instant and which grants are finished are read from the lots. The invariant holds after every step.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  addGrant,
  checkInvariant,
  hold,
  isFinished,
  type Lots,
  type NewGrant,
  nextDueAt,
  prorate,
  renewPlan,
  sameGrants,
  settleHold,
  take,
} from '../../src/domain/grants.js';

const T0 = 1_700_000_000_000;
const DAY = 86_400_000;
const EMPTY: Lots = { amount: 0, pending: 0, grants: [] };

function g(grantId: string, over: Partial<NewGrant> = {}): NewGrant {
  return {
    grantId,
    amount: 100,
    priority: 50,
    category: 'paid',
    source: 'grant',
    effectiveAtMs: T0,
    expiresAtMs: null,
    ...over,
  };
}

function ok(lots: Lots, nowMs: number): Lots {
  assert.deepEqual(checkInvariant(lots, nowMs), []);
  return lots;
}

function grant(lots: Lots, id: string) {
  const found = lots.grants.find((x) => x.grantId === id);
  assert.ok(found, id);
  return found;
}

describe('plan renewal', () => {
  const due = T0 + 30 * DAY;
  const plan = g('g_plan1', { source: 'plan', amount: 1000, expiresAtMs: due });
  const promo = g('g_promo', { category: 'promotional', amount: 200, priority: 60 });

  test('without rollover: the plan grant ends, the promotion keeps its units, one period_reset of the net', () => {
    let lots = addGrant(EMPTY, plan, T0).lots;
    lots = addGrant(lots, promo, T0).lots;
    lots = take(lots, 300, T0 + DAY).lots; // from the plan grant (priority 50 before 60)
    const next = g('g_plan2', { source: 'plan', amount: 1000, effectiveAtMs: due, expiresAtMs: due + 30 * DAY });
    const r = renewPlan(lots, { grant: next, rollover: false }, due, due + 5);
    assert.equal(r.debt, 0);
    assert.deepEqual(r.transactions, [{ kind: 'period_reset', amount: -700 + 1000, grantId: 'g_plan2' }]);
    assert.equal(r.lots.amount, 1200);
    assert.equal(grant(r.lots, 'g_promo').remaining, 200);
    assert.equal(grant(r.lots, 'g_plan1').remaining, 0);
    assert.ok(isFinished(grant(r.lots, 'g_plan1')));
    assert.equal(grant(r.lots, 'g_plan2').remaining, 1000);
    ok(r.lots, due + 5);
  });

  test('debt is cleared (and returned for the overage charge); the new grant keeps all its units', () => {
    let lots = addGrant(EMPTY, plan, T0).lots;
    lots = take(lots, 1250, T0 + DAY).lots;
    assert.equal(lots.amount, -250);
    const next = g('g_plan2', { source: 'plan', amount: 1000, effectiveAtMs: due, expiresAtMs: due + 30 * DAY });
    const r = renewPlan(lots, { grant: next, rollover: false }, due, due);
    assert.equal(r.debt, 250);
    assert.deepEqual(r.transactions, [{ kind: 'period_reset', amount: 1250, grantId: 'g_plan2' }]);
    assert.equal(r.lots.amount, 1000);
    assert.equal(grant(r.lots, 'g_plan2').remaining, 1000);
    ok(r.lots, due);
  });

  test('held units of the ended plan grant stay held, and what the settle does not use leaves at once', () => {
    let lots = addGrant(EMPTY, plan, T0).lots;
    const h = hold(lots, 100, T0 + DAY);
    lots = h.lots;
    const next = g('g_plan2', { source: 'plan', amount: 1000, effectiveAtMs: due, expiresAtMs: due + 30 * DAY });
    const r = renewPlan(lots, { grant: next, rollover: false }, due, due);
    assert.deepEqual(r.transactions, [{ kind: 'period_reset', amount: -900 + 1000, grantId: 'g_plan2' }]);
    assert.equal(grant(r.lots, 'g_plan1').held, 100);
    const s = settleHold(r.lots, h.heldFrom, 100, 30, due + 1);
    assert.deepEqual(
      s.transactions.map((t) => [t.kind, t.amount, t.grantId]),
      [
        ['usage', -30, null],
        ['grant_expiry', -70, 'g_plan1'],
      ],
    );
    assert.equal(s.lots.amount, 1000);
    ok(s.lots, due + 1);
  });

  test('what is due before the instant applies first; what falls due later is left to the next step', () => {
    let lots = addGrant(EMPTY, plan, T0).lots;
    lots = addGrant(lots, g('g_short', { amount: 50, expiresAtMs: due - DAY }), T0).lots;
    lots = addGrant(lots, g('g_later', { amount: 10, effectiveAtMs: due + DAY }), T0).lots;
    const next = g('g_plan2', { source: 'plan', amount: 1000, effectiveAtMs: due, expiresAtMs: due + 30 * DAY });
    const r = renewPlan(lots, { grant: next, rollover: false }, due, due + 2 * DAY);
    // The plan grant's 1,000 end and the new 1,000 start: a period_reset of 0 is no transaction.
    assert.deepEqual(
      r.transactions.map((t) => [t.kind, t.amount, t.grantId]),
      [['grant_expiry', -50, 'g_short']],
    );
    assert.equal(r.lots.amount, 1000);
    assert.equal(nextDueAt(r.lots), due + DAY);
    ok(r.lots, due);
    assert.deepEqual(take(r.lots, 0, due + 2 * DAY).transactions, [{ kind: 'grant', amount: 10, grantId: 'g_later' }]);
  });

  test('missed periods: each renewal ends its own plan grant in its period_reset', () => {
    let lots = addGrant(EMPTY, plan, T0).lots;
    lots = take(lots, 100, T0 + DAY).lots;
    const due2 = due + 30 * DAY;
    const p2 = g('g_plan2', { source: 'plan', amount: 1000, effectiveAtMs: due, expiresAtMs: due2 });
    const r1 = renewPlan(lots, { grant: p2, rollover: false }, due, due2 + DAY);
    const p3 = g('g_plan3', { source: 'plan', amount: 1000, effectiveAtMs: due2, expiresAtMs: due2 + 30 * DAY });
    const r2 = renewPlan(r1.lots, { grant: p3, rollover: false }, due2, due2 + DAY);
    assert.deepEqual(
      [...r1.transactions, ...r2.transactions].map((t) => [t.kind, t.amount]),
      [['period_reset', 100]],
    );
    assert.equal(r2.lots.amount, 1000);
    ok(r2.lots, due2 + DAY);
  });

  test('an already expired plan grant (a read applied its expiry first): the renewal adds the period', () => {
    let lots = addGrant(EMPTY, plan, T0).lots;
    lots = take(lots, 400, T0 + DAY).lots;
    lots = take(lots, 0, due).lots; // the expiry at the instant, applied by a read
    assert.equal(lots.amount, 0);
    const next = g('g_plan2', { source: 'plan', amount: 1000, effectiveAtMs: due, expiresAtMs: due + 30 * DAY });
    const r = renewPlan(lots, { grant: next, rollover: false }, due, due);
    assert.deepEqual(r.transactions, [{ kind: 'period_reset', amount: 1000, grantId: 'g_plan2' }]);
    ok(r.lots, due);
  });

  test('with rollover: the plan grants keep their units; one grant transaction adds the period and clears debt', () => {
    const forever = g('g_plan1', { source: 'plan', amount: 1000 });
    let lots = addGrant(EMPTY, forever, T0).lots;
    lots = take(lots, 400, T0 + DAY).lots;
    const next = g('g_plan2', { source: 'plan', amount: 1000, effectiveAtMs: due });
    const r = renewPlan(lots, { grant: next, rollover: true }, due, due);
    assert.deepEqual(r.transactions, [{ kind: 'grant', amount: 1000, grantId: 'g_plan2' }]);
    assert.equal(r.lots.amount, 1600);
    assert.equal(grant(r.lots, 'g_plan1').remaining, 600);
    ok(r.lots, due);
  });

  test('a plan entry of 0 units: only the end of the old grant and the debt', () => {
    let lots = addGrant(EMPTY, plan, T0).lots;
    lots = take(lots, 100, T0 + DAY).lots;
    const r = renewPlan(lots, { grant: null, rollover: false }, due, due);
    assert.deepEqual(r.transactions, [{ kind: 'period_reset', amount: -900, grantId: null }]);
    assert.equal(r.lots.amount, 0);
    ok(r.lots, due);
  });

  test('refused: a renewal not yet due, a grant starting elsewhere than the instant', () => {
    assert.throws(() => renewPlan(EMPTY, { grant: null, rollover: false }, due, due - 1), RangeError);
    const off = g('g_plan2', { source: 'plan', effectiveAtMs: due + 1 });
    assert.throws(() => renewPlan(EMPTY, { grant: off, rollover: false }, due, due + 2), RangeError);
  });
});

describe('mid-month increase', () => {
  test('the monthly refills go first, then drawing order; one proration transaction of the net', () => {
    let lots = addGrant(EMPTY, g('g_promo', { category: 'promotional', amount: 300, priority: 10 }), T0).lots;
    lots = addGrant(lots, g('g_month', { source: 'monthly_refill', amount: 1000 }), T0).lots;
    lots = take(lots, 500, T0 + DAY).lots; // 300 from the promotion (priority 10), 200 from the refill
    assert.equal(lots.amount, 800);
    const r = prorate(lots, 1000, g('g_pro', { source: 'proration', amount: 2000, effectiveAtMs: T0 + DAY }), T0 + DAY);
    assert.deepEqual(r.transactions, [
      {
        kind: 'proration',
        amount: 1000,
        grantId: 'g_pro',
        drawnFrom: [{ grantId: 'g_month', amount: 800 }],
      },
    ]);
    // 1,000 removed: 800 from the monthly refill; the 200 no grant covered were debt, repaid by the new grant.
    assert.equal(r.lots.amount, 1800);
    assert.equal(grant(r.lots, 'g_pro').remaining, 1800);
    ok(r.lots, T0 + DAY);
  });

  test('held units are not removed; what the unheld units cannot cover is repaid by the new grant', () => {
    let lots = addGrant(EMPTY, g('g_month', { source: 'monthly_refill', amount: 1000 }), T0).lots;
    lots = hold(lots, 600, T0).lots;
    const r = prorate(lots, 1000, g('g_pro', { source: 'proration', amount: 2000 }), T0);
    assert.equal(r.lots.amount, 2000);
    assert.equal(grant(r.lots, 'g_month').remaining, 600);
    assert.equal(grant(r.lots, 'g_month').held, 600);
    assert.equal(grant(r.lots, 'g_pro').remaining, 1400);
    ok(r.lots, T0);
  });
});

describe('reading the lots', () => {
  test('nextDueAt: the soonest start or expiry of grants not closed', () => {
    assert.equal(nextDueAt(EMPTY), null);
    let lots = addGrant(EMPTY, g('g_a', { expiresAtMs: T0 + 5 * DAY }), T0).lots;
    assert.equal(nextDueAt(lots), T0 + 5 * DAY);
    lots = addGrant(lots, g('g_b', { effectiveAtMs: T0 + 2 * DAY }), T0).lots;
    assert.equal(nextDueAt(lots), T0 + 2 * DAY);
    lots = take(lots, 0, T0 + 6 * DAY).lots;
    assert.equal(nextDueAt(lots), null);
  });

  test('isFinished: used up, or closed with nothing held; sameGrants compares figures', () => {
    let lots = addGrant(EMPTY, g('g_a', { amount: 10 }), T0).lots;
    assert.equal(isFinished(grant(lots, 'g_a')), false);
    const before = lots.grants;
    lots = take(lots, 10, T0).lots;
    assert.equal(isFinished(grant(lots, 'g_a')), true);
    assert.equal(sameGrants(before, lots.grants), false);
    assert.equal(
      sameGrants(
        lots.grants,
        lots.grants.map((x) => ({ ...x })),
      ),
      true,
    );
    const scheduled = addGrant(EMPTY, g('g_s', { effectiveAtMs: T0 + DAY }), T0).lots;
    assert.equal(isFinished(grant(scheduled, 'g_s')), false);
  });
});
