// Guarantee: a person can run their billing from the console in a real browser (Debian's Chromium):
// sign up, verify the email through the link that arrives by SMTP, register a company and get keys; then what
// the company's code does through the API (accounts, events, refills, webhook deliveries) shows on the open
// pages without a reload; the pages pass axe-core (no serious or critical violation) at desktop and phone
// width; a forged state change without the CSRF token changes nothing; after log-out the cookie is dead.
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  DESKTOP,
  PHONE,
  assertAccessible,
  ensureConsoleBuilt,
  launchBrowser,
  newContext,
  screenshot,
  steps,
} from '../support/console.js';
import { HTTP_DIALECTS, type Harness, signUpCompany, startHarness } from '../support/harness.js';
import { type SmtpReceiver, linkToken, startSmtpReceiver } from '../support/smtp.js';
import { type Receiver, runJobs, startReceiver } from '../support/webhooks.js';

/** Long enough for a slow shared machine; the live updates themselves are measured by bench/console.ts. */
const WAIT = { timeout: 15_000 };

async function seeText(page: Page, selector: string, text: string | RegExp): Promise<void> {
  await page.locator(selector, { hasText: text }).first().waitFor(WAIT);
}

async function heading(page: Page, text: string | RegExp): Promise<void> {
  await page.getByRole('heading', { level: 1, name: text }).waitFor(WAIT);
}

