// Guarantee: the TypeScript client's customer portal (sdk/typescript: `billing.portalSessions`, `billing.topupOffers`,
// `billing.charges` and `BillingPortal`) does what its routes do on the real server, on SQLite and PostgreSQL, with the
// types the compiler checks: credit packs put, replaced, listed and deleted on the wire's field names; a session
// opened with its options and read through `BillingPortal.fromUrl(session.url)` (the account, grants, transactions,
// usage and charges as the company API answers them); a credit pack bought with the card once per Idempotency-Key,
// the caller's key given twice or the client's own key reused on its retry after a lost answer; the charge's receipt
// as JSON and as HTML, the same through both clients, another account's a 404; a read-only session's purchase a 403
// BillingError, a revoked session's every call a 401. `fromUrl` reads the token from the url's fragment and the
// server's address from what comes before `/portal/`; a client missing its settings refuses to be built.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import {
  Billing,
  BillingError,
  BillingPortal,
  type Charge,
  type CreatedPortalSession,
  type FetchLike,
  type PortalAccount,
  type PortalSession,
  type PortalTopup,
  type Receipt,
  type TopupOffer,
} from '../../sdk/typescript/src/index.js';
import { HTTP_DIALECTS, type Harness, signUpCompany, startHarness } from '../support/harness.js';

const HOUR = 3_600_000;

/** The error a call rejects with (the test fails if it resolves). */
async function refusal(call: Promise<unknown>): Promise<BillingError> {
  try {
    await call;
  } catch (err) {
    assert.ok(err instanceof BillingError, `a BillingError, not ${String(err)}`);
    return err;
  }
  assert.fail('the call succeeded');
}

/** Every item of a list, through `for await` (every page). */
async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of items) out.push(x);
  return out;
}

/**
 * What the compiler must accept and refuse (each `@ts-expect-error` fails tsc if its line compiles). Never called,
 * hence the `_`: its lines would send requests.
 */
