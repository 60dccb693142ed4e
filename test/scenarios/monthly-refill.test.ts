// Guarantee: a monthly refill happens exactly on the days of the monthly day rule (UTC), once per month, for a year —
// charged first, units added only on success — on both databases.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HTTP_DIALECTS, signUpCompany, startHarness, type Harness } from '../support/harness.js';
import {
  FUTURE_YEAR,
  LEAP_YEAR,
  advanceTo,
  attachCard,
  balance,
  charges,
  createAccount,
  createBalance,
  iso,
  putAutoRefill,
  refillDays,
  runDue,
  transactions,
  type Co,
} from '../support/money.js';

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const utc = (y: number, m: number, d: number) => Date.UTC(y, m - 1, d);

/**
 * Starts a fresh server (its own clock), moves it to `start`, and gives an account with a card and an empty balance.
 */
async function scenario(
  dialect: (typeof HTTP_DIALECTS)[number],
  start: string,
  run: (h: Harness, co: Co, acc: string) => Promise<void>,
): Promise<void> {
  const h = await startHarness(dialect);
  try {
    const co = await signUpCompany(h);
    await advanceTo(h, co, start);
    const acc = (await createAccount(h, co)).account_id;
    await createBalance(h, co, acc, 'tokens', 0);
    await attachCard(h, co, acc, 'tok_visa');
    await run(h, co, acc);
    await h.audit();
  } finally {
    await h.close();
  }
}

/** Moves the clock through the given instants in order. */
async function walk(h: Harness, co: Co, days: number[]): Promise<void> {
  for (const ms of [...days].sort((a, b) => a - b)) await advanceTo(h, co, new Date(ms).toISOString());
}

/** The days just before and on each expected refill day, so both "not yet" and "now" are exercised. */
function aroundEach(expected: number[]): number[] {
  return expected.flatMap((ms) => [ms - 1000, ms]);
}

