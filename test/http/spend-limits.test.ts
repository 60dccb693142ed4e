// Guarantees (contract "Spend limits and alerts": spend and limits), over HTTP on SQLite and PostgreSQL:
// - spend counts the units usage takes when it takes them: a complete event's cost, a hold when held; a settle
//   below its hold gives the rest back to the window it was taken in, at it changes nothing, above it adds the
//   difference now; a cancel and an expired hold give it all back; adjustments are not spend;
// - a window that ends reads 0 from its first instant, with no job run; what a hold of an ended window gives back
//   leaves the new window as it is;
// - `PUT …/limits` sets `daily` and `monthly` (a field left out keeps its value, null removes it); an events request
//   exactly at a limit is accepted, one unit above is refused whole with 402 spend_limit_reached and its details,
//   whatever gate_on_balance says, and records nothing; both passed: the day's; a limit below the spend is accepted
//   and refuses usage until the window resets; a settle is never refused;
// - the check answers `reason`: spend_limit_reached (also when the balance is short too), insufficient_balance, null;
// - 50 concurrent requests against a daily limit never take the spend above it;
// - bad limits are 400 naming the field, another company's account 404; the ledger audit is clean after every test.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import {
  assertError,
  createAccountWithBalance,
  HTTP_DIALECTS,
  signUpCompany,
  startHarness,
  type Harness,
} from '../support/harness.js';

type Auth = [string, string];

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();
const utcDay = (ms: number) => Math.floor(ms / DAY) * DAY;
const nextMonth = (ms: number) => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
};

interface BalanceJson {
  amount: number;
  pending: number;
  available: number;
  spend: { day: number; month: number };
  limits: { daily: number | null; monthly: number | null };
}