function _portalTypes(billing: Billing, portal: BillingPortal): void {
  const opened: Promise<CreatedPortalSession> = billing.portalSessions.create('a_x', {
    scopes: ['read', 'topup'],
    ttl_seconds: 600,
    return_url: 'https://example.com/account',
    frame_ancestors: ['https://example.com'],
  });
  const url: Promise<string> = opened.then((s) => s.url);
  const plain: Promise<CreatedPortalSession> = billing.portalSessions.create('a_x');
  const revoked: Promise<string | null> = billing.portalSessions.revoke('ps_x').then((s) => s.revoked_at);
  void [url, plain, revoked];
  // @ts-expect-error a scope is read or topup
  billing.portalSessions.create('a_x', { scopes: ['admin'] });
  // @ts-expect-error the body is on the API's field names (ttl_seconds)
  billing.portalSessions.create('a_x', { ttlSeconds: 600 });

  const put: Promise<TopupOffer> = billing.topupOffers.put('starter', {
    denomination: 'tokens',
    amount: 5000,
    usd_charge: 1000,
    name: 'Starter',
    priority: 10,
    expires_in_days: null,
  });
  const offers: Promise<TopupOffer[]> = billing.topupOffers.list();
  const deleted: Promise<TopupOffer> = billing.topupOffers.delete('starter', { idempotencyKey: 'delete-1' });
  void [put, offers, deleted];
  // @ts-expect-error usd_charge is required
  billing.topupOffers.put('starter', { denomination: 'tokens', amount: 1, name: 'x' });

  const charges: AsyncIterable<Charge> = billing.charges.list('a_x', { limit: 10 });
  const receipt: Promise<string> = billing.charges.receipt('ch_x').then((r) => r.receipt_number);
  const html: Promise<string> = billing.charges.receiptHtml('ch_x');
  void [charges, receipt, html];

  const account: Promise<PortalAccount> = portal.account();
  const scopes: Promise<('read' | 'topup')[]> = account.then((a) => a.scopes);
  const bought: Promise<PortalTopup> = portal.topup('starter', { idempotencyKey: 'click-1' });
  const status: Promise<'succeeded' | 'requires_action'> = bought.then((t) => t.status);
  const theirs: Promise<Receipt> = portal.receipt('ch_x');
  const page: Promise<string> = portal.receiptHtml('ch_x');
  void [scopes, status, theirs, page, portal.grants('tokens', { status: 'active' }), portal.charges()];
  void portal.usage({ from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z', window: 'hour' });
  // @ts-expect-error usage needs from and to
  portal.usage({ window: 'day' });
  // @ts-expect-error the session decides the account: no account id
  portal.charges('a_x');
  // @ts-expect-error which pack
  portal.topup();
}

test('BillingPortal.fromUrl: the token from the fragment, the address before /portal/; its requests', async () => {
  const seen: Request[] = [];
  const fake: FetchLike = async (input) => {
    seen.push(input.clone());
    const body = input.method === 'POST' ? { data: { charge_id: 'ch_1' } } : { data: [], has_more: false };
    return new Response(JSON.stringify(body), { status: input.method === 'POST' ? 201 : 200 });
  };
  const token = 'pt_0123456789abcdefABCDEF0123456789';
  const portal = BillingPortal.fromUrl(`https://billing.example.com/base/portal/ps_1#${token}`, { fetch: fake });
  assert.equal(portal.baseUrl, 'https://billing.example.com/base');
  await portal.charges({ limit: 5 });
  await portal.topup('starter');
  await portal.topup('starter', { idempotencyKey: 'click-1' });
  assert.deepEqual(
    seen.map((r) => [r.method, r.url, r.headers.get('authorization')]),
    [
      ['GET', 'https://billing.example.com/base/v1/portal/charges?limit=5', `Bearer ${token}`],
      ['POST', 'https://billing.example.com/base/v1/portal/topups', `Bearer ${token}`],
      ['POST', 'https://billing.example.com/base/v1/portal/topups', `Bearer ${token}`],
    ],
  );
  assert.equal(seen[0]?.headers.get('idempotency-key'), null, 'a read has no key');
  assert.match(String(seen[1]?.headers.get('idempotency-key')), /^ik_[0-9a-f]{32}$/, 'a write has one of its own');
  assert.equal(seen[2]?.headers.get('idempotency-key'), 'click-1', "or the caller's");
  assert.deepEqual(await seen[1]?.json(), { offer_id: 'starter' });

  const elsewhere = BillingPortal.fromUrl(`http://localhost:8080/portal/ps_1#${token}`, {
    baseUrl: 'http://10.0.0.7:8080/',
  });
  assert.equal(elsewhere.baseUrl, 'http://10.0.0.7:8080', 'options.baseUrl wins (a backend reaching it elsewhere)');
  assert.throws(() => BillingPortal.fromUrl('https://billing.example.com/portal/ps_1'), /no token in its fragment/);
  assert.throws(() => BillingPortal.fromUrl(`https://billing.example.com/other#${token}`), /pass options\.baseUrl/);
  assert.throws(() => BillingPortal.fromUrl('/portal/ps_1#pt_x'), /not an absolute URL/);
  assert.throws(() => new BillingPortal({ baseUrl: 'https://billing.example.com', token: '' }), /token is missing/);
  assert.throws(
    () => new BillingPortal(undefined as unknown as { baseUrl: string; token: string }),
    /options are required/,
  );
  assert.throws(() => new BillingPortal({ baseUrl: 'ftp://x', token }), /must be http\(s\)/);
  assert.throws(() => new BillingPortal({ baseUrl: 'https://x', token, maxRetries: -1 }), /maxRetries/);
});

for (const dialect of HTTP_DIALECTS) {
  describe(`the TypeScript client's customer portal against the real server (${dialect})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(dialect);
    });
    after(async () => h.close());
    afterEach(async () => h.audit());

    /** A company of its own, its credit pack of tokens, and an account with 100 tokens and a card. */
    async function setUp(name = 'Acme') {
      const co = await signUpCompany(h, name);
      const billing = new Billing({ baseUrl: h.url, companyId: co.companyId, apiKey: co.apiKey });
      await billing.topupOffers.put('starter', {
        denomination: 'tokens',
        amount: 5000,
        usd_charge: 1000,
        name: 'Starter',
        expires_in_days: 30,
      });
      const accountId = await customer(billing, 'Ann');
      return { co, billing, accountId };
    }

    async function customer(billing: Billing, name: string): Promise<string> {
      const { account_id } = await billing.accounts.create({ name, email: `${name.toLowerCase()}@example.com` });
      await billing.balances.create(account_id, 'tokens', { amount: 100 });
      const card = await billing.api.POST('/v1/accounts/{account_id}/card', {
        params: { path: { account_id } },
        body: { token: 'tok_visa' },
      });
      assert.ok(card.data, JSON.stringify(card.error));
      return account_id;
    }

    /** The client of a new session of the account (the harness's port is not the url's: baseUrl is given). */
    async function portalOf(billing: Billing, accountId: string, scopes: ('read' | 'topup')[] = ['read', 'topup']) {
      const session = await billing.portalSessions.create(accountId, { scopes });
      return { session, portal: BillingPortal.fromUrl(session.url, { baseUrl: h.url }) };
    }

    test('credit packs: put (created, replaced), listed, deleted; a bad field is a 400 naming it', async () => {
      const { billing } = await setUp();
      const big = await billing.topupOffers.put(
        'big',
        { denomination: 'tokens', amount: 20_000, usd_charge: 3000, name: 'Big', priority: 10 },
        { idempotencyKey: 'pack-big' },
      );
      assert.deepEqual(
        { ...big, created_at: 0, updated_at: 0 },
        {
          offer_id: 'big',
          denomination: 'tokens',
          amount: 20_000,
          usd_charge: 3000,
          name: 'Big',
          priority: 10,
          expires_in_days: null,
          created_at: 0,
          updated_at: 0,
        },
      );
      const renamed = await billing.topupOffers.put('big', {
        denomination: 'tokens',
        amount: 20_000,
        usd_charge: 3000,
        name: 'Big pack',
      });
      assert.deepEqual([renamed.name, renamed.priority, renamed.created_at], ['Big pack', 50, big.created_at]);
      const listed = await billing.topupOffers.list();
      assert.deepEqual(
        listed.map((o) => [o.offer_id, o.name, o.expires_in_days]),
        [
          ['big', 'Big pack', null],
          ['starter', 'Starter', 30],
        ],
        'by offer id',
      );
      const bad = await refusal(
        billing.topupOffers.put('x', { denomination: 'tokens', amount: 0, usd_charge: 1, name: 'X' }),
      );
      assert.deepEqual([bad.status, bad.type, bad.param], [400, 'invalid_request', 'amount']);
      assert.deepEqual(await billing.topupOffers.delete('big'), renamed);
      const gone = await refusal(billing.topupOffers.delete('big'));
      assert.deepEqual([gone.status, gone.type], [404, 'not_found']);
      assert.deepEqual(
        (await billing.topupOffers.list()).map((o) => o.offer_id),
        ['starter'],
      );
      assert.throws(() => billing.topupOffers.put('', listed[0]!), TypeError, 'an empty id, refused before a request');
    });

    test('a session with its options; the account, grants, transactions and usage through the portal', async () => {
      const { billing, accountId } = await setUp();
      const session = await billing.portalSessions.create(
        accountId,
        {
          scopes: ['topup', 'read'],
          ttl_seconds: 600,
          return_url: 'https://example.com/account',
          frame_ancestors: ['https://app.example.com'],
        },
        { idempotencyKey: 'portal-1' },
      );
      assert.match(session.session_id, /^ps_/);
      assert.match(session.url, new RegExp(`/portal/${session.session_id}#pt_[0-9A-Za-z]{32}$`));
      assert.deepEqual(
        [session.account_id, session.scopes, session.return_url, session.frame_ancestors, session.revoked_at],
        [accountId, ['read', 'topup'], 'https://example.com/account', ['https://app.example.com'], null],
      );
      assert.equal(Date.parse(session.expires_at) - Date.parse(session.created_at), 600_000);
      const disallowed = await refusal(billing.portalSessions.create(accountId, { return_url: 'http://example.com' }));
      assert.deepEqual([disallowed.status, disallowed.type, disallowed.param], [400, 'invalid_request', 'return_url']);
      const unknown = await refusal(billing.portalSessions.create('a_missing'));
      assert.deepEqual([unknown.status, unknown.type], [404, 'not_found']);

      const portal = BillingPortal.fromUrl(session.url, { baseUrl: h.url });
      const account = await portal.account();
      assert.deepEqual(account.account, { account_id: accountId, name: 'Ann', email: 'ann@example.com' });
      assert.deepEqual(account.company, { name: 'Acme' });
      assert.deepEqual([account.scopes, account.expires_at], [['read', 'topup'], session.expires_at]);
      assert.deepEqual(account.balances, (await billing.accounts.retrieve(accountId)).balances);
      assert.deepEqual(
        account.balances.map((b) => [b.denomination, b.amount]),
        [['tokens', 100]],
      );

      await billing.events.ingest(accountId, [{ type: 'chat', cost_override: { amount: 10, denomination: 'tokens' } }]);
      const grants = await all(portal.grants('tokens', { limit: 1 }));
      assert.deepEqual(
        grants,
        await all(billing.grants.listOfBalance(accountId, 'tokens')),
        'as the company sees them',
      );
      assert.deepEqual(
        grants.map((g) => [g.amount, g.remaining]),
        [[100, 90]],
      );
      const transactions = await all(portal.transactions({ limit: 1 }));
      assert.deepEqual(transactions, await all(billing.transactions.list(accountId)));
      assert.equal(transactions.length, 2, 'the initial amount and the event, one page each');
      const from = new Date(Math.floor(h.server.clock.now() / HOUR) * HOUR).toISOString();
      const to = new Date(Date.parse(from) + HOUR).toISOString();
      const usage = await all(portal.usage({ from, to, window: 'hour' }));
      assert.deepEqual(usage, await all(billing.usage.query({ account_id: accountId, from, to, window: 'hour' })));
      assert.deepEqual(
        usage.map((u) => [u.type, u.denomination, u.events, u.cost]),
        [['chat', 'tokens', 1, 10]],
      );
      assert.deepEqual((await portal.charges()).data, [], 'no charge yet');
    });

    test('a credit pack bought once per Idempotency-Key, even retried; its charge and receipt', async () => {
      const { co, billing, accountId } = await setUp();
      const { portal } = await portalOf(billing, accountId);
      assert.deepEqual(
        (await portal.topupOffers()).map((o) => [o.offer_id, o.amount, o.usd_charge]),
        [['starter', 5000, 1000]],
      );

      // The caller's key: the same call made again is the same purchase, answered again.
      const bought = await portal.topup('starter', { idempotencyKey: 'click-1' });
      assert.equal(bought.status, 'succeeded');
      assert.equal(bought.next_action_url, null);
      assert.match(bought.charge_id, /^ch_/);
      assert.deepEqual(await portal.topup('starter', { idempotencyKey: 'click-1' }), bought, 'answered again');
      const grant = await billing.grants.retrieve(bought.grant_id ?? '');
      assert.deepEqual([grant.source, grant.category, grant.amount], ['topup', 'paid', 5000]);
      assert.equal((await billing.balances.retrieve(accountId, 'tokens')).amount, 5100, 'one purchase');

      // The client's own key: the first answer lost on the way back, the retry sends the same key.
      const keys: string[] = [];
      let lost = 0;
      const losing: FetchLike = async (input, init) => {
        const res = await fetch(input, init);
        if (input.method === 'POST') {
          keys.push(input.headers.get('idempotency-key') ?? '');
          if (lost++ === 0) {
            await res.text();
            throw new TypeError('fetch failed (the answer was lost)');
          }
        }
        return res;
      };
      const flaky = BillingPortal.fromUrl((await portalOf(billing, accountId)).session.url, {
        baseUrl: h.url,
        fetch: losing,
      });
      const again = await flaky.topup('starter');
      assert.equal(keys.length, 2, 'sent twice');
      assert.match(keys[0] ?? '', /^ik_[0-9a-f]{32}$/);
      assert.equal(keys[1], keys[0], 'with one key');
      assert.equal((await billing.balances.retrieve(accountId, 'tokens')).amount, 10_100, 'two purchases, not three');

      // The charges and their receipts, the same through both clients.
      const charges = await all(portal.charges());
      assert.deepEqual(charges, await all(billing.charges.list(accountId, { limit: 1 })), 'every page, as the company');
      assert.deepEqual(
        charges.map((c) => [c.charge_id, c.reason, c.status, c.usd_amount, c.receipt_number]),
        [
          [again.charge_id, 'topup', 'succeeded', 1000, 'R-2'],
          [bought.charge_id, 'topup', 'succeeded', 1000, 'R-1'],
        ],
      );
      const receipt = await portal.receipt(bought.charge_id);
      assert.deepEqual(receipt, await billing.charges.receipt(bought.charge_id));
      assert.deepEqual(
        { ...receipt, created_at: 0, grant: { ...receipt.grant, expires_at: 0 } },
        {
          receipt_number: 'R-1',
          company: { company_id: co.companyId, name: 'Acme' },
          account: { account_id: accountId, name: 'Ann', email: 'ann@example.com' },
          charge_id: bought.charge_id,
          usd_amount: 1000,
          created_at: 0,
          reason: 'topup',
          grant: { grant_id: bought.grant_id, amount: 5000, denomination: 'tokens', category: 'paid', expires_at: 0 },
        },
      );
      const html = await portal.receiptHtml(bought.charge_id);
      assert.match(html, /^<!doctype html>/i);
      assert.match(html, /R-1/);
      assert.match(html, /\$10\.00/);
      assert.equal(await billing.charges.receiptHtml(bought.charge_id), html);

      // Another account's charge is not this portal's; nor is a charge of another company the company's.
      const bob = await customer(billing, 'Bob');
      const bobs = await (await portalOf(billing, bob)).portal.topup('starter');
      const notMine = await refusal(portal.receipt(bobs.charge_id));
      assert.deepEqual([notMine.status, notMine.type, notMine.param], [404, 'not_found', 'charge_id']);
      assert.equal((await refusal(portal.receiptHtml(bobs.charge_id))).status, 404, 'nor as a page');
      const other = await signUpCompany(h, 'Other');
      const them = new Billing({ baseUrl: h.url, companyId: other.companyId, apiKey: other.apiKey });
      assert.equal((await refusal(them.charges.receipt(bought.charge_id))).status, 404);
      assert.equal((await refusal(them.charges.list(accountId))).status, 404);
    });

    test("a read-only session's purchase is a 403; a revoked session's every call a 401", async () => {
      const { billing, accountId } = await setUp();
      const { portal: reader } = await portalOf(billing, accountId, ['read']);
      const forbidden = await refusal(reader.topup('starter'));
      assert.deepEqual([forbidden.status, forbidden.type, forbidden.code], [403, 'forbidden', 'portal_scope_missing']);
      assert.ok(forbidden.requestId, 'the request-id of the answer');
      assert.equal((await refusal(reader.topupOffers())).status, 403);
      assert.deepEqual((await reader.account()).scopes, ['read']);
      assert.equal((await billing.balances.retrieve(accountId, 'tokens')).amount, 100, 'nothing bought');
      assert.deepEqual((await billing.charges.list(accountId)).data, [], 'nothing charged');

      const { session, portal } = await portalOf(billing, accountId);
      await portal.account();
      const revoked: PortalSession = await billing.portalSessions.revoke(session.session_id);
      assert.equal(revoked.session_id, session.session_id);
      assert.ok(revoked.revoked_at !== null && Date.parse(revoked.revoked_at) > 0);
      const calls: (() => Promise<unknown>)[] = [
        () => portal.account(),
        () => portal.charges(),
        () => portal.topupOffers(),
        () => portal.topup('starter', { idempotencyKey: 'after-revoke' }),
      ];
      for (const call of calls) {
        const err = await refusal(call());
        assert.deepEqual([err.status, err.type], [401, 'authentication_required']);
      }
      assert.deepEqual(await billing.portalSessions.revoke(session.session_id), revoked, 'ending it again answers it');
      const unknown = await refusal(billing.portalSessions.revoke('ps_missing'));
      assert.deepEqual([unknown.status, unknown.type, unknown.param], [404, 'not_found', 'session_id']);
      assert.equal((await billing.balances.retrieve(accountId, 'tokens')).amount, 100, 'still nothing bought');
    });
  });
}
