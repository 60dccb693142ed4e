// Guarantees: units are drawn from grants in the contract's drawing order (every tie-breaker), debt is repaid first,
// starts and expiries apply exactly at their instant and never twice, holds keep their grants' units until they
// settle (used, given back, expired or voided at once, or drawn further), voids and PATCHes do what the contract
// says and refuse what it refuses, and the invariant (amount = Σ remaining − debt, 0 ≤ held ≤ remaining ≤ amount,
// pending ≥ Σ held) holds after every step of any sequence, in agreement with a unit-by-unit reference model.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  GRANT_SOURCES,
  addGrant,
  advanceTo,
  checkInvariant,
  compareDrawingOrder,
  debtOf,
  hold,
  nextExpiry,
  patchGrant,
  releaseHold,
  settleHold,
  statusOf,
  take,
  voidGrant,
  type Allocation,
  type Grant,
  type GrantCategory,
  type GrantOutcome,
  type GrantSource,
  type Lots,
  type NewGrant,
  type OpeningKind,
  type Step,
} from '../../src/domain/grants.js';
import { Reference } from './grants-reference.js';

const T0 = 1_700_000_000_000;
const EMPTY: Lots = { amount: 0, pending: 0, grants: [] };

function newGrant(grantId: string, over: Partial<NewGrant> = {}): NewGrant {
  return {
    grantId,
    amount: 100,
    priority: 50,
    category: 'promotional',
    source: 'grant',
    effectiveAtMs: T0,
    expiresAtMs: null,
    ...over,
  };
}

/** Lots holding these grants, added at `nowMs`, the invariant checked. */
function lotsOf(grants: NewGrant[], nowMs = T0, start: Lots = EMPTY): Lots {
  let lots = start;
  for (const g of grants) lots = addGrant(lots, g, nowMs).lots;
  assert.deepEqual(checkInvariant(lots, nowMs), []);
  return lots;
}

function grantOf(lots: Lots, grantId: string): Grant {
  const g = lots.grants.find((x) => x.grantId === grantId);
  assert.ok(g, `grant ${grantId} exists`);
  return g;
}

function ok<T>(o: GrantOutcome<T>): T {
  assert.ok(o.ok, `expected success, got ${JSON.stringify(o)}`);
  return o.value;
}

/** A step's result, after checking the invariant at `nowMs`. */
function checked<S extends Step>(s: S, nowMs: number): S {
  assert.deepEqual(checkInvariant(s.lots, nowMs), []);
  return s;
}

/** [remaining, held] of a grant. */
const rh = (lots: Lots, id: string): [number, number] => [grantOf(lots, id).remaining, grantOf(lots, id).held];

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

describe('drawing order', () => {
  // Each pair ties on every earlier key, differs on one, and the grant drawn second wins every later key.
  const cases: [string, Partial<NewGrant>, Partial<NewGrant>][] = [
    [
      'priority ascending',
      { priority: 10, expiresAtMs: null, category: 'paid', effectiveAtMs: T0 },
      { priority: 20, expiresAtMs: T0 + 10, category: 'promotional', effectiveAtMs: T0 - 50 },
    ],
    [
      'expires_at ascending',
      { expiresAtMs: T0 + 100, category: 'paid', effectiveAtMs: T0 },
      { expiresAtMs: T0 + 200, category: 'promotional', effectiveAtMs: T0 - 50 },
    ],
    [
      'never-expiring last',
      { expiresAtMs: T0 + 1e12, category: 'paid', effectiveAtMs: T0 },
      { expiresAtMs: null, category: 'promotional', effectiveAtMs: T0 - 50 },
    ],
    [
      'promotional before paid',
      { category: 'promotional', effectiveAtMs: T0 },
      { category: 'paid', effectiveAtMs: T0 - 50 },
    ],
    ['effective_at ascending', { effectiveAtMs: T0 - 50 }, { effectiveAtMs: T0 - 10 }],
  ];
  for (const [name, first, second] of cases) {
    test(name, () => {
      // The grant drawn second has the smaller id and is added first, so neither can explain the order.
      const lots = lotsOf([newGrant('g_a', second), newGrant('g_b', first)]);
      assert.ok(compareDrawingOrder(grantOf(lots, 'g_b'), grantOf(lots, 'g_a')) < 0);
      assert.ok(compareDrawingOrder(grantOf(lots, 'g_a'), grantOf(lots, 'g_b')) > 0);
      const r = take(lots, 150, T0);
      assert.deepEqual(r.drawnFrom, [
        { grantId: 'g_b', amount: 100 },
        { grantId: 'g_a', amount: 50 },
      ]);
    });
  }

  test('grant_id ascending, by code unit (uppercase before lowercase), as the last tie-breaker', () => {
    const lots = lotsOf([newGrant('g_b'), newGrant('g_a'), newGrant('g_B')]);
    assert.deepEqual(take(lots, 250, T0).drawnFrom, [
      { grantId: 'g_B', amount: 100 },
      { grantId: 'g_a', amount: 100 },
      { grantId: 'g_b', amount: 50 },
    ]);
    assert.equal(compareDrawingOrder(grantOf(lots, 'g_a'), grantOf(lots, 'g_a')), 0);
  });

  test('one event across three grants: drawn_from lists them in order; amount and remainders follow', () => {
    const lots = lotsOf([
      newGrant('g_3', { amount: 30, priority: 30 }),
      newGrant('g_1', { amount: 10, priority: 10 }),
      newGrant('g_2', { amount: 20, priority: 20 }),
    ]);
    const r = checked(take(lots, 45, T0), T0);
    assert.deepEqual(r.transactions, [
      {
        kind: 'usage',
        amount: -45,
        grantId: null,
        drawnFrom: [
          { grantId: 'g_1', amount: 10 },
          { grantId: 'g_2', amount: 20 },
          { grantId: 'g_3', amount: 15 },
        ],
      },
    ]);
    assert.equal(r.lots.amount, 15);
    assert.deepEqual(
      r.lots.grants.map((g) => [g.grantId, g.remaining, statusOf(g, T0)]),
      [
        ['g_1', 0, 'depleted'],
        ['g_2', 0, 'depleted'],
        ['g_3', 15, 'active'],
      ],
    );
  });

  test('a negative adjustment draws the same way, with its own kind', () => {
    const lots = lotsOf([newGrant('g_1', { amount: 10 })]);
    assert.deepEqual(take(lots, 4, T0, 'adjustment').transactions, [
      { kind: 'adjustment', amount: -4, grantId: null, drawnFrom: [{ grantId: 'g_1', amount: 4 }] },
    ]);
  });

  test('a taking of 0 is no transaction', () => {
    const r = take(lotsOf([newGrant('g_1')]), 0, T0);
    assert.deepEqual(r.transactions, []);
    assert.deepEqual(r.drawnFrom, []);
  });
});

