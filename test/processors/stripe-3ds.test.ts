// Guarantees (contract "Customer portal, top-ups and receipts": strong customer authentication with Stripe), over
// HTTP on SQLite and PostgreSQL, the real Stripe SDK against the fake Stripe (its hosted 3-D Secure page included):
// - a portal top-up on a card that asks for 3-D Secure is a PaymentIntent confirmed on session with the engine's
//   return_url: requires_action, next_action_url = Stripe's hosted page; Approve there brings the browser back to
//   /stripe/return, which records the charge succeeded with one topup grant and a receipt number; coming back twice
//   applies once; Decline: failed, no grant;
// - an off-session refill on that card fails authentication_required with the engine's /stripe/authenticate link,
//   which confirms the same PaymentIntent on session and redirects to Stripe's page; approved: one refill;
// - the job settles what the customer left: approved but never back (succeeded, once), Stripe's own expiry (failed),
//   nobody at all (cancelled at Stripe past BILLING_CHARGE_ACTION_TIMEOUT_MINUTES, failed);
// - the return and authenticate pages never fail: unknown, another processor's or a non-waiting charge, Stripe down.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { processorFactory } from '../../src/processors/index.js';
import { FAKE_STRIPE_API_KEY, FakeStripe } from '../support/fake-stripe.js';
import { HTTP_DIALECTS, signUpCompany, signUpStripeCompany, startHarness, type Harness } from '../support/harness.js';
import { attachCard, balance, charges, putAutoRefill, runDue, spend, type Co } from '../support/money.js';

const RETURN_URL = 'https://app.acme.test/billing?tab=credits';
const MINUTE_S = 60;

interface Page {
  status: number;
  location: string | null;
  text: string;
  headers: Headers;
}

/** A browser's request, not following redirects (the test follows them, to see each hop). */
async function browse(url: string, decision?: string): Promise<Page> {
  const r = await fetch(url, {
    redirect: 'manual',
    ...(decision === undefined
      ? {}
      : {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `decision=${decision}`,
        }),
  });
  return { status: r.status, location: r.headers.get('location'), text: await r.text(), headers: r.headers };
}

