// Guarantee: on SQLite and PostgreSQL, a charge reads back exactly as written (its details JSON included), an
// account's charges page newest first, an update changes only the fields it gives; a charge being settled is locked,
// so that of concurrent settlements exactly one finds it pending (PostgreSQL: the others wait for it and then see
// its outcome), as are an account's charges awaiting a card, oldest first; and the money-movement audit names every
// broken invariant of refills and prorations and nothing on a consistent ledger.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newId } from '../../src/lib/ids.js';
import type { ChargeRow, Store, TransactionRow } from '../../src/store/types.js';
import { forEachDialect, seedAccount, seedBalance, seedCompanyAndAccount } from '../support/stores.js';
import { T0, deferred, endsOrWaits, txRow } from './contract-support.js';
import { portOf } from '../../src/ledger/port.js';

function chargeRow(companyId: string, accountId: string, over: Partial<ChargeRow> = {}): ChargeRow {
  return {
    chargeId: newId('ch'),
    companyId,
    accountId,
    denomination: 'tokens',
    reason: 'refill',
    usdCents: 500,
    status: 'pending',
    processorRef: null,
    failureCode: null,
    failureMessage: null,
    details: { units: 100 },
    transactionId: null,
    outboxId: null,
    grantId: null,
    receiptNumber: null,
    receiptAtMs: null,
    nextActionUrl: null,
    createdAtMs: T0,
    updatedAtMs: T0,
    ...over,
  };
}

/** A settlement as recordChargeOutcome makes it: lock, and only a pending charge succeeds. */
const settle = (store: Store, chargeId: string, processorRef: string) =>
  store.write(async (tx) => {
    const charge = await tx.charges.lockCharge(chargeId);
    if (charge?.status !== 'pending') return false;
    await tx.charges.updateCharge(chargeId, { status: 'succeeded', processorRef, updatedAtMs: T0 + 1 });
    return true;
  });

