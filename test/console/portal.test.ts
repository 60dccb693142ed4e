// Guarantee: the customer portal's page (`/portal/{session_id}#pt_…`, console/portal.html) in a real browser (Debian's
// Chromium), on either database: it shows the company's and account's names, each balance with its grants and next
// expiry, usage by day, the transactions (a page at a time, "More") and the receipts (opened in a new window), at
// 1280 and 390 px wide, passing axe-core. The token leaves the address bar at once and is kept in memory only (not in
// localStorage, sessionStorage, a cookie or any url the page requests). A credit pack is bought with the card
// (tok_visa: the balance goes up; a declined card: the reason said, nothing added; tok_authRequired: the sandbox's
// 3-D Secure page, Approve, and the reopened portal shows the pack; a refill that failed for want of the customer is
// listed, and confirming it applies it). Only the session's frame_ancestors may frame it.
// An ended session's page says only that the link has expired. It prints the first load's weight (brotli) and the
// time until 1,000 transactions' first page shows.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { after, before, describe } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  DESKTOP,
  PHONE,
  WAIT,
  assertAccessible,
  ensureConsoleBuilt,
  fitsPhone,
  hasText,
  launchBrowser,
  newContext,
  screenshot,
  seeText,
  steps,
} from '../support/console.js';
import { HTTP_DIALECTS, type Harness, signUpCompany, startHarness } from '../support/harness.js';
import { attachCard, putAutoRefill } from '../support/money.js';
import { runJobs } from '../support/webhooks.js';

const DIST = resolve('console', 'dist');
const DAY = 86_400_000;
/** The first load's budget: the portal page's JS and CSS, brotli-compressed as the server sends them. */
const FIRST_LOAD_MAX = 60 * 1024;

