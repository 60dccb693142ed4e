// Guarantees: on SQLite and PostgreSQL, the transactions of a balance page newest first; the ledger audit finds no
// violation in an exact ledger and reports each kind of violation.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HOLD_DURATION_MS } from '../../src/domain/holds.js';
import { OutcomeError } from '../../src/domain/outcome.js';
import { TestClock } from '../../src/lib/clock.js';
import { transactionWriters } from '../../src/ingest/group-commits.js';
import { AccountOwners } from '../../src/operations/account-owners.js';
import type { Deps } from '../../src/operations/deps.js';
import { ingestGroup, type SettleInput } from '../../src/operations/events.js';
import type { EventRow, TransactionRow } from '../../src/store/types.js';
import { forEachDialect, openTestStore, seedBalance, seedCompanyAndAccount } from '../support/stores.js';
import { T0, eventRow, ledger, request, txRow, testDeps } from './contract-support.js';
import { portOf } from '../../src/ledger/port.js';

/** One settle as the server applies it (a group of one, in its own transaction); a refusal is thrown. */
async function settleOne(deps: Deps, companyId: string, eventId: string, input: SettleInput): Promise<EventRow> {
  const [outcome] = await transactionWriters(deps.store, deps.ledger, new AccountOwners()).settle(deps.clock.now(), [
    { companyId, eventId, input },
  ]);
  if (!outcome!.ok) throw new OutcomeError(outcome!);
  return outcome!.value;
}