describe('debt', () => {
  test('what no grant covers is debt; a grant of 500 onto −200 leaves 300 and remaining 300', () => {
    const owing = checked(take(EMPTY, 200, T0), T0);
    assert.deepEqual(owing.transactions, [{ kind: 'usage', amount: -200, grantId: null, drawnFrom: [] }]);
    assert.equal(owing.lots.amount, -200);
    assert.equal(debtOf(owing.lots), 200);

    const r = checked(addGrant(owing.lots, newGrant('g_1', { amount: 500 }), T0), T0);
    assert.deepEqual(r.transactions, [{ kind: 'grant', amount: 500, grantId: 'g_1' }], 'the full +amount');
    assert.equal(r.lots.amount, 300);
    assert.deepEqual(rh(r.lots, 'g_1'), [300, 0]);
    assert.equal(debtOf(r.lots), 0);
  });

  test('a grant smaller than the debt is used up by it; the next one repays the rest', () => {
    const owing = take(EMPTY, 200, T0).lots;
    const a = checked(addGrant(owing, newGrant('g_1', { amount: 100 }), T0, 'refill'), T0);
    assert.deepEqual(a.transactions, [{ kind: 'refill', amount: 100, grantId: 'g_1' }]);
    assert.equal(a.lots.amount, -100);
    assert.equal(statusOf(grantOf(a.lots, 'g_1'), T0), 'depleted');
    const b = checked(addGrant(a.lots, newGrant('g_2', { amount: 150 }), T0), T0);
    assert.equal(b.lots.amount, 50);
    assert.deepEqual(rh(b.lots, 'g_2'), [50, 0]);
  });

  test('an event larger than the grants draws them all and owes the rest', () => {
    const r = checked(take(lotsOf([newGrant('g_1', { amount: 30 })]), 50, T0), T0);
    assert.deepEqual(r.drawnFrom, [{ grantId: 'g_1', amount: 30 }]);
    assert.equal(r.lots.amount, -20);
  });
});

describe('starts and expiries, exact to the instant', () => {
  const expiring = () => lotsOf([newGrant('g_1', { amount: 100, expiresAtMs: T0 + 1000 })]);

  test('drawn one millisecond before expires_at', () => {
    const r = checked(take(expiring(), 10, T0 + 999), T0 + 999);
    assert.deepEqual(r.drawnFrom, [{ grantId: 'g_1', amount: 10 }]);
    assert.equal(statusOf(grantOf(r.lots, 'g_1'), T0 + 999), 'active');
  });

  test('at expires_at: its unheld remaining leaves with one grant_expiry, and nothing is drawn from it', () => {
    const r = checked(take(expiring(), 10, T0 + 1000), T0 + 1000);
    assert.deepEqual(r.transactions, [
      { kind: 'grant_expiry', amount: -100, grantId: 'g_1' },
      { kind: 'usage', amount: -10, grantId: null, drawnFrom: [] },
    ]);
    assert.equal(r.lots.amount, -10);
    assert.equal(statusOf(grantOf(r.lots, 'g_1'), T0 + 1000), 'expired');
  });

  test('a read at or after the instant sees the balance without it, whether or not anything applied it', () => {
    const before = advanceTo(expiring(), T0 + 999);
    assert.deepEqual(before.transactions, []);
    assert.equal(before.lots.amount, 100);
    for (const at of [T0 + 1000, T0 + 1001, T0 + 86_400_000]) {
      const r = checked(advanceTo(expiring(), at), at);
      assert.deepEqual(r.transactions, [{ kind: 'grant_expiry', amount: -100, grantId: 'g_1' }]);
      assert.equal(r.lots.amount, 0);
    }
  });

  test('a scheduled grant is not drawn before effective_at, and joins at it with one grant transaction', () => {
    const added = checked(addGrant(EMPTY, newGrant('g_1', { effectiveAtMs: T0 + 100 }), T0), T0);
    assert.deepEqual(added.transactions, []);
    assert.equal(added.lots.amount, 0);
    assert.equal(statusOf(grantOf(added.lots, 'g_1'), T0), 'scheduled');

    const early = checked(take(added.lots, 5, T0 + 99), T0 + 99);
    assert.deepEqual(early.drawnFrom, []);
    assert.equal(early.lots.amount, -5);

    const joined = checked(advanceTo(early.lots, T0 + 100), T0 + 100);
    assert.deepEqual(joined.transactions, [{ kind: 'grant', amount: 100, grantId: 'g_1' }]);
    assert.equal(joined.lots.amount, 95);
    assert.deepEqual(rh(joined.lots, 'g_1'), [95, 0], 'the debt was repaid first');
    assert.equal(statusOf(grantOf(joined.lots, 'g_1'), T0 + 100), 'active');
  });

  test('a grant added with its start and its expiry both past opens and expires at once', () => {
    const r = checked(
      addGrant(EMPTY, newGrant('g_1', { effectiveAtMs: T0 - 100, expiresAtMs: T0 - 10 }), T0, 'adjustment'),
      T0,
    );
    assert.deepEqual(r.transactions, [
      { kind: 'adjustment', amount: 100, grantId: 'g_1' },
      { kind: 'grant_expiry', amount: -100, grantId: 'g_1' },
    ]);
    assert.equal(statusOf(grantOf(r.lots, 'g_1'), T0), 'expired');
  });

  test('advanceTo applies in instant order (expiries first at one instant, then grant_id) and never twice', () => {
    const lots = lotsOf([
      newGrant('g_s1', { amount: 10, effectiveAtMs: T0 + 10, expiresAtMs: T0 + 50 }),
      newGrant('g_a2', { amount: 20, expiresAtMs: T0 + 30 }),
      newGrant('g_s3', { amount: 30, effectiveAtMs: T0 + 30 }),
      newGrant('g_s0', { amount: 40, effectiveAtMs: T0 + 30 }),
    ]);
    const once = checked(advanceTo(lots, T0 + 100), T0 + 100);
    assert.deepEqual(once.transactions, [
      { kind: 'grant', amount: 10, grantId: 'g_s1' },
      { kind: 'grant_expiry', amount: -20, grantId: 'g_a2' },
      { kind: 'grant', amount: 40, grantId: 'g_s0' },
      { kind: 'grant', amount: 30, grantId: 'g_s3' },
      { kind: 'grant_expiry', amount: -10, grantId: 'g_s1' },
    ]);
    assert.equal(once.lots.amount, 70);

    const again = advanceTo(once.lots, T0 + 100);
    assert.deepEqual(again.transactions, []);
    assert.deepEqual(again.lots, once.lots);

    const half = advanceTo(lots, T0 + 30);
    const rest = advanceTo(half.lots, T0 + 100);
    assert.deepEqual([...half.transactions, ...rest.transactions], once.transactions, 'in steps or at once: the same');
    assert.deepEqual(rest.lots, once.lots);
  });

  test('the expiry of a grant with nothing unheld is no transaction, and is applied once', () => {
    const held = hold(lotsOf([newGrant('g_1', { amount: 10, expiresAtMs: T0 + 5 })]), 10, T0);
    const r = checked(advanceTo(held.lots, T0 + 5), T0 + 5);
    assert.deepEqual(r.transactions, []);
    assert.equal(grantOf(r.lots, 'g_1').closed, true);
    assert.deepEqual(rh(r.lots, 'g_1'), [10, 10]);
  });
});

