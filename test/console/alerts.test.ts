// Guarantee: a person manages an account's alerts from the console in a real browser (Debian's Chromium), on
// either database: an alert added in the account page's Alerts tab is listed OK; the API's refusal of a bad one is
// shown next to the field it names; usage and adjustments made through the API trigger and resolve them on the
// open tab without a reload, the company's Alerts page lists the triggered ones (each linking to its account), and
// a deleted alert is gone from the page and from the API. The pages pass axe-core and fit a phone's width.
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import {
  DESKTOP,
  PHONE,
  assertAccessible,
  ensureConsoleBuilt,
  screenshot,
  WAIT,
  seeText,
  heading,
  describedBy,
  loggedIn,
  steps,
} from '../support/console.js';
import { HTTP_DIALECTS, type Harness, signUpCompany, startHarness } from '../support/harness.js';

/** The console's time format (format.ts `when`). */
const shown = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;

for (const dialect of HTTP_DIALECTS) {
  describe(`console alerts in the browser (${dialect})`, () => {
    const test = steps(`alerts-${dialect}`, () => page);
    let h: Harness;
    let close: () => Promise<void>;
    let page: Page;
    let companyId = '';
    let auth: [string, string];
    let accountId = '';
    const accountPath = () => `/c/${companyId}/accounts/${accountId}`;
    const item = (name: string) => page.locator('.alert-list li', { hasText: name });
    const row = (name: string) => page.locator('[data-table=triggered-alerts] tbody tr', { hasText: name });
    const post = async (path: string, body: unknown) => {
      const r = await h.request('POST', path, { auth, body });
      assert.ok(r.status === 200 || r.status === 201, `${path}: ${r.text}`);
      return r.body;
    };
    const apiAlerts = async () => {
      const r = await h.request('GET', `/v1/accounts/${accountId}/alerts`, { auth });
      assert.equal(r.status, 200, r.text);
      return r.body.data as { alert_id: string; name: string; status: string; [k: string]: unknown }[];
    };
    const byName = async (name: string) => (await apiAlerts()).find((a) => a.name === name)!;

    before(async () => {
      await ensureConsoleBuilt();
      h = await startHarness(dialect);
      const co = await signUpCompany(h, 'Alerting Co');
      companyId = co.companyId;
      auth = co.auth;
      // The server's test clock stands still: moved to a noon first, the day's spend window cannot end mid-test.
      const noon = `${new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)}T12:00:00.000Z`;
      const moved = await h.request('POST', '/v1/test_clock/advance', { auth, body: { to: noon } });
      assert.equal(moved.status, 200, moved.text);
      const acc = await post(`/v1/companies/${companyId}/accounts`, { name: 'Ada Lovelace' });
      accountId = acc.data.account_id;
      await post(`/v1/accounts/${accountId}/balance/tokens`, { amount: 1000 });
      const price = await h.request('PUT', '/v1/prices/api_call', {
        auth,
        body: { denomination: 'tokens', unit_amount: '1' },
      });
      assert.equal(price.status, 200, price.text);
      ({ page, close } = await loggedIn(h.url, co));
    });
    after(async () => {
      await close?.();
      await h?.close();
    });

    test('the Alerts tab: the API’s refusals next to their fields, then two alerts added and listed OK', async () => {
      await page.goto(h.url + accountPath());
      await heading(page, 'Ada Lovelace');
      await page.getByRole('tab', { name: 'Alerts' }).click();
      await seeText(page, '#action-panel', 'No alerts on this account yet');
      const form = page.getByRole('form', { name: 'Add an alert' });
      assert.equal(await form.getByLabel('Window').count(), 0, 'no window for an available alert');
      assert.equal(await form.getByLabel('Event type (optional)').count(), 0);

      // A spend alert without a window: the API's message, next to the window.
      await form.getByLabel('Balance').selectOption('tokens');
      await form.getByLabel('Alert when').selectOption('spend');
      await form.getByLabel('Threshold (units)').fill('100');
      await form.getByRole('button', { name: 'Add alert' }).click();
      await seeText(form, '.field-error', 'a spend alert needs window: day or month');
      assert.match(await describedBy(form.getByLabel('Window')), /a spend alert needs window: day or month/);
      assert.equal(await form.getByLabel('Threshold (units)').getAttribute('aria-invalid'), null);

      // Then a threshold of 0: the message moves to the threshold.
      await form.getByLabel('Window').selectOption('day');
      await form.getByLabel('Threshold (units)').fill('0');
      await form.getByRole('button', { name: 'Add alert' }).click();
      await seeText(form, '.field-error', 'a spend alert needs a threshold of at least 1');
      const threshold = form.getByLabel('Threshold (units)');
      assert.equal(await threshold.getAttribute('aria-invalid'), 'true');
      assert.match(await describedBy(threshold), /a spend alert needs a threshold of at least 1/);
      assert.equal(await form.locator('.field-error').count(), 1, 'the window is no longer said to be wrong');
      assert.deepEqual(await apiAlerts(), [], 'nothing was created');
      await assertAccessible(page, 'the Alerts tab with a refusal');

      // A spend alert of one event type per UTC day, then an available alert.
      await threshold.fill('30');
      await form.getByLabel('Event type (optional)').fill('api_call');
      await form.getByLabel('Name (optional)').fill('Daily API calls');
      await form.getByRole('button', { name: 'Add alert' }).click();
      await seeText(
        page,
        '[role=status]',
        'Alert “Daily API calls” created on tokens: spend per UTC day (api_call only) at 30 or more; OK now.',
      );
      assert.equal(await form.locator('.field-error').count(), 0);
      await form.getByLabel('Alert when').selectOption('available');
      await form.getByLabel('Threshold (units)').fill('500');
      await form.getByLabel('Name (optional)').fill('Low tokens');
      await form.getByRole('button', { name: 'Add alert' }).click();
      await seeText(page, '[role=status]', 'Alert “Low tokens” created on tokens: available below 500; OK now.');

      const low = item('Low tokens');
      await low.waitFor(WAIT);
      await low.locator('[data-status=ok]', { hasText: 'OK' }).waitFor(WAIT);
      assert.equal(await low.locator('[data-field=denomination]').textContent(), 'tokens');
      assert.equal(await low.locator('[data-field=metric]').textContent(), 'Available');
      assert.equal(await low.locator('[data-field=threshold]').textContent(), 'below 500');
      assert.equal(await low.locator('[data-field=value]').textContent(), '1,000 available');
      assert.equal(await low.locator('[data-field=crossing]').textContent(), 'Never crossed');
      const daily = item('Daily API calls');
      await daily.locator('[data-status=ok]').waitFor(WAIT);
      assert.equal(await daily.locator('[data-field=metric]').textContent(), 'Spend per UTC day (api_call only)');
      assert.equal(await daily.locator('[data-field=threshold]').textContent(), 'at 30 or more');
      assert.equal(await daily.locator('[data-field=value]').textContent(), '0 spent this day');
      // Newest first, as the API lists them.
      assert.deepEqual(await page.locator('.alert-list li .alert-title strong').allTextContents(), [
        'Low tokens',
        'Daily API calls',
      ]);

      const made = await apiAlerts();
      assert.deepEqual(
        made.map(({ name, denomination, metric, threshold, window, event_type, status }) => {
          return { name, denomination, metric, threshold, window, event_type, status };
        }),
        [
          {
            name: 'Low tokens',
            denomination: 'tokens',
            metric: 'available',
            threshold: 500,
            window: null,
            event_type: null,
            status: 'ok',
          },
          {
            name: 'Daily API calls',
            denomination: 'tokens',
            metric: 'spend',
            threshold: 30,
            window: 'day',
            event_type: 'api_call',
            status: 'ok',
          },
        ],
      );
    });

    test('usage and an adjustment through the API trigger them: the open tab, a reload, the Alerts page', async () => {
      // 40 api_call units: the day's spend of the type passes 30; available stays above 500.
      await post(`/v1/accounts/${accountId}/events`, [{ type: 'api_call', quantity: 40 }]);
      const daily = item('Daily API calls');
      await daily.locator('[data-status=triggered]', { hasText: 'Triggered' }).waitFor(WAIT);
      await seeText(daily, '[data-field=value]', /^40 spent this day$/);
      const dailyNow = await byName('Daily API calls');
      assert.equal(dailyNow.status, 'triggered');
      await seeText(daily, '[data-crossing=triggered]', `Triggered ${shown(dailyNow.triggered_at as string)}`);
      assert.equal(await item('Low tokens').getAttribute('data-status'), 'ok');
      await seeText(item('Low tokens'), '[data-field=value]', /^960 available$/);

      // An adjustment takes available below 500.
      await post(`/v1/accounts/${accountId}/balance/tokens/adjustments`, { amount: -500, reason: 'alert test' });
      const low = item('Low tokens');
      await low.locator('[data-status=triggered]').waitFor(WAIT);
      await seeText(low, '[data-field=value]', /^460 available$/);
      await seeText(low, '[data-crossing=triggered]', /^Triggered \d{4}-\d\d-\d\d [\d:]{8} UTC$/);

      // Read afresh, the page says the same.
      await page.reload();
      await heading(page, 'Ada Lovelace');
      await page.getByRole('tab', { name: 'Alerts' }).click();
      await item('Low tokens').locator('[data-status=triggered]').waitFor(WAIT);
      await item('Daily API calls').locator('[data-status=triggered]').waitFor(WAIT);
      await screenshot(page, 'account-alerts');

      // The company's Alerts page, from the navigation: both, each linking to the account.
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Alerts' }).click();
      await heading(page, 'Alerts');
      await seeText(
        page,
        '[data-table=triggered-alerts] tbody tr',
        /Ada Lovelace.*Low tokens.*tokens: available below 500/,
      );
      await seeText(page, '[data-table=triggered-alerts] tbody tr', 'Daily API calls');
      assert.equal(await page.locator('[data-table=triggered-alerts] tbody tr').count(), 2);
      assert.equal(await row('Low tokens').locator('[data-status=triggered]').textContent(), 'Triggered');
      await seeText(row('Low tokens'), 'td', /^460 available$/);
      const link = row('Low tokens').getByRole('link', { name: 'Ada Lovelace' });
      assert.equal(await link.getAttribute('href'), accountPath());
      await assertAccessible(page, 'the Alerts page');
      await page.setViewportSize(PHONE);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 1, `the Alerts page fits the phone width (overflow ${overflow}px)`);
      await screenshot(page, 'alerts');
      await page.setViewportSize(DESKTOP);
      await screenshot(page, 'alerts');

      // Back above 500 (a minute later on the test clock): it leaves the open page; the other stays.
      const clock = await h.request('POST', '/v1/test_clock/advance', { auth, body: { seconds: 60 } });
      assert.equal(clock.status, 200, clock.text);
      await post(`/v1/accounts/${accountId}/balance/tokens/adjustments`, { amount: 600, reason: 'top-up' });
      await row('Low tokens').waitFor({ ...WAIT, state: 'detached' });
      assert.equal(await page.locator('[data-table=triggered-alerts] tbody tr').count(), 1);
      await row('Daily API calls').waitFor(WAIT);
      const after = await h.request('GET', '/v1/alerts', { auth });
      assert.deepEqual(
        after.body.data.map((a: { name: string }) => a.name),
        ['Daily API calls'],
      );

      // Its link opens the account; the resolved alert reads OK, with when it was resolved.
      await row('Daily API calls').getByRole('link', { name: 'Ada Lovelace' }).click();
      await heading(page, 'Ada Lovelace');
      await page.getByRole('tab', { name: 'Alerts' }).click();
      const resolved = await byName('Low tokens');
      assert.equal(resolved.status, 'ok');
      assert.ok((resolved.resolved_at as string) > (resolved.triggered_at as string), JSON.stringify(resolved));
      await item('Low tokens').locator('[data-status=ok]').waitFor(WAIT);
      await seeText(
        item('Low tokens'),
        '[data-crossing=resolved]',
        `Resolved ${shown(resolved.resolved_at as string)}`,
      );
      await seeText(item('Low tokens'), '[data-field=value]', /^1,060 available$/);
      await assertAccessible(page, 'the Alerts tab with a triggered and a resolved alert');
      await page.setViewportSize(PHONE);
      const tabOverflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(tabOverflow <= 1, `the Alerts tab fits the phone width (overflow ${tabOverflow}px)`);
      await screenshot(page, 'account-alerts');
      await page.setViewportSize(DESKTOP);
    });

    test('delete after asking: gone from the tab and from the API; the other alert stays', async () => {
      const low = await byName('Low tokens');
      const item0 = item('Low tokens');
      await item0.getByRole('button', { name: 'Delete' }).click();
      await seeText(item0, '.confirm', 'Delete “Low tokens”? No notification is sent.');
      await item0.getByRole('button', { name: 'Cancel' }).click();
      assert.equal((await apiAlerts()).length, 2, 'cancelled: nothing deleted');
      await item0.getByRole('button', { name: 'Delete' }).click();
      await item0.getByRole('button', { name: 'Yes, delete' }).click();
      await seeText(page, '[role=status]', 'Deleted the alert “Low tokens”.');
      await item('Low tokens').waitFor({ ...WAIT, state: 'detached' });
      await item('Daily API calls').waitFor(WAIT);
      assert.equal((await h.request('GET', `/v1/alerts/${low.alert_id}`, { auth })).status, 404);
      assert.deepEqual(
        (await apiAlerts()).map((a) => a.name),
        ['Daily API calls'],
      );

      // The last one too: the tab says there are none.
      await item('Daily API calls').getByRole('button', { name: 'Delete' }).click();
      await item('Daily API calls').getByRole('button', { name: 'Yes, delete' }).click();
      await seeText(page, '#action-panel', 'No alerts on this account yet');
      assert.deepEqual(await apiAlerts(), []);
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Alerts' }).click();
      await heading(page, 'Alerts');
      await seeText(page, '.empty', 'No alert is triggered');
      await h.audit();
    });
  });
}