for (const dialect of HTTP_DIALECTS) {
  describe(`console in the browser (${dialect})`, () => {
    const test = steps(`${dialect}`, () => page);
    let h: Harness;
    let mail: SmtpReceiver;
    let hooks: Receiver;
    let close: () => Promise<void>;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    const email = `founder-${dialect}-${Date.now()}@example.com`;
    const password = 'correct horse battery';
    let companyId = '';
    let apiKey = '';
    let auth: [string, string];
    let accountId = '';
    /** Every page for the accessibility and screenshot pass: [name, path]. */
    const pages: [string, string][] = [];

    before(async () => {
      await ensureConsoleBuilt();
      mail = await startSmtpReceiver();
      hooks = await startReceiver({ respond: (_r, n) => (n === 0 ? 200 : 200) });
      h = await startHarness(dialect, { SMTP_URL: mail.url });
      ({ browser, close } = await launchBrowser());
      context = await newContext(browser);
      context.setDefaultTimeout(WAIT.timeout);
      page = await context.newPage();
    });
    after(async () => {
      await close?.();
      await h?.close();
      await mail?.close();
      await hooks?.close();
    });

    test('sign up, verify the email by the link sent over SMTP, register a company, get its first key', async () => {
      await page.goto(`${h.url}/`);
      await heading(page, 'Log in');
      await page.getByRole('link', { name: 'Create an account' }).click();
      await heading(page, 'Create your account');
      await page.getByLabel('Full name').fill('Grace Hopper');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill('short');
      await page.getByRole('button', { name: 'Create account' }).click();
      await seeText(page, '.field-error', /8/); // weak password: said next to the field
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Create account' }).click();
      await heading(page, 'Register a company');
      await seeText(page, '.banner', 'Verify your email address');

      const link = `/verify-email?token=${linkToken(await mail.next(email), '/verify-email')}`;
      await page.goto(h.url + link);
      await seeText(page, '[role=status]', 'Your email address is verified');
      const reused = await context.newPage();
      await reused.goto(h.url + link);
      await seeText(reused, '[role=alert]', /invalid, expired or already used/);
      await reused.close();

      await page.goto(`${h.url}/companies/new`);
      await heading(page, 'Register a company');
      assert.equal(await page.locator('.banner').count(), 0, 'no verification banner once verified');
      await page.getByLabel('Company name').fill('Analytical Engines');
      await page.getByRole('button', { name: 'Register company' }).click();
      await heading(page, /is registered/);
      apiKey = (await page.locator('[data-secret]').textContent()) ?? '';
      companyId = (await page.locator('main p code').first().textContent()) ?? '';
      assert.match(companyId, /^c_/);
      assert.ok(apiKey.length > 20, 'the first key is shown');
      await seeText(page, '.warning', 'shown only once');
      assert.equal(await page.getByRole('button', { name: 'Copy' }).count(), 1);
      auth = [companyId, apiKey];
      assert.equal((await h.request('GET', '/v1/accounts', { auth })).status, 200, 'the shown key works');
      await page.getByRole('button', { name: 'I have saved it' }).click();
      await heading(page, 'Accounts');
      await seeText(page, 'pre.code', `/v1/companies/${companyId}/accounts`);
      assert.equal(await page.locator('[data-secret]').count(), 0, 'the key is gone for good');
      pages.push(['accounts', `/c/${companyId}/accounts`]);
    });

    test('API keys: create (shown once), list, revoke with confirmation', async () => {
      await page.getByRole('link', { name: 'API keys' }).click();
      await heading(page, 'API keys');
      await page.getByRole('button', { name: 'Create an API key' }).click();
      const second = (await page.locator('[data-secret]').textContent()) ?? '';
      assert.notEqual(second, apiKey);
      assert.equal((await h.request('GET', '/v1/accounts', { auth: [companyId, second] })).status, 200);
      await page.getByRole('button', { name: 'I have saved it' }).click();
      await page.locator('table tbody tr').nth(1).waitFor(WAIT);
      // The first key has been used (above): the list shows when, in the "Last used" column.
      const first = page.locator('tbody tr', { hasText: apiKey.slice(0, 7) }).first();
      assert.match((await first.locator('td').nth(2).textContent()) ?? '', /^\d{4}-\d{2}-\d{2} [\d:]{8} UTC$/);
      const prefix = second.slice(0, 6);
      const row = page.locator('tbody tr', { hasText: prefix }).first();
      await row.getByRole('button', { name: 'Revoke' }).click();
      await row.getByRole('button', { name: 'Yes, revoke' }).click();
      await seeText(page, 'tbody tr', 'Revoked');
      assert.equal((await h.request('GET', '/v1/accounts', { auth: [companyId, second] })).status, 401);
      assert.equal((await h.request('GET', '/v1/accounts', { auth })).status, 200, 'the first key still works');
      pages.push(['keys', `/c/${companyId}/keys`]);
    });

    test('account, events and a refill made through the API show on the open pages, no reload', async () => {
      await page.getByRole('link', { name: 'Accounts' }).click();
      await heading(page, 'Accounts');
      await page.evaluate(() => {
        (window as any).__sameDocument = true;
      });
      const acc = await h.request('POST', `/v1/companies/${companyId}/accounts`, {
        auth,
        body: { name: 'Ada Lovelace', email: 'ada@example.com', metadata: { plan: 'gold-tier' } },
      });
      accountId = acc.body.data.account_id;
      assert.equal(
        (await h.request('POST', `/v1/accounts/${accountId}/balance/tokens`, { auth, body: { amount: 1000 } })).status,
        200,
      );
      assert.equal(
        (await h.request('PUT', '/v1/prices/api_call', { auth, body: { denomination: 'tokens', unit_amount: '1' } }))
          .status,
        200,
      );
      await seeText(page, 'tbody tr', 'Ada Lovelace');
      await seeText(page, '[data-balance=tokens]', '1,000 tokens');

      // Search: by a metadata value, then by something that matches nothing.
      await page.getByLabel('Search accounts').fill('gold-tier');
      await page.getByRole('button', { name: 'Search' }).click();
      await seeText(page, 'tbody tr', 'Ada Lovelace');
      await page.getByLabel('Search accounts').fill('nobody-matches-this');
      await page.getByRole('button', { name: 'Search' }).click();
      await seeText(page, '.empty', 'No account matches');
      await page.getByRole('button', { name: 'Clear' }).click();
      // What the browser logs as errors while the account page is open: a request answered 4xx or 5xx is one.
      const logged: string[] = [];
      const onConsole = (m: { type(): string; text(): string }) => {
        if (m.type() === 'error') logged.push(m.text());
      };
      page.on('console', onConsole);
      await page.getByRole('link', { name: 'Ada Lovelace' }).click();
      await heading(page, 'Ada Lovelace');
      await seeText(page, '[data-denomination=tokens] [data-field=available]', '1,000');

      const events = Array.from({ length: 5 }, () => ({ type: 'api_call', quantity: 10 }));
      assert.equal((await h.request('POST', `/v1/accounts/${accountId}/events`, { auth, body: events })).status, 200);
      await seeText(page, '[data-denomination=tokens] [data-field=available]', '950');
      await page.locator('[data-points="6"]').waitFor(WAIT); // the grant and five usage transactions
      await seeText(page, '[data-table=account-usage] tbody tr', 'api_call');
      await seeText(page, '[data-table=account-usage] tbody tr', '50 tokens');
      assert.equal(await page.locator('[data-table=transactions] tbody tr').count(), 6);
      await seeText(page, '[data-table=events] tbody tr', 'api_call');

      // A pending event holds its cost and shows among the holds.
      const held = [{ type: 'api_call', quantity: 7, state: 'pending', id: 'held-1' }];
      assert.equal((await h.request('POST', `/v1/accounts/${accountId}/events`, { auth, body: held })).status, 200);
      await seeText(page, '.holds li', 'held-1');
      await seeText(page, '[data-denomination=tokens] [data-field=pending]', '7');
      await page.getByLabel('State').selectOption('pending');
      await seeText(page, '[data-table=events] tbody tr', 'held-1');
      assert.equal(await page.locator('[data-table=events] tbody tr').count(), 1, 'only pending events');

      // Adjust with a reason, from the console.
      await page.getByRole('tab', { name: 'Adjust' }).click();
      await page.getByLabel('Amount').fill('-20');
      await page.getByLabel('Reason').fill('goodwill reversal');
      await page.getByRole('button', { name: 'Adjust balance' }).click();
      await seeText(page, '[data-table=transactions] tbody tr', 'goodwill reversal');

      // A card and auto-refill from the console; usage through the API then triggers a refill.
      await seeText(page, '[data-card]', 'No card on file');
      await page.getByRole('tab', { name: 'Card' }).click();
      await page.getByRole('button', { name: 'Attach card' }).click();
      await seeText(page, '[role=status]', 'Card attached');
      await seeText(page, '[data-card]', /Card on file: visa ending 4242/);
      await page.getByRole('tab', { name: 'Auto-refill' }).click();
      await page.getByLabel('Refill when available drops below').fill('900');
      await page.getByLabel('Units added per refill').fill('500');
      await page.getByLabel('Charge per refill (USD cents)').fill('1500');
      await page.getByRole('button', { name: 'Save auto-refill' }).click();
      await seeText(page, '[data-denomination=tokens]', 'Refills 500 for $15.00 below 900');
      const drop = [{ type: 'api_call', quantity: 40 }];
      assert.equal((await h.request('POST', `/v1/accounts/${accountId}/events`, { auth, body: drop })).status, 200);
      await runJobs(h, auth); // the refill's charge runs as background work
      await seeText(page, '[data-table=transactions] tbody tr', 'refill');
      await seeText(page, '[data-table=charges] tbody tr', 'succeeded');
      await seeText(page, '[data-table=charges] tbody tr [data-field=receipt]', 'R-1');
      await seeText(page, '[data-denomination=tokens] [data-field=amount]', '1,390');

      // A mid-month increase needs a monthly refill: switched on from the same form.
      await page.getByRole('tab', { name: 'Auto-refill' }).click();
      await page.getByLabel('Also refill every month (switching it on refills now)').check();
      await page.getByRole('button', { name: 'Save auto-refill' }).click();
      await seeText(page, '[data-denomination=tokens]', 'monthly 500');

      // Mid-month increase: the dry-run figure first, then the charge.
      await page.getByRole('tab', { name: 'Mid-month increase' }).click();
      await page.getByLabel('New monthly refill (units)').fill('800');
      await page.getByLabel('New monthly price (USD cents)').fill('2000');
      await page.getByRole('button', { name: 'See the price' }).click();
      const quote = (await page.locator('[data-quote]').textContent({ timeout: WAIT.timeout })) ?? '';
      assert.match(quote, /^\$\d+\.\d\d$/);
      const txBefore = await page.locator('[data-table=transactions] tbody tr').count();
      await page.getByRole('button', { name: `Charge ${quote} and increase` }).click();
      await seeText(page, '[role=status]', `charged ${quote}`);
      await page.locator(`[data-table=transactions] tbody tr >> nth=${txBefore}`).waitFor(WAIT);
      pages.push(['account', `/c/${companyId}/accounts/${accountId}`]);
      page.off('console', onConsole);
      // Before the card was attached the page said "No card on file" without asking for a card it knew absent.
      assert.deepEqual(logged, [], 'no error in the browser console (the absent card is not a 404)');

      // Left open with nothing changing, each poll (one a second) asks for the account and at most one list.
      const poll = `/v1/accounts/${accountId}`;
      const asked: string[] = [];
      const onRequest = (r: { url(): string }) => {
        const path = new URL(r.url()).pathname;
        if (path.startsWith('/v1/')) asked.push(path);
      };
      page.on('request', onRequest);
      try {
        for (let i = 0; i < 7; i++) await page.waitForRequest((r) => new URL(r.url()).pathname === poll, WAIT);
      } finally {
        page.off('request', onRequest);
      }
      const starts = asked.flatMap((p, i) => (p === poll ? [i] : []));
      const between = starts.slice(1).map((end, k) => end - starts[k]! - 1);
      assert.ok(between.length >= 6, asked.join(' '));
      assert.ok(
        between.every((n) => n <= 1),
        `at most one request besides the account's per poll: ${asked.join(' ')}`,
      );

      assert.equal(await page.evaluate(() => (window as any).__sameDocument), true, 'no reload happened');
    });

    test('spend limits: a daily limit from the form, usage through the API fills its bar, then no limit', async () => {
      await heading(page, 'Ada Lovelace'); // the account page, still open
      const n = (x: number) => x.toLocaleString('en-US');
      const tokens = '.balance[data-denomination=tokens]';
      const today = `${tokens} [data-field=spend-day]`;
      const read = await h.request('GET', `/v1/accounts/${accountId}/balance/tokens`, { auth });
      const spent: number = read.body.data.spend.day; // what the usage of the step before took today
      assert.ok(spent > 0, read.text);
      await seeText(page, today, `Today ${n(spent)} · no limit`);
      await seeText(
        page,
        `${tokens} [data-field=spend-month]`,
        `This month ${n(read.body.data.spend.month)} · no limit`,
      );
      assert.equal(await page.locator(`${tokens} meter`).count(), 0, 'no bar without a limit');

      await page.getByRole('tab', { name: 'Spend limits' }).click();
      const form = page.getByRole('form', { name: 'Spend limits' });
      const daily = form.getByLabel('Daily limit (units per UTC day)');
      await form.getByLabel('Balance').selectOption('tokens');
      // The API's refusal (a limit past the largest safe integer), next to the field it names.
      await daily.fill('9007199254740993');
      await form.getByRole('button', { name: 'Save limits' }).click();
      await seeText(page, '.field-error', /9007199254740991/);
      const limit = spent + 100;
      await daily.fill(String(limit));
      await form.getByRole('button', { name: 'Save limits' }).click();
      await seeText(page, '[role=status]', `Limits of tokens saved: ${n(limit)} a day, no limit a month.`);
      assert.equal(await page.locator('.field-error').count(), 0);
      await seeText(page, today, `Today ${n(spent)} of ${n(limit)}`);
      const bar = page.locator(tokens).getByRole('meter', { name: /^Today/ });
      await bar.waitFor(WAIT);
      assert.deepEqual(await bar.evaluate((m: HTMLMeterElement) => [m.value, m.max]), [spent, limit]);

      // Usage through the API: the open page's bar and text follow; past the limit the API refuses it whole.
      const use = (amount: number) => [{ type: 'metered_call', cost_override: { amount, denomination: 'tokens' } }];
      const post = (amount: number) =>
        h.request('POST', `/v1/accounts/${accountId}/events`, { auth, body: use(amount) });
      assert.equal((await post(60)).status, 200);
      await seeText(page, today, `Today ${n(spent + 60)} of ${n(limit)}`);
      await page.locator(`${tokens} meter[data-spend="${spent + 60}"]`).waitFor(WAIT);
      assert.deepEqual(await bar.evaluate((m: HTMLMeterElement) => [m.value, m.max]), [spent + 60, limit]);
      const refused = await post(41);
      assert.equal(refused.status, 402, refused.text);
      assert.equal(refused.body.error.type, 'spend_limit_reached');
      assert.equal((await post(40)).status, 200, 'exactly at the limit is accepted');
      await seeText(page, today, `Today ${n(limit)} of ${n(limit)} · limit reached`);
      await seeText(page, `${tokens} .spend-reached`, 'limit reached');
      await assertAccessible(page, 'account with a spend limit and its form');
      await screenshot(page, 'account-spend-limits');

      // Emptied, the field removes the limit: the bar goes, and usage is accepted again.
      await daily.fill('');
      await form.getByRole('button', { name: 'Save limits' }).click();
      await seeText(page, '[role=status]', 'Limits of tokens saved: no limit a day, no limit a month.');
      await seeText(page, today, `Today ${n(limit)} · no limit`);
      await page.locator(`${tokens} meter`).waitFor({ ...WAIT, state: 'detached' });
      const after = await h.request('GET', `/v1/accounts/${accountId}/balance/tokens`, { auth });
      assert.deepEqual(after.body.data.limits, { daily: null, monthly: null });
      assert.equal((await post(1)).status, 200);
      await seeText(page, today, `Today ${n(limit + 1)} · no limit`);
    });

    test('credit grants: added from the form, drawn from by usage, voided after asking; the Grants page', async () => {
      await page.goto(`${h.url}/c/${companyId}/accounts/${accountId}`);
      await heading(page, 'Ada Lovelace');
      await page.getByRole('tab', { name: 'New balance' }).click();
      await page.getByLabel('Denomination').fill('credits');
      await page.getByRole('button', { name: 'Create balance' }).click();
      await seeText(page, '.balance[data-denomination=credits] [data-field=amount]', /^0$/);
      const price = { denomination: 'credits', unit_amount: '1' };
      assert.equal((await h.request('PUT', '/v1/prices/credit_call', { auth, body: price })).status, 200);
      // A grant made through the API shows on the open page.
      const bonus = { amount: 20, priority: 5, name: 'Welcome bonus' };
      const made = await h.request('POST', `/v1/accounts/${accountId}/balance/credits/grants`, { auth, body: bonus });
      assert.equal(made.status, 201);
      const table = '[data-grants=credits] tbody tr';
      await seeText(page, table, /Welcome bonus.*20 \/ 20.*active/);

      // The form: the API's refusal next to the field it names, then three grants.
      await page.getByRole('tab', { name: 'Add grant' }).click();
      const form = page.getByRole('form', { name: 'Add a grant' });
      await form.getByLabel('Balance').selectOption('credits');
      await form.getByLabel('Units').fill('100');
      await form.getByLabel('Priority').fill('10');
      await form.getByLabel('Expires at (UTC)').fill('2020-01-01T00:00');
      await form.getByLabel('Name').fill('Launch promo');
      await form.getByRole('button', { name: 'Add grant' }).click();
      await seeText(page, '.field-error', /expires_at must be after/);
      const expires = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 16);
      await form.getByLabel('Expires at (UTC)').fill(expires);
      await form.getByRole('button', { name: 'Add grant' }).click();
      await seeText(page, '[role=status]', 'Granted 100 credits (Launch promo)');
      await seeText(page, table, /Launch promo.*promotional.*10.*100 \/ 100.*active/);
      assert.equal(await form.getByLabel('Cost basis (USD cents per unit)').count(), 0, 'only for paid grants');
      await form.getByLabel('Units').fill('500');
      await form.getByLabel('Category').selectOption('paid');
      await form.getByLabel('Cost basis (USD cents per unit)').fill('2.345');
      await form.getByLabel('Name').fill('Bought pack');
      await form.getByRole('button', { name: 'Add grant' }).click();
      await seeText(page, table, /Bought pack.*paid.*2\.345¢ \/ unit.*500 \/ 500.*never.*active/);
      await form.getByLabel('Units').fill('50');
      await form.getByLabel('Name').fill('Entered twice');
      await form.getByRole('button', { name: 'Add grant' }).click();
      await seeText(page, table, /Entered twice.*50 \/ 50/);
      // Drawing order: priority, then the soonest expiry, promotional before paid.
      const names = () => page.locator(`${table} td.grant-name span`).allTextContents();
      assert.deepEqual(await names(), ['Welcome bonus', 'Launch promo', 'Entered twice', 'Bought pack']);

      // Usage through the API draws from two grants, in order; the transaction names them.
      const use = [{ type: 'credit_call', quantity: 30 }];
      assert.equal((await h.request('POST', `/v1/accounts/${accountId}/events`, { auth, body: use })).status, 200);
      await seeText(page, '[data-table=transactions] tbody tr', 'from Welcome bonus (20), Launch promo (10)');
      await seeText(page, table, /Launch promo.*90 \/ 100/);
      await seeText(
        page,
        '.balance[data-denomination=credits] [data-field=next-expiry]',
        /^90 expire on \d+ \w{3} 20\d\d/,
      );
      assert.deepEqual(await names(), ['Launch promo', 'Entered twice', 'Bought pack'], 'a used-up grant has ended');

      // Void, after a confirmation (under the table) with a reason.
      await page.getByRole('button', { name: 'Void Entered twice' }).click();
      const confirm = page.getByRole('form', { name: 'Void Entered twice' });
      await seeText(page, '.void-confirm', 'Its 50 unused credits leave the balance now.');
      await confirm.getByLabel('Reason (optional)').fill('entered twice by mistake');
      await screenshot(page, 'account-grant-void');
      await page.setViewportSize(PHONE);
      await screenshot(page, 'account-grant-void');
      await page.setViewportSize(DESKTOP);
      await confirm.getByRole('button', { name: 'Yes, void' }).click();
      await seeText(page, '[role=status]', 'Voided Entered twice (credits): 50 left');
      await seeText(
        page,
        '[data-table=transactions] tbody tr',
        /grant_void.*-50 credits.*voided from Entered twice.*entered twice by mistake/,
      );
      await page.locator(table, { hasText: 'Entered twice' }).waitFor({ ...WAIT, state: 'detached' });
      assert.deepEqual(await names(), ['Launch promo', 'Bought pack'], 'a voided grant has ended');
      await page.getByLabel('Show').selectOption('all');
      await seeText(page, table, /Entered twice.*0 \/ 50.*voided/);
      await seeText(page, table, /Welcome bonus.*0 \/ 20.*depleted/);
      await page.getByLabel('Show').selectOption('current');
      await page.locator(table, { hasText: 'Entered twice' }).waitFor({ ...WAIT, state: 'detached' });
      // Opened afresh, the page names the grants that ended before it loaded them (each asked for once).
      await page.goto(`${h.url}/c/${companyId}/accounts/${accountId}`);
      await seeText(page, '[data-table=transactions] tbody tr', 'from Welcome bonus (20), Launch promo (10)');
      await seeText(page, '[data-table=transactions] tbody tr', 'voided from Entered twice');

      // The Grants page: what expires in 30 days, and the paid units outstanding valued at their cost basis.
      await page.getByRole('link', { name: 'Grants' }).click();
      await heading(page, 'Grants');
      await seeText(
        page,
        '[data-table=expiring] tbody tr',
        new RegExp(`Launch promo.*90 / 100.*credits.*${accountId}`),
      );
      assert.equal(await page.locator('[data-table=expiring] tbody tr', { hasText: 'Bought pack' }).count(), 0);
      const credits = page.locator('[data-table=outstanding] tr[data-denomination=credits]');
      await seeText(page, '[data-table=outstanding] tr[data-denomination=credits] [data-field=units]', /^500$/);
      // 500 units × 2.345 cents = 1,172.5 cents, exactly.
      assert.equal(await credits.locator('[data-field=value]').textContent(), '$11.725');
      await seeText(page, '[data-table=outstanding] tr[data-denomination=tokens]', 'tokens'); // the refills are paid
      await seeText(page, '.outstanding', 'active paid grants');
      pages.push(['grants', `/c/${companyId}/grants`]);
    });

    test('usage page: chart, table and CSV of the company usage', async () => {
      await page.getByRole('link', { name: 'Usage' }).click();
      await heading(page, 'Usage');
      await seeText(page, '[data-table=usage] tbody tr', 'api_call');
      assert.ok((await page.locator('.chart [data-points]').count()) >= 1);
      const href = (await page.getByRole('link', { name: 'Download CSV' }).getAttribute('href')) ?? '';
      const csv = decodeURIComponent(href.split(',').slice(1).join(','));
      assert.match(csv, /^day,type,denomination,events,quantity,cost\r\n/);
      assert.match(csv, /,api_call,tokens,6,90,90\r\n/);
      pages.push(['usage', `/c/${companyId}/usage`]);
    });

    test('plans and prices: validation next to the field, then create', async () => {
      await page.getByRole('link', { name: 'Plans & prices' }).click();
      await heading(page, 'Plans & prices');
      await seeText(page, '[data-table=prices] tbody tr', 'api_call');
      const plan = page.locator('form', { hasText: 'Included balances' });
      await plan.getByLabel('Name', { exact: true }).fill('Starter');
      await plan.getByLabel('Monthly fee (USD cents)').fill('ten dollars');
      await plan.getByRole('button', { name: 'Create plan' }).click();
      await seeText(page, '.field-error', 'A whole number of cents');
      await seeText(page, '.field-error', 'Letters, digits');
      await plan.getByLabel('Monthly fee (USD cents)').fill('1000');
      await plan.getByLabel('Denomination', { exact: true }).fill('tokens');
      await plan.getByLabel('Included units').fill('10000');
      await plan.getByLabel('Overage (cents/unit)').fill('2');
      await plan.getByRole('button', { name: 'Create plan' }).click();
      await seeText(page, '[data-table=plans] tbody tr', 'Starter');
      await page.locator('form', { hasText: 'Set a price' }).getByLabel('Event type').fill('export');
      await page.locator('form', { hasText: 'Set a price' }).getByLabel('Denomination').fill('tokens');
      await page.getByLabel('Unit amount').fill('not a number');
      await page.getByRole('button', { name: 'Save price' }).click();
      await seeText(page, '.field-error, [role=alert]', /unit_amount|decimal|number/i);
      pages.push(['plans', `/c/${companyId}/plans`]);
    });

    test('prices: a graduated price from the tier table, its C(q), and what a use would cost', async () => {
      const form = page.locator('form', { hasText: 'Set a price' });
      await form.getByLabel('Event type').fill('tokens_in');
      await form.getByLabel('Denomination').fill('tokens');
      await form.getByLabel('Model').selectOption('graduated');
      await form.getByLabel('Tier 1 up to').fill('100');
      await form.getByLabel('Tier 1 unit amount').fill('0.5');
      await form.getByRole('button', { name: 'Add a tier' }).click();
      await form.getByRole('button', { name: 'Add a tier' }).click();
      await form.getByRole('button', { name: 'Remove tier 3' }).click();
      await form.getByLabel('Tier 2 up to').fill('1000');
      await form.getByLabel('Tier 2 unit amount').fill('0.25');
      await form.getByLabel('Tier 2 flat amount').fill('10');
      await form.getByLabel('Tier 3 unit amount').fill('0.1');
      // C(101) = 50 + 0.25 + 10 = 60.25, rounded up; C(2000) = 50 + 225 + 10 + 100 = 385.
      await seeText(page, '[data-table=price-curve] tbody tr', /^101\s*61$/);
      await seeText(page, '[data-table=price-curve] tbody tr', /^2,000\s*385$/);
      await screenshot(page, 'prices-graduated'); // the tier table and its curve, for people to look at
      await form.getByRole('button', { name: 'Save price' }).click();
      await seeText(page, '[data-table=prices] tbody tr', /tokens_in\s*graduated/);
      const price = await h.request('GET', '/v1/prices/tokens_in', { auth });
      assert.deepEqual(price.body.data.tiers, [
        { up_to: 100, unit_amount: '0.5', flat_amount: null },
        { up_to: 1000, unit_amount: '0.25', flat_amount: '10' },
        { up_to: null, unit_amount: '0.1', flat_amount: null },
      ]);

      const check = page.locator('form', { hasText: 'What would this cost?' });
      await check.getByLabel('Account').fill(accountId);
      await check.getByLabel('Event type').fill('tokens_in');
      await check.getByLabel('Quantity').fill('101');
      await check.getByRole('button', { name: 'Check' }).click();
      await seeText(page, '[data-check-result]', 'Cost: 61 tokens');
      await seeText(page, '[data-check-result]', 'The account can afford it.');
      await check.getByLabel('Quantity').fill('100000');
      await check.getByRole('button', { name: 'Check' }).click();
      await seeText(page, '[data-check-result]', 'The account cannot afford it.');
      const events = await h.request('GET', `/v1/accounts/${accountId}/events?type=tokens_in`, { auth });
      assert.deepEqual(events.body.data, [], 'the check wrote nothing');
    });

    test('webhooks: subscribe (secret once), see the delivery in the log, retry it, delete', async () => {
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await heading(page, 'Webhooks');
      await page.getByLabel('URL').fill(hooks.url);
      await page.getByRole('button', { name: 'Subscribe' }).click();
      const secret = (await page.locator('[data-secret]').textContent({ timeout: WAIT.timeout })) ?? '';
      assert.match(secret, /^whsec_/);
      await page.getByRole('button', { name: 'I have saved it' }).click();
      assert.equal(await page.locator('[data-secret]').count(), 0);
      const adj = { amount: 5, reason: 'webhook test' };
      const r = await h.request('POST', `/v1/accounts/${accountId}/balance/tokens/adjustments`, { auth, body: adj });
      assert.equal(r.status, 200);
      await runJobs(h, auth);
      await seeText(page, '[data-table=deliveries] tbody tr', 'delivered');
      await page.locator('[data-attempts="1"]').first().waitFor(WAIT);
      await page.getByRole('button', { name: 'Retry now' }).first().click();
      await page.locator('[data-attempts="2"]').first().waitFor(WAIT);
      await seeText(page, '[data-attempts="2"] li', '(retry)');
      assert.ok(hooks.requests.length >= 2, 'the receiver got the delivery and the retry');
      pages.push(['webhooks', `/c/${companyId}/webhooks`]);
    });

    test('another company’s account in the URL is not found; a wrong password says so', async () => {
      const other = await signUpCompany(h, 'Other Co');
      const theirs = await h.request('POST', `/v1/companies/${other.companyId}/accounts`, {
        auth: other.auth,
        body: { name: 'Not yours' },
      });
      await page.goto(`${h.url}/c/${companyId}/accounts/${theirs.body.data.account_id}`);
      await heading(page, 'Account not found');
      await page.goto(`${h.url}/c/${other.companyId}/accounts`);
      await heading(page, 'Company not found');

      const stranger = await browser.newContext({ viewport: DESKTOP });
      const p = await stranger.newPage();
      await p.goto(`${h.url}/login`);
      await p.getByLabel('Email').fill(email);
      await p.getByLabel('Password').fill('not the password');
      await p.getByRole('button', { name: 'Log in' }).click();
      await seeText(p, '[role=alert]', 'The email or the password is wrong');
      await stranger.close();
    });

    // The pages are the same on either database: checked once, with the first dialect's server.
    const checkPages = dialect === HTTP_DIALECTS[0] ? test : null;
    checkPages?.('every page passes axe-core, fits a phone, and has screenshots at both widths', async () => {
      const all: [string, string][] = [
        ...pages,
        ['login', '/login'],
        ['signup', '/signup'],
        ['forgot-password', '/forgot-password'],
        ['reset-password', '/reset-password?token=x'],
        ['new-company', '/companies/new'],
      ];
      const loggedOut = new Set(['login', 'signup', 'forgot-password', 'reset-password']);
      const anonymous = await browser.newContext({ viewport: DESKTOP });
      const tabs = { in: await context.newPage(), out: await anonymous.newPage() };
      for (const viewport of [DESKTOP, PHONE]) {
        for (const p of Object.values(tabs)) await p.setViewportSize(viewport);
        for (const [name, path] of all) {
          const p = loggedOut.has(name) ? tabs.out : tabs.in;
          await p.goto(h.url + path);
          await p.locator('main h1').first().waitFor(WAIT);
          await p.waitForFunction(() => !document.querySelector('[aria-busy="true"]'), undefined, {
            ...WAIT,
            polling: 100,
          });
          if (name === 'account') await p.locator('[data-points]').first().waitFor(WAIT);
          if (viewport === DESKTOP) await assertAccessible(p, name);
          else {
            const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
            assert.ok(overflow <= 1, `${name} fits the phone width (overflow ${overflow}px)`);
          }
          await screenshot(p, name);
        }
      }
      await tabs.in.close();
      await anonymous.close();
    });

    test('a forged change without the CSRF token changes nothing; after log-out the cookie is dead', async () => {
      const cookie = (await context.cookies()).find((c) => c.name === 'billing_session');
      assert.ok(cookie, 'the session cookie is set');
      assert.equal(cookie.httpOnly, true);
      const headers = { cookie: `billing_session=${cookie.value}`, 'billing-company': companyId };
      const before = await h.request('GET', `/v1/accounts/${accountId}/balance/tokens`, { headers });
      assert.equal(before.status, 200);
      const forged = await h.request('POST', `/v1/accounts/${accountId}/balance/tokens/adjustments`, {
        headers,
        body: { amount: 1000 },
      });
      assert.equal(forged.status, 403);
      const same = await h.request('GET', `/v1/accounts/${accountId}/balance/tokens`, { headers });
      assert.equal(same.body.data.amount, before.body.data.amount, 'nothing changed');

      const p = await context.newPage();
      await p.goto(`${h.url}/c/${companyId}/accounts`);
      await heading(p, 'Accounts');
      await p.getByRole('button', { name: 'Log out' }).click();
      await heading(p, 'Log in');
      const after = await h.request('GET', '/v1/sessions/current', { headers });
      assert.equal(after.status, 401);
      assert.equal((await h.request('GET', `/v1/accounts/${accountId}`, { headers })).status, 401);
      await p.goto(`${h.url}/c/${companyId}/accounts`);
      await heading(p, 'Log in');
      await h.audit();
    });
  });
}