describe('holds', () => {
  const two = () => lotsOf([newGrant('g_a', { amount: 30, priority: 0 }), newGrant('g_b', { amount: 50 })]);

  test('a hold takes from grants in drawing order into held: remaining and amount unchanged, pending up', () => {
    const r = checked(hold(two(), 60, T0), T0);
    assert.deepEqual(r.transactions, []);
    assert.deepEqual(r.heldFrom, [
      { grantId: 'g_a', amount: 30 },
      { grantId: 'g_b', amount: 30 },
    ]);
    assert.deepEqual(rh(r.lots, 'g_a'), [30, 30]);
    assert.deepEqual(rh(r.lots, 'g_b'), [50, 30]);
    assert.equal(r.lots.amount, 80);
    assert.equal(r.lots.pending, 60);
  });

  test('the part of a hold beyond the grants is held without a grant', () => {
    const r = checked(hold(two(), 100, T0), T0);
    assert.deepEqual(r.heldFrom, [
      { grantId: 'g_a', amount: 30 },
      { grantId: 'g_b', amount: 50 },
    ]);
    assert.equal(r.lots.pending, 100);
    assert.equal(r.lots.amount, 80);
  });

  test('held units are not drawn by other events: an event while all is held is debt', () => {
    const held = hold(two(), 80, T0);
    const r = checked(take(held.lots, 10, T0), T0);
    assert.deepEqual(r.drawnFrom, []);
    assert.equal(r.lots.amount, 70);
    assert.equal(debtOf(r.lots), 10, 'debt beside held units, with amount still positive');
  });

  const settle = (finalCost: number) => {
    const h = hold(two(), 60, T0);
    return checked(settleHold(h.lots, h.heldFrom, 60, finalCost, T0), T0);
  };

  test('final cost equal to the hold uses exactly the held units', () => {
    const r = settle(60);
    assert.deepEqual(r.transactions, [
      {
        kind: 'usage',
        amount: -60,
        grantId: null,
        drawnFrom: [
          { grantId: 'g_a', amount: 30 },
          { grantId: 'g_b', amount: 30 },
        ],
      },
    ]);
    assert.deepEqual([rh(r.lots, 'g_a'), rh(r.lots, 'g_b'), r.lots.pending, r.lots.amount], [[0, 0], [20, 0], 0, 20]);
  });

  test('final cost below the hold uses the held units in the order drawn and gives the rest back', () => {
    const r = settle(40);
    assert.deepEqual(r.transactions[0]?.drawnFrom, [
      { grantId: 'g_a', amount: 30 },
      { grantId: 'g_b', amount: 10 },
    ]);
    assert.deepEqual([rh(r.lots, 'g_a'), rh(r.lots, 'g_b'), r.lots.pending, r.lots.amount], [[0, 0], [40, 0], 0, 40]);
  });

  test('final cost above the hold draws the difference in drawing order, then owes', () => {
    const above = settle(70);
    assert.deepEqual(above.transactions[0]?.drawnFrom, [
      { grantId: 'g_a', amount: 30 },
      { grantId: 'g_b', amount: 40 },
    ]);
    assert.equal(above.lots.amount, 10);
    const beyond = settle(100);
    assert.deepEqual(beyond.transactions[0]?.drawnFrom, [
      { grantId: 'g_a', amount: 30 },
      { grantId: 'g_b', amount: 50 },
    ]);
    assert.equal(beyond.lots.amount, -20);
  });

  test('the part held without a grant is drawn at settle, from a grant added meanwhile', () => {
    const h = hold(lotsOf([newGrant('g_a', { amount: 10 })]), 30, T0);
    assert.deepEqual(h.heldFrom, [{ grantId: 'g_a', amount: 10 }]);
    const later = addGrant(h.lots, newGrant('g_b', { amount: 100 }), T0 + 1).lots;
    const r = checked(settleHold(later, h.heldFrom, 30, 30, T0 + 2), T0 + 2);
    assert.deepEqual(r.transactions[0]?.drawnFrom, [
      { grantId: 'g_a', amount: 10 },
      { grantId: 'g_b', amount: 20 },
    ]);
    assert.equal(r.lots.amount, 80);
  });

  test('cancel gives everything back, with no transaction', () => {
    const h = hold(two(), 100, T0);
    const r = checked(releaseHold(h.lots, h.heldFrom, 100, T0), T0);
    assert.deepEqual(r.transactions, []);
    assert.deepEqual(r.lots, two());
  });

  test('units given back while the balance owes repay the debt first', () => {
    const h = hold(lotsOf([newGrant('g_1', { amount: 100 })]), 100, T0);
    const owing = take(h.lots, 30, T0).lots;
    const cancelled = checked(releaseHold(owing, h.heldFrom, 100, T0), T0);
    assert.deepEqual(cancelled.transactions, []);
    assert.deepEqual([cancelled.lots.amount, rh(cancelled.lots, 'g_1')], [70, [70, 0]]);
    const below = checked(settleHold(owing, h.heldFrom, 100, 60, T0), T0);
    assert.deepEqual([below.lots.amount, rh(below.lots, 'g_1')], [10, [10, 0]]);
  });

  test('a completed event of cost 0 gives everything back and is no transaction', () => {
    const h = hold(two(), 60, T0);
    const r = checked(settleHold(h.lots, h.heldFrom, 60, 0, T0), T0);
    assert.deepEqual(r.transactions, []);
    assert.deepEqual(r.lots, two());
  });

  test('a heldFrom that does not match the grants is a RangeError, not a silent change', () => {
    const h = hold(two(), 60, T0);
    assert.throws(() => settleHold(h.lots, [{ grantId: 'g_x', amount: 1 }], 60, 60, T0), RangeError);
    assert.throws(() => settleHold(h.lots, [{ grantId: 'g_a', amount: 31 }], 60, 60, T0), RangeError);
    assert.throws(() => settleHold(h.lots, h.heldFrom, 59, 60, T0), RangeError, 'heldFrom beyond heldTotal');
    assert.throws(() => releaseHold(h.lots, h.heldFrom, 61, T0), RangeError, 'beyond pending');
  });
});