for (const dialect of HTTP_DIALECTS) {
  describe(`monthly refill scenarios (${dialect})`, () => {
    test('set on the 15th: refilled at once, then on every 15th for a year; amounts charged first', async () => {
      const Y = FUTURE_YEAR;
      await scenario(dialect, iso(Y, 1, 15, '09:30:00'), async (h, co, acc) => {
        const saved = await putAutoRefill(h, co, acc, 'tokens', {
          amount: 1000,
          usd_charge: 500,
          refill_period: 'monthly',
        });
        assert.equal(saved.refill_monthly, true);
        assert.equal(saved.refill_on_day, '15');
        assert.equal(saved.refill_amount, 1000);
        assert.equal(saved.refill_usd_amount, 500);
        assert.equal(saved.next_refill_at, iso(Y, 2, 15));
        assert.equal(saved.amount, 0, 'units arrive only once the charge succeeded');
        await runDue(h, co);
        assert.equal((await balance(h, co, acc)).amount, 1000);
        const expected = Array.from({ length: 12 }, (_, i) => utc(Y, 2 + i, 15));
        for (const ms of expected) {
          await advanceTo(h, co, new Date(ms - 1000).toISOString());
          const before = (await balance(h, co, acc)).amount;
          await advanceTo(h, co, new Date(ms).toISOString());
          assert.equal((await balance(h, co, acc)).amount, before + 1000, `refill on ${day(ms)}`);
        }
        assert.deepEqual(await refillDays(h, co, acc), [day(utc(Y, 1, 15)), ...expected.map(day)]);
        const cs = await charges(h, co, acc);
        assert.equal(cs.length, 13);
        assert.ok(
          cs.every(
            (c) =>
              c.reason === 'refill' && c.status === 'succeeded' && c.usd_amount === 500 && c.denomination === 'tokens',
          ),
        );
      });
    });

    test('set on 30 January: 30 January, 1 March, 1 April, … (none in February)', async () => {
      const Y = FUTURE_YEAR;
      await scenario(dialect, iso(Y, 1, 30, '18:00:00'), async (h, co, acc) => {
        const saved = await putAutoRefill(h, co, acc, 'tokens', { amount: 100, usd_charge: 100, refill_monthly: true });
        assert.equal(saved.refill_on_day, '1');
        assert.equal(saved.next_refill_at, iso(Y, 3, 1));
        await runDue(h, co);
        const expected = Array.from({ length: 11 }, (_, i) => utc(Y, 3 + i, 1));
        await walk(h, co, [utc(Y, 2, 1), utc(Y, 2, isLeapYear(Y) ? 29 : 28), utc(Y, 2, 15), ...aroundEach(expected)]);
        assert.deepEqual(await refillDays(h, co, acc), [day(utc(Y, 1, 30)), ...expected.map(day)]);
        assert.equal((await balance(h, co, acc)).amount, 100 * 12);
      });
    });

    test('set on 31 December: 31 December, 1 February, 1 March, …', async () => {
      const Y = FUTURE_YEAR;
      await scenario(dialect, iso(Y, 12, 31, '23:59:00'), async (h, co, acc) => {
        const saved = await putAutoRefill(h, co, acc, 'tokens', {
          amount: 10,
          usd_charge: 60,
          refill_period: 'monthly',
        });
        assert.equal(saved.refill_on_day, '1');
        await runDue(h, co);
        const expected = Array.from({ length: 12 }, (_, i) => utc(Y + 1, 2 + i, 1));
        await walk(h, co, [utc(Y + 1, 1, 1), utc(Y + 1, 1, 31), ...aroundEach(expected)]);
        assert.deepEqual(await refillDays(h, co, acc), [day(utc(Y, 12, 31)), ...expected.map(day)]);
      });
    });

    test(
      'leap years: set on 29 February → 1 April, 1 May, …; set on 29 January → 1 March (February skipped even with ' +
        'a 29th)',
      async () => {
        const L = LEAP_YEAR;
        await scenario(dialect, iso(L, 1, 29, '12:00:00'), async (h, co, acc) => {
          await createBalance(h, co, acc, 'leap', 0);
          await putAutoRefill(h, co, acc, 'tokens', { amount: 1, usd_charge: 50, refill_period: 'monthly' });
          await runDue(h, co);
          await advanceTo(h, co, iso(L, 2, 29, '08:00:00'));
          const saved = await putAutoRefill(h, co, acc, 'leap', {
            amount: 7,
            usd_charge: 70,
            refill_period: 'monthly',
          });
          assert.equal(saved.refill_on_day, '1');
          assert.equal(saved.next_refill_at, iso(L, 4, 1));
          await runDue(h, co);
          const jan29 = Array.from({ length: 12 }, (_, i) => utc(L, 3 + i, 1));
          const feb29 = Array.from({ length: 11 }, (_, i) => utc(L, 4 + i, 1));
          await walk(h, co, aroundEach([...new Set([...jan29, ...feb29])]));
          assert.deepEqual(await refillDays(h, co, acc, 'tokens'), [day(utc(L, 1, 29)), ...jan29.map(day)]);
          assert.deepEqual(await refillDays(h, co, acc, 'leap'), [day(utc(L, 2, 29)), ...feb29.map(day)]);
        });
      },
    );

    test(
      'changed settings apply at the next renewal on the same day; switching off stops refills; switching on again ' +
        're-anchors',
      async () => {
        const Y = FUTURE_YEAR;
        await scenario(dialect, iso(Y, 3, 10, '10:00:00'), async (h, co, acc) => {
          await putAutoRefill(h, co, acc, 'tokens', { amount: 100, usd_charge: 100, refill_period: 'monthly' });
          await runDue(h, co);
          await advanceTo(h, co, iso(Y, 3, 20));
          const changed = await putAutoRefill(h, co, acc, 'tokens', {
            amount: 300,
            usd_charge: 250,
            refill_period: 'monthly',
          });
          assert.equal(changed.refill_on_day, '10', 'the day is kept');
          assert.equal(changed.next_refill_at, iso(Y, 4, 10));
          await runDue(h, co);
          assert.equal((await balance(h, co, acc)).amount, 100, 'no refill for a change of settings');
          await advanceTo(h, co, iso(Y, 4, 10));
          assert.equal((await balance(h, co, acc)).amount, 400);
          const off = await putAutoRefill(h, co, acc, 'tokens', { refill_monthly: false });
          assert.deepEqual([off.refill_monthly, off.refill_on_day, off.next_refill_at], [false, null, null]);
          await advanceTo(h, co, iso(Y, 6, 11));
          assert.equal((await balance(h, co, acc)).amount, 400, 'no refill while off');
          const on = await putAutoRefill(h, co, acc, 'tokens', { refill_monthly: true });
          assert.equal(on.refill_on_day, '11');
          await runDue(h, co);
          await advanceTo(h, co, iso(Y, 7, 11));
          assert.deepEqual(await refillDays(h, co, acc), [
            day(utc(Y, 3, 10)),
            day(utc(Y, 4, 10)),
            day(utc(Y, 6, 11)),
            day(utc(Y, 7, 11)),
          ]);
          assert.deepEqual(
            (await transactions(h, co, acc)).filter((t) => t.kind === 'refill').map((t) => t.amount),
            [100, 300, 300, 300],
          );
        });
      },
    );

    test(
      'a monthly refill charged to a declining card adds ' + 'nothing; the month is recorded as a failed charge',
      async () => {
        const Y = FUTURE_YEAR;
        await scenario(dialect, iso(Y, 5, 5), async (h, co, acc) => {
          await attachCard(h, co, acc, 'tok_chargeCustomerFail');
          await putAutoRefill(h, co, acc, 'tokens', { amount: 100, usd_charge: 100, refill_period: 'monthly' });
          await runDue(h, co);
          await advanceTo(h, co, iso(Y, 6, 5));
          assert.equal((await balance(h, co, acc)).amount, 0);
          const cs = await charges(h, co, acc);
          assert.deepEqual(
            cs.map((c) => [c.reason, c.status, c.failure_code]),
            [
              ['refill', 'failed', 'card_declined'],
              ['refill', 'failed', 'card_declined'],
            ],
          );
          assert.equal((await balance(h, co, acc)).consecutive_declines, 2);
        });
      },
    );
  });
}

function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}
