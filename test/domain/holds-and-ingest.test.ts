// Guarantees: a hold resolves exactly once by the settle rules, and ingest planning is all-or-nothing per request,
// never deducts a repeated client id twice, honours gate_on_balance, and conserves units (every balance change is a
// planned ledger entry or hold).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  balanceKey,
  companyScopedKey,
  normalizeEvent,
  type EventInput,
  type IngestRequest,
  type NormalizedEvent,
} from '../../src/domain/events.js';
import { planIngest, type BalanceFigures, type IngestContext, type KnownEvent } from '../../src/domain/ingest-plan.js';
import { HOLD_DURATION_MS, available, decideSettle, holdExpiresAt, isHoldExpired } from '../../src/domain/holds.js';
import { AMOUNT_MAX } from '../../src/domain/money.js';
import type { Price } from '../../src/domain/pricing.js';

/** Requests here carry no `timestamp`: no limit applies. */
const ANY_TIME = { nowMs: 0, maxAgeMs: Number.POSITIVE_INFINITY };

const NOW = 1_700_000_000_000;
const CO = 'c_1';
const ACC = 'a_1';

function norm(input: EventInput, index = 0): NormalizedEvent {
  const n = normalizeEvent(input, index, ANY_TIME);
  assert.ok(n.ok, `event ${index} normalises`);
  return n.value;
}

function req(
  events: EventInput[],
  opts: { gate?: boolean; accountId?: string; companyId?: string } = {},
): IngestRequest {
  const normalized = events.map((e, i) => norm(e, i));
  // Ids given when the request is received: a client id, else a new one (ev_gen_1, ev_gen_2, …).
  let n = 0;
  return {
    companyId: opts.companyId ?? CO,
    accountId: opts.accountId ?? ACC,
    events: normalized,
    eventIds: normalized.map((e) => e.clientId ?? `ev_gen_${++n}`),
    gate: opts.gate ?? false,
  };
}

function makeCtx(
  opts: {
    balances?: [accountId: string, denomination: string, amount: number, pending?: number][];
    prices?: Price[];
    known?: [companyId: string, eventId: string, known: KnownEvent][];
  } = {},
): IngestContext {
  return {
    nowMs: NOW,
    balances: new Map(
      (opts.balances ?? [[ACC, 'credits', 100, 0]]).map(([a, d, amount, pending]) => [
        balanceKey(a, d),
        { amount, pending: pending ?? 0 },
      ]),
    ),
    prices: new Map(
      (opts.prices ?? [{ type: 'api_call', denomination: 'credits', terms: { model: 'unit', unitAmount: '0.5' } }]).map(
        (p) => [companyScopedKey(CO, p.type), p],
      ),
    ),
    periods: new Map(),
    known: new Map((opts.known ?? []).map(([c, id, k]) => [companyScopedKey(c, id), k])),
  };
}

/** A deep copy of what planIngest may change, to compare before and after. */
function snapshot(ctx: IngestContext) {
  return {
    balances: [...ctx.balances].map(([k, b]) => [k, { ...b }] as const),
    known: [...ctx.known].map(([k, v]) => [k, { ...v }] as const),
  };
}

const fig = (ctx: IngestContext, denomination = 'credits', accountId = ACC): BalanceFigures => ({
  ...ctx.balances.get(balanceKey(accountId, denomination))!,
});

describe('holds', () => {
  test('decideSettle: the settle rules as a table', () => {
    const table = [
      ['pending', 'complete', 'apply'],
      ['pending', 'cancelled', 'apply'],
      ['complete', 'complete', 'noop'],
      ['cancelled', 'cancelled', 'noop'],
      ['complete', 'cancelled', 'not_pending'],
      ['cancelled', 'complete', 'not_pending'],
    ] as const;
    for (const [current, requested, decision] of table)
      assert.equal(decideSettle(current, requested), decision, `${current} → ${requested}`);
  });

  test('expiry after one hour, inclusive; available = amount − pending', () => {
    assert.equal(holdExpiresAt(NOW), NOW + HOLD_DURATION_MS);
    assert.equal(HOLD_DURATION_MS, 3_600_000);
    assert.equal(isHoldExpired(NOW + HOLD_DURATION_MS, NOW + HOLD_DURATION_MS - 1), false);
    assert.equal(isHoldExpired(NOW + HOLD_DURATION_MS, NOW + HOLD_DURATION_MS), true);
    assert.equal(isHoldExpired(null, Number.MAX_SAFE_INTEGER), false, 'a settled event never expires');
    assert.equal(available(100, 30), 70);
    assert.equal(available(10, 30), -20);
  });
});