for (const dialect of HTTP_DIALECTS) {
  describe(`spend and spend limits (${dialect})`, () => {
    let h: Harness;
    let auth: Auth;
    let co: { companyId: string; auth: Auth };
    before(async () => {
      h = await startHarness(dialect);
      co = await signUpCompany(h);
      auth = co.auth;
    });
    after(async () => h.close());
    afterEach(async () => h.audit());

    const call = (method: string, path: string, body?: unknown) =>
      h.request(method, path, body === undefined ? { auth } : { auth, body });
    async function now(): Promise<number> {
      const r = await call('GET', '/v1/test_clock');
      assert.equal(r.status, 200, r.text);
      return Date.parse(r.body.data.now);
    }
    /** Moves the clock without running any job: every read and write must see the new window by itself. */
    function jump(toMs: number): void {
      assert.ok((h.server.clock as unknown as { advanceTo(ms: number): boolean }).advanceTo(toMs));
    }
    /** A new account with a tokens balance, the clock moved to `hoursIntoDay` hours after a UTC midnight. */
    async function fresh(amount = 1000, hoursIntoDay = 2): Promise<string> {
      const n = await now();
      const target = utcDay(n) + DAY + hoursIntoDay * HOUR;
      // Never across a month end by accident: the month's figures are checked beside the day's.
      jump(new Date(target).getUTCDate() === 1 ? target + DAY : target);
      return createAccountWithBalance(h, co, 'tokens', amount);
    }
    async function balance(acc: string): Promise<BalanceJson> {
      const r = await call('GET', `/v1/accounts/${acc}/balance/tokens`);
      assert.equal(r.status, 200, r.text);
      return r.body.data;
    }
    const usage = (amount: number, state?: 'pending') => ({
      type: 'call',
      cost_override: { amount, denomination: 'tokens' },
      ...(state ? { state } : {}),
    });
    async function events(acc: string, list: object[], query = '') {
      return call('POST', `/v1/accounts/${acc}/events${query}`, { events: list });
    }
    async function accepted(acc: string, list: object[]): Promise<string[]> {
      const r = await events(acc, list);
      assert.equal(r.status, 200, r.text);
      return r.body.event_ids ?? r.body.data?.event_ids;
    }
    async function settle(eventId: string, body: object) {
      const r = await call('PUT', `/v1/events/${eventId}`, body);
      assert.equal(r.status, 200, r.text);
    }
    async function limits(acc: string, body: object) {
      return call('PUT', `/v1/accounts/${acc}/balance/tokens/limits`, body);
    }

    test('usage and holds count when taken; settles, cancels, expiries give back; adjustments do not', async () => {
      const acc = await fresh();
      assert.deepEqual((await balance(acc)).spend, { day: 0, month: 0 });
      assert.deepEqual((await balance(acc)).limits, { daily: null, monthly: null });
      await accepted(acc, [usage(10), usage(5)]);
      assert.deepEqual((await balance(acc)).spend, { day: 15, month: 15 });
      const [below, at, above, cancelled, expiring] = await accepted(acc, [
        usage(20, 'pending'),
        usage(20, 'pending'),
        usage(20, 'pending'),
        usage(20, 'pending'),
        usage(20, 'pending'),
      ]);
      assert.deepEqual((await balance(acc)).spend, { day: 115, month: 115 });
      await settle(below!, { state: 'complete', cost_override: { amount: 12, denomination: 'tokens' } });
      assert.equal((await balance(acc)).spend.day, 107);
      await settle(at!, { state: 'complete' });
      assert.equal((await balance(acc)).spend.day, 107);
      await settle(above!, { state: 'complete', cost_override: { amount: 26, denomination: 'tokens' } });
      assert.equal((await balance(acc)).spend.day, 113);
      await settle(cancelled!, { state: 'cancelled' });
      assert.equal((await balance(acc)).spend.day, 93);
      const adj = await call('POST', `/v1/accounts/${acc}/balance/tokens/adjustments`, { amount: -30 });
      assert.equal(adj.status, 200, adj.text);
      assert.deepEqual(adj.body.data.spend, { day: 93, month: 93 }, 'a debit by hand is not spend');
      // The last hold outlives its hour: a read sees it released, and its units leave the spend.
      jump((await now()) + HOUR + 1);
      const b = await balance(acc);
      assert.equal(b.pending, 0);
      assert.deepEqual(b.spend, { day: 73, month: 73 });
      const ev = await call('GET', `/v1/events/${expiring}`);
      assert.equal(ev.body.data.state, 'cancelled');
    });

    test('a day that ends reads 0 at once; a hold of yesterday gives back nothing today; a month too', async () => {
      const acc = await fresh(1000, 23.5);
      const [, held] = await accepted(acc, [usage(7), usage(40, 'pending')]);
      assert.deepEqual((await balance(acc)).spend, { day: 47, month: 47 });
      const midnight = utcDay(await now()) + DAY;
      jump(midnight - 1);
      assert.equal((await balance(acc)).spend.day, 47);
      jump(midnight);
      const next = await balance(acc);
      assert.equal(next.spend.day, 0, 'the new day starts at 0 without any job');
      assert.equal(next.spend.month, new Date(midnight).getUTCDate() === 1 ? 0 : 47);
      await accepted(acc, [usage(3)]);
      await settle(held!, { state: 'complete', cost_override: { amount: 10, denomination: 'tokens' } });
      const after = await balance(acc);
      assert.equal(after.spend.day, 3, 'what the hold gives back leaves yesterday, not today');
      jump(nextMonth(await now()));
      assert.deepEqual((await balance(acc)).spend, { day: 0, month: 0 });
    });

    test('a request exactly at the limit passes, one unit above is refused whole and records nothing', async () => {
      const acc = await fresh();
      const set = await limits(acc, { daily: 100 });
      assert.equal(set.status, 200, set.text);
      assert.deepEqual(set.body.data.limits, { daily: 100, monthly: null });
      await accepted(acc, [usage(60), usage(39)]);
      const before = await balance(acc);
      const over = await events(acc, [usage(1), usage(1)]);
      assertError(over, 402, 'spend_limit_reached');
      const day = utcDay(await now());
      assert.deepEqual(over.body.error.details, {
        denomination: 'tokens',
        window: 'day',
        limit: 100,
        spend: 99,
        resets_at: iso(day + DAY),
      });
      assert.deepEqual(await balance(acc), before, 'nothing recorded');
      await accepted(acc, [usage(1)]);
      assert.equal((await balance(acc)).spend.day, 100);
      // Whatever gate_on_balance says; a request that takes nothing passes.
      assertError(await events(acc, [usage(1)], '?gate_on_balance=false'), 402, 'spend_limit_reached');
      await accepted(acc, [usage(0)]);
      // A hold counts as spend too.
      assertError(await events(acc, [usage(1, 'pending')]), 402, 'spend_limit_reached');
    });

    test('daily and monthly together: the day reported when both are passed, the month when only it is', async () => {
      const acc = await fresh();
      assert.equal((await limits(acc, { daily: 50, monthly: 80 })).status, 200);
      await accepted(acc, [usage(50)]);
      const both = await events(acc, [usage(40)]);
      assertError(both, 402, 'spend_limit_reached');
      assert.equal(both.body.error.details.window, 'day');
      // The next day: the day's window is new, the month's is not.
      jump(utcDay(await now()) + DAY + HOUR);
      const n = await now();
      if (new Date(n).getUTCDate() !== 1) {
        await accepted(acc, [usage(30)]);
        const month = await events(acc, [usage(1)]);
        assertError(month, 402, 'spend_limit_reached');
        assert.deepEqual(month.body.error.details, {
          denomination: 'tokens',
          window: 'month',
          limit: 80,
          spend: 80,
          resets_at: iso(nextMonth(n)),
        });
      }
      // A field left out keeps its value; null removes the limit.
      const kept = await limits(acc, { daily: null });
      assert.deepEqual(kept.body.data.limits, { daily: null, monthly: 80 });
      const none = await limits(acc, { monthly: null });
      assert.deepEqual(none.body.data.limits, { daily: null, monthly: null });
      await accepted(acc, [usage(200)]);
    });

    test('a limit below the spend is accepted, refuses usage until the window resets; settles pass', async () => {
      const acc = await fresh();
      const [, held] = await accepted(acc, [usage(30), usage(20, 'pending')]);
      const low = await limits(acc, { daily: 10 });
      assert.equal(low.status, 200, low.text);
      assert.deepEqual(low.body.data.spend, { day: 50, month: 50 });
      assertError(await events(acc, [usage(1)]), 402, 'spend_limit_reached');
      // The usage happened: its settle is never refused, even above the hold and the limit.
      await settle(held!, { state: 'complete', cost_override: { amount: 25, denomination: 'tokens' } });
      assert.equal((await balance(acc)).spend.day, 55);
      jump(utcDay(await now()) + DAY);
      await accepted(acc, [usage(10)]);
      assertError(await events(acc, [usage(1)]), 402, 'spend_limit_reached');
    });

    test('the check says why: spend_limit_reached before insufficient_balance, else null', async () => {
      const acc = await fresh(100);
      assert.equal((await limits(acc, { daily: 50 })).status, 200);
      const check = async (amount: number) => {
        const r = await call('POST', `/v1/accounts/${acc}/check`, { events: [usage(amount)] });
        assert.equal(r.status, 200, r.text);
        return r.body.data as { allowed: boolean; reason: string | null };
      };
      assert.deepEqual(await check(50), { ...(await check(50)), allowed: true, reason: null });
      const limited = await check(51);
      assert.equal(limited.allowed, false);
      assert.equal(limited.reason, 'spend_limit_reached');
      assert.equal((await limits(acc, { daily: null })).status, 200);
      const short = await check(101);
      assert.deepEqual([short.allowed, short.reason], [false, 'insufficient_balance']);
      assert.equal((await limits(acc, { daily: 100 })).status, 200);
      const bothReasons = await check(101);
      assert.deepEqual([bothReasons.allowed, bothReasons.reason], [false, 'spend_limit_reached']);
      // What the check said is what the events call does.
      assertError(await events(acc, [usage(101)]), 402, 'spend_limit_reached');
      assert.equal((await balance(acc)).spend.day, 0);
    });

    test('50 concurrent requests against a daily limit never take the spend above it', async () => {
      const acc = await fresh(10_000);
      assert.equal((await limits(acc, { daily: 95 })).status, 200);
      const replies = await Promise.all(Array.from({ length: 50 }, () => events(acc, [usage(2)])));
      const ok = replies.filter((r) => r.status === 200).length;
      for (const r of replies) if (r.status !== 200) assertError(r, 402, 'spend_limit_reached');
      assert.equal(ok, 47, 'exactly floor(95 / 2) requests pass');
      const b = await balance(acc);
      assert.equal(b.spend.day, 94);
      assert.equal(b.amount, 10_000 - 94);
    });

    test('bad limits are 400 naming the field, another company’s balance 404; nothing changes', async () => {
      const acc = await fresh();
      assert.equal((await limits(acc, { daily: 7 })).status, 200);
      for (const [body, param] of [
        [{ daily: -1 }, 'daily'],
        [{ monthly: 1.5 }, 'monthly'],
        [{ daily: '10' }, 'daily'],
        [{ weekly: 10 }, 'weekly'],
      ] as const) {
        const r = await limits(acc, body);
        assertError(r, 400, 'invalid_request');
        assert.match(`${r.body.error.param} ${r.body.error.message}`, new RegExp(param), r.text);
      }
      assert.deepEqual((await balance(acc)).limits, { daily: 7, monthly: null });
      const other = await signUpCompany(h, 'Other');
      const theirs = await createAccountWithBalance(h, other, 'tokens', 10);
      assertError(await limits(theirs, { daily: 1 }), 404, 'not_found');
      const none = await call('PUT', `/v1/accounts/${acc}/balance/credits/limits`, { daily: 1 });
      assertError(none, 404, 'not_found');
    });
  });
}