describe('holds across an expiry', () => {
  // g_a expires at T0 + 100 and is drawn first; a hold of 40 takes its units; g_b never expires.
  const setup = () => {
    const lots = lotsOf([
      newGrant('g_a', { amount: 50, expiresAtMs: T0 + 100 }),
      newGrant('g_b', { amount: 100, category: 'paid' }),
    ]);
    const h = hold(lots, 40, T0);
    assert.deepEqual(h.heldFrom, [{ grantId: 'g_a', amount: 40 }]);
    return h;
  };

  test('held units stay held at the expiry; only the unheld part expires', () => {
    const h = setup();
    const r = checked(advanceTo(h.lots, T0 + 100), T0 + 100);
    assert.deepEqual(r.transactions, [{ kind: 'grant_expiry', amount: -10, grantId: 'g_a' }]);
    assert.deepEqual(rh(r.lots, 'g_a'), [40, 40]);
    assert.equal(statusOf(grantOf(r.lots, 'g_a'), T0 + 100), 'expired');
  });

  test('final cost below the hold: what it does not use expires at once', () => {
    const h = setup();
    const r = checked(settleHold(h.lots, h.heldFrom, 40, 25, T0 + 150), T0 + 150);
    assert.deepEqual(r.transactions, [
      { kind: 'grant_expiry', amount: -10, grantId: 'g_a' },
      { kind: 'usage', amount: -25, grantId: null, drawnFrom: [{ grantId: 'g_a', amount: 25 }] },
      { kind: 'grant_expiry', amount: -15, grantId: 'g_a' },
    ]);
    assert.deepEqual([rh(r.lots, 'g_a'), rh(r.lots, 'g_b'), r.lots.amount, r.lots.pending], [[0, 0], [100, 0], 100, 0]);
  });

  test('final cost equal to the hold: nothing more expires', () => {
    const h = setup();
    const advanced = advanceTo(h.lots, T0 + 100).lots;
    const r = checked(settleHold(advanced, h.heldFrom, 40, 40, T0 + 150), T0 + 150);
    assert.deepEqual(r.transactions, [
      { kind: 'usage', amount: -40, grantId: null, drawnFrom: [{ grantId: 'g_a', amount: 40 }] },
    ]);
    assert.equal(r.lots.amount, 100);
  });

  test('final cost above the hold: the difference comes from the grants still drawable', () => {
    const h = setup();
    const r = checked(settleHold(h.lots, h.heldFrom, 40, 60, T0 + 150), T0 + 150);
    assert.deepEqual(r.transactions.at(-1)?.drawnFrom, [
      { grantId: 'g_a', amount: 40 },
      { grantId: 'g_b', amount: 20 },
    ]);
    assert.equal(r.lots.amount, 80);
  });

  test('cancel: every held unit of the expired grant expires at once', () => {
    const h = setup();
    const r = checked(releaseHold(h.lots, h.heldFrom, 40, T0 + 150), T0 + 150);
    assert.deepEqual(r.transactions, [
      { kind: 'grant_expiry', amount: -10, grantId: 'g_a' },
      { kind: 'grant_expiry', amount: -40, grantId: 'g_a' },
    ]);
    assert.equal(r.lots.amount, 100);
  });

  test('units given back to an expired grant expire even while the balance owes', () => {
    const h = hold(lotsOf([newGrant('g_1', { amount: 100, expiresAtMs: T0 + 10 })]), 100, T0);
    const owing = take(h.lots, 30, T0).lots;
    const r = checked(releaseHold(owing, h.heldFrom, 100, T0 + 20), T0 + 20);
    assert.deepEqual(r.transactions, [{ kind: 'grant_expiry', amount: -100, grantId: 'g_1' }]);
    assert.equal(r.lots.amount, -30);
    assert.equal(debtOf(r.lots), 30);
  });
});

