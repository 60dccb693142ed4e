// Guarantees: on SQLite and PostgreSQL, events are stored and found exactly (awkward values, mixed and NULL
// columns), unique per company, and expired holds are found oldest first.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HOLD_DURATION_MS } from '../../src/domain/holds.js';
import type { EventRow } from '../../src/store/types.js';
import { forEachDialect, seedAccount, seedBalance, seedCompanyAndAccount } from '../support/stores.js';
import { T0, balanceState, eventRow, sortStrings, txRow } from './contract-support.js';
import { portOf } from '../../src/ledger/port.js';

forEachDialect((store, _t) => {
  describe('events', () => {
    test('insertEvents, findEvent, findEventsByIds, lockEvents, updateEvents', async () => {
      const a = await seedCompanyAndAccount(store);
      const b = await seedCompanyAndAccount(store);
      const e1 = eventRow(a.companyId, a.accountId, {
        eventId: 'client-1',
        clientSupplied: true,
        quantity: 2.5,
        costAmount: 3,
        metadata: { k: 'v', n: [1, { z: null }] },
        contentHash: 'h1',
      });
      const e2 = eventRow(a.companyId, a.accountId, {
        state: 'pending',
        expiresAtMs: T0 + HOLD_DURATION_MS,
        costAmount: 9,
      });
      const e3 = eventRow(a.companyId, a.accountId, { state: 'cancelled', quantity: 0 });
      await store.write((tx) => portOf(tx).writeLedger([e1, e2, e3], [], []));
      await store.write((tx) => portOf(tx).writeLedger([], [], []));
      assert.deepEqual(await store.read((tx) => tx.events.findEvent(a.companyId, e1.eventId)), e1);
      assert.deepEqual(await store.read((tx) => tx.events.findEvent(a.companyId, e2.eventId)), e2);
      assert.deepEqual(await store.read((tx) => tx.events.findEvent(a.companyId, e3.eventId)), e3);
      assert.equal(
        await store.read((tx) => tx.events.findEvent(b.companyId, e1.eventId)),
        undefined,
        'scoped to the company',
      );

      const byIds = await store.read((tx) =>
        tx.events.findEventsByIds(a.companyId, [e1.eventId, e3.eventId, 'unknown']),
      );
      assert.deepEqual(sortStrings(byIds.map((e) => e.eventId)), sortStrings([e1.eventId, e3.eventId]));
      assert.deepEqual(await store.read((tx) => tx.events.findEventsByIds(b.companyId, [e1.eventId])), []);
      assert.deepEqual(await store.read((tx) => tx.events.findEventsByIds(a.companyId, [])), []);

      const locked = await store.write((tx) =>
        tx.events.lockEvents([
          { companyId: a.companyId, eventId: e2.eventId },
          { companyId: b.companyId, eventId: e1.eventId },
          { companyId: a.companyId, eventId: 'unknown' },
          { companyId: a.companyId, eventId: e1.eventId },
          { companyId: a.companyId, eventId: e2.eventId },
        ]),
      );
      assert.deepEqual(
        sortStrings(locked.map((e) => e.eventId)),
        sortStrings([e1.eventId, e2.eventId]),
        "only this company's events, each once, the missing ones absent",
      );
      assert.deepEqual(
        locked.find((e) => e.eventId === e2.eventId),
        e2,
      );
      assert.deepEqual(await store.write((tx) => tx.events.lockEvents([])), []);

      await store.write((tx) =>
        portOf(tx).updateEvents([
          {
            companyId: a.companyId,
            eventId: e2.eventId,
            state: 'complete',
            costAmount: 7,
            priceModel: 'graduated',
            updatedAtMs: T0 + 5,
          },
        ]),
      );
      assert.deepEqual(await store.read((tx) => tx.events.findEvent(a.companyId, e2.eventId)), {
        ...e2,
        state: 'complete',
        costAmount: 7,
        priceModel: 'graduated',
        updatedAtMs: T0 + 5,
        expiresAtMs: null,
      });
      await store.write((tx) =>
        portOf(tx).updateEvents([
          {
            companyId: b.companyId,
            eventId: e1.eventId,
            state: 'cancelled',
            costAmount: 0,
            priceModel: 'unit',
            updatedAtMs: T0 + 6,
          },
        ]),
      );
      assert.deepEqual(
        await store.read((tx) => tx.events.findEvent(a.companyId, e1.eventId)),
        e1,
        "another company's update touches nothing",
      );
    });

    test('awkward strings and numbers in a batch are stored and found exactly', async () => {
      // PostgreSQL receives a batch's columns as array literals: every character that means
      // something in that syntax, or in SQL, must come back as it was sent.
      const a = await seedCompanyAndAccount(store);
      const awkward = [
        'NULL',
        'null',
        '',
        ' ',
        ' padded ',
        'a,b',
        '{x}',
        '{"y":1}',
        'quo"te',
        'back\\slash',
        '\\"',
        'tab\tnew\nline',
        "it's",
        'ünïcødé ✓ 𝄞',
        '$1',
        '?',
        'a;b',
        '(1,2)',
      ];
      const rows = awkward.map((s, i) =>
        eventRow(a.companyId, a.accountId, {
          eventId: s === '' ? 'empty-id' : s,
          clientSupplied: true,
          type: s === '' ? 'empty-type' : s,
          contentHash: s,
          quantity: [0.1, 1e-7, 12_345.678, 2 ** 53 - 1, 0][i % 5]!,
          costAmount: [Number.MAX_SAFE_INTEGER, 0, 1, 7][i % 4]!,
          metadata: { s, nested: [s, { [s]: s }] },
        }),
      );
      await store.write((tx) => portOf(tx).writeLedger(rows, [], []));
      const found = await store.read((tx) =>
        tx.events.findEventsByIds(
          a.companyId,
          rows.map((r) => r.eventId),
        ),
      );
      assert.equal(found.length, rows.length);
      const byId = new Map(found.map((e) => [e.eventId, e]));
      for (const r of rows) assert.deepEqual(byId.get(r.eventId), r, JSON.stringify(r.eventId));
      assert.deepEqual(await store.read((tx) => tx.events.findEventsByIds(a.companyId, ['NULL', 'nul', '"NULL"'])), [
        found.find((e) => e.eventId === 'NULL'),
      ]);

      const entries = awkward.map((s, i) =>
        txRow(a.accountId, 'credits', -(i + 1), -(i + 1), { kind: 'usage', eventId: s, reason: s }),
      );
      await store.write((tx) => portOf(tx).writeLedger([], [], entries));
      const { transactions } = await balanceState(store, a.accountId, 'credits');
      assert.deepEqual(
        transactions.map((t) => [t.eventId, t.reason]).reverse(),
        awkward.map((s) => [s, s]),
      );
    });

    test('a batch round-trips whether each column is the same in every row, differs, or is partly NULL', async () => {
      // PostgreSQL sends a column that is the same in every row once, not once per row.
      const a = await seedCompanyAndAccount(store);
      const other = await seedAccount(store, a.companyId);
      const same = (i: number) =>
        eventRow(a.companyId, a.accountId, {
          eventId: `same-${i}`,
          type: 'NULL',
          quantity: 0.5,
          costAmount: 0,
          denomination: '',
          state: 'pending',
          contentHash: 'h',
          metadata: { k: 'v' },
          expiresAtMs: T0 + 1,
        });
      const varied = (i: number) =>
        eventRow(a.companyId, i % 2 === 0 ? a.accountId : other, {
          eventId: `varied-${i}`,
          clientSupplied: i % 2 === 0,
          type: `t${i}`,
          quantity: i,
          costAmount: i * 3,
          denomination: `d${i % 3}`,
          state: i % 2 === 0 ? 'pending' : 'complete',
          contentHash: i % 2 === 0 ? null : `h${i}`,
          metadata: i === 1 ? { i } : null,
          createdAtMs: T0 + i,
          updatedAtMs: T0 + 2 * i,
          expiresAtMs: i === 2 ? T0 : null,
        });
      for (const batch of [[0, 1, 2].map(same), [0, 1, 2, 3].map(varied), [same(9)]]) {
        await store.write((tx) => portOf(tx).writeLedger(batch, [], []));
        const found = await store.read((tx) =>
          tx.events.findEventsByIds(
            a.companyId,
            batch.map((e) => e.eventId),
          ),
        );
        assert.deepEqual(
          found.sort((p, q) => (p.eventId < q.eventId ? -1 : 1)),
          batch.sort((p, q) => (p.eventId < q.eventId ? -1 : 1)),
        );
      }
      const rows = [
        txRow(a.accountId, 'L', 5, 5, { kind: 'grant', reason: 'NULL' }),
        txRow(a.accountId, 'L', 5, 10, { kind: 'grant', reason: 'NULL' }),
        txRow(a.accountId, 'L', -2, 8, { kind: 'usage', eventId: 'varied-1', createdAtMs: T0 + 9 }),
      ];
      await store.write((tx) => portOf(tx).writeLedger([], [], rows));
      assert.deepEqual((await balanceState(store, a.accountId, 'L')).transactions.reverse(), rows);
    });

    test('(company, event_id) is unique: a duplicate makes the write reject and nothing of it is kept', async () => {
      const a = await seedCompanyAndAccount(store);
      const b = await seedCompanyAndAccount(store);
      await seedBalance(store, a.companyId, a.accountId, 'credits', 100);
      await store.write((tx) =>
        portOf(tx).writeLedger([eventRow(a.companyId, a.accountId, { eventId: 'same' })], [], []),
      );
      await store.write((tx) =>
        portOf(tx).writeLedger([eventRow(b.companyId, b.accountId, { eventId: 'same' })], [], []),
      );

      const fresh = eventRow(a.companyId, a.accountId);
      await assert.rejects(
        store.write(async (tx) => {
          await portOf(tx).writeLedger([fresh], [], []);
          await portOf(tx).writeLedger(
            [],
            [{ accountId: a.accountId, denomination: 'credits', amount: -1, pending: 0 }],
            [],
          );
          await portOf(tx).writeLedger([], [], [txRow(a.accountId, 'credits', -1, 99)]);
          await portOf(tx).writeLedger([eventRow(a.companyId, a.accountId, { eventId: 'same' })], [], []);
        }),
      );
      assert.equal(await store.read((tx) => tx.events.findEvent(a.companyId, fresh.eventId)), undefined);
      const { balance, transactions } = await balanceState(store, a.accountId, 'credits');
      assert.equal(balance.amount, 100);
      assert.equal(transactions.length, 1);

      await assert.rejects(
        store.write((tx) =>
          portOf(tx).writeLedger(
            [
              eventRow(a.companyId, a.accountId, { eventId: 'twice' }),
              eventRow(a.companyId, a.accountId, { eventId: 'twice' }),
            ],
            [],
            [],
          ),
        ),
        'a duplicate within one batch',
      );
      assert.equal(await store.read((tx) => tx.events.findEvent(a.companyId, 'twice')), undefined);
    });

    test('findExpiredHolds: only pending holds expired by now, oldest first, limit, `only` filter', async () => {
      const a = await seedCompanyAndAccount(store);
      const other = await seedAccount(store, a.companyId);
      // Expiry times far below any other test's, so the global query sees only these.
      const e = {
        old: eventRow(a.companyId, a.accountId, { state: 'pending', expiresAtMs: 1000 }),
        mid: eventRow(a.companyId, a.accountId, { state: 'pending', expiresAtMs: 2000, denomination: 'usd' }),
        atNow: eventRow(a.companyId, other, { state: 'pending', expiresAtMs: 3000 }),
        future: eventRow(a.companyId, a.accountId, { state: 'pending', expiresAtMs: 3001 }),
        done: eventRow(a.companyId, a.accountId, { state: 'complete', expiresAtMs: 500 }),
        cancelled: eventRow(a.companyId, other, { state: 'cancelled', expiresAtMs: 500 }),
      };
      await store.write((tx) => portOf(tx).writeLedger([e.future, e.atNow, e.done, e.mid, e.cancelled, e.old], [], []));
      const ids = (rows: EventRow[]) => rows.map((r) => r.eventId);

      assert.deepEqual(ids(await store.read((tx) => portOf(tx).findExpiredHolds(3000, 100))), [
        e.old.eventId,
        e.mid.eventId,
        e.atNow.eventId,
      ]);
      assert.deepEqual(
        ids(await store.write((tx) => portOf(tx).findExpiredHolds(3000, 100))),
        [e.old.eventId, e.mid.eventId, e.atNow.eventId],
        'inside a write too',
      );
      assert.deepEqual(ids(await store.read((tx) => portOf(tx).findExpiredHolds(3000, 2))), [
        e.old.eventId,
        e.mid.eventId,
      ]);
      assert.deepEqual(ids(await store.read((tx) => portOf(tx).findExpiredHolds(999, 100))), []);
      assert.deepEqual(
        ids(
          await store.read((tx) =>
            portOf(tx).findExpiredHolds(3000, 100, [{ accountId: a.accountId, denomination: 'credits' }]),
          ),
        ),
        [e.old.eventId],
      );
      assert.deepEqual(
        sortStrings(
          ids(
            await store.read((tx) =>
              portOf(tx).findExpiredHolds(3000, 100, [
                { accountId: other, denomination: 'credits' },
                { accountId: a.accountId, denomination: 'usd' },
              ]),
            ),
          ),
        ),
        sortStrings([e.atNow.eventId, e.mid.eventId]),
      );
      assert.deepEqual(
        ids(
          await store.read((tx) =>
            portOf(tx).findExpiredHolds(3000, 1, [
              { accountId: other, denomination: 'credits' },
              { accountId: a.accountId, denomination: 'usd' },
            ]),
          ),
        ),
        [e.mid.eventId],
        'oldest first across the given balances, whatever their order',
      );
      assert.deepEqual(
        ids(
          await store.write((tx) =>
            portOf(tx).findExpiredHolds(3000, 100, [
              { accountId: other, denomination: 'credits' },
              { accountId: a.accountId, denomination: 'usd' },
            ]),
          ),
        ),
        [e.mid.eventId, e.atNow.eventId],
      );
      assert.deepEqual(await store.read((tx) => portOf(tx).findExpiredHolds(3000, 100, [])), []);

      await store.write((tx) =>
        portOf(tx).updateEvents([
          {
            companyId: a.companyId,
            eventId: e.old.eventId,
            state: 'cancelled',
            costAmount: 1,
            priceModel: 'unit',
            updatedAtMs: T0,
          },
        ]),
      );
      assert.deepEqual(
        ids(await store.read((tx) => portOf(tx).findExpiredHolds(3000, 100))),
        [e.mid.eventId, e.atNow.eventId],
        'a settled hold is no longer due',
      );
      await store.write((tx) =>
        portOf(tx).updateEvents(
          [e.mid, e.atNow].map((x) => ({
            companyId: a.companyId,
            eventId: x.eventId,
            state: 'cancelled' as const,
            costAmount: 1,
            priceModel: 'unit' as const,
            updatedAtMs: T0,
          })),
        ),
      );
    });
  });
});
