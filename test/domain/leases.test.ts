// Guarantees (contract "Leases"; domain/leases.ts and drawMany's lease draws in domain/grants.ts): a lease's status
// turns expired at the instant of its expires_at and a read then sees its remaining released; an event covers at
// most what the lease still holds; a lease's spend counts once. Covered units come from the grants the lease holds,
// in the order it drew them (grants expired or voided meanwhile included), the rest in drawing order, and `pending`
// falls by exactly what is covered; what the lease held beyond its grants is drawn when used. Over any sequence of
// grants, leases, events, closes, voids and time, the grants invariant holds, pending is exactly what open leases and
// pending events hold, and no unit is created or lost.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { addGrant, advanceTo, checkInvariant, debtOf, drawMany, hold } from '../../src/domain/grants.js';
import { patchGrant, releaseHold, voidGrant } from '../../src/domain/grants.js';
import type { Allocation, Draw, Grant, GrantTransaction, Lots, NewGrant, Step } from '../../src/domain/grants.js';
import { coveredBy, isOpenAt, leaseAt, leaseOpened, leaseReleased, remainingOf } from '../../src/domain/leases.js';
import { type LeaseRow, sameLeaseRequest, statusAt } from '../../src/domain/leases.js';
import { applySpend, noSpend } from '../../src/domain/spend.js';

const T0 = 1_700_000_000_000; // 2023-11-14T22:13:20Z
const DAY_MS = 86_400_000;
const EMPTY: Lots = { amount: 0, pending: 0, grants: [] };

const grant = (grantId: string, amount = 100, over: Partial<NewGrant> = {}): NewGrant => ({
  ...{ grantId, amount, priority: 50, category: 'promotional' as const, source: 'grant' as const },
  ...{ effectiveAtMs: T0, expiresAtMs: null, ...over },
});

const lotsOf = (grants: NewGrant[], nowMs = T0): Lots => grants.reduce((l, g) => addGrant(l, g, nowMs).lots, EMPTY);

function checked<S extends Step>(s: S, nowMs: number): S {
  assert.deepEqual(checkInvariant(s.lots, nowMs), []);
  return s;
}

const grantOf = (lots: Lots, id: string): Grant => lots.grants.find((g) => g.grantId === id)!;
const sum = (xs: readonly Allocation[]) => xs.reduce((n, x) => n + x.amount, 0);
/** Allocations as `grant:units …`, and lots as `amount A pending P; grant remaining/held …` (in their order). */
const shown = (xs: readonly Allocation[]) => xs.map((x) => `${x.grantId}:${x.amount}`).join(' ');
const txShown = (t: GrantTransaction) => [t.kind, t.amount, shown(t.drawnFrom ?? []), t.ref ?? t.grantId].join(' ');
const figures = (lots: Lots) => {
  const grants = lots.grants.map((g) => `${g.grantId} ${g.remaining}/${g.held}`).join(' ');
  return `amount ${lots.amount} pending ${lots.pending}; ${grants}`;
};

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

const leaseRow = (over: Partial<LeaseRow> = {}): LeaseRow => ({
  ...{ leaseId: 'ls_1', companyId: 'c_1', accountId: 'a_1', denomination: 'tokens', clientId: null, amount: 100 },
  ...{ used: 0, released: 0, status: 'open' as const, heldFrom: [], expiresAtMs: T0 + 300_000, createdAtMs: T0 },
  ...{ closedAtMs: null, ...over },
});

/** A complete event of `units`, `covered` of them by lease ls_1 (or `leaseId`). */
const use = (ref: string, units: number, covered?: number, leaseId = 'ls_1'): Draw =>
  covered === undefined ? { units, hold: false, ref } : { units, hold: false, ref, lease: { leaseId, covered } };