describe('void', () => {
  test('removes the unheld remaining with one grant_void; held units are voided when their event settles', () => {
    const h = hold(lotsOf([newGrant('g_1', { amount: 100 })]), 30, T0);
    const voided = checked(ok(voidGrant(h.lots, 'g_1', T0 + 1)), T0 + 1);
    assert.deepEqual(voided.transactions, [{ kind: 'grant_void', amount: -70, grantId: 'g_1' }]);
    const g = grantOf(voided.lots, 'g_1');
    assert.deepEqual([g.remaining, g.held, g.voidedAtMs, statusOf(g, T0 + 1)], [30, 30, T0 + 1, 'voided']);

    assert.deepEqual(take(voided.lots, 5, T0 + 2).drawnFrom, [], 'nothing is drawn from a voided grant');

    const settled = checked(settleHold(voided.lots, h.heldFrom, 30, 10, T0 + 3), T0 + 3);
    assert.deepEqual(settled.transactions, [
      { kind: 'usage', amount: -10, grantId: null, drawnFrom: [{ grantId: 'g_1', amount: 10 }] },
      { kind: 'grant_void', amount: -20, grantId: 'g_1' },
    ]);
    assert.equal(settled.lots.amount, 0);

    const cancelled = checked(releaseHold(voided.lots, h.heldFrom, 30, T0 + 3), T0 + 3);
    assert.deepEqual(cancelled.transactions, [{ kind: 'grant_void', amount: -30, grantId: 'g_1' }]);
  });

  test('voiding a voided grant changes nothing', () => {
    const once = ok(voidGrant(lotsOf([newGrant('g_1')]), 'g_1', T0));
    const twice = ok(voidGrant(once.lots, 'g_1', T0 + 5));
    assert.deepEqual(twice.transactions, []);
    assert.deepEqual(twice.lots, once.lots);
  });

  test('an expired, depleted or unknown grant is refused, and nothing changes', () => {
    const lots = lotsOf([newGrant('g_e', { expiresAtMs: T0 + 10 }), newGrant('g_d', { amount: 5, priority: 0 })]);
    const used = take(lots, 5, T0).lots;
    assert.deepEqual(voidGrant(used, 'g_e', T0 + 10), {
      ok: false,
      reason: 'grant_expired',
      message: 'the grant has expired',
    });
    assert.equal((voidGrant(used, 'g_d', T0) as { reason: string }).reason, 'grant_depleted');
    assert.equal((voidGrant(used, 'g_x', T0) as { reason: string }).reason, 'not_found');
  });

  test('a scheduled grant voided never joins the balance', () => {
    const lots = lotsOf([newGrant('g_1', { effectiveAtMs: T0 + 50 })]);
    const v = checked(ok(voidGrant(lots, 'g_1', T0)), T0);
    assert.deepEqual(v.transactions, []);
    const later = checked(advanceTo(v.lots, T0 + 100), T0 + 100);
    assert.deepEqual(later.transactions, []);
    assert.equal(later.lots.amount, 0);
    assert.equal(statusOf(grantOf(later.lots, 'g_1'), T0 + 100), 'voided');
  });
});

