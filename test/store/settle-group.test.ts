// Guarantee: settles applied as a group in one transaction behave exactly as one after the other
// (a later settle of an event sees an earlier one; refusals change nothing; an expired hold's
// cancellation is kept), and on PostgreSQL concurrent groups over the same balances, in any
// order, never deadlock and lose nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeEvent, type IngestRequest } from '../../src/domain/events.js';
import { HOLD_DURATION_MS } from '../../src/domain/holds.js';
import { newId } from '../../src/lib/ids.js';
import type { Outcome } from '../../src/domain/outcome.js';
import { ingestGroup, settleGroup, type SettleRequest } from '../../src/operations/events.js';
import { balanceEffects } from '../../src/compose.js';
import { Ledger } from '../../src/ledger/ledger.js';
import type { EventRow, Store } from '../../src/store/types.js';
import { forEachDialect, seedAccount, seedBalance, seedCompanyAndAccount } from '../support/stores.js';

/** Requests here carry no `timestamp`: no limit applies. */
const ANY_TIME = { nowMs: 0, maxAgeMs: Number.POSITIVE_INFINITY };

const T0 = 1_700_000_000_000;
/** The server's ledger, with its balance effects (refill decisions, plan alerts, notifications). */
const ledger = new Ledger(balanceEffects());

function holdRequest(companyId: string, accountId: string, amounts: number[], denomination = 'tokens'): IngestRequest {
  return {
    companyId,
    accountId,
    gate: false,
    events: amounts.map((amount, i) => {
      const n = normalizeEvent({ type: 'job', state: 'pending', cost_override: { amount, denomination } }, i, ANY_TIME);
      assert.ok(n.ok);
      return n.value;
    }),
    eventIds: amounts.map(() => newId('ev')),
  };
}

/** Places holds (pending events) at `nowMs`; returns their ids in order. */
async function hold(
  store: Store,
  nowMs: number,
  companyId: string,
  accountId: string,
  amounts: number[],
  denomination = 'tokens',
): Promise<string[]> {
  const [outcome] = await store.write((tx) =>
    ingestGroup(ledger, tx, nowMs, [holdRequest(companyId, accountId, amounts, denomination)]),
  );
  assert.ok(outcome?.ok, JSON.stringify(outcome));
  return outcome.value.eventIds;
}

const balanceOf = async (store: Store, accountId: string, denomination = 'tokens') => {
  const b = await store.read((tx) => tx.balances.findBalance(accountId, denomination));
  return { amount: b!.amount, pending: b!.pending };
};

function reasonOf(o: Outcome<EventRow> | undefined): string {
  assert.ok(o);
  return o.ok ? `ok:${o.value.state}:${o.value.costAmount}` : o.reason;
}