describe('the lease rule', () => {
  test('coveredBy: what the lease still holds, up to the cost, never below 0', () => {
    for (const row of ['0 5 0', '3 5 3', '5 5 5', '10 5 5', '10 0 0', '-2 5 0']) {
      const [remaining, cost, covered] = row.split(' ').map(Number) as [number, number, number];
      assert.equal(coveredBy(remaining, cost), covered, `coveredBy(${remaining}, ${cost})`);
    }
    const min = fc.property(fc.nat(1_000), fc.nat(1_000), (r, c) => coveredBy(r, c) === Math.min(r, c));
    fc.assert(min, { numRuns: 200 });
  });

  test('statusAt and isOpenAt: open before expires_at, expired from that instant on; closed and expired stay', () => {
    const l = leaseRow({ expiresAtMs: T0 + 1000 });
    for (const [after, want] of Object.entries({ 0: 'open', 999: 'open', 1000: 'expired', 1001: 'expired' })) {
      assert.equal(statusAt(l, T0 + Number(after)), want, `at +${after} ms`);
      assert.equal(isOpenAt(l, T0 + Number(after)), want === 'open');
    }
    const closed = leaseRow({ status: 'closed', expiresAtMs: T0 + 1000 });
    assert.equal(statusAt(closed, T0 + 5000), 'closed', 'a closed lease never turns expired');
    assert.equal(statusAt(leaseRow({ status: 'expired' }), T0), 'expired', 'recorded expired is expired');
    assert.equal(isOpenAt(closed, T0), false);
  });

  test('leaseAt: from expires_at on, the remaining reads released at expires_at; nothing else moves', () => {
    const heldFrom = [{ grantId: 'g_1', amount: 60 }];
    const l = leaseRow({ amount: 100, used: 30, released: 0, heldFrom, expiresAtMs: T0 + 1000 });
    assert.equal(remainingOf(l), 70, 'remaining = amount − used − released');
    assert.equal(leaseAt(l, T0 + 999), l, 'before its expiry: the lease as it is');
    for (const at of [T0 + 1000, T0 + 50_000]) {
      const x = leaseAt(l, at);
      assert.deepEqual(x, { ...l, status: 'expired', released: 70, heldFrom: [], closedAtMs: T0 + 1000 });
      assert.equal(remainingOf(x), 0);
      assert.equal(leaseAt(x, at + 1), x, 'applied once');
    }
    const closed = leaseRow({ status: 'closed', used: 10, released: 90, closedAtMs: T0 + 5 });
    assert.equal(leaseAt(closed, T0 + 10_000_000), closed);
  });

  test('sameLeaseRequest: the balance and the amount are the content; the ttl is not', () => {
    const l = leaseRow({ expiresAtMs: T0 + 5000 });
    const r = { accountId: 'a_1', denomination: 'tokens', amount: 100 };
    assert.equal(sameLeaseRequest(l, r), true);
    const longer: LeaseRow = { ...l, expiresAtMs: T0 + 3_600_000 };
    assert.equal(sameLeaseRequest(longer, r), true, 'another ttl: the same request');
    assert.equal(sameLeaseRequest(l, { ...r, accountId: 'a_2' }), false);
    assert.equal(sameLeaseRequest(l, { ...r, denomination: 'usd' }), false);
    assert.equal(sameLeaseRequest(l, { ...r, amount: 101 }), false);
  });

  test('spend: the amount counts when opened, covered events not again; what it gives back leaves its window', () => {
    const l = leaseRow({ amount: 100, createdAtMs: T0 });
    assert.deepEqual(leaseOpened(100, T0), { units: 100, takenAtMs: T0 });
    assert.deepEqual(leaseReleased(l, 40), { units: -40, takenAtMs: T0 }, 'counted back at the instant it was opened');
    // Opened (100), events of 60 covered (counted 0 more: ingest counts cost − covered), closed (40 back): 60.
    const opened = applySpend(noSpend(T0), [leaseOpened(100, T0)], T0);
    const sameDay = applySpend(opened, [leaseReleased(l, 40)], T0 + 1000);
    assert.deepEqual([sameDay.day, sameDay.month], [60, 60]);
    // Released the next day (same month): the new day is untouched, the month gives the 40 back.
    const nextDay = applySpend(opened, [leaseReleased(l, 40)], T0 + DAY_MS);
    assert.deepEqual([nextDay.day, nextDay.month], [0, 60]);
  });
});