describe('patch', () => {
  test('a new priority changes the drawing order', () => {
    const lots = lotsOf([newGrant('g_a', { amount: 10 }), newGrant('g_b', { amount: 10 })]);
    const p = checked(ok(patchGrant(lots, 'g_b', { priority: 0 }, T0)), T0);
    assert.deepEqual(p.transactions, []);
    assert.deepEqual(take(p.lots, 5, T0).drawnFrom, [{ grantId: 'g_b', amount: 5 }]);
  });

  test('an expires_at at or before now expires the grant at once; held units stay held', () => {
    const h = hold(lotsOf([newGrant('g_1', { amount: 100, effectiveAtMs: T0 - 100 })]), 30, T0);
    for (const at of [T0 - 1, T0]) {
      const p = checked(ok(patchGrant(h.lots, 'g_1', { expiresAtMs: at }, T0)), T0);
      assert.deepEqual(p.transactions, [{ kind: 'grant_expiry', amount: -70, grantId: 'g_1' }]);
      assert.deepEqual(rh(p.lots, 'g_1'), [30, 30]);
      assert.equal(statusOf(grantOf(p.lots, 'g_1'), T0), 'expired');
    }
  });

  test('an expires_at in the future moves the expiry; null removes it', () => {
    const lots = lotsOf([newGrant('g_1', { expiresAtMs: T0 + 10 })]);
    const later = ok(patchGrant(lots, 'g_1', { expiresAtMs: T0 + 20 }, T0)).lots;
    assert.deepEqual(advanceTo(later, T0 + 10).transactions, []);
    assert.equal(advanceTo(later, T0 + 20).lots.amount, 0);
    const never = ok(patchGrant(lots, 'g_1', { expiresAtMs: null }, T0)).lots;
    assert.equal(advanceTo(never, T0 + 1e12).lots.amount, 100);
  });

  test('an expires_at not after effective_at is refused, naming the field', () => {
    const lots = lotsOf([newGrant('g_s', { effectiveAtMs: T0 + 100 }), newGrant('g_a', { effectiveAtMs: T0 - 5 })]);
    for (const [id, at] of [
      ['g_s', T0 + 100],
      ['g_s', T0],
      ['g_a', T0 - 5],
    ] as const) {
      assert.deepEqual(patchGrant(lots, id, { expiresAtMs: at }, T0), {
        ok: false,
        reason: 'expires_at_must_be_after_effective_at',
        message: 'expires_at must be after effective_at',
        param: 'expires_at',
      });
    }
  });

  test('on an expired, depleted or voided grant: refused', () => {
    const lots = lotsOf([
      newGrant('g_e', { expiresAtMs: T0 + 10 }),
      newGrant('g_d', { amount: 5, priority: 0 }),
      newGrant('g_v'),
    ]);
    const state = ok(voidGrant(take(lots, 5, T0).lots, 'g_v', T0)).lots;
    const reason = (id: string) => (patchGrant(state, id, { priority: 1 }, T0 + 10) as { reason?: string }).reason;
    assert.deepEqual(['g_e', 'g_d', 'g_v', 'g_x'].map(reason), [
      'grant_expired',
      'grant_depleted',
      'grant_voided',
      'not_found',
    ]);
  });

  test('a scheduled grant may be changed', () => {
    const lots = lotsOf([newGrant('g_1', { effectiveAtMs: T0 + 100 })]);
    const p = ok(patchGrant(lots, 'g_1', { priority: 7, expiresAtMs: T0 + 200 }, T0));
    assert.deepEqual([grantOf(p.lots, 'g_1').priority, grantOf(p.lots, 'g_1').expiresAtMs], [7, T0 + 200]);
  });
});

describe('reading', () => {
  test('status precedence: voided > expired > scheduled > depleted > active', () => {
    const g = grantOf(lotsOf([newGrant('g_1', { expiresAtMs: T0 + 10 })]), 'g_1');
    const table: [Partial<Grant>, number, string][] = [
      [{}, T0, 'active'],
      [{ remaining: 0 }, T0, 'depleted'],
      [{ effectiveAtMs: T0 + 5 }, T0, 'scheduled'],
      [{ remaining: 0 }, T0 + 10, 'expired'],
      [{ voidedAtMs: T0 }, T0 + 10, 'voided'],
      [{ voidedAtMs: T0, effectiveAtMs: T0 + 5 }, T0, 'voided'],
    ];
    for (const [over, at, status] of table) assert.equal(statusOf({ ...g, ...over }, at), status);
  });

  test('nextExpiry: the soonest expiry of unheld units, summed over grants expiring at that instant', () => {
    const lots = lotsOf([
      newGrant('g_held', { amount: 10, priority: 0, expiresAtMs: T0 + 50 }),
      newGrant('g_a', { amount: 30, expiresAtMs: T0 + 100 }),
      newGrant('g_b', { amount: 20, expiresAtMs: T0 + 100 }),
      newGrant('g_c', { amount: 40, expiresAtMs: T0 + 200 }),
      newGrant('g_never', { amount: 5 }),
      newGrant('g_later', { amount: 9, effectiveAtMs: T0 + 10, expiresAtMs: T0 + 20 }),
    ]);
    const held = hold(lots, 10, T0).lots;
    assert.deepEqual(nextExpiry(held, T0), { expiresAtMs: T0 + 100, amount: 50 });
    assert.deepEqual(nextExpiry(held, T0 + 100), { expiresAtMs: T0 + 200, amount: 40 });
    assert.equal(nextExpiry(held, T0 + 200), null);
    assert.deepEqual(nextExpiry(held, T0 + 15), { expiresAtMs: T0 + 20, amount: 9 }, 'a grant joins at its start');
  });

  test('checkInvariant names what is broken', () => {
    const good = hold(lotsOf([newGrant('g_1', { amount: 10, expiresAtMs: T0 + 5 })]), 4, T0).lots;
    assert.deepEqual(checkInvariant(good, T0), []);
    const g = grantOf(good, 'g_1');
    const broken: [Lots, RegExp][] = [
      [{ ...good, amount: 11 }, /exceeds Σ remaining/],
      [{ ...good, pending: 3 }, /pending 3 < Σ held 4/],
      [{ ...good, grants: [{ ...g, held: 11 }] }, /not 0 ≤ held/],
      [{ ...good, amount: 9 }, /unheld units while the balance owes 1/],
      [{ ...good, grants: [{ ...g, closed: true }] }, /closed with unheld units/],
      [{ ...good, grants: [g, g] }, /appears twice/],
      [{ ...good, amount: 0.5 }, /amount is not a safe integer/],
    ];
    for (const [lots, re] of broken) assert.match(checkInvariant(lots, T0).join('\n'), re);
    assert.match(checkInvariant(good, T0 + 5).join('\n'), /expiry at .* not applied/);
  });
});