describe('normalizeEvent', () => {
  test('defaults: quantity 1, state complete, no override, no gate', () => {
    assert.deepEqual(norm({ type: 't' }), {
      clientId: null,
      type: 't',
      quantity: 1,
      override: null,
      metadata: null,
      state: 'complete',
      gate: false,
      timestampMs: null,
      leaseId: null,
    });
  });

  test('a quantity that is not a finite number ≥ 0 is refused, even with a cost_override', () => {
    const override = { amount: 1, denomination: 'usd' };
    for (const quantity of [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN, -1]) {
      const n = normalizeEvent({ type: 't', quantity, cost_override: override }, 3, ANY_TIME);
      assert.ok(!n.ok, String(quantity));
      assert.equal(n.reason, 'quantity_must_be_a_non_negative_number');
      assert.equal(n.param, 'events[3].quantity');
    }
    assert.equal(norm({ type: 't', quantity: 1e300, cost_override: override }).quantity, 1e300);
  });

  test('"completed" is "complete"; other states kept', () => {
    assert.equal(norm({ type: 't', state: 'completed' }).state, 'complete');
    assert.equal(norm({ type: 't', state: 'complete' }).state, 'complete');
    assert.equal(norm({ type: 't', state: 'pending' }).state, 'pending');
    assert.equal(norm({ type: 't', state: 'cancelled' }).state, 'cancelled');
  });

  test('flat cost_override_* spellings equal the nested one', () => {
    const nested = norm({ type: 't', cost_override: { amount: 7, denomination: 'usd' } });
    const flat = norm({ type: 't', cost_override_amount: 7, cost_override_denomination: 'usd' });
    assert.deepEqual(flat, nested);
    assert.deepEqual(flat.override, { amount: 7, denomination: 'usd' });
  });

  test('flat spellings must come together, and not with the nested one', () => {
    const half = normalizeEvent({ type: 't', cost_override_amount: 7 }, 3, ANY_TIME);
    assert.equal(!half.ok && half.reason, 'cost_override_needs_amount_and_denomination');
    assert.equal(!half.ok && half.param, 'events[3]');
    assert.deepEqual(!half.ok && half.details, { index: 3 });
    const other = normalizeEvent({ type: 't', cost_override_denomination: 'usd' }, 0, ANY_TIME);
    assert.equal(!other.ok && other.reason, 'cost_override_needs_amount_and_denomination');
    const both = normalizeEvent(
      {
        type: 't',
        cost_override: { amount: 1, denomination: 'usd' },
        cost_override_amount: 1,
        cost_override_denomination: 'usd',
      },
      1,
      ANY_TIME,
    );
    assert.equal(!both.ok && both.reason, 'cost_override_given_twice');
  });

  test('client id, metadata, per-event gate pass through', () => {
    assert.deepEqual(norm({ type: 't', id: 'x', metadata: { a: 1 }, gate_on_balance: true, quantity: 2.5 }), {
      clientId: 'x',
      type: 't',
      quantity: 2.5,
      override: null,
      metadata: { a: 1 },
      state: 'complete',
      gate: true,
      timestampMs: null,
      leaseId: null,
    });
  });
});

