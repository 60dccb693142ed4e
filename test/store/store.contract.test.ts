// Guarantees: on SQLite and PostgreSQL, a write is one transaction (a throw rolls it all back) and reads see only
// committed data; concurrent writers and ingest groups on shared balances (any lock order, duplicate client event
// ids, expired holds, the IngestBatcher) lose nothing, deduct once and leave an exact ledger.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { EventInput, IngestRequest } from '../../src/domain/events.js';
import { HOLD_DURATION_MS } from '../../src/domain/holds.js';
import { newId } from '../../src/lib/ids.js';
import { TestClock } from '../../src/lib/clock.js';
import { IngestBatcher, transactionWriters } from '../../src/ingest/group-commits.js';
import { AccountOwners } from '../../src/operations/account-owners.js';
import { ingestGroup } from '../../src/operations/events.js';
import { grantEntry, takeEntry } from '../../src/ledger/grants.js';
import { balanceKey } from '../../src/domain/events.js';
import { PostgresStore } from '../../src/store/postgres.js';
import { forEachDialect, seedAccount, seedBalance, seedCompanyAndAccount } from '../support/stores.js';
import { T0, balanceState, ledger, request } from './contract-support.js';

forEachDialect((store, t) => {
  test('store reports its dialect', () => {
    assert.equal(store.dialect, t.dialect);
  });

  describe('write and read', () => {
    test('write returns what fn returns; a throw rolls everything back and rethrows', async () => {
      assert.equal(await store.write(async () => 42), 42);
      const email = `${newId('a')}@example.test`;
      const companyId = newId('c');
      const err = new Error('deliberate');
      await assert.rejects(
        store.write(async (tx) => {
          const u = await tx.identity.insertUser({
            name: 'R',
            email,
            passwordHash: 'h',
            dateOfBirth: null,
            emailVerified: false,
            createdAtMs: T0,
          });
          await tx.identity.insertCompany({
            companyId,
            name: 'R',
            ownerUserId: u.id,
            processor: 'sandbox',
            processorApiKey: null,
            createdAtMs: T0,
          });
          await tx.prices.replacePrice(
            {
              companyId,
              type: 't',
              denomination: 'd',
              terms: { model: 'unit', unitAmount: '1' },
              version: 1,
              updatedAtMs: T0,
            },
            undefined,
          );
          assert.ok(await tx.identity.findUserByEmail(email), 'a transaction sees its own writes');
          throw err;
        }),
        (e) => e === err,
      );
      assert.equal(await store.read((tx) => tx.identity.findUserByEmail(email)), undefined);
      assert.equal(await store.read((tx) => tx.identity.findCompany(companyId)), undefined);
      assert.deepEqual(await store.read((tx) => tx.prices.findPrices(companyId, ['t'])), []);
      // The store is still usable after a rollback.
      const s = await seedCompanyAndAccount(store);
      assert.ok(await store.read((tx) => tx.identity.findCompany(s.companyId)));
    });

    test('read sees only committed data', async () => {
      const email = `${newId('a')}@example.test`;
      let seenInside: unknown = 'not run';
      await store.write(async (tx) => {
        await tx.identity.insertUser({
          name: 'C',
          email,
          passwordHash: 'h',
          dateOfBirth: null,
          emailVerified: false,
          createdAtMs: T0,
        });
        seenInside = await store.read((r) => r.identity.findUserByEmail(email));
      });
      assert.equal(seenInside, undefined, 'an uncommitted row is invisible to read');
      assert.ok(await store.read((tx) => tx.identity.findUserByEmail(email)), 'visible once committed');
    });

    test('sequential writes see each other', async () => {
      const a = await seedCompanyAndAccount(store);
      await seedBalance(store, a.companyId, a.accountId, 'x', 0);
      for (let i = 1; i <= 5; i++) {
        await store.write(async (tx) => {
          const p = await ledger.open(tx, [{ accountId: a.accountId, denomination: 'x' }], T0);
          await p.post([
            grantEntry(
              p.balances.get(balanceKey(a.accountId, 'x'))!,
              { amount: i, source: 'adjustment' },
              T0,
              'adjustment',
            ),
          ]);
        });
      }
      const { balance, transactions } = await balanceState(store, a.accountId, 'x');
      assert.equal(balance.amount, 15);
      assert.deepEqual(
        transactions.map((r) => r.balanceAfter),
        [15, 10, 6, 3, 1],
      );
    });
  });

  describe('concurrency', () => {
    test('200 concurrent writers on one balance: amount = sum, chain exact, audit clean', async () => {
      const a = await seedCompanyAndAccount(store);
      await seedBalance(store, a.companyId, a.accountId, 'hot', 1000);
      const key = balanceKey(a.accountId, 'hot');
      const pids = new Set<number>();
      const onAcquire = (c: unknown) => pids.add((c as { processID: number }).processID);
      if (store instanceof PostgresStore) store.pool.on('acquire', onAcquire);
      let inFlight = 0;
      let inFlightMax = 0;
      const amounts = Array.from({ length: 200 }, (_, i) => ((i * 7919) % 3 === 0 ? -1 : 1));
      try {
        await Promise.all(
          amounts.map((amount) =>
            store.write(async (tx) => {
              inFlight++;
              inFlightMax = Math.max(inFlightMax, inFlight);
              try {
                const p = await ledger.open(tx, [{ accountId: a.accountId, denomination: 'hot' }], T0);
                const b = p.balances.get(key)!;
                await p.post([
                  amount > 0
                    ? grantEntry(b, { amount, source: 'adjustment' }, T0, 'adjustment')
                    : takeEntry(b, -amount, T0, 'adjustment'),
                ]);
              } finally {
                inFlight--;
              }
            }),
          ),
        );
      } finally {
        if (store instanceof PostgresStore) store.pool.removeListener('acquire', onAcquire);
      }
      const expected = 1000 + amounts.reduce((s, x) => s + x, 0);
      const { balance, transactions } = await balanceState(store, a.accountId, 'hot');
      assert.equal(balance.amount, expected);
      assert.equal(transactions.length, 201);
      assert.equal(transactions[0]!.balanceAfter, expected, 'the newest transaction carries the final amount');
      assert.deepEqual(
        (await store.read((tx) => tx.transactions.auditLedger())).filter((v) => v.accountId === a.accountId),
        [],
      );
      if (t.dialect === 'postgres') {
        assert.ok(pids.size >= 2, `writers ran on ${pids.size} connection(s)`);
        assert.ok(inFlightMax >= 2, `at most ${inFlightMax} transaction(s) were open at once`);
      } else {
        assert.equal(inFlightMax, 1, "SQLite's single writer never interleaves transactions");
      }
    });

    test('concurrent ingest groups on overlapping balances in opposite orders: no error, exact ledger', async () => {
      const s = await seedCompanyAndAccount(store);
      const acc2 = await seedAccount(store, s.companyId);
      await seedBalance(store, s.companyId, s.accountId, 'A', 100_000);
      await seedBalance(store, s.companyId, s.accountId, 'B', 100_000);
      await seedBalance(store, s.companyId, acc2, 'A', 100_000);
      await store.write((tx) =>
        tx.prices.replacePrice(
          {
            companyId: s.companyId,
            type: 'a-call',
            denomination: 'A',
            terms: { model: 'unit', unitAmount: '1.5' },
            version: 1,
            updatedAtMs: T0,
          },
          undefined,
        ),
      );
      // Holds recorded at T0 have expired by the time the groups run: ingest cancels them concurrently.
      const early = await store.write((tx) =>
        ingestGroup(ledger, tx, T0, [
          request(s.companyId, s.accountId, [
            { type: 'a-call', state: 'pending', quantity: 2 },
            { type: 'b', state: 'pending', cost_override: { amount: 5, denomination: 'B' } },
          ]),
          request(s.companyId, acc2, [{ type: 'a-call', state: 'pending', quantity: 4 }]),
        ]),
      );
      assert.ok(early.every((o) => o.ok));
      const now = T0 + 2 * HOLD_DURATION_MS;

      const ab: EventInput[] = [
        { type: 'a-call', quantity: 2 },
        { type: 'b', cost_override: { amount: 3, denomination: 'B' } },
      ];
      const ba: EventInput[] = [
        { type: 'b', cost_override: { amount: 1, denomination: 'B' } },
        { type: 'a-call', quantity: 1, state: 'pending' },
      ];
      const groups: IngestRequest[][] = Array.from({ length: 60 }, (_, i) =>
        i % 2 === 0
          ? [request(s.companyId, s.accountId, ab), request(s.companyId, acc2, [{ type: 'a-call' }])]
          : [request(s.companyId, acc2, [{ type: 'a-call', quantity: 3 }]), request(s.companyId, s.accountId, ba)],
      );
      const outcomes = await Promise.all(groups.map((g) => store.write((tx) => ingestGroup(ledger, tx, now, g))));
      assert.ok(
        outcomes.flat().every((o) => o.ok),
        'every request succeeded',
      );

      const A = await store.read((tx) => tx.balances.findBalance(s.accountId, 'A'));
      const B = await store.read((tx) => tx.balances.findBalance(s.accountId, 'B'));
      const A2 = await store.read((tx) => tx.balances.findBalance(acc2, 'A'));
      // even groups: A −3, B −3, acc2 A −2 (1.5 rounds up); odd groups: acc2 A −5 (4.5 rounds up), B −1, A holds 2.
      assert.deepEqual([A!.amount, A!.pending], [100_000 - 30 * 3, 30 * 2]);
      assert.deepEqual([B!.amount, B!.pending], [100_000 - 30 * 3 - 30 * 1, 0]);
      assert.deepEqual([A2!.amount, A2!.pending], [100_000 - 30 * 2 - 30 * 5, 0]);
      assert.deepEqual(
        (await store.read((tx) => tx.transactions.auditLedger())).filter(
          (v) => v.accountId === s.accountId || v.accountId === acc2,
        ),
        [],
      );
    });

    test('ingest cancels an expired hold before it gates on the balance', async () => {
      const s = await seedCompanyAndAccount(store);
      await seedBalance(store, s.companyId, s.accountId, 'G', 100);
      const held = await store.write((tx) =>
        ingestGroup(ledger, tx, T0, [
          request(s.companyId, s.accountId, [
            { type: 'h', id: 'gate-hold', state: 'pending', cost_override: { amount: 120, denomination: 'G' } },
          ]),
        ]),
      );
      assert.ok(held[0]!.ok, 'a hold may take the available figure below zero');
      const spend = (n: number) => [{ type: 'spend', cost_override: { amount: n, denomination: 'G' } }];
      const refused = await store.write((tx) =>
        ingestGroup(ledger, tx, T0 + HOLD_DURATION_MS - 1, [request(s.companyId, s.accountId, spend(60), true)]),
      );
      assert.equal(
        refused[0]!.ok ? 'ok' : refused[0]!.reason,
        'insufficient_balance',
        'the live hold keeps the available figure negative: the gate refuses',
      );
      const later = await store.write((tx) =>
        ingestGroup(ledger, tx, T0 + HOLD_DURATION_MS, [request(s.companyId, s.accountId, spend(60), true)]),
      );
      assert.ok(later[0]!.ok, 'the hold expired: ingest released it first, so the gate passes');
      const g = await store.read((tx) => tx.balances.findBalance(s.accountId, 'G'));
      assert.deepEqual([g!.amount, g!.pending], [40, 0]);
      assert.equal((await store.read((tx) => tx.events.findEvent(s.companyId, 'gate-hold')))!.state, 'cancelled');
      assert.deepEqual(
        (await store.read((tx) => tx.transactions.auditLedger())).filter((v) => v.accountId === s.accountId),
        [],
      );
    });

    test('the same client event id ingested by concurrent transactions is deducted once', async () => {
      const s = await seedCompanyAndAccount(store);
      const acc2 = await seedAccount(store, s.companyId);
      await seedBalance(store, s.companyId, s.accountId, 'credits', 1000);
      await seedBalance(store, s.companyId, acc2, 'credits', 1000);
      for (let round = 0; round < 10; round++) {
        const id = `order-${round}`;
        const ev: EventInput = {
          type: 'charge',
          id,
          cost_override: { amount: 10, denomination: 'credits' },
          metadata: { round },
        };
        const outs = await Promise.all(
          Array.from({ length: 4 }, (_, i) =>
            store.write((tx) =>
              ingestGroup(
                ledger,
                tx,
                T0,
                // Some racers put another account's request first, so they lock a different balance too.
                i % 2 === 0
                  ? [request(s.companyId, s.accountId, [ev])]
                  : [
                      request(s.companyId, acc2, [
                        { type: 'other', cost_override: { amount: 1, denomination: 'credits' } },
                      ]),
                      request(s.companyId, s.accountId, [ev]),
                    ],
              ),
            ),
          ),
        );
        for (const o of outs) {
          const mine = o.at(-1)!;
          assert.ok(mine.ok, `round ${round}: every racer is answered with success`);
          assert.deepEqual(mine.value.eventIds, [id]);
        }
      }
      const { balance, transactions } = await balanceState(store, s.accountId, 'credits');
      assert.equal(balance.amount, 1000 - 10 * 10, 'one deduction per client id');
      assert.equal(transactions.filter((r) => r.eventId?.startsWith('order-')).length, 10);
      assert.equal(
        (
          await store.read((tx) =>
            tx.events.findEventsByIds(
              s.companyId,
              Array.from({ length: 10 }, (_, i) => `order-${i}`),
            ),
          )
        ).length,
        10,
      );
      assert.equal((await store.read((tx) => tx.balances.findBalance(acc2, 'credits')))!.amount, 1000 - 20);

      // The same id with different content, raced: one wins, the other is refused, one deduction.
      const outs = await Promise.all(
        [5, 6].map((amount) =>
          store.write((tx) =>
            ingestGroup(ledger, tx, T0, [
              request(s.companyId, s.accountId, [
                { type: 'charge', id: 'contested', cost_override: { amount, denomination: 'credits' } },
              ]),
            ]),
          ),
        ),
      );
      const results = outs.map((o) => o[0]!);
      assert.equal(results.filter((r) => r.ok).length, 1);
      const refused = results.find((r) => !r.ok);
      assert.ok(refused && !refused.ok && refused.reason === 'event_id_reused_with_different_content');
      const after = await store.read((tx) => tx.balances.findBalance(s.accountId, 'credits'));
      const won = (await store.read((tx) => tx.events.findEvent(s.companyId, 'contested')))!.costAmount;
      assert.equal(after!.amount, 900 - won);
      assert.deepEqual(
        (await store.read((tx) => tx.transactions.auditLedger())).filter(
          (v) => v.accountId === s.accountId || v.accountId === acc2,
        ),
        [],
      );
    });

    test('IngestBatcher: many concurrent submissions, every one answered, ledger exact', async () => {
      const s = await seedCompanyAndAccount(store);
      await seedBalance(store, s.companyId, s.accountId, 'credits', 0);
      const batcher = new IngestBatcher(
        new TestClock(T0),
        t.dialect === 'postgres' ? 4 : 1,
        transactionWriters(store, ledger, new AccountOwners()).ingest,
      );
      const outs = await Promise.all(
        Array.from({ length: 150 }, (_, i) =>
          batcher.submit(
            request(s.companyId, s.accountId, [
              { type: 't', id: `b-${i % 100}`, cost_override: { amount: 2, denomination: 'credits' } },
            ]),
          ),
        ),
      );
      assert.ok(outs.every((o) => o.ok));
      const b = await store.read((tx) => tx.balances.findBalance(s.accountId, 'credits'));
      assert.equal(b!.amount, -200, '100 distinct ids, each deducted once');
      assert.deepEqual(
        (await store.read((tx) => tx.transactions.auditLedger())).filter((v) => v.accountId === s.accountId),
        [],
      );
    });
  });
});
