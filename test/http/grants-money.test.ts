// Guarantees (contract "Credit grants", "Auto-refill", "Mid-month increase", "Plans"), over HTTP on SQLite and
// PostgreSQL, each scenario on a server of its own (its own test clock):
// - a balance's initial amount is an `initial` grant, a positive adjustment an `adjustment` grant (promotional,
//   priority 50, no expiry), and a debit draws in drawing order;
// - a threshold refill makes a `refill` grant and a monthly refill a `monthly_refill` grant, both paid, never
//   expiring, with cost_basis = usd_charge / amount; their `refill` transactions carry the grant_id;
// - a mid-month increase removes units first from the monthly refill's grants, then in drawing order, and adds a paid
//   `proration` grant of the new amount, all in one `proration` transaction naming the new grant and drawn_from;
// - a plan renewal without rollover ends the plan's own grant, clears the debt (charged as overage) and opens a new
//   plan grant expiring at the next renewal, all in the one period_reset transaction; a promotional grant beside the
//   plan's keeps its units; with rollover the plan's grants never expire and keep their units;
// - the ledger audit is clean at the end of every scenario.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HTTP_DIALECTS, type Dialect, signUpCompany, startHarness, type Harness } from '../support/harness.js';
import type { GrantJson, TxJson } from './grants-support.js';
import { FUTURE_YEAR, advanceTo, attachCard, charges, iso, putAutoRefill, runDue, type Co } from '../support/money.js';

const Y = FUTURE_YEAR;

/** What a scenario is given: its server and company, and the calls it makes. */
function client(h: Harness, co: Co) {
  const call = (method: string, path: string, body?: unknown) =>
    h.request(method, path, body === undefined ? { auth: co.auth } : { auth: co.auth, body });
  const ok = async (method: string, path: string, body?: unknown, status = 200) => {
    const r = await call(method, path, body);
    assert.equal(r.status, status, r.text);
    return r.body;
  };
  const c = {
    call,
    async account(body: Record<string, unknown> = { name: 'M' }): Promise<string> {
      return (await ok('POST', `/v1/companies/${co.companyId}/accounts`, body)).data.account_id;
    },
    async balanceOf(acc: string, amount: number): Promise<void> {
      await ok('POST', `/v1/accounts/${acc}/balance/tokens`, { amount });
    },
    async grant(acc: string, body: Record<string, unknown>): Promise<GrantJson> {
      return (await ok('POST', `/v1/accounts/${acc}/balance/tokens/grants`, body, 201)).data;
    },
    async grants(acc: string, status = 'scheduled,active,depleted,expired,voided'): Promise<GrantJson[]> {
      return (await ok('GET', `/v1/accounts/${acc}/balance/tokens/grants?status=${status}&limit=100`)).data;
    },
    async getGrant(id: string): Promise<GrantJson> {
      return (await ok('GET', `/v1/grants/${id}`)).data;
    },
    async figures(...ids: string[]) {
      return Promise.all(
        ids.map(async (id) => {
          const g = await c.getGrant(id);
          return [g.remaining, g.held, g.status];
        }),
      );
    },
    async amount(acc: string): Promise<number> {
      return (await ok('GET', `/v1/accounts/${acc}/balance/tokens`)).data.amount;
    },
    async txs(acc: string): Promise<TxJson[]> {
      const body = await ok('GET', `/v1/accounts/${acc}/transactions?denomination=tokens&limit=100`);
      assert.equal(body.has_more, false);
      return body.data.reverse();
    },
    async spend(acc: string, amount: number): Promise<void> {
      await ok('POST', `/v1/accounts/${acc}/events`, [
        { type: 'use', cost_override: { amount, denomination: 'tokens' } },
      ]);
    },
  };
  return c;
}

/** Transactions as [kind, amount, balance_after, grant (label), drawn_from ([label, amount])]. */
function show(list: TxJson[], names: Record<string, string>) {
  const label = (id: string) => names[id] ?? id;
  return list.map((t) => [
    t.kind,
    t.amount,
    t.balance_after,
    t.grant_id === undefined ? null : label(t.grant_id),
    t.drawn_from === undefined ? null : t.drawn_from.map((d) => [label(d.grant_id), d.amount]),
  ]);
}