describe('drawMany with a lease', () => {
  // g_a (priority 10, 50), g_b (20, 50), g_c (30, 100); lease ls_1 holds 80: all of g_a, 30 of g_b.
  const setup = () => {
    const lots = lotsOf([grant('g_a', 50, { priority: 10 }), grant('g_b', 50, { priority: 20 }), grant('g_c', 100)]);
    const h = hold(lots, 80, T0);
    assert.equal(shown(h.heldFrom), 'g_a:50 g_b:30');
    return { lots: deepFreeze(h.lots), held: deepFreeze(new Map([['ls_1', h.heldFrom]])) };
  };

  test('covered units are the lease held units in the order it drew them; pending falls by exactly covered', () => {
    const { lots, held } = setup();
    const r = checked(drawMany(lots, [use('ev_1', 60, 60)], T0, held), T0);
    assert.equal(shown(r.allocations[0]!), 'g_a:50 g_b:10');
    assert.deepEqual(r.transactions.map(txShown), ['usage -60 g_a:50 g_b:10 ev_1']);
    assert.equal(figures(r.lots), 'amount 140 pending 20; g_a 0/0 g_b 40/20 g_c 100/0');
    assert.deepEqual([...r.leases.keys()], ['ls_1']);
    assert.equal(shown(r.leases.get('ls_1')!), 'g_b:20', 'what it still holds');
  });

  test('the uncovered rest is drawn in drawing order from unheld units, after the covered part', () => {
    const { lots, held } = setup();
    // g_d comes first in drawing order, but the covered part comes from the lease's grants.
    const more = addGrant(lots, grant('g_d', 40, { priority: 0 }), T0).lots;
    const r = checked(drawMany(more, [use('ev_1', 100, 30)], T0, held), T0);
    assert.equal(shown(r.allocations[0]!), 'g_a:30 g_d:40 g_b:20 g_c:10');
    assert.equal(figures(r.lots), 'amount 140 pending 50; g_d 0/0 g_a 20/20 g_b 30/30 g_c 90/0');
    assert.equal(shown(r.leases.get('ls_1')!), 'g_a:20 g_b:30');
  });

  test('the order of heldFrom wins over a drawing order changed after the lease was opened', () => {
    const { lots, held } = setup();
    const patched = patchGrant(lots, 'g_b', { priority: 0 }, T0);
    assert.ok(patched.ok);
    const r = checked(drawMany(patched.value.lots, [use('ev_1', 40, 40)], T0, held), T0);
    assert.equal(shown(r.allocations[0]!), 'g_a:40');
    assert.equal(shown(r.leases.get('ls_1')!), 'g_a:10 g_b:30');
  });

  test('draws in one call use a lease in turn; another lease not drawn comes back as given', () => {
    const { lots, held } = setup();
    const m = hold(lots, 30, T0);
    assert.equal(shown(m.heldFrom), 'g_b:20 g_c:10');
    const both = new Map([...held, ['ls_2', m.heldFrom]]);
    const draws = [use('ev_1', 60, 60), use('ev_2', 10), use('ev_3', 30, 20), { units: 5, hold: true, ref: 'p' }];
    const r = checked(drawMany(m.lots, draws, T0, both), T0);
    assert.deepEqual(r.allocations.map(shown), ['g_a:50 g_b:10', 'g_c:10', 'g_b:20 g_c:10', 'g_c:5']);
    assert.deepEqual([shown(r.leases.get('ls_1')!), r.leases.get('ls_2')], ['', m.heldFrom]);
    assert.equal(figures(r.lots), 'amount 100 pending 35; g_a 0/0 g_b 20/20 g_c 80/15');
    const txs = ['usage -60 g_a:50 g_b:10 ev_1', 'usage -10 g_c:10 ev_2', 'usage -30 g_b:20 g_c:10 ev_3'];
    assert.deepEqual(r.transactions.map(txShown), txs, 'one usage per complete event; a hold is none');
  });

  test('a covered part of 0 is an ordinary draw', () => {
    const { lots, held } = setup();
    const r = checked(drawMany(lots, [use('ev_1', 10, 0)], T0, held), T0);
    assert.equal(shown(r.allocations[0]!), 'g_b:10');
    assert.deepEqual([r.lots.pending, r.leases.get('ls_1')], [80, held.get('ls_1')]);
  });

  test('units a lease held beyond its grants are drawn in drawing order when used, or owed', () => {
    const h = hold(lotsOf([grant('g_a', 50)]), 80, T0);
    assert.deepEqual([shown(h.heldFrom), h.lots.pending], ['g_a:50', 80]);
    const held = new Map([['ls_1', h.heldFrom]]);
    const more = addGrant(h.lots, grant('g_b', 100, { category: 'paid' }), T0).lots;
    const drawn = checked(drawMany(more, [use('ev_1', 80, 80)], T0, held), T0);
    assert.equal(shown(drawn.allocations[0]!), 'g_a:50 g_b:30');
    assert.equal(figures(drawn.lots), 'amount 70 pending 0; g_a 0/0 g_b 70/0');
    const owed = checked(drawMany(h.lots, [use('ev_1', 80, 80)], T0, held), T0);
    assert.equal(shown(owed.allocations[0]!), 'g_a:50');
    assert.deepEqual([owed.lots.amount, owed.lots.pending, debtOf(owed.lots)], [-30, 0, 30]);
    // Partly used (60: its 50 held on g_a and 10 beyond): the 20 it still holds beyond its grants are released.
    const part = checked(drawMany(more, [use('ev_1', 60, 60)], T0, held), T0);
    assert.deepEqual([part.leases.get('ls_1'), part.lots.pending], [[], 20]);
    const released = checked(releaseHold(part.lots, [], 20, T0), T0);
    assert.deepEqual([released.transactions, released.lots.pending, released.lots.amount], [[], 0, 90]);
  });

  for (const how of ['expired', 'voided'] as const) {
    test(`a grant ${how} while the lease held its units: they can be used; released, they leave at once`, () => {
      const lots = lotsOf([grant('g_a', 50, { expiresAtMs: T0 + 100 }), grant('g_b', 100, { category: 'paid' })]);
      const h = hold(lots, 70, T0);
      assert.equal(shown(h.heldFrom), 'g_a:50 g_b:20');
      let before = h.lots;
      if (how === 'voided') {
        const v = voidGrant(before, 'g_a', T0 + 10);
        assert.ok(v.ok);
        assert.deepEqual(v.value.transactions, [], 'all of it held: nothing leaves yet');
        before = v.value.lots;
      }
      // Used after the expiry (applied within the call itself) or the void.
      const at = T0 + 150;
      const r = checked(drawMany(before, [use('ev_1', 30, 30)], at, new Map([['ls_1', h.heldFrom]])), at);
      assert.deepEqual(r.transactions.map(txShown), ['usage -30 g_a:30 ev_1'], 'the expiry or void: 0, no transaction');
      assert.equal(figures(r.lots), 'amount 120 pending 40; g_a 20/20 g_b 100/20');
      assert.equal(grantOf(r.lots, 'g_a').closed, true);
      const rest = r.leases.get('ls_1')!;
      assert.equal(shown(rest), 'g_a:20 g_b:20');
      const closed = checked(releaseHold(r.lots, rest, 40, at + 1), at + 1);
      const kind = how === 'voided' ? 'grant_void' : 'grant_expiry';
      assert.deepEqual(closed.transactions.map(txShown), [`${kind} -20  g_a`]);
      assert.equal(figures(closed.lots), 'amount 100 pending 0; g_a 0/0 g_b 100/0');
    });
  }

  test('refused with a RangeError, nothing changed: a lease on a pending draw, covered above units or pending', () => {
    const { lots, held } = setup();
    const pendingDraw: Draw = { units: 10, hold: true, ref: 'p', lease: { leaseId: 'ls_1', covered: 5 } };
    assert.throws(() => drawMany(lots, [pendingDraw], T0, held), RangeError);
    assert.throws(() => drawMany(lots, [use('ev_1', 10, 11)], T0, held), RangeError);
    assert.throws(() => drawMany(lots, [use('ev_1', 90, 81)], T0, new Map([['ls_1', []]])), RangeError);
    const other = new Map([['ls_1', [{ grantId: 'g_c', amount: 5 }]]]);
    assert.throws(() => drawMany(lots, [use('ev_1', 10, 10)], T0, other), RangeError, 'a grant it does not hold');
    assert.deepEqual(lots, setup().lots);
  });
});