describe('integers and inputs', () => {
  test('amounts outside the safe integers are refused with a RangeError', () => {
    const lots = lotsOf([newGrant('g_1')]);
    assert.throws(() => take(lots, 1.5, T0), RangeError);
    assert.throws(() => take(lots, -1, T0), RangeError);
    assert.throws(() => hold(lots, Number.MAX_SAFE_INTEGER + 1, T0), RangeError);
    const big = lotsOf([newGrant('g_1', { amount: Number.MAX_SAFE_INTEGER })]);
    assert.throws(() => addGrant(big, newGrant('g_2', { amount: 1 }), T0), RangeError);
  });

  test('a malformed new grant is a RangeError (the HTTP layer refuses it first)', () => {
    const lots = lotsOf([newGrant('g_1')]);
    for (const bad of [
      newGrant('g_1'),
      newGrant('g_2', { amount: 0 }),
      newGrant('g_2', { amount: 2.5 }),
      newGrant('g_2', { priority: 101 }),
      newGrant('g_2', { priority: -1 }),
      newGrant('g_2', { expiresAtMs: T0 }),
      newGrant('g_2', { category: 'gift' as GrantCategory }),
    ])
      assert.throws(() => addGrant(lots, bad, T0), RangeError, JSON.stringify(bad));
    assert.throws(() => patchGrant(lots, 'g_1', { priority: 100.5 }, T0), RangeError);
  });

  test('no function changes the lots it is given', () => {
    const lots = deepFreeze(hold(lotsOf([newGrant('g_1', { expiresAtMs: T0 + 10 })]), 20, T0));
    const h = lots.heldFrom;
    take(lots.lots, 5, T0 + 20);
    hold(lots.lots, 5, T0 + 20);
    settleHold(lots.lots, h, 20, 30, T0 + 20);
    releaseHold(lots.lots, h, 20, T0 + 20);
    addGrant(lots.lots, newGrant('g_2'), T0 + 20);
    ok(voidGrant(lots.lots, 'g_1', T0 + 1));
    ok(patchGrant(lots.lots, 'g_1', { expiresAtMs: T0 + 1 }, T0 + 1));
    advanceTo(lots.lots, T0 + 20);
    nextExpiry(lots.lots, T0 + 20);
  });
});

// ---------------------------------------------------------------------------------------------
// Property: random sequences against the reference model

type Op =
  | {
      op: 'grant';
      amount: number;
      priority: number;
      category: GrantCategory;
      source: GrantSource;
      kind: OpeningKind;
      /** Effective at (now rounded down to 5 ms) + this. */
      startOffset: number;
      /** Expires at effective + this, or never. */
      lifetime: number | null;
    }
  | { op: 'take'; units: number }
  | { op: 'hold'; units: number }
  | { op: 'settle'; pick: number; mode: 'below' | 'equal' | 'above'; delta: number }
  | { op: 'cancel'; pick: number }
  | { op: 'void'; pick: number }
  /** expiry: at (now rounded down to 5 ms) + this, or never, or kept. */
  | { op: 'patch'; pick: number; priority: number | null; expiry: 'keep' | 'never' | number }
  | { op: 'clock'; ms: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('grant' as const),
      amount: fc.integer({ min: 1, max: 40 }),
      priority: fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(0, 50) },
        { weight: 1, arbitrary: fc.integer({ min: 0, max: 100 }) },
      ),
      category: fc.constantFrom<GrantCategory>('promotional', 'paid'),
      source: fc.constantFrom(...GRANT_SOURCES),
      kind: fc.constantFrom<OpeningKind>('grant', 'grant', 'refill', 'adjustment'),
      startOffset: fc.constantFrom(-20, -5, 0, 0, 0, 5, 10, 25),
      lifetime: fc.option(fc.constantFrom(1, 5, 5, 10, 20, 40), { nil: null, freq: 2 }),
    }),
  },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('take' as const), units: fc.integer({ min: 0, max: 50 }) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('hold' as const), units: fc.integer({ min: 0, max: 50 }) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('settle' as const),
      pick: fc.nat(),
      mode: fc.constantFrom('below' as const, 'equal' as const, 'above' as const),
      delta: fc.integer({ min: 1, max: 30 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('cancel' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('void' as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('patch' as const),
      pick: fc.nat(),
      priority: fc.option(fc.integer({ min: 0, max: 100 }), { nil: null }),
      expiry: fc.oneof(
        fc.constant('keep' as const),
        fc.constant('never' as const),
        fc.constantFrom(-10, -5, 0, 5, 10, 20),
        fc.integer({ min: -15, max: 30 }),
      ),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ op: fc.constant('clock' as const), ms: fc.constantFrom(0, 1, 5, 5, 5, 10, 10, 20) }),
  },
);

/** Grant ids not in the order they are made, so that grant_id order is tested, not insertion order. */
const idOf = (n: number) => `g_${String((n * 37) % 101).padStart(3, '0')}`;

