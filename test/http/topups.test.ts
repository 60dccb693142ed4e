// Guarantees (contract "Customer portal, top-ups and receipts": credit packs and top-ups), over HTTP on SQLite and
// PostgreSQL:
// - a company's credit packs are created, replaced, listed and deleted; bad input is 400 naming the field;
// - with the `topup` scope, the portal lists the packs of the account's denominations and buys one with the card,
//   the customer present: 201 with the charge and the paid grant it added once (`source: "topup"`, cost basis,
//   priority, expiry), the charge numbered for its receipt; without the scope: 403;
// - a double click with one Idempotency-Key is one charge and one grant; without a key, two purchases;
// - a declined card: 402 payment_failed with the charge id, nothing added; no card: 402, nothing charged; a deleted
//   pack or one of another denomination: 404 offer_id; the ledger audit is clean;
// - 3-D Secure (sandbox `tok_authRequired`): a purchase answers requires_action with next_action_url; its page's
//   Approve (a plain form) completes it and adds the grant once, Decline fails it; a refill charged without the
//   customer fails with failure_reason authentication_required and a next_action_url where the customer completes
//   it, the refill then applied once.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertError, HTTP_DIALECTS, signUpCompany, startHarness } from '../support/harness.js';
import { attachCard, putAutoRefill, runDue, type Co } from '../support/money.js';

const DAY = 86_400_000;