// ---------------------------------------------------------------------------------------------
// Property: random sequences of grants, leases, events, closes, voids and time

type Op =
  | { op: 'grant'; amount: number; priority: number; paid: boolean; startOffset: number; lifetime: number | null }
  | { op: 'open'; amount: number; ttl: number }
  | { op: 'events'; events: { cost: number; lease: number | null; pending: boolean }[] }
  | { op: 'close'; pick: number }
  | { op: 'cancel'; pick: number }
  | { op: 'void'; pick: number }
  | { op: 'patch'; pick: number; priority: number }
  | { op: 'clock'; ms: number };

type Fields<K extends Op['op']> = {
  [F in Exclude<keyof Extract<Op, { op: K }>, 'op'>]: fc.Arbitrary<Extract<Op, { op: K }>[F]>;
};
/** Ops of kind `op`, drawn with this weight, their fields from these arbitraries. */
const kind = <K extends Op['op']>(weight: number, op: K, fields: Fields<K>) => ({
  weight,
  arbitrary: fc.record({ op: fc.constant(op), ...fields }) as unknown as fc.Arbitrary<Op>,
});
const event = fc.record({
  cost: fc.integer({ min: 0, max: 30 }),
  lease: fc.option(fc.nat(), { nil: null, freq: 4 }),
  pending: fc.constantFrom(false, false, false, true),
});
const opArb: fc.Arbitrary<Op> = fc.oneof(
  kind(3, 'grant', {
    ...{ amount: fc.integer({ min: 1, max: 200 }), priority: fc.constantFrom(0, 10, 50, 50, 90), paid: fc.boolean() },
    startOffset: fc.constantFrom(-5, 0, 0, 0, 5, 10),
    lifetime: fc.option(fc.constantFrom(1, 5, 10, 20, 40), { nil: null, freq: 2 }),
  }),
  kind(3, 'open', { amount: fc.integer({ min: 1, max: 60 }), ttl: fc.constantFrom(1, 5, 10, 30, 1000) }),
  kind(5, 'events', { events: fc.array(event, { minLength: 1, maxLength: 4 }) }),
  kind(2, 'close', { pick: fc.nat() }),
  kind(1, 'cancel', { pick: fc.nat() }),
  kind(1, 'void', { pick: fc.nat() }),
  kind(1, 'patch', { pick: fc.nat(), priority: fc.integer({ min: 0, max: 100 }) }),
  kind(3, 'clock', { ms: fc.constantFrom(0, 1, 5, 10, 20) }),
);