for (const dialect of HTTP_DIALECTS) {
  describe(`Stripe 3-D Secure through Stripe's hosted page (${dialect})`, () => {
    let fake: FakeStripe;
    let h: Harness;
    let co: Co;
    before(async () => {
      fake = await FakeStripe.start();
      h = await startHarness(dialect, {}, 10_000, processorFactory({ stripe: fake.connection }));
      co = await signUpStripeCompany(h, FAKE_STRIPE_API_KEY);
      const pack = { denomination: 'tokens', amount: 5000, usd_charge: 1000, name: 'Starter' };
      assert.equal((await call('PUT', '/v1/topup_offers/starter', pack)).status, 200);
    });
    after(async () => {
      await h.close();
      await fake.close();
    });
    afterEach(async () => h.audit());

    const call = (method: string, path: string, body?: unknown) =>
      h.request(method, path, { auth: co.auth, ...(body === undefined ? {} : { body }) });
    const advance = async (seconds: number) => {
      const r = await call('POST', '/v1/test_clock/advance', { seconds });
      assert.equal(r.status, 200, r.text);
    };
    const topupGrants = async (acc: string) =>
      (await call('GET', `/v1/accounts/${acc}/balance/tokens/grants?limit=100`)).body.data.filter(
        (g: { source: string }) => g.source === 'topup',
      ).length;
    const latest = async (acc: string) => (await charges(h, co, acc)).at(-1)! as Record<string, any>;

    /** An account with 100 tokens, the 3-D Secure card, and a portal session that may buy. */
    async function customer(): Promise<{ acc: string; buy: () => Promise<Record<string, any>> }> {
      const a = await call('POST', `/v1/companies/${co.companyId}/accounts`, { name: 'Ann' });
      const acc = a.body.data.account_id as string;
      assert.equal((await call('POST', `/v1/accounts/${acc}/balance/tokens`, { amount: 100 })).status, 200);
      await attachCard(h, co, acc, 'tok_authenticationRequired');
      const s = await call('POST', `/v1/accounts/${acc}/portal_sessions`, {
        scopes: ['read', 'topup'],
        return_url: RETURN_URL,
      });
      assert.equal(s.status, 201, s.text);
      const headers = { authorization: `Bearer ${s.body.data.url.split('#')[1]}` };
      const buy = async () => {
        const r = await h.request('POST', '/v1/portal/topups', { headers, body: { offer_id: 'starter' } });
        assert.equal(r.status, 201, r.text);
        return r.body.data;
      };
      return { acc, buy };
    }

    /** A purchase left at Stripe's hosted page, and its PaymentIntent. */
    async function waitingTopup(buy: () => Promise<Record<string, any>>) {
      const w = await buy();
      assert.deepEqual([w.status, w.grant_id], ['requires_action', null]);
      const pi = fake.paymentIntents.at(-1)!;
      assert.equal(w.next_action_url, fake.hostedPageUrl(pi), "next_action_url is Stripe's hosted page");
      return { chargeId: w.charge_id as string, pageUrl: w.next_action_url as string, pi };
    }

    test('a top-up on session: approved at Stripe, back twice, applied once; declined: nothing', async () => {
      const { acc, buy } = await customer();
      const { chargeId, pageUrl, pi } = await waitingTopup(buy);
      const [create] = fake.requestsTo('POST', '/v1/payment_intents').slice(-1);
      const returnUrl = `${h.url}/stripe/return?charge_id=${chargeId}`;
      assert.deepEqual(
        [create?.body.off_session, create?.body.return_url, create?.body.confirm, create?.idempotencyKey],
        [undefined, returnUrl, 'true', chargeId],
        'on session, back to the engine',
      );
      assert.equal((await latest(acc)).status, 'requires_action');
      assert.equal((await balance(h, co, acc)).amount, 100, 'nothing added yet');

      const shown = await browse(pageUrl);
      assert.match(shown.text, /<form method="post"[^>]*><input type="hidden" name="decision" value="approve">/);
      const approved = await browse(pageUrl, 'approve');
      assert.equal(approved.status, 303);
      assert.ok(approved.location?.startsWith(`${returnUrl}&payment_intent=${pi.id}&`), approved.location ?? '');
      const back = await browse(approved.location!);
      assert.equal(back.status, 200, back.text);
      assert.match(back.text, /This payment was approved/);
      assert.match(back.text, /<a href="https:\/\/app\.acme\.test\/billing\?tab=credits">Return to where you bought/);
      assert.match(back.headers.get('content-security-policy') ?? '', /default-src 'none'/);
      assert.equal(back.headers.get('referrer-policy'), 'no-referrer');
      const again = await browse(approved.location!);
      assert.match(again.text, /This payment was approved/, 'returning twice: the same page');
      assert.equal(fake.requestsTo('GET', `/v1/payment_intents/${pi.id}`).length, 1, 'asked Stripe once');
      assert.equal((await balance(h, co, acc)).amount, 5100, 'the grant added once');
      assert.equal(await topupGrants(acc), 1);
      const done = await latest(acc);
      assert.deepEqual([done.status, done.next_action_url], ['succeeded', null]);
      assert.match(done.receipt_number, /^R-[1-9][0-9]*$/);

      const second = await waitingTopup(buy);
      const declined = await browse(second.pageUrl, 'decline');
      const refused = await browse(declined.location!);
      assert.match(refused.text, /This payment was declined/);
      const failed = await latest(acc);
      assert.deepEqual(
        [failed.status, failed.failure_reason, failed.failure_code, failed.next_action_url],
        ['failed', 'declined', 'authentication_failed', null],
      );
      assert.equal((await balance(h, co, acc)).amount, 5100, 'nothing added');
      assert.equal(await topupGrants(acc), 1);
    });

    test('a refill fails authentication_required; the customer completes it through Stripe, once', async () => {
      const { acc } = await customer();
      await putAutoRefill(h, co, acc, 'tokens', { threshold: 90, amount: 1000, usd_charge: 700 });
      await spend(h, co, acc, 20);
      await runDue(h, co);
      const failed = await latest(acc);
      assert.deepEqual(
        [failed.reason, failed.status, failed.failure_reason],
        ['refill', 'failed', 'authentication_required'],
      );
      const link = `${h.url}/stripe/authenticate/${failed.charge_id}`;
      assert.equal(failed.next_action_url, link);
      const pi = fake.paymentIntents.at(-1)!;
      assert.equal(pi.status, 'requires_payment_method');

      const followed = await browse(link);
      assert.equal(followed.status, 303, followed.text);
      assert.equal(followed.location, fake.hostedPageUrl(pi), "on to Stripe's page");
      const [confirm, ...more] = fake.requestsTo('POST', `/v1/payment_intents/${pi.id}/confirm`);
      assert.equal(more.length, 0);
      const card = fake.customers.get(String(pi.customer))?.invoice_settings.default_payment_method;
      assert.deepEqual(
        [confirm?.body.return_url, confirm?.body.off_session, confirm?.body.payment_method],
        [`${h.url}/stripe/return?charge_id=${failed.charge_id}`, 'false', card],
        'the same PaymentIntent, on session, with the card on file',
      );
      assert.equal((await browse(link)).location, followed.location, 'followed again: the same page');
      assert.equal(fake.requestsTo('POST', `/v1/payment_intents/${pi.id}/confirm`).length, 1, 'confirmed once');

      const approved = await browse(followed.location!, 'approve');
      assert.match((await browse(approved.location!)).text, /This payment was approved/);
      assert.match((await browse(link)).text, /This payment was approved/, 'the link, once it is done');
      assert.equal((await balance(h, co, acc)).amount, 1080, 'the refill added once');
      const done = await latest(acc);
      assert.deepEqual([done.status, done.next_action_url], ['succeeded', null]);
      assert.match(done.receipt_number, /^R-[1-9][0-9]*$/);
      assert.equal((await balance(h, co, acc)).consecutive_declines, 0);
    });

    test('the job settles what the customer left: approved but never back, expired at Stripe, abandoned', async () => {
      const { acc, buy } = await customer();
      const closed = await waitingTopup(buy);
      const approved = await browse(closed.pageUrl, 'approve');
      assert.equal(approved.status, 303, 'approved at Stripe; the tab closed before coming back');
      const expired = await waitingTopup(buy);
      fake.expireAuthentication(expired.pi.id);
      const left = await waitingTopup(buy);
      const refiller = await customer();
      await putAutoRefill(h, co, refiller.acc, 'tokens', { threshold: 90, amount: 1000, usd_charge: 700 });
      await spend(h, co, refiller.acc, 20);
      await runDue(h, co);
      const refill = await latest(refiller.acc);
      assert.equal(refill.failure_reason, 'authentication_required');
      const byId = async () => new Map((await charges(h, co, acc)).map((c) => [c.charge_id, c as Record<string, any>]));

      await advance(15 * MINUTE_S);
      let now = await byId();
      assert.deepEqual(
        [now.get(closed.chargeId)?.status, now.get(expired.chargeId)?.status, now.get(left.chargeId)?.status],
        ['succeeded', 'failed', 'requires_action'],
      );
      assert.equal(now.get(expired.chargeId)?.failure_code, 'authentication_failed');
      assert.equal((await balance(h, co, acc)).amount, 5100, 'the approved one added once');
      assert.equal(await topupGrants(acc), 1);
      assert.match((await browse(approved.location!)).text, /This payment was approved/, 'coming back late');
      assert.equal(await topupGrants(acc), 1);

      // Past BILLING_CHARGE_ACTION_TIMEOUT_MINUTES (a day): cancelled at Stripe, failed here; nothing left waiting.
      await advance(24 * 60 * MINUTE_S);
      now = await byId();
      const gone = now.get(left.chargeId)!;
      assert.deepEqual(
        [gone.status, gone.failure_reason, gone.next_action_url],
        ['failed', 'authentication_required', null],
      );
      assert.equal(fake.paymentIntent(left.pi.id)?.status, 'canceled');
      const late = await browse(left.pageUrl, 'approve');
      assert.deepEqual([late.status, late.location], [200, null], 'too late to approve at Stripe');
      const lapsed = await latest(refiller.acc);
      assert.deepEqual([lapsed.status, lapsed.next_action_url], ['failed', null]);
      const refillIntent = fake.paymentIntents.find((pi) => pi.metadata.charge_id === refill.charge_id);
      assert.equal(refillIntent?.status, 'canceled', 'the refill given up at Stripe too');
      assert.match(
        (await browse(`${h.url}/stripe/authenticate/${refill.charge_id}`)).text,
        /This payment was declined/,
      );
      assert.equal((await balance(h, co, refiller.acc)).amount, 80, 'no refill');
      assert.equal((await balance(h, co, acc)).amount, 5100);
      assert.deepEqual(
        (await charges(h, co, acc))
          .concat(await charges(h, co, refiller.acc))
          .filter((c) => c.status === 'requires_action'),
        [],
      );
    });

    test('the pages never fail: no charge, another processor, Stripe down, a check only its SDK shows', async () => {
      const paths = [
        '/stripe/return',
        '/stripe/return?charge_id=',
        '/stripe/return?charge_id=ch_missing&payment_intent=pi_x',
        `/stripe/return?charge_id=${'c'.repeat(300)}`,
        '/stripe/authenticate/ch_missing',
      ];
      // A charge of a sandbox company is not Stripe's.
      const sandbox = await signUpCompany(h, 'Sandbox');
      const sCo: Co = { companyId: sandbox.companyId, auth: sandbox.auth };
      const a = await h.request('POST', `/v1/companies/${sCo.companyId}/accounts`, { auth: sCo.auth, body: {} });
      const sAcc = a.body.data.account_id as string;
      await h.request('POST', `/v1/accounts/${sAcc}/balance/tokens`, { auth: sCo.auth, body: { amount: 100 } });
      await attachCard(h, sCo, sAcc, 'tok_authRequired');
      await putAutoRefill(h, sCo, sAcc, 'tokens', { threshold: 90, amount: 1000, usd_charge: 700 });
      await spend(h, sCo, sAcc, 20);
      await runDue(h, sCo);
      const sandboxCharge = (await charges(h, sCo, sAcc)).at(-1)!;
      paths.push(
        `/stripe/return?charge_id=${sandboxCharge.charge_id}`,
        `/stripe/authenticate/${sandboxCharge.charge_id}`,
      );
      for (const path of paths) {
        const r = await browse(h.url + path);
        assert.equal(r.status, 404, `${path}: ${r.text}`);
        assert.match(r.text, /No such payment/, path);
        assert.match(r.headers.get('content-type') ?? '', /text\/html/);
      }

      // Stripe unreachable when the customer comes back: the charge still waits, and a later return records it.
      const { acc, buy } = await customer();
      const w = await waitingTopup(buy);
      const approved = await browse(w.pageUrl, 'approve');
      fake.failNext(3, 'http_500', `/v1/payment_intents/${w.pi.id}`);
      const down = await browse(approved.location!);
      assert.equal(down.status, 200, down.text);
      assert.match(down.text, /could not be checked just now/);
      assert.equal((await latest(acc)).status, 'requires_action');
      assert.match((await browse(approved.location!)).text, /This payment was approved/);
      assert.equal(await topupGrants(acc), 1);

      // Stripe offered the check to its client SDKs only (use_stripe_sdk): the engine's page, which says so.
      fake.onSessionNextAction = 'use_stripe_sdk';
      try {
        const sdk = await buy();
        assert.equal(sdk.status, 'requires_action');
        assert.equal(sdk.next_action_url, `${h.url}/stripe/authenticate/${sdk.charge_id}`);
        const shown = await browse(sdk.next_action_url);
        assert.equal(shown.status, 200, shown.text);
        assert.match(shown.text, /a check this page cannot show/);
      } finally {
        fake.onSessionNextAction = 'redirect_to_url';
      }
    });
  });
}