for (const dialect of HTTP_DIALECTS) {
  describe(`credit packs and top-ups (${dialect})`, () => {
    test('packs; bought in the portal once per key; declined, no card, deleted, no scope', async () => {
      const h = await startHarness(dialect);
      try {
        const co: Co = await signUpCompany(h, 'Acme');
        const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
          h.request(method, path, {
            ...(headers?.authorization ? {} : { auth: co.auth }),
            ...(body === undefined ? {} : { body }),
            ...(headers ? { headers } : {}),
          });

        // Packs.
        const pack = { denomination: 'tokens', amount: 5000, usd_charge: 1000, name: 'Starter', expires_in_days: 30 };
        const put = await call('PUT', '/v1/topup_offers/starter', pack);
        assert.equal(put.status, 200, put.text);
        assert.deepEqual(
          { ...put.body.data, created_at: 0, updated_at: 0 },
          { offer_id: 'starter', ...pack, priority: 50, created_at: 0, updated_at: 0 },
        );
        const big = { denomination: 'tokens', amount: 20_000, usd_charge: 3000, name: 'Big', priority: 10 };
        assert.equal((await call('PUT', '/v1/topup_offers/big', big)).status, 200);
        const credits = { denomination: 'credits', amount: 10, usd_charge: 100, name: 'Credits' };
        assert.equal((await call('PUT', '/v1/topup_offers/credits', credits)).status, 200);
        const replaced = await call('PUT', '/v1/topup_offers/big', { ...big, name: 'Big pack' });
        assert.equal(replaced.body.data.name, 'Big pack');
        assert.equal(replaced.body.data.created_at, (await call('GET', '/v1/topup_offers')).body.data[0].created_at);
        assert.deepEqual(
          (await call('GET', '/v1/topup_offers')).body.data.map((o: { offer_id: string }) => o.offer_id),
          ['big', 'credits', 'starter'],
        );
        const bad: [unknown, string][] = [
          [{ ...pack, amount: 0 }, 'amount'],
          [{ ...pack, amount: 1.5 }, 'amount'],
          [{ ...pack, usd_charge: 0 }, 'usd_charge'],
          [{ ...pack, name: '' }, 'name'],
          [{ ...pack, priority: 101 }, 'priority'],
          [{ ...pack, expires_in_days: 0 }, 'expires_in_days'],
          [{ ...pack, denomination: 'bad denomination' }, 'denomination'],
        ];
        for (const [body, param] of bad) {
          const r = await call('PUT', '/v1/topup_offers/x', body);
          assertError(r, 400, 'invalid_request');
          assert.equal(r.body.error.param, param, `${JSON.stringify(body)}: ${r.text}`);
        }
        assertError(await call('PUT', '/v1/topup_offers/bad%20id', pack), 400, 'invalid_request');

        // An account with a card, and its portal sessions.
        const acc = (await call('POST', `/v1/companies/${co.companyId}/accounts`, { name: 'Ann' })).body.data
          .account_id as string;
        assert.equal((await call('POST', `/v1/accounts/${acc}/balance/tokens`, { amount: 100 })).status, 200);
        await attachCard(h, co, acc, 'tok_visa');
        const session = async (scopes: string[]) => {
          const r = await call('POST', `/v1/accounts/${acc}/portal_sessions`, { scopes });
          assert.equal(r.status, 201, r.text);
          return { authorization: `Bearer ${r.body.data.url.split('#')[1]}` };
        };
        const reader = await session(['read']);
        const buyer = await session(['read', 'topup']);
        const portal = (method: string, path: string, auth: Record<string, string>, body?: unknown, key?: string) =>
          h.request(method, path, {
            headers: { ...auth, ...(key ? { 'idempotency-key': key } : {}) },
            ...(body === undefined ? {} : { body }),
          });

        assertError(await portal('GET', '/v1/portal/topup_offers', reader), 403, 'forbidden');
        assertError(await portal('POST', '/v1/portal/topups', reader, { offer_id: 'starter' }), 403, 'forbidden');
        const offers = await portal('GET', '/v1/portal/topup_offers', buyer);
        assert.equal(offers.status, 200, offers.text);
        assert.deepEqual(
          offers.body.data.map((o: { offer_id: string }) => o.offer_id),
          ['big', 'starter'],
          'only the denominations the account has',
        );

        // A purchase; the same again with its key (a double click): one charge, one grant.
        const now = Date.parse((await call('GET', '/v1/test_clock')).body.data.now);
        const clicks = await Promise.all([
          portal('POST', '/v1/portal/topups', buyer, { offer_id: 'starter' }, 'click-1'),
          portal('POST', '/v1/portal/topups', buyer, { offer_id: 'starter' }, 'click-1'),
        ]);
        const done = clicks.filter((r) => r.status === 201);
        assert.ok(done.length >= 1, clicks.map((r) => r.text).join('\n'));
        for (const r of clicks) if (r.status !== 201) assertError(r, 409, 'conflict'); // the first still running
        const again = await portal('POST', '/v1/portal/topups', buyer, { offer_id: 'starter' }, 'click-1');
        assert.deepEqual(again.body, done[0]!.body, 'the same purchase answered again');
        const bought = again.body.data;
        assert.equal(bought.status, 'succeeded');
        assert.equal(bought.next_action_url, null);
        const grant = (await call('GET', `/v1/grants/${bought.grant_id}`)).body.data;
        assert.deepEqual(
          [grant.source, grant.category, grant.amount, grant.cost_basis, grant.priority, grant.name],
          ['topup', 'paid', 5000, '0.2', 50, 'Starter'],
        );
        assert.equal(Date.parse(grant.expires_at), now + 30 * DAY);
        let charges = (await call('GET', `/v1/accounts/${acc}/charges`)).body.data;
        assert.deepEqual(
          charges.map((c: Record<string, unknown>) => [c.reason, c.status, c.usd_amount, c.receipt_number]),
          [['topup', 'succeeded', 1000, 'R-1']],
        );
        assert.equal(charges[0].charge_id, bought.charge_id);
        assert.equal((await call('GET', `/v1/accounts/${acc}/balance/tokens`)).body.data.amount, 5100);

        // Without a key, two clicks are two purchases.
        for (const _ of [1, 2])
          assert.equal((await portal('POST', '/v1/portal/topups', buyer, { offer_id: 'big' })).status, 201);
        assert.equal((await call('GET', `/v1/accounts/${acc}/balance/tokens`)).body.data.amount, 45_100);

        // Refusals: nothing added.
        assertError(await portal('POST', '/v1/portal/topups', buyer, { offer_id: 'credits' }), 404, 'not_found');
        assert.equal((await call('DELETE', '/v1/topup_offers/starter')).status, 200);
        assertError(await call('DELETE', '/v1/topup_offers/starter'), 404, 'not_found');
        const gone = await portal('POST', '/v1/portal/topups', buyer, { offer_id: 'starter' });
        assertError(gone, 404, 'not_found');
        assert.equal(gone.body.error.param, 'offer_id');
        await attachCard(h, co, acc, 'tok_chargeCustomerFail');
        const declined = await portal('POST', '/v1/portal/topups', buyer, { offer_id: 'big' });
        assertError(declined, 402, 'payment_failed');
        charges = (await call('GET', `/v1/accounts/${acc}/charges`)).body.data;
        assert.equal(declined.body.error.details.charge_id, charges[0].charge_id);
        assert.deepEqual(
          [charges[0].status, charges[0].failure_reason, charges[0].receipt_number],
          ['failed', 'declined', null],
        );
        assert.equal((await call('GET', `/v1/accounts/${acc}/balance/tokens`)).body.data.amount, 45_100);

        const plain = (await call('POST', `/v1/companies/${co.companyId}/accounts`, { name: 'Bob' })).body.data
          .account_id as string;
        assert.equal((await call('POST', `/v1/accounts/${plain}/balance/tokens`, { amount: 1 })).status, 200);
        const r = await call('POST', `/v1/accounts/${plain}/portal_sessions`, { scopes: ['topup'] });
        const noCard = await portal(
          'POST',
          '/v1/portal/topups',
          { authorization: `Bearer ${r.body.data.url.split('#')[1]}` },
          {
            offer_id: 'big',
          },
        );
        assertError(noCard, 402, 'payment_failed');
        assert.deepEqual((await call('GET', `/v1/accounts/${plain}/charges`)).body.data, [], 'nothing charged');
        await h.audit();
      } finally {
        await h.close();
      }
    });

    test('3-D Secure: requires_action, approved once on its page, declined; off-session refill: fails', async () => {
      const h = await startHarness(dialect);
      try {
        const co: Co = await signUpCompany(h, 'Acme');
        const call = (method: string, path: string, body?: unknown) =>
          h.request(method, path, { auth: co.auth, ...(body === undefined ? {} : { body }) });
        const pack = { denomination: 'tokens', amount: 5000, usd_charge: 1000, name: 'Starter' };
        assert.equal((await call('PUT', '/v1/topup_offers/starter', pack)).status, 200);
        const acc = (await call('POST', `/v1/companies/${co.companyId}/accounts`, { name: 'Ann' })).body.data
          .account_id as string;
        assert.equal((await call('POST', `/v1/accounts/${acc}/balance/tokens`, { amount: 600 })).status, 200);
        await attachCard(h, co, acc, 'tok_authRequired');
        const opened = await call('POST', `/v1/accounts/${acc}/portal_sessions`, {
          scopes: ['read', 'topup'],
          return_url: 'https://app.acme.test/billing?tab=credits&x=<1>',
        });
        const auth = { authorization: `Bearer ${opened.body.data.url.split('#')[1]}` };
        const buy = () => h.request('POST', '/v1/portal/topups', { headers: auth, body: { offer_id: 'starter' } });
        const amount = async () => (await call('GET', `/v1/accounts/${acc}/balance/tokens`)).body.data.amount;
        const form = (url: string, decision: string) =>
          h.request('POST', new URL(url).pathname, {
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            raw: `decision=${decision}`,
          });

        const waiting = await buy();
        assert.equal(waiting.status, 201, waiting.text);
        const w = waiting.body.data;
        assert.deepEqual([w.status, w.grant_id], ['requires_action', null]);
        assert.match(w.next_action_url, new RegExp(`/sandbox/authorize/${w.charge_id}$`));
        assert.equal(await amount(), 600, 'nothing added yet');
        let [charge] = (await call('GET', `/v1/accounts/${acc}/charges`)).body.data;
        assert.deepEqual(
          [charge.status, charge.next_action_url, charge.receipt_number],
          ['requires_action', w.next_action_url, null],
        );
        const shown = await h.request('GET', new URL(w.next_action_url).pathname);
        assert.equal(shown.status, 200, shown.text);
        assert.match(shown.headers.get('content-security-policy') ?? '', /default-src 'none'/);
        assert.match(shown.text, /Confirm your payment of \$10\.00/);
        assert.match(shown.text, /<form method="post"[^>]*><input type="hidden" name="decision" value="approve">/);
        assert.match(shown.text, /name="decision" value="decline"/);

        const approved = await form(w.next_action_url, 'approve');
        assert.equal(approved.status, 200, approved.text);
        assert.match(approved.text, /This payment was approved/);
        assert.match(
          approved.text,
          /<a href="https:\/\/app\.acme\.test\/billing\?tab=credits&amp;x=%3C1%3E">Return to where you bought it<\/a>/,
          "back to the session's return_url, escaped",
        );
        assert.match((await form(w.next_action_url, 'approve')).text, /was approved/, 'answered again: no change');
        assert.equal(await amount(), 5600, 'the grant added once');
        [charge] = (await call('GET', `/v1/accounts/${acc}/charges`)).body.data;
        assert.deepEqual([charge.status, charge.next_action_url, charge.receipt_number], ['succeeded', null, 'R-1']);
        const grants = (await call('GET', `/v1/accounts/${acc}/balance/tokens/grants?limit=100`)).body.data;
        assert.equal(grants.filter((g: { source: string }) => g.source === 'topup').length, 1);

        const second = (await buy()).body.data;
        assert.equal(second.status, 'requires_action');
        const declined = await form(second.next_action_url, 'decline');
        assert.match(declined.text, /This payment was declined/);
        [charge] = (await call('GET', `/v1/accounts/${acc}/charges`)).body.data;
        assert.deepEqual([charge.status, charge.failure_reason, charge.next_action_url], ['failed', 'declined', null]);
        assert.equal(await amount(), 5600);
        assertError(await form(second.next_action_url, 'maybe'), 400, 'invalid_request');
        assertError(await h.request('GET', '/sandbox/authorize/ch_missing'), 404, 'not_found');

        // Without the customer: a refill's charge fails, asking for authentication.
        await putAutoRefill(h, co, acc, 'tokens', { threshold: 6000, amount: 1000, usd_charge: 700 });
        const e = await call('POST', `/v1/accounts/${acc}/events`, [
          { type: 'chat', cost_override: { amount: 1, denomination: 'tokens' } },
        ]);
        assert.equal(e.status, 200, e.text);
        await runDue(h, co);
        [charge] = (await call('GET', `/v1/accounts/${acc}/charges`)).body.data;
        assert.deepEqual(
          [charge.reason, charge.status, charge.failure_reason],
          ['refill', 'failed', 'authentication_required'],
        );
        // The customer completes it on its page: the refill is applied then, once.
        assert.match(charge.next_action_url, new RegExp(`/sandbox/authorize/${charge.charge_id}$`));
        const before = await amount();
        assert.match((await h.request('GET', new URL(charge.next_action_url).pathname)).text, /Confirm your payment/);
        assert.match((await form(charge.next_action_url, 'approve')).text, /This payment was approved/);
        assert.match((await form(charge.next_action_url, 'approve')).text, /was approved/);
        assert.equal(await amount(), before + 1000, 'the refill added once');
        [charge] = (await call('GET', `/v1/accounts/${acc}/charges`)).body.data;
        assert.deepEqual([charge.status, charge.next_action_url, charge.receipt_number], ['succeeded', null, 'R-2']);
        await h.audit();
      } finally {
        await h.close();
      }
    });
  });
}