/** What is left of `from` after its first `n` units. */
function after(from: readonly Allocation[], n: number): Allocation[] {
  let left = n;
  return from.flatMap((a) => {
    const k = Math.min(a.amount, left);
    left -= k;
    return a.amount > k ? [{ grantId: a.grantId, amount: a.amount - k }] : [];
  });
}

const OPENING = new Set(['grant', 'refill', 'adjustment', 'proration', 'period_reset']);
const pick = <T>(xs: T[], n: number): T | undefined => (xs.length === 0 ? undefined : xs[n % xs.length]);

function runSequence(base: number, ops: Op[]): void {
  // A paid grant drawn last, of `base` units (0: none): mostly covered usage, or mostly debt.
  const s: State = {
    lots: deepFreeze(base === 0 ? EMPTY : lotsOf([grant('g_base', base, { priority: 100, category: 'paid' })])),
    now: T0,
    leases: [],
    pendings: [],
    t: { opened: base, used: 0, left: 0, posted: base },
  };
  const { leases, pendings, t } = s;
  let made = 0;
  let refs = 0;
  const open = () => leases.filter((l) => l.status === 'open');
  /** Lease `l` closed now, or expired (released as of its expires_at): what it still holds goes back. */
  const release = (lots: Lots, l: LeaseRow, how: 'closed' | 'expired'): Step => {
    const r = releaseHold(lots, l.heldFrom, remainingOf(l), s.now);
    const closed = { status: how, released: l.amount - l.used, heldFrom: [], closedAtMs: s.now };
    Object.assign(l, how === 'expired' ? leaseAt(l, s.now) : closed);
    return r;
  };
  const post = (step: Step) => {
    s.lots = deepFreeze(step.lots);
    for (const x of step.transactions) {
      t.posted += x.amount;
      if (OPENING.has(x.kind)) t.opened += x.amount;
      else if (x.kind === 'grant_expiry' || x.kind === 'grant_void') t.left -= x.amount;
    }
  };

  ops.forEach((o, i) => {
    const at = `step ${i} ${JSON.stringify(o)}`;
    const { lots, now } = s;
    let step: Step = advanceTo(lots, now);
    let usedNow = 0;
    if (o.op === 'grant') {
      const effectiveAtMs = now + o.startOffset;
      const expiresAtMs = o.lifetime === null ? null : effectiveAtMs + o.lifetime;
      const category = o.paid ? 'paid' : 'promotional';
      const id = `g_${String((made++ * 37) % 101).padStart(3, '0')}`;
      step = addGrant(lots, grant(id, o.amount, { priority: o.priority, category, effectiveAtMs, expiresAtMs }), now);
    } else if (o.op === 'open') {
      step = hold(lots, o.amount, now);
      const { heldFrom } = step as Step & { heldFrom: Allocation[] };
      leases.push(leaseRow({ leaseId: `ls_${leases.length}`, amount: o.amount, heldFrom, createdAtMs: now }));
      leases[leases.length - 1]!.expiresAtMs = now + o.ttl;
    } else if (o.op === 'events') {
      const live = open();
      const left = new Map(live.map((l) => [l.leaseId, remainingOf(l)]));
      const draws: Draw[] = o.events.map((e) => {
        const ref = `ev_${refs++}`;
        const l = e.lease === null ? undefined : pick(live, e.lease);
        if (e.pending || l === undefined) return { units: e.cost, hold: e.pending, ref };
        const covered = coveredBy(left.get(l.leaseId)!, e.cost);
        left.set(l.leaseId, left.get(l.leaseId)! - covered);
        return { units: e.cost, hold: false, ref, lease: { leaseId: l.leaseId, covered } };
      });
      const r = drawMany(lots, draws, now, deepFreeze(new Map(live.map((l) => [l.leaseId, l.heldFrom]))));
      let covered = 0;
      for (const l of live) {
        const c = remainingOf(l) - left.get(l.leaseId)!;
        covered += c;
        // What it still holds per grant: its heldFrom less the first `c` units (the rest it held beyond grants).
        assert.deepEqual(r.leases.get(l.leaseId), after(l.heldFrom, c), `${at}: ${l.leaseId} holds`);
        Object.assign(l, { used: l.used + c, heldFrom: r.leases.get(l.leaseId) });
      }
      let held = 0;
      draws.forEach((d, k) => {
        assert.ok(sum(r.allocations[k]!) <= d.units, `${at}: draw ${k} takes no more than its units`);
        if (d.hold) pendings.push({ cost: d.units, heldFrom: r.allocations[k]! });
        if (d.hold) held += d.units;
        else usedNow += d.units;
      });
      assert.equal(r.lots.pending - lots.pending, held - covered, `${at}: pending falls by exactly what is covered`);
      const usage = r.transactions.filter((x) => x.kind === 'usage').map((x) => `${x.ref} ${x.amount}`);
      const want = draws.filter((d) => !d.hold && d.units > 0).map((d) => `${d.ref} ${-d.units}`);
      assert.deepEqual(usage, want, `${at}: one usage per complete event, in order`);
      step = r;
    } else if (o.op === 'close') {
      const l = pick(open(), o.pick);
      if (l !== undefined) step = release(lots, l, 'closed');
    } else if (o.op === 'cancel') {
      const p = pick(pendings, o.pick);
      if (p !== undefined) step = releaseHold(lots, p.heldFrom, p.cost, now);
      if (p !== undefined) pendings.splice(pendings.indexOf(p), 1);
    } else if (o.op === 'void' || o.op === 'patch') {
      const id = pick(lots.grants, o.pick)?.grantId ?? 'g_none';
      const r = o.op === 'void' ? voidGrant(lots, id, now) : patchGrant(lots, id, { priority: o.priority }, now);
      if (r.ok) step = r.value;
    } else {
      s.now += o.ms;
      // As a posting does: the grants' instants first, then each lease due released as of its expires_at.
      step = advanceTo(lots, s.now);
      for (const l of open().filter((x) => !isOpenAt(x, s.now))) {
        const r = release(step.lots, l, 'expired');
        step = { lots: r.lots, transactions: [...step.transactions, ...r.transactions] };
        assert.equal(l.closedAtMs, l.expiresAtMs, `${at}: released as of its expires_at`);
      }
    }
    post(step);
    t.used += usedNow;
    const moved = step.transactions.filter((x) => x.kind !== 'usage').reduce((n, x) => n + x.amount, 0) - usedNow;
    assert.equal(s.lots.amount - lots.amount, moved, `${at}: amount moves by −costs and the grant transactions`);
    checkStep(at, s);
  });

  // Every lease closed: pending is what the pending events hold; then every event cancelled: nothing is held.
  for (const l of open()) post(release(s.lots, l, 'closed'));
  checkStep('all leases closed', s);
  assert.equal(s.lots.pending, heldBy(pendings), 'pending = what pending events hold');
  for (const p of pendings.splice(0)) post(releaseHold(s.lots, p.heldFrom, p.cost, s.now));
  checkStep('all events cancelled', s);
  assert.deepEqual([s.lots.pending, s.lots.grants.filter((g) => g.held !== 0)], [0, []]);
}

