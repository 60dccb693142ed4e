// Guarantees (contract "Customer portal, top-ups and receipts": receipts), over HTTP on SQLite and PostgreSQL:
// - every succeeded charge has a receipt number, … counting per company in the order charges succeeded;
//   a failed charge has none and says why (`failure_reason: "declined"`);
// - GET /v1/charges/{charge_id}/receipt answers the receipt as JSON with `Accept: application/json` (the company,
//   the account, the amount, what it was for and the grant it added) and otherwise as a page to print, every value
//   escaped; a charge without a receipt, another company's and an unknown one are 404 `charge_id`;
// - the ledger audit is clean at the end.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertError, HTTP_DIALECTS, signUpCompany, startHarness } from '../support/harness.js';
import { attachCard, charges, putAutoRefill, runDue, type Co } from '../support/money.js';

for (const dialect of HTTP_DIALECTS) {
  describe(`receipts (${dialect})`, () => {
    test('succeeded charges are numbered per company; the receipt as JSON and as a page; 404s', async () => {
      const h = await startHarness(dialect);
      try {
        const co: Co = await signUpCompany(h, 'Acme <Tools> & Co');
        const other: Co = await signUpCompany(h, 'Other');
        const call = (method: string, path: string, body?: unknown, c: Co = co, headers?: Record<string, string>) =>
          h.request(method, path, {
            auth: c.auth,
            ...(body === undefined ? {} : { body }),
            ...(headers ? { headers } : {}),
          });
        const account = async (c: Co, name: string, token: string) => {
          const r = await call('POST', `/v1/companies/${c.companyId}/accounts`, { name, email: 'ann@example.com' }, c);
          assert.equal(r.status, 200, r.text);
          const id = r.body.data.account_id as string;
          assert.equal((await call('POST', `/v1/accounts/${id}/balance/tokens`, { amount: 600 }, c)).status, 200);
          await attachCard(h, c, id, token);
          await putAutoRefill(h, c, id, 'tokens', { threshold: 500, amount: 1000, usd_charge: 700 });
          return id;
        };
        const spend = async (c: Co, acc: string, amount: number) => {
          const r = await call(
            'POST',
            `/v1/accounts/${acc}/events`,
            [{ type: 'use', cost_override: { amount, denomination: 'tokens' } }],
            c,
          );
          assert.equal(r.status, 200, r.text);
          await runDue(h, c);
        };

        const ann = await account(co, 'Ann <script>alert(1)</script>', 'tok_visa');
        await spend(co, ann, 200); // 400 left: a refill
        await spend(co, ann, 1000); // 400 left again: a second refill
        const declined = await account(co, 'Bob', 'tok_chargeCustomerFail');
        await spend(co, declined, 200);
        const theirs = await account(other, 'Cy', 'tok_visa');
        await spend(other, theirs, 200);

        const annCharges = await charges(h, co, ann);
        assert.deepEqual(
          annCharges.map((c) => [c.reason, c.status, c.receipt_number, c.failure_reason]),
          [
            ['refill', 'succeeded', 'R-1', null],
            ['refill', 'succeeded', 'R-2', null],
          ],
        );
        const [failed] = await charges(h, co, declined);
        assert.deepEqual(
          [failed!.status, failed!.receipt_number, failed!.failure_reason],
          ['failed', null, 'declined'],
        );
        const [theirCharge] = await charges(h, other, theirs);
        assert.equal(theirCharge!.receipt_number, 'R-1', 'numbers count per company');

        const first = annCharges[0]!;
        const json = await call('GET', `/v1/charges/${first.charge_id}/receipt`, undefined, co, {
          accept: 'application/json',
        });
        assert.equal(json.status, 200, json.text);
        assert.match(json.headers.get('content-type') ?? '', /^application\/json/);
        const refillGrants = (await call('GET', `/v1/accounts/${ann}/balance/tokens/grants?limit=100`)).body.data
          .filter((g: { source: string }) => g.source === 'refill')
          .map((g: { grant_id: string }) => g.grant_id)
          .sort();
        const second = await call('GET', `/v1/charges/${annCharges[1]!.charge_id}/receipt`, undefined, co, {
          accept: 'application/json',
        });
        assert.deepEqual(
          [json.body.data.grant.grant_id, second.body.data.grant.grant_id].sort(),
          refillGrants,
          'each receipt names the grant its refill added',
        );
        const r = json.body.data;
        assert.deepEqual(
          {
            receipt_number: r.receipt_number,
            company: r.company,
            account: r.account,
            charge_id: r.charge_id,
            usd_amount: r.usd_amount,
            reason: r.reason,
          },
          {
            receipt_number: 'R-1',
            company: { company_id: co.companyId, name: 'Acme <Tools> & Co' },
            account: { account_id: ann, name: 'Ann <script>alert(1)</script>', email: 'ann@example.com' },
            charge_id: first.charge_id,
            usd_amount: 700,
            reason: 'refill',
          },
        );
        assert.ok(Date.parse(r.created_at) >= Date.parse(first.created_at));
        assert.deepEqual(r.grant, {
          grant_id: r.grant.grant_id,
          amount: 1000,
          denomination: 'tokens',
          category: 'paid',
          expires_at: null,
        });

        const page = await call('GET', `/v1/charges/${annCharges[1]!.charge_id}/receipt`, undefined, co, {
          accept: 'text/html,application/xhtml+xml,*/*;q=0.8',
        });
        assert.equal(page.status, 200, page.text);
        assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
        assert.match(page.text, /<h1>Receipt R-2<\/h1>/);
        assert.match(page.text, /\$7\.00/);
        assert.match(page.text, /Auto-refill: 1,000 tokens/);
        assert.match(page.text, /Acme &lt;Tools&gt; &amp; Co/);
        assert.match(page.text, /Ann &lt;script&gt;alert\(1\)&lt;\/script&gt;/);
        assert.doesNotMatch(page.text, /<script>/, 'nothing of the account runs');
        const bare = await call('GET', `/v1/charges/${annCharges[1]!.charge_id}/receipt`);
        assert.match(bare.headers.get('content-type') ?? '', /^text\/html/, 'without Accept: the page');

        for (const [id, c] of [
          [failed!.charge_id, co],
          [theirCharge!.charge_id, co],
          [first.charge_id, other],
          ['ch_missing', co],
        ] as const) {
          const miss = await call('GET', `/v1/charges/${id}/receipt`, undefined, c, { accept: 'application/json' });
          assertError(miss, 404, 'not_found');
          assert.equal(miss.body.error.param, 'charge_id');
        }
        await h.audit();
      } finally {
        await h.close();
      }
    });
  });
}