forEachDialect((store, t) => {
  const find = (chargeId: string) => store.read((tx) => tx.charges.findCharge(chargeId));

  describe('charges', () => {
    test('insertCharges, findCharge: an exact round trip; a charge id is unique', async () => {
      const a = await seedCompanyAndAccount(store);
      const refill = chargeRow(a.companyId, a.accountId, {
        usdCents: Number.MAX_SAFE_INTEGER,
        details: { units: 100, nested: { list: [1, 'two', null], flag: true }, text: 'ünïcode ✓' },
        outboxId: newId('ob'),
      });
      const plan = chargeRow(a.companyId, a.accountId, {
        denomination: null,
        reason: 'plan',
        status: 'requires_payment_method',
        failureCode: 'no_card_on_file',
        failureMessage: 'the account has no card',
        details: {},
        createdAtMs: T0 + 1,
        updatedAtMs: T0 + 2,
      });
      const proration = chargeRow(a.companyId, a.accountId, {
        reason: 'proration',
        status: 'succeeded',
        processorRef: 'pi_123',
        transactionId: newId('tx'),
        details: { amount: 250, usd_charge: 1_000 },
      });
      await store.write((tx) => tx.charges.insertCharges([refill, plan, proration]));
      await store.write((tx) => tx.charges.insertCharges([]));
      assert.deepEqual(await find(refill.chargeId), refill);
      assert.deepEqual(await find(plan.chargeId), plan);
      assert.deepEqual(await find(proration.chargeId), proration);
      assert.equal(await find(newId('ch')), undefined);

      // A repeated id fails the whole batch: the new charge beside it is not written either.
      const fresh = chargeRow(a.companyId, a.accountId);
      await assert.rejects(store.write((tx) => tx.charges.insertCharges([fresh, { ...refill, usdCents: 1 }])));
      assert.equal(await find(fresh.chargeId), undefined);
      assert.deepEqual(await find(refill.chargeId), refill);
    });

    test("listCharges: an account's charges newest first, paging, has_more, unknown cursor", async () => {
      const a = await seedCompanyAndAccount(store);
      const other = await seedAccount(store, a.companyId);
      // The same instant for all, and a batch of two: the order is that of insertion.
      const charges = Array.from({ length: 5 }, (_, i) => chargeRow(a.companyId, a.accountId, { usdCents: i }));
      const elsewhere = chargeRow(a.companyId, other);
      await store.write((tx) => tx.charges.insertCharges([charges[0]!, elsewhere]));
      await store.write((tx) => tx.charges.insertCharges(charges.slice(1, 3)));
      for (const c of charges.slice(3)) await store.write((tx) => tx.charges.insertCharges([c]));
      const newestFirst = [...charges].reverse();
      const page = (limit: number, startingAfter?: string) =>
        store.read((tx) => tx.charges.listCharges(a.accountId, { limit, startingAfter }));

      const p1 = await page(2);
      assert.deepEqual(p1, { rows: newestFirst.slice(0, 2), hasMore: true });
      const p2 = await page(2, p1!.rows[1]!.chargeId);
      assert.deepEqual(p2, { rows: newestFirst.slice(2, 4), hasMore: true });
      assert.deepEqual(await page(2, p2!.rows[1]!.chargeId), { rows: newestFirst.slice(4), hasMore: false });
      assert.deepEqual(await page(5), { rows: newestFirst, hasMore: false }, 'a page ending at the last row');
      assert.equal(await page(2, newId('ch')), undefined, 'unknown cursor');
      assert.equal(await page(2, elsewhere.chargeId), undefined, "another account's charge is no cursor");
      assert.deepEqual(await store.read((tx) => tx.charges.listCharges(other, { limit: 10 })), {
        rows: [elsewhere],
        hasMore: false,
      });
      const none = await seedAccount(store, a.companyId);
      assert.deepEqual(await store.read((tx) => tx.charges.listCharges(none, { limit: 10 })), {
        rows: [],
        hasMore: false,
      });
    });

    test('updateCharge changes the fields given and updated_at, on that one charge', async () => {
      const a = await seedCompanyAndAccount(store);
      const charge = chargeRow(a.companyId, a.accountId, { outboxId: 'ob_1' });
      const untouched = chargeRow(a.companyId, a.accountId);
      await store.write((tx) => tx.charges.insertCharges([charge, untouched]));

      await store.write((tx) => tx.charges.updateCharge(charge.chargeId, { updatedAtMs: T0 + 1 }));
      assert.deepEqual(await find(charge.chargeId), { ...charge, updatedAtMs: T0 + 1 });
      await store.write((tx) =>
        tx.charges.updateCharge(charge.chargeId, {
          status: 'failed',
          failureCode: 'card_declined',
          failureMessage: 'Your card was declined.',
          updatedAtMs: T0 + 2,
        }),
      );
      const failed = {
        ...charge,
        status: 'failed' as const,
        failureCode: 'card_declined',
        failureMessage: 'Your card was declined.',
        updatedAtMs: T0 + 2,
      };
      assert.deepEqual(await find(charge.chargeId), failed);
      // As when a card is attached: pending again, failure cleared (null), a new outbox row.
      await store.write((tx) =>
        tx.charges.updateCharge(charge.chargeId, {
          status: 'pending',
          failureCode: null,
          failureMessage: null,
          outboxId: 'ob_2',
          updatedAtMs: T0 + 3,
        }),
      );
      assert.deepEqual(await find(charge.chargeId), { ...charge, outboxId: 'ob_2', updatedAtMs: T0 + 3 });
      await store.write((tx) =>
        tx.charges.updateCharge(charge.chargeId, {
          status: 'succeeded',
          processorRef: 'pi_9',
          transactionId: 'tx_9',
          updatedAtMs: T0 + 4,
        }),
      );
      assert.deepEqual(await find(charge.chargeId), {
        ...charge,
        status: 'succeeded',
        processorRef: 'pi_9',
        transactionId: 'tx_9',
        outboxId: 'ob_2',
        updatedAtMs: T0 + 4,
      });
      assert.deepEqual(await find(untouched.chargeId), untouched, 'another charge is not touched');
    });

    test('lockCharge: the charge as stored; of concurrent settlements exactly one finds it pending', async () => {
      const a = await seedCompanyAndAccount(store);
      const charge = chargeRow(a.companyId, a.accountId);
      await store.write((tx) => tx.charges.insertCharges([charge]));
      assert.deepEqual(await store.write((tx) => tx.charges.lockCharge(charge.chargeId)), charge);
      assert.equal(await store.write((tx) => tx.charges.lockCharge(newId('ch'))), undefined);

      const outcomes = await Promise.all(
        Array.from({ length: 8 }, (_, i) => settle(store, charge.chargeId, `pi_${i}`)),
      );
      assert.equal(outcomes.filter(Boolean).length, 1, 'settled once');
      const winner = outcomes.indexOf(true);
      assert.deepEqual(await find(charge.chargeId), {
        ...charge,
        status: 'succeeded',
        processorRef: `pi_${winner}`,
        updatedAtMs: T0 + 1,
      });
      assert.equal(await settle(store, charge.chargeId, 'pi_late'), false, 'and never again');
    });

    test('issueReceiptNumber: 1, 2, 3, … per company; a rolled-back number is given again; 20 at once', async () => {
      const a = await seedCompanyAndAccount(store);
      const b = await seedCompanyAndAccount(store);
      const issue = (companyId: string) => store.write((tx) => tx.charges.issueReceiptNumber(companyId));
      assert.deepEqual([await issue(a.companyId), await issue(a.companyId), await issue(b.companyId)], [1, 2, 1]);
      await assert.rejects(
        store.write(async (tx) => {
          assert.equal(await tx.charges.issueReceiptNumber(a.companyId), 3);
          throw new Error('the charge is not recorded');
        }),
        /not recorded/,
      );
      assert.equal(await issue(a.companyId), 3, 'the rolled-back number is not lost');
      // Each number stays taken while its transaction runs (the counter row is locked until it ends).
      const charges = Array.from({ length: 20 }, () => chargeRow(a.companyId, a.accountId));
      await store.write((tx) => tx.charges.insertCharges(charges));
      const numbers = await Promise.all(
        charges.map((c) =>
          store.write(async (tx) => {
            const n = await tx.charges.issueReceiptNumber(a.companyId);
            await tx.charges.updateCharge(c.chargeId, { receiptNumber: n, receiptAtMs: T0 + 1, updatedAtMs: T0 + 1 });
            return n;
          }),
        ),
      );
      assert.deepEqual(
        [...numbers].sort((x, y) => x - y),
        Array.from({ length: 20 }, (_, i) => i + 4),
      );
      // A number is never on two charges of a company (the unique index), whatever writes it.
      await assert.rejects(
        store.write((tx) =>
          tx.charges.updateCharge(charges[1]!.chargeId, { receiptNumber: numbers[0]!, updatedAtMs: T0 + 2 }),
        ),
      );
      assert.equal((await find(charges[1]!.chargeId))?.receiptNumber, numbers[1]);
    });

    test("lockChargesAwaitingCard: that account's charges awaiting a card, oldest first", async () => {
      const a = await seedCompanyAndAccount(store);
      const other = await seedAccount(store, a.companyId);
      const waiting = (over: Partial<ChargeRow> = {}) =>
        chargeRow(a.companyId, a.accountId, { status: 'requires_payment_method', ...over });
      const [w1, w2, w3] = [waiting({ reason: 'plan', denomination: null }), waiting(), waiting({ reason: 'overage' })];
      await store.write((tx) =>
        tx.charges.insertCharges([
          w1!,
          chargeRow(a.companyId, a.accountId, { status: 'pending' }),
          chargeRow(a.companyId, a.accountId, { status: 'failed' }),
          chargeRow(a.companyId, other, { status: 'requires_payment_method' }),
          w2!,
        ]),
      );
      await store.write((tx) => tx.charges.insertCharges([w3!]));
      assert.deepEqual(await store.write((tx) => tx.charges.lockChargesAwaitingCard(a.accountId)), [w1, w2, w3]);
      // Collected (as when a card is attached): none waits any more.
      await store.write(async (tx) => {
        for (const c of await tx.charges.lockChargesAwaitingCard(a.accountId))
          await tx.charges.updateCharge(c.chargeId, { status: 'pending', updatedAtMs: T0 + 1 });
      });
      assert.deepEqual(await store.write((tx) => tx.charges.lockChargesAwaitingCard(a.accountId)), []);
      assert.equal((await store.write((tx) => tx.charges.lockChargesAwaitingCard(other))).length, 1);
    });

    test('lockCharge, lockChargesAwaitingCard (PostgreSQL): another lock of the charge waits, then sees the outcome', {
      skip: t.dialect === 'sqlite' ? "SQLite's single writer never has two transactions open at once" : false,
    }, async () => {
      const a = await seedCompanyAndAccount(store);
      const pending = chargeRow(a.companyId, a.accountId);
      const awaiting = chargeRow(a.companyId, a.accountId, { status: 'requires_payment_method', reason: 'plan' });
      await store.write((tx) => tx.charges.insertCharges([pending, awaiting]));

      for (const [lock, charge, outcome] of [
        ['lockCharge', pending, 'succeeded'],
        ['lockChargesAwaitingCard', awaiting, 'pending'],
      ] as const) {
        const locked = deferred();
        const release = deferred();
        const first = store.write(async (tx) => {
          if (lock === 'lockCharge') assert.ok(await tx.charges.lockCharge(charge.chargeId));
          else assert.equal((await tx.charges.lockChargesAwaitingCard(a.accountId)).length, 1);
          locked.resolve();
          await release.promise;
          await tx.charges.updateCharge(charge.chargeId, { status: outcome, updatedAtMs: T0 + 5 });
        });
        let second: Promise<ChargeRow | undefined> | undefined;
        try {
          await locked.promise;
          second = store.write((tx) => tx.charges.lockCharge(charge.chargeId));
          assert.equal(await endsOrWaits(t, 'charges', second), 'waits', `${lock}: the second lock waits`);
        } finally {
          release.resolve();
          await first;
        }
        assert.equal((await second)?.status, outcome, `${lock}: then reads what the first committed`);
      }
    });

    test('auditMoneyMovement: nothing on a consistent ledger, each broken invariant named', async () => {
      const a = await seedCompanyAndAccount(store);
      const accounts: string[] = [];
      const account = async () => {
        const id = await seedAccount(store, a.companyId);
        await seedBalance(store, a.companyId, id, 'tokens', 10);
        accounts.push(id);
        return id;
      };
      const write = (charges: ChargeRow[], transactions: TransactionRow[], marker?: [string, string]) =>
        store.write(async (tx) => {
          await portOf(tx).writeLedger([], [], transactions);
          await tx.charges.insertCharges(charges);
          if (marker) await tx.refills.updateRefillState(marker[0], 'tokens', { refillChargeId: marker[1] });
        });
      const audit = async () =>
        (await store.read((tx) => tx.charges.auditMoneyMovement()))
          .filter((v) => accounts.includes(v.accountId))
          .map((v) => `${v.accountId === accounts[0] ? 'ok' : v.accountId} ${v.denomination}: ${v.problem}`)
          .sort();

      // Consistent: a paid refill, a refill in flight (marked), a paid proration, a plan charge, a failed refill.
      const ok = await account();
      const refillTx = txRow(ok, 'tokens', 100, 110, { kind: 'refill' });
      const prorationTx = txRow(ok, 'tokens', 50, 160, { kind: 'proration' });
      const inFlight = chargeRow(a.companyId, ok);
      await write(
        [
          chargeRow(a.companyId, ok, { status: 'succeeded', transactionId: refillTx.transactionId }),
          inFlight,
          chargeRow(a.companyId, ok, {
            reason: 'proration',
            status: 'succeeded',
            transactionId: prorationTx.transactionId,
          }),
          chargeRow(a.companyId, ok, { reason: 'plan', denomination: null, status: 'succeeded' }),
          chargeRow(a.companyId, ok, { status: 'failed' }),
        ],
        [refillTx, prorationTx],
        [ok, inFlight.chargeId],
      );
      assert.deepEqual(await audit(), [], 'a consistent ledger');

      // A refill whose charge did not succeed.
      const unpaid = await account();
      const unpaidTx = txRow(unpaid, 'tokens', 100, 110, { kind: 'refill' });
      await write(
        [chargeRow(a.companyId, unpaid, { status: 'failed', transactionId: unpaidTx.transactionId })],
        [unpaidTx],
      );
      // A succeeded refill charge that added nothing.
      const unrefilled = await account();
      const lost = chargeRow(a.companyId, unrefilled, { status: 'succeeded' });
      await write([lost], []);
      // One refill paid by two charges.
      const twice = await account();
      const twiceTx = txRow(twice, 'tokens', 100, 110, { kind: 'refill' });
      const paid = { status: 'succeeded' as const, transactionId: twiceTx.transactionId };
      await write([chargeRow(a.companyId, twice, paid), chargeRow(a.companyId, twice, paid)], [twiceTx]);
      // Two refills in flight on one balance.
      const doubled = await account();
      const flight = chargeRow(a.companyId, doubled);
      await write([flight, chargeRow(a.companyId, doubled)], [], [doubled, flight.chargeId]);
      // A marker naming a charge that is not pending.
      const stale = await account();
      const done = chargeRow(a.companyId, stale, { status: 'failed' });
      await write([done], [], [stale, done.chargeId]);
      // A succeeded proration charge whose transaction is no proration.
      const unprorated = await account();
      const notProration = txRow(unprorated, 'tokens', 5, 15);
      const proration = chargeRow(a.companyId, unprorated, {
        reason: 'proration',
        status: 'succeeded',
        transactionId: notProration.transactionId,
      });
      await write([proration], [notProration]);
      // A succeeded top-up whose grant does not exist.
      const ungranted = await account();
      const topup = chargeRow(a.companyId, ungranted, { reason: 'topup', status: 'succeeded' });
      await write([topup], []);
      await store.write((tx) => tx.charges.updateCharge(topup.chargeId, { grantId: 'g_missing', updatedAtMs: T0 }));

      assert.deepEqual(
        await audit(),
        [
          `${unpaid} tokens: refill ${unpaidTx.transactionId} without a successful charge`,
          `${unrefilled} tokens: succeeded refill charge ${lost.chargeId} added no refill`,
          `${twice} tokens: transaction ${twiceTx.transactionId} paid by 2 charges`,
          `${doubled} tokens: 2 refills in flight at once`,
          `${stale} tokens: in-flight marker ${done.chargeId} names no pending charge`,
          `${unprorated} tokens: succeeded proration charge ${proration.chargeId} changed no balance`,
          `${ungranted} tokens: succeeded top-up charge ${topup.chargeId} added no grant`,
        ].sort(),
      );
    });
  });
});