interface State {
  lots: Lots;
  now: number;
  leases: LeaseRow[];
  pendings: { cost: number; heldFrom: Allocation[] }[];
  /** Units opened, used by complete events, and gone with an expiry or a void; Σ every transaction's amount. */
  t: { opened: number; used: number; left: number; posted: number };
}

const heldBy = (pendings: State['pendings']) => pendings.reduce((n, p) => n + p.cost, 0);

function checkStep(at: string, { lots, now, leases, pendings, t }: State): void {
  assert.deepEqual(checkInvariant(lots, now), [], `${at}: invariant`);
  const live = leases.filter((l) => l.status === 'open');
  const leased = live.reduce((n, l) => n + remainingOf(l), 0);
  const pendingHeld = heldBy(pendings);
  assert.ok(leased <= lots.pending, `${at}: Σ open leases' remaining ≤ pending`);
  assert.equal(lots.pending, leased + pendingHeld, `${at}: pending = open leases + pending events`);
  for (const l of leases) {
    assert.equal(l.used + l.released + remainingOf(l), l.amount, `${at}: ${l.leaseId} adds up`);
    assert.ok(l.used >= 0 && l.released >= 0 && remainingOf(l) >= 0, `${at}: ${l.leaseId} figures`);
    assert.equal(statusAt(l, now), l.status, `${at}: ${l.leaseId} released at its expiry`);
    assert.ok(sum(l.heldFrom) <= remainingOf(l), `${at}: ${l.leaseId} holds per grant within its remaining`);
  }
  // Each grant's held units are exactly those the open leases and the pending events hold of it.
  for (const g of lots.grants) {
    const of = (xs: readonly Allocation[]) => sum(xs.filter((x) => x.grantId === g.grantId));
    const want = live.reduce((n, l) => n + of(l.heldFrom), 0) + pendings.reduce((n, p) => n + of(p.heldFrom), 0);
    assert.equal(g.held, want, `${at}: held of ${g.grantId}`);
  }
  // Conservation: every unit opened is on a grant, used by a complete event, or gone with an expiry or a void,
  // less what events used that no grant covered (debt). The balance is the sum of its transactions.
  const onGrants = lots.grants.filter((g) => g.opened).reduce((n, g) => n + g.remaining, 0);
  assert.equal(t.opened, onGrants + t.used + t.left - debtOf(lots), `${at}: no unit created or lost`);
  assert.equal(lots.amount, t.posted, `${at}: amount = Σ transactions`);
  assert.equal(lots.amount, t.opened - t.used - t.left, `${at}: amount = opened − used − gone`);
}

test('property: 600 random sequences keep the invariant, pending exact, and every unit accounted for', () => {
  const ops = fc.array(opArb, { minLength: 1, maxLength: 50, size: 'max' });
  fc.assert(fc.property(fc.constantFrom(0, 300, 1000), ops, runSequence), { numRuns: 600 });
});
