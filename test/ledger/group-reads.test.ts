// Guarantee: checks and balance reads answered together, from one read of the store (a group read,
// as the server groups the requests that arrive meanwhile), answer each request exactly as if it had
// come alone: its own account's figures, its own costs, and its own refusal (another company's account,
// a missing balance, an event without a price) failing it alone while the others of the group
// succeed — on both databases.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type EventInput, type IngestRequest, normalizeEvent } from '../../src/domain/events.js';
import { TestClock } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';
import { type BalanceRead, createBalance, readBalanceGroup } from '../../src/operations/balances.js';
import { checkGroup } from '../../src/operations/events.js';
import { putPrice } from '../../src/operations/prices.js';
import { ledger, T0, testDeps } from '../store/contract-support.js';
import { forEachDialect, seedAccount, seedCompanyAndAccount } from '../support/stores.js';

forEachDialect((store) => {
  const clock = new TestClock(T0);
  const deps = testDeps(store, clock);

  async function setUp() {
    const co = await seedCompanyAndAccount(store);
    const accounts = [co.accountId];
    for (let i = 1; i < 12; i++) accounts.push(await seedAccount(store, co.companyId));
    for (const [i, a] of accounts.entries())
      await store.write(await createBalance(deps, co.companyId, a, 'tokens', 100 + i));
    const other = await seedCompanyAndAccount(store);
    await store.write(await createBalance(deps, other.companyId, other.accountId, 'tokens', 5));
    await store.write(await putPrice(deps, co.companyId, 'call', { denomination: 'tokens', unit_amount: '0.5' }));
    return { companyId: co.companyId, accounts, foreign: other.accountId };
  }

  function request(companyId: string, accountId: string, events: EventInput[]): IngestRequest {
    const normalized = events.map((e, i) => {
      const n = normalizeEvent(e, i, { nowMs: T0, maxAgeMs: Number.POSITIVE_INFINITY });
      assert.ok(n.ok);
      return n.value;
    });
    return { companyId, accountId, events: normalized, eventIds: normalized.map(() => newId('ev')), gate: false };
  }

  test('balance reads of one group: each its own balance; refusals alone', async () => {
    const s = await setUp();
    const reads: BalanceRead[] = [
      ...s.accounts.map((accountId) => ({ companyId: s.companyId, accountId, denomination: 'tokens' })),
      { companyId: s.companyId, accountId: s.foreign, denomination: 'tokens' },
      { companyId: s.companyId, accountId: s.accounts[0]!, denomination: 'missing' },
    ];
    const group = await store.read((tx) => readBalanceGroup(ledger, tx, T0, reads));
    for (const [i, r] of reads.entries()) {
      const [alone] = await store.read((tx) => readBalanceGroup(ledger, tx, T0, [r]));
      assert.deepEqual(group[i], alone, `read ${i} alone`);
    }
    s.accounts.forEach((a, i) => {
      const o = group[i]!;
      assert.ok(o.ok);
      assert.deepEqual([o.value.accountId, o.value.amount], [a, 100 + i]);
    });
    const [foreign, missing] = group.slice(s.accounts.length);
    assert.deepEqual(foreign && !foreign.ok && [foreign.reason, foreign.param], ['not_found', 'account_id']);
    assert.deepEqual(missing && !missing.ok && [missing.reason, missing.param], ['not_found', 'denomination']);
  });

  test('checks of one group: each its own costs and balances, as alone; a refused one fails alone', async () => {
    const s = await setUp();
    const requests = [
      ...s.accounts.map((a, i) => request(s.companyId, a, [{ type: 'call', quantity: 2 * i + 1 }])),
      // Two checks of one account: neither sees the other (a check writes nothing).
      request(s.companyId, s.accounts[0]!, [{ type: 'call', quantity: 9 }]),
      request(s.companyId, s.accounts[0]!, [{ type: 'unpriced' }]),
      request(s.companyId, s.foreign, [{ type: 'call' }]),
    ];
    const group = await store.read((tx) => checkGroup(ledger, tx, T0, requests));
    for (const [i, r] of requests.entries()) {
      const [alone] = await store.read((tx) => checkGroup(ledger, tx, T0, [r]));
      assert.deepEqual(group[i], alone, `check ${i} alone`);
    }
    s.accounts.forEach((_, i) => {
      const o = group[i]!;
      assert.ok(o.ok);
      assert.deepEqual(o.value.events, [{ index: 0, cost: { amount: i + 1, denomination: 'tokens' } }]);
      assert.deepEqual(o.value.balances, [{ denomination: 'tokens', available: 100 + i, availableAfter: 99 }]);
    });
    const [again, unpriced, foreign] = group.slice(s.accounts.length);
    assert.ok(again?.ok);
    assert.deepEqual(again.value.balances, [{ denomination: 'tokens', available: 100, availableAfter: 95 }]);
    assert.deepEqual(unpriced && !unpriced.ok && [unpriced.reason, unpriced.param], [
      'no_price_for_event_type',
      'events[0]',
    ]);
    assert.deepEqual(foreign && !foreign.ok && foreign.reason, 'not_found');
  });
});