/** A server of its own, its clock at `start`, a company; the ledger audit at the end. */
async function scenario(dialect: Dialect, start: string, run: (h: Harness, co: Co) => Promise<void>): Promise<void> {
  const h = await startHarness(dialect);
  try {
    const co = await signUpCompany(h);
    await advanceTo(h, co, start);
    await run(h, co);
    await h.audit();
  } finally {
    await h.close();
  }
}

const PLAN = {
  name: 'Pro',
  charge_amount: 0,
  balances: [{ amount: '1000', denomination: 'tokens', overage_charge_amount: 2, overage_charge_denomination: 'usd' }],
};

for (const dialect of HTTP_DIALECTS) {
  describe(`credit grants made by balances, refills, increases and plans (${dialect})`, () => {
    test('initial amount, adjustments and a threshold refill make grants of their own source', async () => {
      await scenario(dialect, iso(Y, 5, 3, '08:00:00'), async (h, co) => {
        const c = client(h, co);
        const acc = await c.account();
        await c.balanceOf(acc, 600);
        const [initial] = await c.grants(acc);
        assert.deepEqual(
          [initial!.source, initial!.category, initial!.priority, initial!.amount, initial!.expires_at],
          ['initial', 'promotional', 50, 600, null],
        );
        await attachCard(h, co, acc, 'tok_visa');
        await putAutoRefill(h, co, acc, 'tokens', { threshold: 500, amount: 1000, usd_charge: 700 });
        await c.spend(acc, 200);
        await runDue(h, co);
        const refill = (await c.grants(acc)).find((g) => g.source === 'refill')!;
        assert.deepEqual(
          [refill.category, refill.cost_basis, refill.priority, refill.expires_at, refill.amount, refill.remaining],
          ['paid', '0.7', 50, null, 1000, 1000],
        );
        assert.deepEqual(
          (await charges(h, co, acc)).map((x) => [x.reason, x.status, x.usd_amount]),
          [['refill', 'succeeded', 700]],
        );
        const names: Record<string, string> = { [initial!.grant_id]: 'I', [refill.grant_id]: 'R' };
        assert.deepEqual(show(await c.txs(acc), names), [
          ['grant', 600, 600, 'I', null],
          ['usage', -200, 400, null, [['I', 200]]],
          ['refill', 1000, 1400, 'R', null],
        ]);

        await c.spend(acc, 500); // promotional before paid
        const adj = await c.call('POST', `/v1/accounts/${acc}/balance/tokens/adjustments`, {
          amount: 50,
          reason: 'gift',
        });
        assert.equal(adj.status, 200, adj.text);
        const credit = (await c.grants(acc)).find((g) => g.source === 'adjustment')!;
        names[credit.grant_id] = 'A';
        assert.deepEqual(
          [credit.category, credit.priority, credit.expires_at, credit.amount],
          ['promotional', 50, null, 50],
        );
        const debit = await c.call('POST', `/v1/accounts/${acc}/balance/tokens/adjustments`, { amount: -80 });
        assert.equal(debit.status, 200, debit.text);
        assert.deepEqual(show((await c.txs(acc)).slice(-3), names), [
          [
            'usage',
            -500,
            900,
            null,
            [
              ['I', 400],
              ['R', 100],
            ],
          ],
          ['adjustment', 50, 950, 'A', null],
          [
            'adjustment',
            -80,
            870,
            null,
            [
              ['A', 50],
              ['R', 30],
            ],
          ],
        ]);
        assert.deepEqual(await c.figures(initial!.grant_id, refill.grant_id, credit.grant_id), [
          [0, 0, 'depleted'],
          [870, 0, 'active'],
          [0, 0, 'depleted'],
        ]);

        // Into debt, and the refill it triggers repays the debt before it counts as the new grant's remaining.
        await c.spend(acc, 1000);
        assert.equal(await c.amount(acc), -130);
        await runDue(h, co);
        const second = (await c.grants(acc, 'active')).find((g) => g.source === 'refill')!;
        names[second.grant_id] = 'R2';
        assert.deepEqual([second.amount, second.remaining, second.cost_basis], [1000, 870, '0.7']);
        assert.deepEqual(show((await c.txs(acc)).slice(-2), names), [
          ['usage', -1000, -130, null, [['R', 870]]],
          ['refill', 1000, 870, 'R2', null],
        ]);
      });
    });

    test('a monthly refill makes monthly_refill grants; a mid-month increase removes them first', async () => {
      await scenario(dialect, iso(Y, 5, 3, '08:00:00'), async (h, co) => {
        const c = client(h, co);
        const acc = await c.account();
        await c.balanceOf(acc, 0);
        await attachCard(h, co, acc, 'tok_visa');
        await putAutoRefill(h, co, acc, 'tokens', { amount: 1000, usd_charge: 1000, refill_period: 'monthly' });
        await runDue(h, co);
        const [m] = await c.grants(acc);
        assert.deepEqual(
          [m!.source, m!.category, m!.cost_basis, m!.expires_at, m!.amount, m!.remaining],
          ['monthly_refill', 'paid', '1', null, 1000, 1000],
        );
        await c.spend(acc, 700);
        await advanceTo(h, co, iso(Y, 5, 10));
        const x = await c.grant(acc, { amount: 200, priority: 10 });
        const g = await c.grant(acc, { amount: 600 });
        const names = { [m!.grant_id]: 'M', [x.grant_id]: 'X', [g.grant_id]: 'G' };
        assert.equal(await c.amount(acc), 1100);

        // remaining = min(1100, 1000) = 1000, worth 1000 ¢: charged 1800 − 1000 = 800.
        const r = await c.call('POST', `/v1/accounts/${acc}/modifymidmonth`, {
          denomination: 'tokens',
          amount: 2000,
          usd_charge: 1800,
        });
        assert.equal(r.status, 200, r.text);
        assert.deepEqual([r.body.data.usd_amount_charged, r.body.data.amount], ['800', 2100]);
        const n = (await c.grants(acc)).find((x) => x.source === 'proration')!;
        names[n.grant_id] = 'N';
        assert.deepEqual(
          [n.category, n.cost_basis, n.amount, n.remaining, n.expires_at, n.status],
          ['paid', '0.9', 2000, 2000, null, 'active'],
        );
        assert.deepEqual(show((await c.txs(acc)).slice(-1), names), [
          [
            'proration',
            1000,
            2100,
            'N',
            [
              ['M', 300],
              ['X', 200],
              ['G', 500],
            ],
          ],
        ]);
        assert.deepEqual(await c.figures(m!.grant_id, x.grant_id, g.grant_id), [
          [0, 0, 'depleted'],
          [0, 0, 'depleted'],
          [100, 0, 'active'],
        ]);
        assert.equal(await c.amount(acc), 2100);

        // The next monthly refill, a month after the increase, at the new terms: another monthly_refill grant.
        await advanceTo(h, co, iso(Y, 6, 10));
        const monthly = (await c.grants(acc, 'scheduled,active')).filter((x) => x.source === 'monthly_refill');
        assert.deepEqual(
          monthly.map((x) => [x.amount, x.remaining, x.cost_basis, x.category, x.status]),
          [[2000, 2000, '0.9', 'paid', 'active']],
          'the default list (scheduled,active) leaves out the first one, used up',
        );
        const last = (await c.txs(acc)).at(-1)!;
        assert.deepEqual([last.kind, last.amount, last.balance_after], ['refill', 2000, 4100]);
        assert.equal(last.grant_id, monthly[0]!.grant_id);
      });
    });

    /** An account on PLAN (1,000 tokens a month, 2 ¢ per unit of overage) with a card, from 10 March 12:00. */
    async function planAccount(h: Harness, co: Co) {
      const c = client(h, co);
      const plan = await c.call('POST', `/v1/companies/${co.companyId}/plan`, PLAN);
      assert.equal(plan.status, 200, plan.text);
      const acc = await c.account({ name: 'P', plan_id: plan.body.data.plan_id });
      await attachCard(h, co, acc, 'tok_visa');
      const [pg1] = await c.grants(acc);
      assert.deepEqual(
        [pg1!.source, pg1!.category, pg1!.amount, pg1!.remaining, pg1!.effective_at, pg1!.expires_at],
        ['plan', 'paid', 1000, 1000, iso(Y, 3, 10, '12:00:00'), iso(Y, 4, 10)],
        "the plan's grant expires at the next renewal",
      );
      const promo = await c.grant(acc, { amount: 300, name: 'spring' });
      return { c, acc, pg1: pg1!, promo, names: { [pg1!.grant_id]: 'PG1', [promo.grant_id]: 'PR' } };
    }
    const planGrant = async (c: ReturnType<typeof client>, acc: string) =>
      (await c.grants(acc, 'active')).find((g) => g.source === 'plan')!;

    test('plan renewal, units left: one period_reset ends the plan grant, starts the next', async () => {
      await scenario(dialect, iso(Y, 3, 10, '12:00:00'), async (h, co) => {
        const { c, acc, pg1, promo, names } = await planAccount(h, co);
        await c.spend(acc, 400); // the plan's grant expires sooner: drawn first
        const b = await c.call('GET', `/v1/accounts/${acc}/balance/tokens`);
        assert.deepEqual(
          [b.body.data.amount, b.body.data.next_expiry],
          [900, { expires_at: iso(Y, 4, 10), amount: 600 }],
        );

        await advanceTo(h, co, iso(Y, 4, 10));
        const pg2 = await planGrant(c, acc);
        names[pg2.grant_id] = 'PG2';
        assert.deepEqual(
          [pg2.amount, pg2.remaining, pg2.category, pg2.effective_at, pg2.expires_at],
          [1000, 1000, 'paid', iso(Y, 4, 10), iso(Y, 5, 10)],
        );
        assert.deepEqual(await c.amount(acc), 1300);
        assert.deepEqual(await c.figures(pg1.grant_id, promo.grant_id), [
          [0, 0, 'expired'],
          [300, 0, 'active'],
        ]);
        assert.deepEqual(show(await c.txs(acc), names), [
          ['grant', 1000, 1000, 'PG1', null],
          ['grant', 300, 1300, 'PR', null],
          ['usage', -400, 900, null, [['PG1', 400]]],
          ['period_reset', 400, 1300, 'PG2', null], // −600 left of PG1, +1,000 of PG2: one transaction
        ]);
        assert.deepEqual(await charges(h, co, acc), [], 'no overage');
      });
    });

    test('plan renewal with debt: charged as overage, cleared in the one period_reset', async () => {
      await scenario(dialect, iso(Y, 3, 10, '12:00:00'), async (h, co) => {
        const { c, acc, pg1, promo, names } = await planAccount(h, co);
        await c.spend(acc, 1500); // PG1 1,000, PR 300, 200 owed
        assert.equal(await c.amount(acc), -200);
        await advanceTo(h, co, iso(Y, 4, 10));
        const pg2 = await planGrant(c, acc);
        names[pg2.grant_id] = 'PG2';
        assert.deepEqual(show((await c.txs(acc)).slice(-2), names), [
          [
            'usage',
            -1500,
            -200,
            null,
            [
              ['PG1', 1000],
              ['PR', 300],
            ],
          ],
          ['period_reset', 1200, 1000, 'PG2', null],
        ]);
        assert.deepEqual([pg2.remaining, pg2.expires_at, await c.amount(acc)], [1000, iso(Y, 5, 10), 1000]);
        assert.deepEqual(
          (await charges(h, co, acc)).map((x) => [x.reason, x.status, x.usd_amount]),
          [['overage', 'succeeded', 400]],
        );
        assert.deepEqual(await c.figures(pg1.grant_id, promo.grant_id), [
          [0, 0, 'expired'],
          [0, 0, 'depleted'],
        ]);
        // A promotion given in this period keeps its units across the next renewal; the plan's grant is renewed.
        const spring = await c.grant(acc, { amount: 50 });
        await c.spend(acc, 100);
        await advanceTo(h, co, iso(Y, 5, 10));
        const pg3 = await planGrant(c, acc);
        assert.notEqual(pg3.grant_id, pg2.grant_id);
        assert.deepEqual(await c.figures(spring.grant_id, pg2.grant_id), [
          [50, 0, 'active'],
          [0, 0, 'expired'],
        ]);
        assert.equal(await c.amount(acc), 1050);
      });
    });

    test('plan renewal with a hold on the plan grant: held units stay held, expire at its settle', async () => {
      await scenario(dialect, iso(Y, 3, 10, '12:00:00'), async (h, co) => {
        const { c, acc, pg1, promo, names } = await planAccount(h, co);
        await advanceTo(h, co, iso(Y, 4, 9, '23:30:00'));
        const ev = await c.call('POST', `/v1/accounts/${acc}/events`, [
          { type: 'use', state: 'pending', cost_override: { amount: 100, denomination: 'tokens' } },
        ]);
        assert.equal(ev.status, 200, ev.text);
        assert.deepEqual(await c.figures(pg1.grant_id), [[1000, 100, 'active']]);
        await advanceTo(h, co, iso(Y, 4, 10));
        const pg2 = await planGrant(c, acc);
        names[pg2.grant_id] = 'PG2';
        assert.deepEqual(await c.figures(pg1.grant_id, pg2.grant_id, promo.grant_id), [
          [100, 100, 'expired'],
          [1000, 0, 'active'],
          [300, 0, 'active'],
        ]);
        const b = (await c.call('GET', `/v1/accounts/${acc}/balance/tokens`)).body.data;
        assert.deepEqual([b.amount, b.pending, b.available], [1400, 100, 1300]);
        const settled = await c.call('PUT', `/v1/events/${ev.body.event_ids[0]}`, {
          state: 'complete',
          cost_override: { amount: 40, denomination: 'tokens' },
        });
        assert.equal(settled.status, 200, settled.text);
        const txs = await c.txs(acc);
        assert.deepEqual(show(txs.slice(-2), names), [
          ['usage', -40, 1360, null, [['PG1', 40]]],
          ['grant_expiry', -60, 1300, 'PG1', null],
        ]);
        assert.deepEqual(await c.figures(pg1.grant_id), [[0, 0, 'expired']]);
        assert.deepEqual(show(txs.slice(2, -2), names), [['period_reset', 100, 1400, 'PG2', null]], 'one transaction');
      });
    });

    test('plan renewal with rollover: plan grants never expire and keep their units; debt cleared', async () => {
      await scenario(dialect, iso(Y, 3, 10, '12:00:00'), async (h, co) => {
        const c = client(h, co);
        const plan = await c.call('POST', `/v1/companies/${co.companyId}/plan`, {
          ...PLAN,
          rollover: true,
          balances: [{ amount: '500', denomination: 'tokens', overage_charge_amount: 3 }],
        });
        assert.equal(plan.status, 200, plan.text);
        const acc = await c.account({ name: 'R', plan_id: plan.body.data.plan_id });
        await attachCard(h, co, acc, 'tok_visa');
        const [pg1] = await c.grants(acc);
        assert.deepEqual([pg1!.source, pg1!.category, pg1!.expires_at], ['plan', 'paid', null]);
        const promo = await c.grant(acc, { amount: 100 });
        const names: Record<string, string> = { [pg1!.grant_id]: 'PG1', [promo.grant_id]: 'PR' };
        await c.spend(acc, 200); // both never expire: promotional first
        await advanceTo(h, co, iso(Y, 4, 10));
        const pg2 = (await c.grants(acc, 'active')).find((g) => g.source === 'plan' && g.grant_id !== pg1!.grant_id)!;
        names[pg2.grant_id] = 'PG2';
        assert.deepEqual(show((await c.txs(acc)).slice(-2), names), [
          [
            'usage',
            -200,
            400,
            null,
            [
              ['PR', 100],
              ['PG1', 100],
            ],
          ],
          ['grant', 500, 900, 'PG2', null],
        ]);
        assert.deepEqual(await c.figures(pg1!.grant_id, pg2.grant_id), [
          [400, 0, 'active'],
          [500, 0, 'active'],
        ]);
        await c.spend(acc, 1000);
        assert.deepEqual(show((await c.txs(acc)).slice(-1), names), [
          [
            'usage',
            -1000,
            -100,
            null,
            [
              ['PG1', 400],
              ['PG2', 500],
            ],
          ],
        ]);
        await advanceTo(h, co, iso(Y, 5, 10));
        const pg3 = (await c.grants(acc, 'active')).find((g) => g.source === 'plan')!;
        names[pg3.grant_id] = 'PG3';
        assert.deepEqual(show((await c.txs(acc)).slice(-1), names), [['grant', 600, 500, 'PG3', null]]);
        assert.deepEqual([pg3.remaining, pg3.expires_at, await c.amount(acc)], [500, null, 500]);
        assert.deepEqual(
          (await charges(h, co, acc)).map((x) => [x.reason, x.usd_amount]),
          [['overage', 300]],
        );
      });
    });
  });
}
