// Guarantee: a mid-month increase charges exactly the contract's prorated price before changing anything, applies it as
// one proration transaction and re-anchors the refill day; a dry run, a decrease or a declined card change nothing — on
// both databases.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { canonicalJson, sha256Hex } from '../../src/lib/canonical.js';
import { derivedId } from '../../src/lib/ids.js';
import { requestCharge } from '../../src/operations/charges.js';
import { PRORATION_RECOVERY_DELAY_MS } from '../../src/operations/refills.js';
import { HTTP_DIALECTS, assertError, signUpCompany, startHarness, type Harness } from '../support/harness.js';
import {
  FUTURE_YEAR,
  advanceTo,
  attachCard,
  balance,
  charges,
  createAccount,
  createBalance,
  iso,
  putAutoRefill,
  runDue,
  spend,
  transactions,
  type Co,
} from '../support/money.js';

for (const dialect of HTTP_DIALECTS) {
  describe(`modifymidmonth (${dialect})`, () => {
    let h: Harness;
    let co: Co;
    const Y = FUTURE_YEAR;
    before(async () => {
      h = await startHarness(dialect);
      co = await signUpCompany(h);
      await advanceTo(h, co, iso(Y, 5, 1));
    });
    after(async () => h.close());
    afterEach(async () => h.audit());

    /** A balance with a monthly refill of 1,000 units for 1,000 ¢ (refilled once), then spent down to `amount`. */
    async function refilledTo(amount: number, token = 'tok_visa', startAmount = 0): Promise<string> {
      const acc = (await createAccount(h, co)).account_id;
      await createBalance(h, co, acc, 'tokens', startAmount);
      await attachCard(h, co, acc, token);
      await putAutoRefill(h, co, acc, 'tokens', { amount: 1000, usd_charge: 1000, refill_period: 'monthly' });
      await runDue(h, co);
      const b = await balance(h, co, acc);
      if (b.amount > amount) await spend(h, co, acc, b.amount - amount);
      assert.equal((await balance(h, co, acc)).amount, amount);
      return acc;
    }

    const modify = (acc: string, body: Record<string, unknown>) =>
      h.request('POST', `/v1/accounts/${acc}/modifymidmonth`, {
        auth: co.auth,
        body: { denomination: 'tokens', ...body },
      });

    test(
      'contract example 1: balance 400 → 2,000 units for ' + '1,800 ¢ charges "1400"; dry run first changes nothing',
      async () => {
        await advanceTo(h, co, iso(Y, 5, 3, '08:00:00'));
        const acc = await refilledTo(400);
        await advanceTo(h, co, iso(Y, 5, 20, '15:00:00'));
        const dry = await modify(acc, { account_id: acc, amount: '2000', usd_charge: '1800', dryrun: true });
        assert.equal(dry.status, 200, dry.text);
        assert.deepEqual(dry.body.data, {
          account_id: acc,
          isdryrun: true,
          amount: 2000,
          denomination: 'tokens',
          refill_amount: 2000,
          refill_day: 20,
          refill_usd_amount: 1800,
          usd_amount_charged: '1400',
        });
        const unchanged = await balance(h, co, acc);
        assert.deepEqual(
          [unchanged.amount, unchanged.refill_amount, unchanged.refill_usd_amount, unchanged.refill_on_day],
          [400, 1000, 1000, '3'],
        );
        assert.equal((await charges(h, co, acc)).length, 1, 'a dry run charges nothing');

        const done = await modify(acc, { account_id: acc, amount: '2000', usd_charge: '1800' });
        assert.equal(done.status, 200, done.text);
        assert.deepEqual(done.body.data, {
          account_id: acc,
          isdryrun: false,
          amount: 2000,
          denomination: 'tokens',
          refill_amount: 2000,
          refill_day: 20,
          refill_usd_amount: 1800,
          usd_amount_charged: '1400',
        });
        const b = await balance(h, co, acc);
        assert.deepEqual(
          [b.amount, b.refill_amount, b.refill_usd_amount, b.refill_on_day, b.refill_monthly, b.next_refill_at],
          [2000, 2000, 1800, '20', true, iso(Y, 6, 20)],
        );
        const last = (await transactions(h, co, acc)).at(-1)!;
        assert.deepEqual([last.kind, last.amount, last.balance_after], ['proration', 1600, 2000]);
        assert.deepEqual(
          (await charges(h, co, acc)).map((c) => [c.reason, c.status, c.usd_amount]),
          [
            ['refill', 'succeeded', 1000],
            ['proration', 'succeeded', 1400],
          ],
        );

        // The next monthly refill is a month after the increase, at the new price.
        await advanceTo(h, co, iso(Y, 6, 19));
        assert.equal((await balance(h, co, acc)).amount, 2000);
        await advanceTo(h, co, iso(Y, 6, 20));
        assert.equal((await balance(h, co, acc)).amount, 4000);
        assert.deepEqual((await charges(h, co, acc)).at(-1)!.usd_amount, 1800);
      },
    );

    test('contract example 2: balance 1,200 → charged "800", balance 2,200 (integers accepted too)', async () => {
      const acc = await refilledTo(1200, 'tok_visa', 200);
      const done = await modify(acc, { amount: 2000, usd_charge: 1800 });
      assert.equal(done.status, 200, done.text);
      assert.equal(done.body.data.usd_amount_charged, '800');
      assert.equal(done.body.data.amount, 2200);
      assert.equal((await balance(h, co, acc)).amount, 2200);
    });

    test(
      'a negative balance has nothing to credit; a credit worth more than the new price charges 0 and nothing at the ' +
        'processor',
      async () => {
        const neg = await refilledTo(-50);
        const r = await modify(neg, { amount: '1500', usd_charge: '900' });
        assert.equal(r.status, 200, r.text);
        assert.deepEqual([r.body.data.usd_amount_charged, r.body.data.amount], ['900', 1450]);
        const rich = await refilledTo(1000);
        const free = await modify(rich, { amount: 1001, usd_charge: 500 });
        assert.equal(free.status, 200, free.text);
        assert.deepEqual([free.body.data.usd_amount_charged, free.body.data.amount], ['0', 1001]);
        assert.deepEqual(
          (await charges(h, co, rich)).map((c) => c.reason),
          ['refill'],
          'no charge of 0 cents',
        );
        const t = (await transactions(h, co, rich)).at(-1)!;
        assert.deepEqual([t.kind, t.amount], ['proration', 1]);
      },
    );

    test('a decrease (or the same amount) is 400 and says to schedule decreases with auto-refill', async () => {
      const acc = await refilledTo(400);
      for (const amount of [999, 1000, '500']) {
        const r = await modify(acc, { amount, usd_charge: 100 });
        assertError(r, 400, 'invalid_request');
        assert.match(r.body.error.message, /auto-?refill/i);
        assert.match(r.body.error.message, /decrease/i);
      }
      assert.equal((await balance(h, co, acc)).amount, 400);
    });

    test('a declined card (or none) is 402 payment_failed and nothing changes', async () => {
      const cardless = (await createAccount(h, co)).account_id;
      await createBalance(h, co, cardless, 'tokens', 400);
      await putAutoRefill(h, co, cardless, 'tokens', { amount: 1000, usd_charge: 1000, refill_monthly: true });
      const noCardBefore = await balance(h, co, cardless);
      const noCard = await modify(cardless, { amount: '2000', usd_charge: '1800' });
      assertError(noCard, 402, 'payment_failed');
      assert.deepEqual(await balance(h, co, cardless), noCardBefore);
      const acc = await refilledTo(400);
      await attachCard(h, co, acc, 'tok_chargeCustomerFail');
      const before = await balance(h, co, acc);
      const txBefore = await transactions(h, co, acc);
      const declined = await modify(acc, { amount: '2000', usd_charge: '1800' });
      assertError(declined, 402, 'payment_failed');
      assert.deepEqual(await balance(h, co, acc), before);
      assert.deepEqual(await transactions(h, co, acc), txBefore);
      assert.deepEqual(
        (await charges(h, co, acc)).filter((c) => c.reason === 'proration').map((c) => [c.status, c.usd_amount]),
        [['failed', 1400]],
        'the failed attempt is on record',
      );
      await runDue(h, co);
      assert.deepEqual(await balance(h, co, acc), before, 'and nothing happens later either');
    });

    test('malformed amounts are 400: signs, decimals, exponents, spaces, a foreign account_id', async () => {
      const acc = await refilledTo(400);
      for (const body of [
        { amount: '-2000', usd_charge: '1800' },
        { amount: '20.5', usd_charge: '1800' },
        { amount: '2e3', usd_charge: '1800' },
        { amount: ' 2000', usd_charge: '1800' },
        { amount: 2000, usd_charge: 'ten' },
        { amount: 2000.5, usd_charge: 1 },
        { amount: 2000 },
        { amount: 2000, usd_charge: 1, account_id: 'a_other' },
        { amount: 2000, usd_charge: 1, dryrun: 'yes' },
        { amount: 2000, usd_charge: 1, extra: 1 },
        { amount: '99999999999999999999', usd_charge: 1 },
      ])
        assertError(await modify(acc, body), 400, 'invalid_request');
      assertError(await modify(acc, { amount: 2000, usd_charge: 1, denomination: 'gold' }), 404, 'not_found');
      assert.equal((await balance(h, co, acc)).amount, 400);
    });

    /**
     * What a request with an Idempotency-Key leaves when its process dies after writing its charge (step 2)
     * and before settling it: its claim, lapsed, and the pending charge with the id derived from the key.
     */
    async function dieAfterCharging(acc: string, key: string, body: Record<string, unknown>, usdCents: number) {
      const url = `/v1/accounts/${acc}/modifymidmonth`;
      const scope = `company:${co.companyId}`;
      const now = h.server.clock.now();
      const claim = {
        scope,
        key,
        requestHash: sha256Hex(canonicalJson({ m: 'POST', u: url, b: body })),
        statusCode: null,
        responseBody: null,
        createdAtMs: now,
        owner: 'the-dead-owner',
        leaseExpiresAtMs: Date.now() - 1,
      };
      await h.store.write(async (tx) => {
        assert.equal(await tx.idempotency.claimIdempotency(claim, 0), true);
        await requestCharge(
          tx,
          now,
          {
            companyId: co.companyId,
            accountId: acc,
            denomination: 'tokens',
            reason: 'proration',
            usdCents,
            details: { amount: body.amount, usd_charge: body.usd_charge, anchor_at_ms: now },
            chargeId: derivedId('ch', `${scope}\n${key}\n${now}`),
          },
          now + PRORATION_RECOVERY_DELAY_MS,
        );
      });
    }

    test('a retry of a request that died after writing its charge finishes that charge: charged once', async () => {
      const acc = await refilledTo(400);
      const body = { denomination: 'tokens', amount: 2000, usd_charge: 1800 };
      await dieAfterCharging(acc, 'mid-1', body, 1400);
      const send = () =>
        h.request('POST', `/v1/accounts/${acc}/modifymidmonth`, {
          auth: co.auth,
          body,
          headers: { 'idempotency-key': 'mid-1' },
        });
      const retry = await send();
      assert.equal(retry.status, 200, retry.text);
      assert.deepEqual([retry.body.data.amount, retry.body.data.usd_amount_charged], [2000, '1400']);
      assert.deepEqual(
        (await charges(h, co, acc)).map((c) => [c.reason, c.status, c.usd_amount]),
        [
          ['refill', 'succeeded', 1000],
          ['proration', 'succeeded', 1400],
        ],
        'the charge the dead request wrote, and no other',
      );
      assert.equal((await balance(h, co, acc)).amount, 2000);
      const again = await send();
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(again.text, retry.text);
    });

    test('a retry after the worker settled the dead request’s charge answers what was applied', async () => {
      const acc = await refilledTo(400);
      const body = { denomination: 'tokens', amount: 2000, usd_charge: 1800 };
      await dieAfterCharging(acc, 'mid-2', body, 1400);
      // The recovery row is due after PRORATION_RECOVERY_DELAY_MS: the charge worker settles the charge.
      await advanceTo(h, co, new Date(h.server.clock.now() + PRORATION_RECOVERY_DELAY_MS + 1000).toISOString());
      await runDue(h, co);
      assert.equal((await balance(h, co, acc)).amount, 2000);
      const retry = await h.request('POST', `/v1/accounts/${acc}/modifymidmonth`, {
        auth: co.auth,
        body,
        headers: { 'idempotency-key': 'mid-2' },
      });
      assert.equal(retry.status, 200, retry.text);
      assert.deepEqual([retry.body.data.amount, retry.body.data.usd_amount_charged], [2000, '1400']);
      assert.equal((await charges(h, co, acc)).filter((c) => c.reason === 'proration').length, 1);
    });
  });
}