/** The JS and CSS portal.html loads (scripts, module preloads, stylesheets), with their .br sizes. */
function portalAssets(): { name: string; br: number }[] {
  const html = readFileSync(join(DIST, 'portal.html'), 'utf8');
  const names = [...html.matchAll(/(?:src|href)="\/assets\/([^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
  return [...new Set(names)].map((name) => ({ name, br: statSync(join(DIST, 'assets', `${name}.br`)).size }));
}

/** A page at http://localhost:<port>/ that frames `src` (another origin than the portal's 127.0.0.1). */
async function framer(src: () => string): Promise<{ origin: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      '<!doctype html><html lang="en"><title>Framer</title><h1>A site that frames the portal</h1>' +
        `<iframe title="Customer portal" src="${src()}" width="900" height="700"></iframe></html>`,
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://localhost:${port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

for (const dialect of HTTP_DIALECTS) {
  describe(`the customer portal's page in the browser (${dialect})`, () => {
    const test = steps(`portal-${dialect}`, () => page);
    let h: Harness;
    let browser: Browser;
    let closeBrowser: () => Promise<void>;
    let context: BrowserContext;
    let page: Page;
    let co: { companyId: string; auth: [string, string] };
    let accountId = '';
    let sessionUrl = '';
    let sessionId = '';
    let token = '';
    let allowed: Awaited<ReturnType<typeof framer>>;
    let refused: Awaited<ReturnType<typeof framer>>;
    /** Every url the portal's pages requested. */
    const requested: string[] = [];

    const call = async (method: string, path: string, body?: unknown) => {
      const r = await h.request(method, path, { auth: co.auth, body });
      assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${r.status} ${r.text}`);
      return r.body;
    };
    const available = async (account = accountId) =>
      (await call('GET', `/v1/accounts/${account}/balance/tokens`)).data.available as number;
    const balanceCard = () => page.locator('[data-balance=tokens]');
    const newSession = async (account: string, body: Record<string, unknown> = {}) => {
      const s = (await call('POST', `/v1/accounts/${account}/portal_sessions`, body)).data;
      return { url: s.url as string, id: s.session_id as string, token: (s.url as string).split('#')[1]! };
    };
    const openPortal = async (url = sessionUrl, name: string | RegExp = 'Grace Hopper') => {
      // From elsewhere: on the portal's own path, a url that differs by its fragment only reloads in the page.
      await page.goto('about:blank');
      await page.goto(url);
      await page.getByRole('heading', { level: 1, name }).waitFor(WAIT);
    };

    before(async () => {
      await ensureConsoleBuilt();
      h = await startHarness(dialect);
      const signed = await signUpCompany(h, 'Portal & Co');
      co = { companyId: signed.companyId, auth: signed.auth };
      const acc = await call('POST', `/v1/companies/${co.companyId}/accounts`, {
        name: 'Grace Hopper',
        email: 'grace@x.test',
      });
      accountId = acc.data.account_id;
      await call('POST', `/v1/accounts/${accountId}/balance/tokens`, { amount: 1000 });
      await attachCard(h, co, accountId, 'tok_visa');
      await call('PUT', '/v1/topup_offers/tokens-500', {
        denomination: 'tokens',
        amount: 500,
        usd_charge: 900,
        name: '500 tokens',
        expires_in_days: 60,
      });
      await call('PUT', '/v1/prices/api_call', { denomination: 'tokens', unit_amount: '1' });
      // Usage (26 transactions), which takes the balance under the refill threshold: a refill charge, a receipt.
      await putAutoRefill(h, co, accountId, 'tokens', { threshold: 900, amount: 500, usd_charge: 1500 });
      await call(
        'POST',
        `/v1/accounts/${accountId}/events`,
        Array.from({ length: 25 }, () => ({ type: 'api_call', quantity: 1 })),
      );
      await call('POST', `/v1/accounts/${accountId}/events`, [{ type: 'api_call', quantity: 200 }]);
      await runJobs(h, co.auth);
      // A named grant that expires (drawn last), the balance's next expiry.
      await call('POST', `/v1/accounts/${accountId}/balance/tokens/grants`, {
        amount: 500,
        priority: 100,
        name: 'Welcome bonus',
        expires_at: new Date((Math.floor(Date.now() / DAY) + 20) * DAY).toISOString(),
      });
      assert.equal(await available(), 1000 - 225 + 500 + 500);

      allowed = await framer(() => sessionUrl);
      refused = await framer(() => sessionUrl);
      ({
        url: sessionUrl,
        id: sessionId,
        token,
      } = await newSession(accountId, {
        scopes: ['read', 'topup'],
        frame_ancestors: [allowed.origin],
      }));
      ({ browser, close: closeBrowser } = await launchBrowser());
      context = await newContext(browser);
      context.setDefaultTimeout(WAIT.timeout);
      context.on('request', (r) => requested.push(r.url()));
      page = await context.newPage();
    });
    after(async () => {
      await closeBrowser?.();
      await allowed?.close();
      await refused?.close();
      await h?.close();
    });

    test('the first load weighs at most 60 KB of JS and CSS (brotli)', async () => {
      const assets = portalAssets();
      assert.ok(assets.some((a) => a.name.endsWith('.js')) && assets.some((a) => a.name.endsWith('.css')));
      const total = assets.reduce((n, a) => n + a.br, 0);
      const list = assets.map((a) => `${a.name} ${a.br}`).join(', ');
      console.log(`portal first load: ${total} bytes = ${(total / 1024).toFixed(1)} KB brotli (${list})`);
      assert.ok(total <= FIRST_LOAD_MAX, `${total} bytes`);
      // Not the console: none of its pages' code is in the portal's bundle.
      const js = assets.filter((a) => a.name.endsWith('.js'));
      for (const a of js)
        assert.doesNotMatch(readFileSync(join(DIST, 'assets', a.name), 'utf8'), /Credit packs|Log in|Webhooks/);
    });

    test('balances, grants, next expiry, usage, transactions and receipts; the token kept out of sight', async () => {
      await openPortal();
      await seeText(page, 'header [data-field=company]', 'Portal & Co');
      await seeText(page, 'main', 'grace@x.test');
      const card = balanceCard();
      await hasText(card.locator('[data-field=available]'), '1,775');
      assert.equal(await card.locator('[data-field=amount]').textContent(), '1,775');
      assert.equal(await card.locator('[data-field=pending]').textContent(), '0');
      assert.match(
        (await card.locator('[data-field=next-expiry]').textContent()) ?? '',
        /^500 tokens expire on \d{1,2} [A-Z][a-z]{2} \d{4}$/,
      );
      const grants = card.locator('[data-table=grants-tokens] tbody tr');
      await grants.first().waitFor(WAIT);
      const bonus = grants.filter({ hasText: 'Welcome bonus' });
      assert.equal(await bonus.locator('[data-field=remaining]').textContent(), '500');
      assert.match((await bonus.locator('[data-field=expires]').textContent()) ?? '', /^\d{1,2} [A-Z][a-z]{2} \d{4}$/);
      assert.equal(await grants.filter({ hasText: 'Refill' }).locator('[data-field=remaining]').textContent(), '500');
      assert.equal(await grants.filter({ hasText: 'Refill' }).locator('[data-field=expires]').textContent(), 'never');

      // Usage by day: today's 26 events, 225 tokens.
      const today = page.locator('[data-table=usage] tbody tr').first();
      await today.waitFor(WAIT);
      assert.match((await today.textContent()) ?? '', /26225 tokens/);

      // Transactions, newest first, 20 at a time.
      const rows = page.locator('[data-table=transactions] tbody tr');
      await rows.nth(19).waitFor(WAIT);
      assert.equal(await rows.count(), 20);
      assert.match((await rows.first().textContent()) ?? '', /Credits added\+500 tokens1,775/);
      const all = (await call('GET', `/v1/accounts/${accountId}/transactions?limit=100`)).data.length as number;
      assert.ok(all > 20, `${all} transactions`);
      await page.getByRole('button', { name: 'More transactions' }).click();
      await rows.nth(all - 1).waitFor(WAIT);
      assert.equal(await rows.count(), all);
      await seeText(page, '.pager', `${all} shown, all of them`);
      assert.equal(await page.getByRole('button', { name: 'More transactions' }).count(), 0);
      assert.ok(await rows.nth(20).evaluate((el) => el === document.activeElement), 'the first new row has the focus');

      // Receipts: the refill's.
      const receipt = page.getByRole('button', { name: 'R-1 (open the receipt in a new window)' });
      await receipt.waitFor(WAIT);
      await seeText(page, '[data-table=receipts]', 'Automatic refill (tokens)');
      await seeText(page, '[data-table=receipts]', '$15.00');
      const popup = context.waitForEvent('page');
      await receipt.click();
      const w = await popup;
      await w.getByRole('heading', { level: 1, name: 'Receipt R-1' }).waitFor(WAIT);
      assert.match(w.url(), new RegExp(`^blob:${h.url}/`));
      assert.equal(await w.evaluate(() => window.opener), null);
      await w.close();

      // The token: out of the address bar and of every storage, and in no url the page asked for.
      assert.equal(page.url(), `${h.url}/portal/${sessionId}`);
      assert.equal(await page.evaluate(() => location.hash), '');
      const stored = await page.evaluate(() => JSON.stringify([{ ...localStorage }, { ...sessionStorage }]));
      assert.equal(stored, '[{},{}]');
      assert.equal(await page.evaluate(() => document.cookie), '');
      assert.deepEqual((await context.cookies()).length, 0);
      assert.deepEqual(
        requested.filter((u) => u.includes(token)),
        [],
        'no request carries the token in its url',
      );
      assert.ok(requested.some((u) => u.startsWith(`${h.url}/v1/portal/transactions`)));

      await screenshot(page, 'portal');
      await assertAccessible(page, 'the portal at 1280 px');
      await page.setViewportSize(PHONE);
      await assertAccessible(page, 'the portal at 390 px');
      await page.setViewportSize(DESKTOP);
      await fitsPhone(page, 'portal');
    });

    test('a pack bought with the card (tok_visa): the balance goes up; declined: the reason said', async () => {
      const pack = page.locator('.pack[data-offer=tokens-500]');
      await seeText(pack, '[data-field=price]', '$9.00');
      const buy = pack.getByRole('button', { name: 'Buy 500 tokens' });
      const posted: (string | null)[] = [];
      page.on('request', (r) => {
        if (r.method() === 'POST' && r.url().endsWith('/v1/portal/topups'))
          posted.push(r.headers()['idempotency-key']!);
      });
      await buy.click();
      await seeText(page, '[role=status]', 'Bought 500 tokens: 500 tokens added. Your tokens balance is now 2,275.');
      await hasText(balanceCard().locator('[data-field=available]'), '2,275');
      assert.equal(await available(), 2275);
      await page.getByRole('button', { name: 'R-2 (open the receipt in a new window)' }).waitFor(WAIT);
      await seeText(page, '[data-table=receipts]', 'Credit pack (tokens)');

      // A card the bank declines: the reason, nothing added, the button usable again.
      await attachCard(h, co, accountId, 'tok_chargeCustomerFail');
      await buy.click();
      await seeText(pack, '[role=alert]', /^The payment failed: .*declined/i);
      assert.equal(await available(), 2275);
      assert.equal(await buy.isEnabled(), true);
      assert.equal(posted.length, 2);
      assert.ok(posted[0] && posted[1] && posted[0] !== posted[1], 'a key per click');
      await assertAccessible(page, 'the portal with a declined payment');
    });

    test('3-D Secure (tok_authRequired): Buy, the bank’s page, Approve; the reopened portal shows it', async () => {
      await attachCard(h, co, accountId, 'tok_authRequired');
      await openPortal();
      const pack = page.locator('.pack[data-offer=tokens-500]');
      const buy = pack.getByRole('button', { name: 'Buy 500 tokens' });
      await buy.click();
      await seeText(pack, '[role=status]', 'Your bank asks you to confirm this payment');
      await page.waitForURL(new RegExp(`^${h.url}/sandbox/authorize/`), WAIT);
      await page.getByRole('heading', { level: 1, name: 'Confirm your payment of $9.00' }).waitFor(WAIT);
      assert.equal(await available(), 2275, 'nothing added before the customer approves');
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.getByRole('heading', { level: 1, name: 'This payment was approved' }).waitFor(WAIT);
      assert.equal(await available(), 2775);

      await openPortal();
      await hasText(balanceCard().locator('[data-field=available]'), '2,775');
      await page.getByRole('button', { name: 'R-3 (open the receipt in a new window)' }).waitFor(WAIT);

      // A refill charged while the customer is away fails on this card; the portal lists it, and confirming it
      // applies the refill (500 tokens), once.
      await call('POST', `/v1/accounts/${accountId}/events`, [
        { type: 'chat', cost_override: { amount: 1975, denomination: 'tokens' } },
      ]);
      await runJobs(h, co.auth);
      assert.equal(await available(), 800, 'the refill failed: nothing added');
      await openPortal();
      const waiting = page.locator('[data-section=waiting]');
      await seeText(waiting, 'li', 'Automatic refill (tokens), $15.00');
      await assertAccessible(page, 'the portal with a payment waiting');
      await waiting.getByRole('link', { name: 'Confirm the payment' }).click();
      await page.getByRole('heading', { level: 1, name: 'Confirm your payment of $15.00' }).waitFor(WAIT);
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.getByRole('heading', { level: 1, name: 'This payment was approved' }).waitFor(WAIT);
      assert.equal(await available(), 1300);
      await openPortal();
      await hasText(balanceCard().locator('[data-field=available]'), '1,300');
      assert.equal(await page.locator('[data-section=waiting]').count(), 0, 'nothing waits any more');
    });

    test('framing: the session’s frame_ancestors origin frames it; another origin’s frame is refused', async () => {
      await page.goto(`${allowed.origin}/`);
      const frame = page.frameLocator('iframe');
      await frame.getByRole('heading', { level: 1, name: 'Grace Hopper' }).waitFor(WAIT);
      await hasText(frame.locator('[data-balance=tokens] [data-field=available]'), '1,300');
      const framed = page.frames().find((f) => f !== page.mainFrame());
      assert.equal(framed?.url(), `${h.url}/portal/${sessionId}`);

      await page.goto(`${refused.origin}/`, { waitUntil: 'load' });
      await page.getByRole('heading', { level: 1, name: 'A site that frames the portal' }).waitFor(WAIT);
      const child = page.frames().find((f) => f !== page.mainFrame());
      assert.ok(child, 'the iframe is there');
      // Chromium refuses the document (CSP frame-ancestors): the frame shows its error page, never the portal.
      for (let i = 0; i < 50 && !child.url().startsWith('chrome-error:'); i++) await page.waitForTimeout(100);
      assert.ok(!child.url().startsWith(h.url), `the frame's url: ${child.url()}`);
      assert.match(child.url(), /^(chrome-error:|about:blank)/);
      assert.equal(await frame.getByRole('heading', { level: 1, name: 'Grace Hopper' }).count(), 0);
    });

    test('time to interactive with 1,000 transactions (printed)', async () => {
      const big = (await call('POST', `/v1/companies/${co.companyId}/accounts`, { name: 'Big Spender' })).data
        .account_id as string;
      await call('POST', `/v1/accounts/${big}/balance/tokens`, { amount: 5000 });
      await call(
        'POST',
        `/v1/accounts/${big}/events`,
        Array.from({ length: 999 }, () => ({ type: 'api_call', quantity: 1 })),
      );
      const s = await newSession(big);
      // A browser of no cache: the page's assets are downloaded (compressed) as on a first visit.
      const cold = await newContext(browser);
      const fresh = await cold.newPage();
      try {
        const started = Date.now();
        await fresh.goto(s.url, { waitUntil: 'commit' });
        const shown = await fresh.waitForFunction(
          () => document.querySelectorAll('[data-table=transactions] tbody tr').length >= 20 && performance.now(),
          undefined,
          { polling: 'raf', timeout: WAIT.timeout },
        );
        const tti = (await shown.jsonValue()) as number;
        const wall = Date.now() - started;
        const transferred = await fresh.evaluate(() =>
          (performance.getEntriesByType('resource') as PerformanceResourceTiming[])
            .filter((e) => /\/assets\/.*\.(js|css)$/.test(e.name))
            .reduce((n, e) => n + e.transferSize, 0),
        );
        console.log(
          `portal time to interactive, 1,000 transactions (${dialect}): transactions shown ${tti.toFixed(0)} ms ` +
            `after navigation start (wall clock from goto: ${wall} ms); JS+CSS transferred ${transferred} bytes`,
        );
        await fresh.getByRole('heading', { level: 1, name: 'Big Spender' }).waitFor(WAIT);
        await seeText(fresh, '.pager', '20 shown');
      } finally {
        await cold.close();
      }
    });

    test('an ended session: the page says only that the link has expired', async () => {
      const short = await newSession(accountId, { ttl_seconds: 600 });
      // A page open when the session ends: its next call ends the page.
      await openPortal(short.url);
      await page.locator('[data-table=receipts]').waitFor(WAIT);
      await call('POST', '/v1/test_clock/advance', { seconds: 601 });
      await page.getByRole('button', { name: 'R-1 (open the receipt in a new window)' }).click();
      const expired = page.getByRole('heading', { level: 1, name: 'This link has expired; ask for a new one.' });
      await expired.waitFor(WAIT);
      // And the link opened again in this tab (only the fragment differs: the page reloads itself with the token).
      await page.goto(short.url);
      await page.waitForURL(`${h.url}/portal/${short.id}`, WAIT);
      await expired.waitFor(WAIT);
      assert.equal(await page.locator('#app').textContent(), 'This link has expired; ask for a new one.');
      assert.equal(page.url(), `${h.url}/portal/${short.id}`, 'the token is gone from the address bar too');
      await assertAccessible(page, 'the expired portal');
      await fitsPhone(page, 'portal-expired');
      // The first session (an hour) is still good.
      await openPortal();
      await h.audit();
    });
  });
}