function runSequence(ops: Op[]): void {
  let now = T0;
  let lots: Lots = deepFreeze({ amount: 0, pending: 0, grants: [] });
  const ref = new Reference(now);
  const holds: { refId: number; heldFrom: Allocation[]; heldTotal: number }[] = [];
  let made = 0;
  let posted = 0;
  /** An existing grant's id, or (one time in n + 1) an unknown one. */
  const pickGrant = (pick: number) => (pick % (made + 1) === made ? 'g_unknown' : idOf(pick % (made + 1)));

  ops.forEach((o, i) => {
    const at = `step ${i} ${JSON.stringify(o)}`;
    let step: Step;
    switch (o.op) {
      case 'grant': {
        const effectiveAtMs = now - (now % 5) + o.startOffset;
        const g: NewGrant = {
          grantId: idOf(made++),
          amount: o.amount,
          priority: o.priority,
          category: o.category,
          source: o.source,
          effectiveAtMs,
          expiresAtMs: o.lifetime === null ? null : effectiveAtMs + o.lifetime,
        };
        step = addGrant(lots, g, now, o.kind);
        ref.addGrant({ ...g, id: g.grantId }, o.kind);
        break;
      }
      case 'take': {
        const r = take(lots, o.units, now);
        assert.deepEqual(r.drawnFrom, ref.take(o.units, 'usage'), at);
        step = r;
        break;
      }
      case 'hold': {
        const r = hold(lots, o.units, now);
        const rr = ref.hold(o.units);
        assert.deepEqual(r.heldFrom, rr.heldFrom, at);
        holds.push({ refId: rr.id, heldFrom: r.heldFrom, heldTotal: o.units });
        step = r;
        break;
      }
      case 'settle':
      case 'cancel': {
        if (holds.length === 0) {
          step = advanceTo(lots, now);
          ref.moveClock(now);
          break;
        }
        const [h] = holds.splice(o.pick % holds.length, 1);
        if (h === undefined) throw new Error('unreachable');
        if (o.op === 'cancel') {
          step = releaseHold(lots, h.heldFrom, h.heldTotal, now);
          ref.settle(h.refId, null);
        } else {
          const cost =
            o.mode === 'equal'
              ? h.heldTotal
              : o.mode === 'below'
                ? Math.max(0, h.heldTotal - o.delta)
                : h.heldTotal + o.delta;
          step = settleHold(lots, h.heldFrom, h.heldTotal, cost, now);
          ref.settle(h.refId, cost);
        }
        break;
      }
      case 'void': {
        const id = pickGrant(o.pick);
        const r = voidGrant(lots, id, now);
        const refusal = ref.voidGrant(id);
        assert.equal(r.ok ? null : r.reason, refusal, at);
        step = r.ok ? r.value : advanceTo(lots, now);
        break;
      }
      case 'patch': {
        const id = pickGrant(o.pick);
        const patch: { priority?: number; expiresAtMs?: number | null } = {};
        if (o.priority !== null) patch.priority = o.priority;
        if (o.expiry !== 'keep') patch.expiresAtMs = o.expiry === 'never' ? null : now - (now % 5) + o.expiry;
        const r = patchGrant(lots, id, patch, now);
        const refusal = ref.patch(id, patch);
        assert.equal(r.ok ? null : r.reason, refusal, at);
        step = r.ok ? r.value : advanceTo(lots, now);
        break;
      }
      case 'clock': {
        now += o.ms;
        step = advanceTo(lots, now);
        ref.moveClock(now);
        break;
      }
    }

    assert.deepEqual(step.transactions, ref.log, `${at}: transactions`);
    lots = deepFreeze(step.lots);
    for (const t of step.transactions) posted += t.amount;
    assert.deepEqual(checkInvariant(lots, now), [], `${at}: invariant`);
    assert.equal(lots.amount, ref.amount, `${at}: amount`);
    assert.equal(lots.amount, posted, `${at}: amount is the sum of the transactions`);
    assert.equal(lots.pending, ref.pending, `${at}: pending`);
    assert.equal(debtOf(lots), ref.debt, `${at}: debt`);
    // By grant id: the lots keep their own (drawing) order, the reference its order of creation.
    const byId = (a: unknown[], b: unknown[]) => String(a[0]).localeCompare(String(b[0]));
    assert.deepEqual(
      lots.grants.map((g) => [g.grantId, g.remaining, g.held, statusOf(g, now), g.priority, g.expiresAtMs]).sort(byId),
      ref.grants.map((g) => [g.id, ref.remaining(g), ref.held(g), ref.status(g), g.priority, g.expiresAtMs]).sort(byId),
      `${at}: grants`,
    );
    assert.deepEqual(nextExpiry(lots, now), ref.nextExpiry(), `${at}: next expiry`);
    const again = advanceTo(lots, now);
    assert.deepEqual(again.transactions, [], `${at}: advanceTo twice`);
    assert.deepEqual(again.lots, lots, `${at}: advanceTo twice`);
  });
}

/** Runs of the sequence property; each sequence has up to SEQUENCE_STEPS_MAX steps. */
const SEQUENCE_RUNS = 1000;
const SEQUENCE_STEPS_MAX = 40;

test(`property: ${SEQUENCE_RUNS} random sequences agree with the reference; the invariant holds at every step`, () => {
  fc.assert(fc.property(fc.array(opArb, { minLength: 1, maxLength: SEQUENCE_STEPS_MAX, size: 'max' }), runSequence), {
    numRuns: SEQUENCE_RUNS,
  });
});

test('property: compareDrawingOrder is the contract key order, total and antisymmetric', () => {
  const base = grantOf(lotsOf([newGrant('g_a')]), 'g_a');
  const grantArb = fc.record({
    grantId: fc.constantFrom('g_a', 'g_b', 'g_B'),
    priority: fc.constantFrom(0, 1, 50),
    expiresAtMs: fc.constantFrom(null, T0 + 1, T0 + 2),
    category: fc.constantFrom<GrantCategory>('promotional', 'paid'),
    effectiveAtMs: fc.constantFrom(T0 - 2, T0 - 1, T0),
  });
  const keyOf = (g: Pick<Grant, 'grantId' | 'priority' | 'expiresAtMs' | 'category' | 'effectiveAtMs'>) =>
    [g.priority, g.expiresAtMs ?? Infinity, g.category === 'paid' ? 1 : 0, g.effectiveAtMs, g.grantId] as const;
  const sign = (n: number) => (n < 0 ? -1 : n > 0 ? 1 : 0);
  const keyCompare = (a: readonly (number | string)[], b: readonly (number | string)[]): number => {
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
    return 0;
  };
  fc.assert(
    fc.property(grantArb, grantArb, (a, b) => {
      // A grant's other fields take no part in the order.
      const ga = { ...base, ...a };
      const gb = { ...base, ...b };
      assert.equal(sign(compareDrawingOrder(ga, gb)), keyCompare(keyOf(ga), keyOf(gb)));
      assert.equal(sign(compareDrawingOrder(ga, gb)) + sign(compareDrawingOrder(gb, ga)), 0);
    }),
    { numRuns: 500 },
  );
});