forEachDialect(
  (store) => {
    test('one group decides each settle in order, as if one after the other', async () => {
      const s = await seedCompanyAndAccount(store);
      await seedBalance(store, s.companyId, s.accountId, 'tokens', 1000);
      await seedBalance(store, s.companyId, s.accountId, 'credits', 50);
      const other = await seedCompanyAndAccount(store);
      const [old] = await hold(store, T0, s.companyId, s.accountId, [40]);
      const now = T0 + HOLD_DURATION_MS + 1;
      const [a, b, c] = await hold(store, now - 10, s.companyId, s.accountId, [10, 20, 30]);
      const [cr] = await hold(store, now - 10, s.companyId, s.accountId, [5], 'credits');
      assert.deepEqual(await balanceOf(store, s.accountId), { amount: 1000, pending: 100 });

      const requests: SettleRequest[] = [
        {
          companyId: s.companyId,
          eventId: a!,
          input: { state: 'complete', cost_override: { amount: 7, denomination: 'tokens' } },
        },
        { companyId: s.companyId, eventId: a!, input: { state: 'completed' } },
        { companyId: s.companyId, eventId: a!, input: { state: 'cancelled' } },
        { companyId: s.companyId, eventId: b!, input: { state: 'cancelled' } },
        {
          companyId: s.companyId,
          eventId: c!,
          input: { state: 'complete', cost_override: { amount: 3, denomination: 'credits' } },
        },
        { companyId: s.companyId, eventId: old!, input: { state: 'complete' } },
        { companyId: s.companyId, eventId: old!, input: { state: 'cancelled' } },
        { companyId: other.companyId, eventId: c!, input: { state: 'complete' } },
        { companyId: s.companyId, eventId: 'ev_missing', input: { state: 'complete' } },
        { companyId: s.companyId, eventId: cr!, input: { state: 'complete' } },
        {
          companyId: s.companyId,
          eventId: c!,
          input: { state: 'complete', cost_override: { amount: 45, denomination: 'tokens' } },
        },
      ];
      const outcomes = await store.write((tx) => settleGroup(ledger, tx, now, requests));
      assert.deepEqual(outcomes.map(reasonOf), [
        'ok:complete:7', // the final cost replaces the held 10
        'ok:complete:7', // the same state again: a no-op
        'event_not_pending',
        'ok:cancelled:20',
        'cost_override_denomination_mismatch', // refused: changes nothing
        'event_not_pending', // expired an hour ago: cancelled first, then refused
        'ok:cancelled:40', // cancelled already (by its expiry, once): a no-op
        'not_found', // another company's event
        'not_found',
        'ok:complete:5',
        'ok:complete:45', // more than held: the difference is taken too
      ]);
      // tokens: 7 + 45 taken; nothing held any more (a, b, c settled, the old hold cancelled).
      assert.deepEqual(await balanceOf(store, s.accountId), { amount: 1000 - 7 - 45, pending: 0 });
      assert.deepEqual(await balanceOf(store, s.accountId, 'credits'), { amount: 45, pending: 0 });
      const stateOf = async (id: string) => (await store.read((tx) => tx.events.findEvent(s.companyId, id)))!;
      assert.deepEqual([(await stateOf(a!)).state, (await stateOf(a!)).costAmount], ['complete', 7]);
      assert.equal((await stateOf(b!)).state, 'cancelled');
      assert.deepEqual(
        [(await stateOf(c!)).state, (await stateOf(c!)).costAmount, (await stateOf(c!)).updatedAtMs],
        ['complete', 45, now],
      );
      assert.deepEqual([(await stateOf(old!)).state, (await stateOf(old!)).updatedAtMs], ['cancelled', now]);
      const rows = await store.read((tx) => tx.transactions.listTransactions(s.accountId, 'tokens', { limit: 10 }));
      assert.deepEqual(
        rows!.rows.map((r) => [r.amount, r.balanceAfter, r.eventId]),
        [
          [-45, 948, c],
          [-7, 993, a],
          [1000, 1000, null],
        ],
      );
      assert.deepEqual(await store.read((tx) => tx.transactions.auditLedger()), []);
    });

    test('concurrent groups over the same balances, in opposite orders, all apply exactly once', {
      timeout: 60_000,
    }, async () => {
      const s = await seedCompanyAndAccount(store);
      const accounts = [
        s.accountId,
        ...(await Promise.all([1, 2, 3, 4, 5].map(() => seedAccount(store, s.companyId, T0)))),
      ];
      for (const acc of accounts) await seedBalance(store, s.companyId, acc, 'tokens', 100_000);
      const holds: { accountId: string; eventId: string; cost: number }[] = [];
      for (const acc of accounts) {
        const amounts = Array.from({ length: 40 }, (_, i) => 1 + (i % 9));
        const ids = await hold(store, T0, s.companyId, acc, amounts);
        for (const [i, eventId] of ids.entries()) holds.push({ accountId: acc, eventId, cost: amounts[i]! });
      }
      // 24 groups of 10 settles each: every group spans several accounts, half of them listed in
      // the reverse order of the other half, so unordered locking would deadlock.
      const groups: SettleRequest[][] = [];
      for (let g = 0; g < 24; g++) {
        const mine = holds.filter((_, i) => i % 24 === g);
        const ordered = g % 2 === 0 ? mine : [...mine].reverse();
        groups.push(
          ordered.map((h) => ({
            companyId: s.companyId,
            eventId: h.eventId,
            input: { state: 'complete', cost_override: { amount: h.cost + 1, denomination: 'tokens' } },
          })),
        );
      }
      const results = await Promise.all(groups.map((g) => store.write((tx) => settleGroup(ledger, tx, T0 + 1000, g))));
      assert.ok(
        results.flat().every((o) => o.ok),
        'every settle applied',
      );
      for (const acc of accounts) {
        const taken = holds.filter((h) => h.accountId === acc).reduce((sum, h) => sum + h.cost + 1, 0);
        assert.deepEqual(await balanceOf(store, acc), { amount: 100_000 - taken, pending: 0 }, acc);
      }
      assert.deepEqual(await store.read((tx) => tx.transactions.auditLedger()), []);
    });
  },
  { title: 'settle groups', poolSize: 12 },
);