forEachDialect((store, t) => {
  describe('transactions', () => {
    test('listTransactions: newest first, denomination filter, paging, unknown cursor', async () => {
      const a = await seedCompanyAndAccount(store);
      const rows: TransactionRow[] = [];
      let x = 0;
      let y = 0;
      for (let i = 0; i < 7; i++) {
        const den = i % 3 === 2 ? 'y' : 'x';
        const amount = i + 1;
        if (den === 'x') x += amount;
        else y += amount;
        const after = den === 'x' ? x : y;
        rows.push(
          txRow(a.accountId, den, amount, after, {
            kind: i === 0 ? 'grant' : 'usage',
            eventId: i === 1 ? 'ev_1' : null,
            reason: i === 0 ? 'welcome' : null,
            createdAtMs: T0 + i,
          }),
        );
      }
      await store.write(async (tx) => {
        await portOf(tx).writeLedger([], [], rows.slice(0, 3));
        await portOf(tx).writeLedger([], [], rows.slice(3));
        await portOf(tx).writeLedger([], [], []);
      });
      const all = await store.read((tx) => tx.transactions.listTransactions(a.accountId, undefined, { limit: 100 }));
      assert.deepEqual(all!.rows, [...rows].reverse(), 'every field round-trips, newest first');
      assert.equal(all!.hasMore, false);

      const xs = rows.filter((r) => r.denomination === 'x').reverse();
      const p1 = await store.read((tx) => tx.transactions.listTransactions(a.accountId, 'x', { limit: 2 }));
      assert.deepEqual(
        p1!.rows.map((r) => r.transactionId),
        xs.slice(0, 2).map((r) => r.transactionId),
      );
      assert.equal(p1!.hasMore, true);
      const p2 = await store.read((tx) =>
        tx.transactions.listTransactions(a.accountId, 'x', { limit: 2, startingAfter: p1!.rows[1]!.transactionId }),
      );
      assert.deepEqual(
        p2!.rows.map((r) => r.transactionId),
        xs.slice(2, 4).map((r) => r.transactionId),
      );
      assert.equal(p2!.hasMore, true);
      const p3 = await store.read((tx) =>
        tx.transactions.listTransactions(a.accountId, 'x', { limit: 2, startingAfter: p2!.rows[1]!.transactionId }),
      );
      assert.deepEqual(
        p3!.rows.map((r) => r.transactionId),
        xs.slice(4).map((r) => r.transactionId),
      );
      assert.equal(p3!.hasMore, false);

      const ys = await store.read((tx) => tx.transactions.listTransactions(a.accountId, 'y', { limit: 10 }));
      assert.deepEqual(
        ys!.rows.map((r) => r.amount),
        [6, 3],
      );
      assert.equal(
        await store.read((tx) =>
          tx.transactions.listTransactions(a.accountId, 'x', { limit: 2, startingAfter: 'tx_unknown' }),
        ),
        undefined,
      );
      assert.equal(
        await store.read((tx) =>
          tx.transactions.listTransactions(a.accountId, 'x', { limit: 2, startingAfter: ys!.rows[0]!.transactionId }),
        ),
        undefined,
        'a cursor outside the filtered list is unknown',
      );
      const other = await seedCompanyAndAccount(store);
      assert.equal(
        await store.read((tx) =>
          tx.transactions.listTransactions(other.accountId, undefined, {
            limit: 2,
            startingAfter: rows[0]!.transactionId,
          }),
        ),
        undefined,
      );
      assert.deepEqual(
        await store.read((tx) => tx.transactions.listTransactions(other.accountId, undefined, { limit: 2 })),
        {
          rows: [],
          hasMore: false,
        },
      );
    });
  });

  describe('auditLedger', () => {
    test('an exact ledger built by the operations has no violations', async () => {
      const a = await seedCompanyAndAccount(store);
      await seedBalance(store, a.companyId, a.accountId, 'credits', 1000);
      await seedBalance(store, a.companyId, a.accountId, 'usd', 50);
      await store.write((tx) =>
        tx.prices.replacePrice(
          {
            companyId: a.companyId,
            type: 'call',
            denomination: 'credits',
            terms: { model: 'unit', unitAmount: '0.5' },
            version: 1,
            updatedAtMs: T0,
          },
          undefined,
        ),
      );
      const clock = new TestClock(T0);
      const deps = testDeps(store, clock);
      const out = await store.write((tx) =>
        ingestGroup(ledger, tx, T0, [
          request(a.companyId, a.accountId, [
            { type: 'call', quantity: 3 },
            { type: 'x', cost_override: { amount: 7, denomination: 'usd' } },
          ]),
          request(a.companyId, a.accountId, [
            { type: 'call', id: 'p1', state: 'pending', quantity: 10 },
            { type: 'call', id: 'p2', state: 'pending' },
            { type: 'call', id: 'p3', state: 'pending' },
          ]),
        ]),
      );
      assert.ok(out.every((o) => o.ok));
      const settled = await settleOne(deps, a.companyId, 'p1', {
        state: 'complete',
        cost_override: { amount: 4, denomination: 'credits' },
      });
      assert.equal(settled.state, 'complete');
      assert.equal(settled.costAmount, 4);
      await settleOne(deps, a.companyId, 'p2', { state: 'cancelled' });
      assert.equal(
        (await settleOne(deps, a.companyId, 'p2', { state: 'cancelled' })).state,
        'cancelled',
        'repeating the state is a no-op',
      );
      await assert.rejects(
        settleOne(deps, a.companyId, 'p2', { state: 'complete' }),
        (e) => e instanceof OutcomeError && e.failure.reason === 'event_not_pending',
      );
      assert.equal(
        (await store.read((tx) => tx.balances.findBalance(a.accountId, 'credits')))!.pending,
        1,
        'p3 still held',
      );
      clock.advanceTo(T0 + HOLD_DURATION_MS);
      await assert.rejects(
        settleOne(deps, a.companyId, 'p3', { state: 'complete' }),
        (e) => e instanceof OutcomeError && e.failure.reason === 'event_not_pending',
        'an expired hold is cancelled, not completed',
      );

      const credits = await store.read((tx) => tx.balances.findBalance(a.accountId, 'credits'));
      assert.deepEqual([credits!.amount, credits!.pending], [1000 - 2 - 4, 0]);
      assert.equal((await store.read((tx) => tx.events.findEvent(a.companyId, 'p3')))!.state, 'cancelled');
      assert.deepEqual(
        (await store.read((tx) => tx.transactions.auditLedger())).filter((v) => v.accountId === a.accountId),
        [],
      );
    });

    test('reports each kind of violation', async () => {
      // A store of its own: the corruption must not leak into the other tests' audits.
      const own = await openTestStore(t.dialect);
      try {
        const s = own.store;
        assert.deepEqual(await s.read((tx) => tx.transactions.auditLedger()), [], 'an empty ledger is exact');
        const a = await seedCompanyAndAccount(s);
        for (const d of ['good', 'sum', 'chain', 'held', 'lease'])
          await seedBalance(s, a.companyId, a.accountId, d, 100);
        await s.write((tx) =>
          portOf(tx).writeLedger(
            [
              eventRow(a.companyId, a.accountId, {
                denomination: 'good',
                state: 'pending',
                costAmount: 5,
                expiresAtMs: T0 + HOLD_DURATION_MS,
              }),
            ],
            [],
            [],
          ),
        );
        await s.write((tx) =>
          portOf(tx).writeLedger([], [{ accountId: a.accountId, denomination: 'good', amount: 0, pending: 5 }], []),
        );
        assert.deepEqual(
          await s.read((tx) => tx.transactions.auditLedger()),
          [],
          'a correct ledger with a hold is exact',
        );

        // amount ≠ sum of transactions: a delta with no transaction.
        await s.write((tx) =>
          portOf(tx).writeLedger([], [{ accountId: a.accountId, denomination: 'sum', amount: 3, pending: 0 }], []),
        );
        // A broken balance_after chain: the sum still matches, the running figure does not.
        await s.write(async (tx) => {
          await portOf(tx).writeLedger(
            [],
            [{ accountId: a.accountId, denomination: 'chain', amount: 10, pending: 0 }],
            [],
          );
          await portOf(tx).writeLedger([], [], [txRow(a.accountId, 'chain', 10, 999)]);
        });
        // pending ≠ held cost of pending events.
        await s.write((tx) =>
          portOf(tx).writeLedger([], [{ accountId: a.accountId, denomination: 'held', amount: 0, pending: 7 }], []),
        );
        // A closed lease whose used and released do not add up to its amount.
        await s.write((tx) =>
          portOf(tx).insertLease({
            leaseId: 'ls_bad',
            companyId: a.companyId,
            accountId: a.accountId,
            denomination: 'lease',
            clientId: null,
            amount: 5,
            used: 6,
            released: 0,
            status: 'closed',
            heldFrom: [],
            expiresAtMs: T0 + 60_000,
            createdAtMs: T0,
            closedAtMs: T0,
          }),
        );
        // A transaction of a balance that does not exist.
        await s.write((tx) => portOf(tx).writeLedger([], [], [txRow(a.accountId, 'ghost', 1, 1)]));

        const v = await s.read((tx) => tx.transactions.auditLedger());
        const by = (d: string) => v.filter((x) => x.denomination === d);
        assert.equal(by('good').length, 0);
        assert.equal(by('sum').length, 1);
        assert.match(by('sum')[0]!.problem, /amount 103 ≠ sum of transactions 100/);
        assert.equal(by('chain').length, 1);
        assert.match(by('chain')[0]!.problem, /100 \+ 10 ≠ balance_after 999/);
        assert.equal(by('held').length, 1);
        assert.match(by('held')[0]!.problem, /pending 7 ≠ held cost of pending events and open leases 0/);
        assert.equal(by('lease').length, 1);
        assert.match(by('lease')[0]!.problem, /lease ls_bad \(closed\): used 6 \+ released 0, amount 5/);
        assert.equal(by('ghost').length, 1);
        assert.match(by('ghost')[0]!.problem, /without a balance/);
        assert.ok(v.every((x) => x.accountId === a.accountId));
        assert.equal(v.length, 5);
      } finally {
        await own.cleanup();
      }
    });
  });
});
