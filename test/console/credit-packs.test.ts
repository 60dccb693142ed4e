// Guarantee: a person sells credit packs and serves an account's customer from the console in a real browser (Debian's
// Chromium), on either database: the Credit packs page explains what a pack is while there is none; a pack is created
// (an id already in use is refused before asking; the API's refusal of a price is shown next to the price, then
// fixed), listed with its units, dollar price, grant priority and validity, changed (its id fixed; a refused priority
// shown next to it, then fixed) and deleted after asking. The account page opens the customer portal in a new tab
// (a session that reads and buys packs; its url carries the token in the fragment; a refusal is said in words), and
// a succeeded charge's receipt number opens the printable receipt, fetched with the console's credentials, in a new
// window styled by its own stylesheet under the console's Content-Security-Policy. The pages pass axe-core.
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import type { BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import {
  assertAccessible,
  ensureConsoleBuilt,
  WAIT,
  seeText,
  heading,
  describedBy,
  hasText,
  fitsPhone,
  loggedIn,
  steps,
} from '../support/console.js';
import { HTTP_DIALECTS, type Harness, signUpCompany, startHarness } from '../support/harness.js';
import { attachCard, putAutoRefill } from '../support/money.js';
import { runJobs } from '../support/webhooks.js';

type Pack = {
  offer_id: string;
  name: string;
  denomination: string;
  amount: number;
  usd_charge: number;
  priority: number;
  expires_in_days: number | null;
};

for (const dialect of HTTP_DIALECTS) {
  describe(`console credit packs, customer portal and receipts in the browser (${dialect})`, () => {
    const test = steps(`credit-packs-${dialect}`, () => page);
    let h: Harness;
    let close: () => Promise<void>;
    let context: BrowserContext;
    let page: Page;
    let companyId = '';
    let auth: [string, string];
    let accountId = '';
    const nav = (name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name });
    const packRow = (id: string) => page.locator(`[data-table=credit-packs] tr[data-offer="${id}"]`);
    const packs = async (): Promise<Pack[]> => {
      const r = await h.request('GET', '/v1/topup_offers', { auth });
      assert.equal(r.status, 200, r.text);
      return (r.body.data as Pack[]).map((o) => ({
        offer_id: o.offer_id,
        name: o.name,
        denomination: o.denomination,
        amount: o.amount,
        usd_charge: o.usd_charge,
        priority: o.priority,
        expires_in_days: o.expires_in_days,
      }));
    };
    const post = async (path: string, body: unknown) => {
      const r = await h.request('POST', path, { auth, body });
      assert.ok(r.status === 200 || r.status === 201, `${path}: ${r.text}`);
      return r.body;
    };

    before(async () => {
      await ensureConsoleBuilt();
      h = await startHarness(dialect);
      const co = await signUpCompany(h, 'Packs & Co');
      companyId = co.companyId;
      auth = co.auth;
      ({ context, page, close } = await loggedIn(h.url, co));
    });
    after(async () => {
      await close?.();
      await h?.close();
    });

    test('the Credit packs page: empty at first; a pack created, a refused price said next to it', async () => {
      await nav('Credit packs').click();
      await heading(page, 'Credit packs');
      await seeText(page, '.empty', 'No credit packs yet');
      await seeText(page, '.empty', 'customers buy them in the customer portal');
      await assertAccessible(page, 'the Credit packs page, empty');

      const form = page.getByRole('form', { name: 'Create a credit pack' });
      await form.getByLabel('Offer id').fill('tokens-1000');
      await form.getByLabel('Name').fill('1,000 tokens');
      await form.getByLabel('Denomination').fill('tokens');
      await form.getByLabel('Units').fill('1000');
      await form.getByLabel('Price (USD cents)').fill('1500');
      await form.getByLabel('Valid for (days)').fill('30');
      await form.getByRole('button', { name: 'Create credit pack' }).click();
      await seeText(
        page,
        '[role=status]',
        'Created the credit pack “1,000 tokens” (tokens-1000): 1,000 tokens for $15.00.',
      );
      const row = packRow('tokens-1000');
      await row.waitFor(WAIT);
      assert.equal(await row.locator('[data-field=name]').textContent(), '1,000 tokens');
      assert.equal(await row.locator('code').textContent(), 'tokens-1000');
      assert.equal(await row.locator('[data-field=units]').textContent(), '1,000 tokens');
      assert.equal(await row.locator('[data-field=price]').textContent(), '$15.00');
      assert.equal(await row.locator('[data-field=priority]').textContent(), '50');
      assert.equal(await row.locator('[data-field=validity]').textContent(), 'expires 30 days after purchase');

      // The form starts afresh. An id in use is refused before asking (a PUT would replace that pack).
      assert.equal(await form.getByLabel('Offer id').inputValue(), '');
      await form.getByLabel('Offer id').fill('tokens-1000');
      await form.getByLabel('Name').fill('Not this one');
      await form.getByLabel('Denomination').fill('tokens');
      await form.getByLabel('Units').fill('1');
      await form.getByLabel('Price (USD cents)').fill('1');
      await form.getByRole('button', { name: 'Create credit pack' }).click();
      await seeText(form, '.field-error', 'A credit pack “tokens-1000” exists: use its Change button.');
      assert.equal((await packs())[0]?.name, '1,000 tokens', 'not replaced');

      // A price of 0 cents: the API's refusal, next to the price (and only there).
      await form.getByLabel('Offer id').fill('big');
      await form.getByLabel('Name').fill('Big pack');
      await form.getByLabel('Units').fill('5000');
      await form.getByLabel('Price (USD cents)').fill('0');
      await form.getByLabel('Grant priority').fill('20');
      await form.getByRole('button', { name: 'Create credit pack' }).click();
      const price = form.getByLabel('Price (USD cents)');
      await seeText(form, '.field-error', 'usd_charge must be >= 1');
      assert.equal(await price.getAttribute('aria-invalid'), 'true');
      assert.equal(await describedBy(price), "Charged to the customer's card: 1500 is $15.00. usd_charge must be >= 1");
      assert.equal(await form.locator('.field-error').count(), 1);
      assert.equal(await form.locator('[role=alert]').count(), 0, 'said at the field, not again above');
      assert.equal((await packs()).length, 1, 'nothing was created');
      await assertAccessible(page, 'the Credit packs page with a refusal');

      await price.fill('5000');
      await form.getByRole('button', { name: 'Create credit pack' }).click();
      await seeText(page, '[role=status]', 'Created the credit pack “Big pack” (big): 5,000 tokens for $50.00.');
      await hasText(packRow('big').locator('[data-field=validity]'), 'never');
      assert.equal(await packRow('big').locator('[data-field=priority]').textContent(), '20');
      assert.equal(await form.locator('.field-error').count(), 0);
      assert.deepEqual(
        await page.locator('[data-table=credit-packs] tbody tr code').allTextContents(),
        ['big', 'tokens-1000'],
        'by offer id',
      );
      assert.deepEqual(await packs(), [
        {
          offer_id: 'big',
          name: 'Big pack',
          denomination: 'tokens',
          amount: 5000,
          usd_charge: 5000,
          priority: 20,
          expires_in_days: null,
        },
        {
          offer_id: 'tokens-1000',
          name: '1,000 tokens',
          denomination: 'tokens',
          amount: 1000,
          usd_charge: 1500,
          priority: 50,
          expires_in_days: 30,
        },
      ]);
    });

    test('a pack changed: its id fixed; a refused priority said next to it, then fixed', async () => {
      await packRow('tokens-1000').getByRole('button', { name: 'Change tokens-1000' }).click();
      const form = page.getByRole('form', { name: 'Change “1,000 tokens” (tokens-1000)' });
      await form.waitFor(WAIT);
      assert.equal(await form.getByLabel('Offer id').count(), 0, 'the id cannot change');
      assert.equal(await form.getByLabel('Name').inputValue(), '1,000 tokens');
      assert.equal(await form.getByLabel('Units').inputValue(), '1000');
      assert.equal(await form.getByLabel('Price (USD cents)').inputValue(), '1500');
      assert.equal(await form.getByLabel('Grant priority').inputValue(), '50');
      assert.equal(await form.getByLabel('Valid for (days)').inputValue(), '30');
      assert.ok(await form.getByLabel('Name').evaluate((el) => el === document.activeElement), 'the form is focused');

      const priority = form.getByLabel('Grant priority');
      await priority.fill('101');
      await form.getByLabel('Price (USD cents)').fill('1200');
      await form.getByRole('button', { name: 'Save changes' }).click();
      await seeText(form, '.field-error', 'priority must be <= 100');
      assert.equal(await priority.getAttribute('aria-invalid'), 'true');
      assert.equal(
        await describedBy(priority),
        '0–100: lower numbers are used first. Empty: 50. priority must be <= 100',
      );
      assert.equal(await form.locator('.field-error').count(), 1);
      assert.equal((await packs())[1]?.usd_charge, 1500, 'nothing changed');
      await assertAccessible(page, 'the credit pack form, changing one, with a refusal');

      await priority.fill('10');
      await form.getByLabel('Valid for (days)').fill('');
      await form.getByRole('button', { name: 'Save changes' }).click();
      await seeText(
        page,
        '[role=status]',
        'Changed the credit pack “1,000 tokens” (tokens-1000): 1,000 tokens for $12.00.',
      );
      await page.getByRole('form', { name: 'Create a credit pack' }).waitFor(WAIT);
      const row = packRow('tokens-1000');
      await hasText(row.locator('[data-field=price]'), '$12.00');
      assert.equal(await row.locator('[data-field=priority]').textContent(), '10');
      assert.equal(await row.locator('[data-field=validity]').textContent(), 'never');
      assert.deepEqual((await packs())[1], {
        offer_id: 'tokens-1000',
        name: '1,000 tokens',
        denomination: 'tokens',
        amount: 1000,
        usd_charge: 1200,
        priority: 10,
        expires_in_days: null,
      });

      // Change, then Cancel: the form is a new pack's again.
      await packRow('big').getByRole('button', { name: 'Change big' }).click();
      const big = page.getByRole('form', { name: 'Change “Big pack” (big)' });
      await big.getByRole('button', { name: 'Cancel' }).click();
      await page.getByRole('form', { name: 'Create a credit pack' }).waitFor(WAIT);
      await assertAccessible(page, 'the Credit packs page');
      await fitsPhone(page, 'credit-packs');
    });

    test('a pack deleted after asking', async () => {
      const big = packRow('big');
      await big.getByRole('button', { name: 'Delete' }).click();
      await seeText(
        big,
        '.confirm',
        'Delete the credit pack “Big pack” (big)? Purchases already made keep their units.',
      );
      await big.getByRole('button', { name: 'Cancel' }).click();
      assert.equal((await packs()).length, 2, 'cancelled: still there');
      await big.getByRole('button', { name: 'Delete' }).click();
      await big.getByRole('button', { name: 'Yes, delete' }).click();
      await big.waitFor({ ...WAIT, state: 'detached' });
      assert.deepEqual(
        (await packs()).map((o) => o.offer_id),
        ['tokens-1000'],
      );
      assert.equal((await h.request('DELETE', '/v1/topup_offers/big', { auth })).status, 404, 'gone');
      await packRow('tokens-1000').waitFor(WAIT);
    });

    test('the account page opens the customer portal in a new tab; a refusal is said', async () => {
      const acc = await post(`/v1/companies/${companyId}/accounts`, { name: 'Ada Lovelace', email: 'ada@x.test' });
      accountId = acc.data.account_id;
      await post(`/v1/accounts/${accountId}/balance/tokens`, { amount: 1000 });
      await page.goto(`${h.url}/c/${companyId}/accounts/${accountId}`);
      await heading(page, 'Ada Lovelace');

      const popup = context.waitForEvent('page');
      await page.getByRole('button', { name: 'Open the customer portal' }).click();
      const portal = await popup;
      await portal.waitForURL(/\/portal\//, WAIT);
      // The portal's page takes its token from the fragment and removes it from the address bar.
      await portal.getByText('Ada Lovelace').first().waitFor(WAIT);
      assert.match(portal.url(), new RegExp(`^${h.url}/portal/ps_[A-Za-z0-9_-]+$`));
      assert.equal(await portal.evaluate(() => window.opener), null, 'no way back to the console (noopener)');
      await portal.close();
      await seeText(page, '.portal-open [role=status]', 'The customer portal opened in a new tab');
      const url = (await page.getByRole('link', { name: 'Open the portal' }).getAttribute('href')) ?? '';
      const m = new RegExp(`^${h.url}/portal/(ps_[A-Za-z0-9_-]+)#(pt_[A-Za-z0-9_-]+)$`).exec(url);
      assert.ok(m, `the portal's url: ${url}`);

      // The session is the account's, and it reads and buys packs.
      const r = await h.request('GET', '/v1/portal/account', { headers: { authorization: `Bearer ${m[2]}` } });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body.data.scopes, ['read', 'topup']);
      assert.equal(r.body.data.account.account_id, accountId);
      await assertAccessible(page, 'the account page with the portal opened');

      // Refused: said in words, and no tab opens.
      await page.route('**/portal_sessions', (route) =>
        route.fulfill({
          status: 404,
          contentType: 'application/json',
          body: JSON.stringify({ error: { type: 'not_found', message: 'no such account', param: 'account_id' } }),
        }),
      );
      const pages = context.pages().length;
      await page.getByRole('button', { name: 'Open the customer portal' }).click();
      await seeText(
        page,
        '.portal-open [role=alert]',
        'Not found: it does not exist, or it belongs to another company.',
      );
      assert.equal(await page.locator('.portal-open [role=status]').count(), 0, 'the opened session is no longer said');
      assert.equal(context.pages().length, pages, 'no tab opened');
      await page.unroute('**/portal_sessions');
    });

    test('a succeeded charge’s receipt opens from its number, styled, under the console’s CSP', async () => {
      await attachCard(h, { companyId, auth }, accountId, 'tok_visa');
      await putAutoRefill(h, { companyId, auth }, accountId, 'tokens', {
        threshold: 900,
        amount: 500,
        usd_charge: 1500,
      });
      assert.equal(
        (await h.request('PUT', '/v1/prices/api_call', { auth, body: { denomination: 'tokens', unit_amount: '1' } }))
          .status,
        200,
      );
      await post(`/v1/accounts/${accountId}/events`, [{ type: 'api_call', quantity: 200 }]);
      await runJobs(h, auth); // the refill's charge runs as background work
      const charge = page.locator('[data-table=charges] tbody tr', { hasText: 'succeeded' });
      await charge.waitFor(WAIT);
      const button = charge.getByRole('button', { name: 'R-1 (open the receipt in a new window)' });
      await button.waitFor(WAIT);
      await assertAccessible(page, 'the account page with a receipt');

      // What the browser says in the new window while the receipt opens: a refused stylesheet would be an error.
      const logged: string[] = [];
      const onConsole = (msg: ConsoleMessage) => {
        if (msg.type() === 'error' && msg.page() !== page) logged.push(msg.text());
      };
      context.on('console', onConsole);
      const popup = context.waitForEvent('page');
      await button.click();
      const receipt = await popup;
      await receipt.getByRole('heading', { level: 1, name: 'Receipt R-1' }).waitFor(WAIT);
      assert.match(receipt.url(), new RegExp(`^blob:${h.url}/`), 'from a Blob URL of the console');
      assert.equal(await receipt.title(), 'Receipt R-1 · Packs & Co');
      await seeText(receipt, 'tfoot', '$15.00');
      // Its own inline stylesheet applies (the console's policy allows inline styles): main is 40rem wide at most.
      assert.equal(await receipt.locator('main').evaluate((el) => getComputedStyle(el).maxWidth), '640px');
      assert.equal(await receipt.evaluate(() => window.opener), null, 'no way back to the console');
      assert.deepEqual(logged, [], 'no error in the receipt window');
      context.off('console', onConsole);
      // And the window is under the console's policy (a blob: document inherits it): an inline script does not run.
      const ran = await receipt.evaluate(() => {
        const script = document.createElement('script');
        script.textContent = 'document.body.dataset.ran = "yes"';
        document.head.append(script);
        return document.body.dataset.ran ?? 'no';
      });
      assert.equal(ran, 'no', 'script-src self: the inline script is refused');
      await receipt.close();
      assert.equal(await charge.locator('[role=alert]').count(), 0);
      await fitsPhone(page, 'account-receipts');
      await h.audit();
    });
  });
}
