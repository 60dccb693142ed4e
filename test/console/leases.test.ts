// Guarantee: a person sees and closes an account's open leases from the console in a real browser (Debian's
// Chromium), on either database: the account page's Leases section says what a lease is while there is none; leases
// opened through the API, and an event drawing from one, show on the open page without a reload, newest first, each
// with its amount, used and remaining units and its expiry (in how long, and when), and the section asks nothing
// more while nothing changes; closing one after asking (a cancelled question closes nothing) takes it off the list
// and its remaining units out of the balance's pending; closing one that expired meanwhile shows the server's 409
// message. The page passes axe-core and fits a phone.
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import {
  assertAccessible,
  ensureConsoleBuilt,
  fitsPhone,
  hasText,
  heading,
  loggedIn,
  seeText,
  steps,
  WAIT,
} from '../support/console.js';
import { HTTP_DIALECTS, type Harness, signUpCompany, startHarness } from '../support/harness.js';

/** The console's time format (format.ts `when`). */
const shown = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;

interface LeaseJson {
  lease_id: string;
  amount: number;
  used: number;
  remaining: number;
  released: number;
  status: string;
  expires_at: string;
}

for (const dialect of HTTP_DIALECTS) {
  describe(`console leases in the browser (${dialect})`, () => {
    const test = steps(`leases-${dialect}`, () => page);
    let h: Harness;
    let close: () => Promise<void>;
    let page: Page;
    let companyId = '';
    let auth: [string, string];
    let accountId = '';
    /** The first lease opened (drawn from, then closed here) and the second (it expires, then closing it is 409). */
    let drawn: LeaseJson;
    let idle: LeaseJson;
    const section = () => page.getByRole('region', { name: 'Leases' });
    const row = (id: string) => page.locator(`[data-table=leases] tr[data-lease="${id}"]`);
    const field = (id: string, name: string) => row(id).locator(`[data-field=${name}]`);
    const pending = () => page.locator('[data-denomination=tokens] [data-field=pending]');
    const call = async (method: string, path: string, body?: unknown) => {
      const r = await h.request(method, path, body === undefined ? { auth } : { auth, body });
      assert.ok(r.status === 200 || r.status === 201, `${method} ${path}: ${r.text}`);
      return r.body;
    };
    const lease = async (id: string): Promise<LeaseJson> => (await call('GET', `/v1/leases/${id}`)).data;
    const balance = async (): Promise<{ amount: number; pending: number }> =>
      (await call('GET', `/v1/accounts/${accountId}/balance/tokens`)).data;

    before(async () => {
      await ensureConsoleBuilt();
      h = await startHarness(dialect);
      const co = await signUpCompany(h, 'Leasing Co');
      companyId = co.companyId;
      auth = co.auth;
      accountId = (await call('POST', `/v1/companies/${companyId}/accounts`, { name: 'Grace Hopper' })).data.account_id;
      await call('POST', `/v1/accounts/${accountId}/balance/tokens`, { amount: 1000 });
      ({ page, close } = await loggedIn(h.url, co));
    });
    after(async () => {
      await close?.();
      await h?.close();
    });

    test('no lease yet: the section says what a lease is', async () => {
      await page.goto(`${h.url}/c/${companyId}/accounts/${accountId}`);
      await heading(page, 'Grace Hopper');
      await section().getByRole('heading', { level: 2, name: 'Leases' }).waitFor(WAIT);
      await seeText(section(), 'p', 'No open leases. A lease holds units of a balance for a few minutes');
      assert.equal(await page.locator('[data-table=leases]').count(), 0);
      await assertAccessible(page, 'the account page without leases');
    });

    test('two leases opened and one drawn from through the API: listed live with their figures', async () => {
      drawn = (await call('POST', `/v1/accounts/${accountId}/leases`, { denomination: 'tokens', amount: 300 })).data;
      const body = { denomination: 'tokens', amount: 200, ttl_seconds: 600 };
      idle = (await call('POST', `/v1/accounts/${accountId}/leases`, body)).data;
      const event = { type: 'call', cost_override: { amount: 120, denomination: 'tokens' }, lease_id: drawn.lease_id };
      await call('POST', `/v1/accounts/${accountId}/events`, { events: [event] });
      drawn = await lease(drawn.lease_id);
      assert.deepEqual([drawn.amount, drawn.used, drawn.remaining, drawn.status], [300, 120, 180, 'open']);
      const b = await balance();
      assert.deepEqual([b.amount, b.pending], [880, 380], 'the event took 120 of the lease: 180 + 200 still held');

      // The open page shows them without a reload, newest first.
      await hasText(field(drawn.lease_id, 'used'), '120');
      await row(idle.lease_id).waitFor(WAIT);
      const order = await page
        .locator('[data-table=leases] tbody tr')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-lease')));
      assert.deepEqual(order, [idle.lease_id, drawn.lease_id]);
      const figures = async (id: string) =>
        Promise.all(['denomination', 'amount', 'used', 'remaining'].map((f) => field(id, f).textContent()));
      assert.deepEqual(await figures(drawn.lease_id), ['tokens', '300', '120', '180']);
      assert.deepEqual(await figures(idle.lease_id), ['tokens', '200', '0', '200']);
      // The expiry in how long (the default 300 s, and 600 s) and when, as the console writes times.
      await seeText(field(drawn.lease_id, 'expires'), 'time', /^in [1-5] min$|^in \d+ s$/);
      await seeText(field(idle.lease_id, 'expires'), 'time', /^in ([1-9]|10) min$/);
      assert.equal(await field(drawn.lease_id, 'expires').locator('time').getAttribute('datetime'), drawn.expires_at);
      await seeText(field(drawn.lease_id, 'expires'), 'div', shown(drawn.expires_at));
      await seeText(field(idle.lease_id, 'expires'), 'div', shown(idle.expires_at));
      await hasText(pending(), '380');
      await assertAccessible(page, 'the account page with two open leases');
      await fitsPhone(page, 'account-leases');

      // Left open with nothing changing, the section asks for nothing more: the page's poll reads the account.
      const poll = `/v1/accounts/${accountId}`;
      const asked: string[] = [];
      const onRequest = (r: { url(): string }) => asked.push(new URL(r.url()).pathname);
      page.on('request', onRequest);
      try {
        for (let i = 0; i < 3; i++) await page.waitForRequest((r) => new URL(r.url()).pathname === poll, WAIT);
      } finally {
        page.off('request', onRequest);
      }
      assert.deepEqual(
        asked.filter((p) => p.endsWith('/leases')),
        [],
        asked.join(' '),
      );
    });

    test('close after asking: gone from the list, its remaining out of pending', async () => {
      const r = row(drawn.lease_id);
      await r.getByRole('button', { name: 'Close lease' }).click();
      await seeText(
        r,
        '.confirm',
        `Close ${drawn.lease_id}? The 180 tokens it still holds go back to the balance now.`,
      );
      await r.getByRole('button', { name: 'Cancel' }).click();
      assert.equal((await lease(drawn.lease_id)).status, 'open', 'cancelled: nothing closed');

      await r.getByRole('button', { name: 'Close lease' }).click();
      await assertAccessible(page, 'the close question');
      await r.getByRole('button', { name: 'Yes, close' }).click();
      await seeText(page, '[role=status]', `Closed the lease ${drawn.lease_id}: 180 tokens went back to the balance.`);
      await r.waitFor({ ...WAIT, state: 'detached' });
      await row(idle.lease_id).waitFor(WAIT);
      await hasText(pending(), '200');
      const closed = await lease(drawn.lease_id);
      assert.deepEqual([closed.status, closed.used, closed.released, closed.remaining], ['closed', 120, 180, 0]);
      const b = await balance();
      assert.deepEqual([b.amount, b.pending], [880, 200]);
      await h.audit();
    });

    test('closing a lease that expired meanwhile: the server’s 409 message, and the list empties', async () => {
      const r = row(idle.lease_id);
      await r.getByRole('button', { name: 'Close lease' }).click();
      // The close request waits while the server's test clock passes the lease's expiry, then goes on as it was.
      await page.route('**/v1/leases/*/close', async (route) => {
        await call('POST', '/v1/test_clock/advance', { seconds: 601 });
        await route.continue();
      });
      await r.getByRole('button', { name: 'Yes, close' }).click();
      await seeText(section(), '[role=alert]', `lease ${idle.lease_id} expired at ${idle.expires_at}`);
      await seeText(section(), 'p', 'No open leases.');
      await hasText(pending(), '0');
      await page.unroute('**/v1/leases/*/close');
      const expired = await lease(idle.lease_id);
      assert.deepEqual([expired.status, expired.released], ['expired', 200]);
      await assertAccessible(page, 'the refused close');
      await h.audit();
    });
  });
}