describe('planIngest', () => {
  test('pricing: cost = ceil(quantity × unit_amount) in the price denomination', () => {
    const ctx = makeCtx();
    const r = planIngest(req([{ type: 'api_call', quantity: 3 }]), ctx);
    assert.ok(r.ok);
    assert.deepEqual(r.value.eventIds, ['ev_gen_1']);
    assert.deepEqual(r.value.events, [
      {
        companyId: CO,
        eventId: 'ev_gen_1',
        clientSupplied: false,
        accountId: ACC,
        type: 'api_call',
        quantity: 3,
        costAmount: 2,
        denomination: 'credits',
        priceModel: 'unit',
        metadata: null,
        state: 'complete',
        contentHash: null,
        occurredAtMs: NOW,
        createdAtMs: NOW,
        updatedAtMs: NOW,
        expiresAtMs: null,
        heldFrom: null,
        leaseId: null,
      },
    ]);
    assert.deepEqual([...r.value.deltas], [[balanceKey(ACC, 'credits'), { amount: -2, pending: 0 }]]);
    assert.deepEqual(fig(ctx), { amount: 98, pending: 0 });
  });

  test('cost_override wins over the price, in its own denomination', () => {
    const ctx = makeCtx({
      balances: [
        [ACC, 'credits', 100],
        [ACC, 'usd', 50],
      ],
    });
    const r = planIngest(
      req([
        { type: 'api_call', quantity: 1000, cost_override: { amount: 7, denomination: 'usd' } },
        { type: 'unpriced', cost_override_amount: 3, cost_override_denomination: 'credits' },
      ]),
      ctx,
    );
    assert.ok(r.ok);
    assert.deepEqual(
      r.value.events.map((e) => [e.costAmount, e.denomination]),
      [
        [7, 'usd'],
        [3, 'credits'],
      ],
    );
    assert.deepEqual(fig(ctx, 'usd'), { amount: 43, pending: 0 });
    assert.deepEqual(fig(ctx, 'credits'), { amount: 97, pending: 0 });
  });

  test(
    'states: pending holds (with expiry), cancelled records ' + 'only, complete deducts; zero cost posts no entry',
    () => {
      const ctx = makeCtx();
      const r = planIngest(
        req([
          { type: 'x', state: 'pending', cost_override: { amount: 10, denomination: 'credits' } },
          { type: 'x', state: 'cancelled', cost_override: { amount: 20, denomination: 'credits' } },
          { type: 'x', state: 'completed', cost_override: { amount: 5, denomination: 'credits' } },
          { type: 'api_call', quantity: 0 },
        ]),
        ctx,
      );
      assert.ok(r.ok);
      assert.deepEqual(
        r.value.events.map((e) => [e.state, e.costAmount, e.expiresAtMs]),
        [
          ['pending', 10, NOW + HOLD_DURATION_MS],
          ['cancelled', 20, null],
          ['complete', 5, null],
          ['complete', 0, null],
        ],
      );
      assert.deepEqual([...r.value.deltas], [[balanceKey(ACC, 'credits'), { amount: -5, pending: 10 }]]);
      assert.deepEqual(fig(ctx), { amount: 95, pending: 10 });
    },
  );

  test('missing balance: a failure naming the index', () => {
    const ctx = makeCtx();
    const before = snapshot(ctx);
    const r = planIngest(
      req([{ type: 'api_call' }, { type: 'x', cost_override: { amount: 1, denomination: 'gold' } }]),
      ctx,
    );
    assert.equal(r.ok, false);
    assert.ok(!r.ok);
    assert.equal(r.reason, 'no_balance_for_denomination');
    assert.equal(r.param, 'events[1]');
    assert.deepEqual(r.details, { index: 1 });
    assert.match(r.message, /^events\[1\]: .*"gold"/);
    assert.deepEqual(snapshot(ctx), before, 'all or nothing: event 0 left no trace');
  });

  test('missing price and no override: a failure naming the index', () => {
    const ctx = makeCtx();
    const before = snapshot(ctx);
    const r = planIngest(req([{ type: 'api_call' }, { type: 'api_call' }, { type: 'unpriced' }]), ctx);
    assert.ok(!r.ok);
    assert.equal(r.reason, 'no_price_for_event_type');
    assert.equal(r.param, 'events[2]');
    assert.deepEqual(r.details, { index: 2 });
    assert.match(r.message, /"unpriced"/);
    assert.deepEqual(snapshot(ctx), before);
  });

  test('a price of another company does not apply', () => {
    const ctx = makeCtx();
    const r = planIngest(req([{ type: 'api_call' }], { companyId: 'c_other' }), ctx);
    assert.ok(!r.ok);
    assert.equal(r.reason, 'no_price_for_event_type');
  });

  test('a cost beyond the exact integer range fails, and so does a balance driven beyond it', () => {
    const ctx = makeCtx({
      prices: [{ type: 'big', denomination: 'credits', terms: { model: 'unit', unitAmount: '1000' } }],
    });
    const before = snapshot(ctx);
    const r = planIngest(req([{ type: 'big', quantity: 1e14 }]), ctx);
    assert.ok(!r.ok);
    assert.equal(r.reason, 'amount_out_of_range');
    assert.equal(r.param, 'events[0]');
    const r2 = planIngest(
      req([
        { type: 'x', cost_override: { amount: AMOUNT_MAX, denomination: 'credits' } },
        { type: 'x', cost_override: { amount: 200, denomination: 'credits' } },
      ]),
      ctx,
    );
    assert.ok(!r2.ok);
    assert.equal(r2.reason, 'amount_out_of_range');
    assert.deepEqual(snapshot(ctx), before);
  });

  describe('client ids', () => {
    test('a repeat with the same content gets the same id and no second delta', () => {
      const ctx = makeCtx();
      const ev: EventInput = { type: 'api_call', id: 'order-1', quantity: 4, metadata: { a: 1, b: [1, 2] } };
      const first = planIngest(req([ev]), ctx);
      assert.ok(first.ok);
      assert.deepEqual(first.value.eventIds, ['order-1']);
      assert.equal(first.value.events[0]!.clientSupplied, true);
      assert.equal(typeof first.value.events[0]!.contentHash, 'string');
      assert.deepEqual(fig(ctx), { amount: 98, pending: 0 });

      // Metadata with its keys in another order is the same content.
      const again = planIngest(req([{ ...ev, metadata: { b: [1, 2], a: 1 } }]), ctx);
      assert.ok(again.ok);
      assert.deepEqual(again.value.eventIds, ['order-1']);
      assert.deepEqual(again.value.events, []);
      assert.equal(again.value.deltas.size, 0);
      assert.deepEqual(fig(ctx), { amount: 98, pending: 0 }, 'never deducted twice');
    });

    test('a repeat of an id already stored (known) is recognised the same way', () => {
      const seed = makeCtx();
      const first = planIngest(req([{ type: 'api_call', id: 'stored', state: 'pending' }]), seed);
      assert.ok(first.ok);
      const ctx = makeCtx({
        known: [
          [CO, 'stored', { accountId: ACC, contentHash: first.value.events[0]!.contentHash, denomination: 'credits' }],
        ],
      });
      const r = planIngest(req([{ type: 'api_call', id: 'stored', state: 'pending' }, { type: 'api_call' }]), ctx);
      assert.ok(r.ok);
      assert.deepEqual(r.value.eventIds, ['stored', 'ev_gen_1'], 'the generated id is not spent on the repeat');
      assert.deepEqual(fig(ctx), { amount: 99, pending: 0 });
    });

    test('different content under a used id: event_id_reused_with_different_content, nothing planned', () => {
      const ctx = makeCtx({
        balances: [
          [ACC, 'credits', 100],
          ['a_2', 'credits', 100],
        ],
      });
      assert.ok(planIngest(req([{ type: 'api_call', id: 'dup', quantity: 2 }]), ctx).ok);
      const before = snapshot(ctx);
      for (const changed of [
        { type: 'api_call', id: 'dup', quantity: 3 },
        { type: 'api_call', id: 'dup', quantity: 2, state: 'pending' as const },
        { type: 'api_call', id: 'dup', quantity: 2, metadata: { x: 1 } },
        { type: 'x', id: 'dup', quantity: 2, cost_override: { amount: 1, denomination: 'credits' } },
      ]) {
        const r = planIngest(req([{ type: 'api_call' }, changed]), ctx);
        assert.ok(!r.ok);
        assert.equal(r.reason, 'event_id_reused_with_different_content');
        assert.equal(r.param, 'events[1].id');
        assert.deepEqual(r.details, { index: 1 });
        assert.deepEqual(snapshot(ctx), before);
      }
      const otherAccount = planIngest(req([{ type: 'api_call', id: 'dup', quantity: 2 }], { accountId: 'a_2' }), ctx);
      assert.ok(!otherAccount.ok, 'the same id on another account of the company is different content');
      assert.equal(otherAccount.reason, 'event_id_reused_with_different_content');
      const otherCompany = planIngest(
        req([{ type: 'x', id: 'dup', cost_override: { amount: 1, denomination: 'credits' } }], { companyId: 'c_2' }),
        ctx,
      );
      assert.ok(otherCompany.ok, 'ids are unique per company only');
    });

    test('a repeat within one request: same content once, different content refused', () => {
      const ctx = makeCtx();
      const r = planIngest(
        req([
          { type: 'api_call', id: 'r', quantity: 2 },
          { type: 'api_call', id: 'r', quantity: 2 },
          { type: 'api_call', id: 's', quantity: 2 },
        ]),
        ctx,
      );
      assert.ok(r.ok);
      assert.deepEqual(r.value.eventIds, ['r', 'r', 's']);
      assert.equal(r.value.events.length, 2);
      assert.deepEqual([...r.value.deltas], [[balanceKey(ACC, 'credits'), { amount: -2, pending: 0 }]]);
      assert.deepEqual(fig(ctx), { amount: 98, pending: 0 });

      const ctx2 = makeCtx();
      const before = snapshot(ctx2);
      const bad = planIngest(
        req([
          { type: 'api_call', id: 'r', quantity: 2 },
          { type: 'api_call', id: 'r', quantity: 5 },
        ]),
        ctx2,
      );
      assert.ok(!bad.ok);
      assert.equal(bad.reason, 'event_id_reused_with_different_content');
      assert.deepEqual(bad.details, { index: 1 });
      assert.deepEqual(snapshot(ctx2), before);
    });
  });

  describe('gate_on_balance', () => {
    const negative = () =>
      makeCtx({
        balances: [
          [ACC, 'credits', 10, 15],
          [ACC, 'usd', 5],
        ],
      });

    test('request-level gate refuses when a balance drawn from has available < 0, leaving ctx untouched', () => {
      const ctx = negative();
      const before = snapshot(ctx);
      const r = planIngest(req([{ type: 'api_call' }], { gate: true }), ctx);
      assert.ok(!r.ok);
      assert.equal(r.reason, 'insufficient_balance');
      assert.deepEqual(r.details, { denomination: 'credits', available: -5 });
      assert.deepEqual(snapshot(ctx), before);
    });

    test('a per-event gate gates the whole request', () => {
      const ctx = negative();
      const before = snapshot(ctx);
      const r = planIngest(
        req([
          { type: 'x', cost_override: { amount: 1, denomination: 'usd' } },
          { type: 'api_call', gate_on_balance: true },
          { type: 'x', id: 'k', cost_override: { amount: 1, denomination: 'usd' } },
        ]),
        ctx,
      );
      assert.ok(!r.ok);
      assert.equal(r.reason, 'insufficient_balance');
      assert.deepEqual(snapshot(ctx), before, 'the client id is not remembered either');
    });

    test('without a gate the same request is accepted and goes further negative', () => {
      const ctx = negative();
      const r = planIngest(req([{ type: 'api_call' }]), ctx);
      assert.ok(r.ok);
      assert.deepEqual(fig(ctx), { amount: 9, pending: 15 });
    });

    test(
      'only balances the request draws from count; available ' + 'exactly 0 passes; cancelled events draw nothing',
      () => {
        const ctx = negative();
        const usdOnly = planIngest(
          req([{ type: 'x', cost_override: { amount: 5, denomination: 'usd' } }], { gate: true }),
          ctx,
        );
        assert.ok(usdOnly.ok, 'credits is negative but not drawn from');
        assert.deepEqual(fig(ctx, 'usd'), { amount: 0, pending: 0 });
        const atZero = planIngest(
          req([{ type: 'x', cost_override: { amount: 1, denomination: 'usd' } }], { gate: true }),
          ctx,
        );
        assert.ok(atZero.ok, 'available 0 is not below 0');
        const cancelled = planIngest(req([{ type: 'api_call', state: 'cancelled' }], { gate: true }), ctx);
        assert.ok(cancelled.ok);
        const gatedAgain = planIngest(
          req([{ type: 'x', cost_override: { amount: 1, denomination: 'usd' } }], { gate: true }),
          ctx,
        );
        assert.ok(!gatedAgain.ok, 'an earlier request of the same group made it negative');
      },
    );
  });

  test(
    'property: conservation — every change of ctx balances is ' +
      'a planned ledger entry or hold; failures change nothing',
    () => {
      const accounts = ['a_1', 'a_2'];
      const denominations = ['credits', 'usd', 'gold']; // gold has no balance anywhere
      const prices: Price[] = [
        { type: 'p_half', denomination: 'credits', terms: { model: 'unit', unitAmount: '0.5' } },
        { type: 'p_tiny', denomination: 'usd', terms: { model: 'unit', unitAmount: '0.0015' } },
        { type: 'p_gold', denomination: 'gold', terms: { model: 'unit', unitAmount: '1' } },
      ];
      const eventArb: fc.Arbitrary<EventInput> = fc.record(
        {
          type: fc.constantFrom('p_half', 'p_tiny', 'p_gold', 'unpriced'),
          id: fc.option(fc.constantFrom('i1', 'i2', 'i3', 'i4'), { nil: undefined }),
          quantity: fc.option(
            fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.double({ min: 0, max: 1000, noNaN: true })),
            { nil: undefined },
          ),
          cost_override: fc.option(
            fc.record({ amount: fc.integer({ min: 0, max: 500 }), denomination: fc.constantFrom(...denominations) }),
            { nil: undefined },
          ),
          state: fc.option(
            fc.constantFrom('pending', 'complete', 'completed', 'cancelled') as fc.Arbitrary<
              'pending' | 'complete' | 'completed' | 'cancelled'
            >,
            { nil: undefined },
          ),
          gate_on_balance: fc.option(fc.boolean(), { nil: undefined }),
        },
        { requiredKeys: ['type'] },
      );
      const requestArb = fc.record({
        accountId: fc.constantFrom(...accounts),
        gate: fc.boolean(),
        events: fc.array(eventArb, { minLength: 1, maxLength: 6 }),
      });

      fc.assert(
        fc.property(
          fc.array(requestArb, { minLength: 1, maxLength: 12 }),
          fc.integer({ min: -50, max: 500 }),
          (requests, start) => {
            const ctx = makeCtx({
              balances: [
                ['a_1', 'credits', start],
                ['a_1', 'usd', 100, 20],
                ['a_2', 'credits', 50],
              ],
              prices,
            });
            const initial = snapshot(ctx);
            const totals = new Map<string, BalanceFigures>();
            let succeeded = 0;
            for (const r of requests) {
              const before = snapshot(ctx);
              const request = req(
                r.events.map((e) => {
                  const copy: EventInput = { type: e.type };
                  for (const [k, v] of Object.entries(e))
                    if (v !== undefined) (copy as unknown as Record<string, unknown>)[k] = v;
                  return copy;
                }),
                { accountId: r.accountId, gate: r.gate },
              );
              const plan = planIngest(request, ctx);
              if (!plan.ok) {
                assert.deepEqual(snapshot(ctx), before, `failure ${plan.reason} changed ctx`);
                continue;
              }
              succeeded++;
              assert.equal(plan.value.eventIds.length, request.events.length, 'one id per submitted event, in order');
              // What the plan says each balance should move by…
              const planned = new Map<string, BalanceFigures>();
              const add = (key: string, amount: number, pending: number) => {
                const p = planned.get(key) ?? { amount: 0, pending: 0 };
                p.amount += amount;
                p.pending += pending;
                planned.set(key, p);
              };
              for (const e of plan.value.events) {
                assert.ok(Number.isSafeInteger(e.costAmount) && e.costAmount >= 0, 'a cost is a non-negative integer');
                if (e.state === 'pending') add(balanceKey(e.accountId, e.denomination), 0, e.costAmount);
                if (e.state === 'complete') add(balanceKey(e.accountId, e.denomination), -e.costAmount, 0);
              }
              // …equals what the ctx balances did move by, and what `deltas` reports.
              const beforeMap = new Map(before.balances);
              for (const [key, b] of ctx.balances) {
                const was = beforeMap.get(key)!;
                const p = planned.get(key) ?? { amount: 0, pending: 0 };
                assert.equal(b.amount - was.amount, p.amount, `amount change of ${key}`);
                assert.equal(b.pending - was.pending, p.pending, `pending change of ${key}`);
                const d: BalanceFigures = plan.value.deltas.get(key) ?? { amount: 0, pending: 0 };
                assert.deepEqual({ amount: d.amount, pending: d.pending }, p);
                assert.ok(Number.isSafeInteger(b.amount) && Number.isSafeInteger(b.pending));
                const t = totals.get(key) ?? { amount: 0, pending: 0 };
                t.amount += p.amount;
                t.pending += p.pending;
                totals.set(key, t);
              }
              for (const key of planned.keys())
                assert.ok(ctx.balances.has(key), 'nothing planned against a missing balance');
            }
            // Over the whole sequence: final − initial = Σ planned.
            for (const [key, was] of initial.balances) {
              const now = ctx.balances.get(key)!;
              const t = totals.get(key) ?? { amount: 0, pending: 0 };
              assert.equal(now.amount - was.amount, t.amount);
              assert.equal(now.pending - was.pending, t.pending);
            }
            assert.ok(succeeded <= requests.length);
          },
        ),
        { numRuns: 500 },
      );
    },
  );
});
