// Guarantee: a person manages features and entitlements from the console in a real browser (Debian's Chromium), on
// either database: features of each kind are created on the Features page (a metered one without its event type is
// refused next to that field); a plan is created with features (a config one with its JSON value) and its features
// are replaced later (the API's refusal of one entry shown next to that entry's field); an account on the plan shows
// its entitlements from the plan, an override set on its Features tab (off, or a config value) changes them and one
// removed gives the plan back the say; a feature still named is refused deletion in words, a free one is deleted.
// Also: the Grants page names each account, linking to its page; the price check picks its account by name; no form
// says "Event kind". The pages pass axe-core, and the new ones fit a phone's width.
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
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

type Ent = { feature: string; kind: string; has_access: boolean; value: unknown; source: string | null };

for (const dialect of HTTP_DIALECTS) {
  describe(`console features and entitlements in the browser (${dialect})`, () => {
    const test = steps(`features-${dialect}`, () => page);
    let h: Harness;
    let close: () => Promise<void>;
    let context: BrowserContext;
    let page: Page;
    let companyId = '';
    let auth: [string, string];
    let planId = '';
    let accountId = '';
    const accountPath = () => `/c/${companyId}/accounts/${accountId}`;
    const nav = (name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name });
    const featureRow = (key: string) => page.locator(`[data-table=features] tr[data-feature="${key}"]`);
    const entRow = (key: string) => page.locator(`.entitlement-list li[data-feature="${key}"]`);
    const get = async (path: string) => {
      const r = await h.request('GET', path, { auth });
      assert.equal(r.status, 200, `${path}: ${r.text}`);
      return r.body;
    };
    const post = async (path: string, body: unknown) => {
      const r = await h.request('POST', path, { auth, body });
      assert.ok(r.status === 200 || r.status === 201, `${path}: ${r.text}`);
      return r.body;
    };
    /** The account's entitlements through the API, in a few words each. */
    const entitlements = async () =>
      Object.fromEntries(
        ((await get(`/v1/accounts/${accountId}/entitlements`)).data as Ent[]).map((e) => [
          e.feature,
          { has_access: e.has_access, value: e.value, source: e.source },
        ]),
      );
    /** The account page's Features tab, opened afresh. */
    const openFeaturesTab = async () => {
      await page.goto(h.url + accountPath());
      await heading(page, 'Ada Lovelace');
      await page.getByRole('tab', { name: 'Features' }).click();
      await page.locator('.entitlement-list').waitFor(WAIT);
    };

    before(async () => {
      await ensureConsoleBuilt();
      h = await startHarness(dialect);
      const co = await signUpCompany(h, 'Featureful Co');
      companyId = co.companyId;
      auth = co.auth;
      ({ context, page, close } = await loggedIn(h.url, co));
    });
    after(async () => {
      await close?.();
      await h?.close();
    });

    test('the Features page: a metered feature without its event type is refused there; one of each kind', async () => {
      await nav('Features').click();
      await heading(page, 'Features');
      await seeText(page, '.empty', 'No features yet');
      const form = page.getByRole('form', { name: 'Create or change a feature' });
      assert.equal(await form.getByLabel('Event type').count(), 0, 'no event type for a boolean feature');

      // Metered without its event type: the API's message, next to the event type.
      await form.getByLabel('Key').fill('gpt4');
      await form.getByLabel('Kind').selectOption('metered');
      await form.getByLabel('Name (optional)').fill('GPT-4');
      await form.getByRole('button', { name: 'Save feature' }).click();
      await seeText(form, '.field-error', 'a metered feature needs the event_type it meters');
      const eventType = form.getByLabel('Event type');
      assert.equal(await eventType.getAttribute('aria-invalid'), 'true');
      assert.match(await describedBy(eventType), /a metered feature needs the event_type it meters/);
      assert.equal(await form.locator('.field-error').count(), 1);
      assert.deepEqual((await get('/v1/features')).data, [], 'nothing was created');
      // A key the API cannot take is said before asking.
      await form.getByLabel('Key').fill('not a key!');
      await form.getByRole('button', { name: 'Save feature' }).click();
      await seeText(form, '.field-error', 'Letters, digits and _ . : - (1–64).');
      await assertAccessible(page, 'the Features page with a refusal');

      await form.getByLabel('Key').fill('gpt4');
      await eventType.fill('gpt4_tokens');
      await form.getByRole('button', { name: 'Save feature' }).click();
      await seeText(page, '[role=status]', 'Created the feature “gpt4” (metered, event type gpt4_tokens).');
      assert.equal(await form.locator('.field-error').count(), 0);
      await form.getByLabel('Key').fill('sso');
      await form.getByLabel('Kind').selectOption('boolean');
      assert.equal(await form.getByLabel('Event type').count(), 0, 'the event type leaves with metered');
      await form.getByLabel('Name (optional)').fill('Single sign-on');
      await form.getByRole('button', { name: 'Save feature' }).click();
      await seeText(page, '[role=status]', 'Created the feature “sso” (boolean).');
      await form.getByLabel('Key').fill('seats');
      await form.getByLabel('Kind').selectOption('config');
      await form.getByRole('button', { name: 'Save feature' }).click();
      await seeText(page, '[role=status]', 'Created the feature “seats” (config).');

      // Listed by key, each with its kind, name, event type and no plan yet.
      // The list is read again after each creation: wait for the last one's row.
      for (const key of ['gpt4', 'seats', 'sso']) await featureRow(key).waitFor(WAIT);
      assert.deepEqual(await page.locator('[data-table=features] tbody tr code').allTextContents(), [
        'gpt4',
        'seats',
        'sso',
      ]);
      assert.equal(await featureRow('gpt4').locator('[data-field=kind]').textContent(), 'metered');
      assert.equal(await featureRow('gpt4').locator('[data-field=name]').textContent(), 'GPT-4');
      assert.equal(await featureRow('gpt4').locator('[data-field=event_type]').textContent(), 'gpt4_tokens');
      assert.equal(await featureRow('seats').locator('[data-field=name]').textContent(), '—');
      assert.equal(await featureRow('sso').locator('[data-field=plans]').textContent(), 'none');
      const made = (await get('/v1/features')).data as { key: string; kind: string; event_type: string | null }[];
      assert.deepEqual(
        made.map((f) => [f.key, f.kind, f.event_type]),
        [
          ['gpt4', 'metered', 'gpt4_tokens'],
          ['seats', 'config', null],
          ['sso', 'boolean', null],
        ],
      );

      // Changing one: the form is filled with it; its kind cannot change (the API's 409, next to the kind).
      await featureRow('sso').getByRole('button', { name: 'Change sso' }).click();
      const change = page.getByRole('form', { name: 'Change “sso”' });
      assert.equal(await change.getByLabel('Name (optional)').inputValue(), 'Single sign-on');
      await change.getByLabel('Kind').selectOption('config');
      await change.getByRole('button', { name: 'Save feature' }).click();
      await seeText(change, '.field-error', 'feature "sso" is boolean; its kind cannot change');
      await change.getByLabel('Kind').selectOption('boolean');
      await change.getByLabel('Name (optional)').fill('SSO');
      await change.getByRole('button', { name: 'Save feature' }).click();
      await seeText(page, '[role=status]', 'Changed the feature “sso” (boolean).');
      await hasText(featureRow('sso').locator('[data-field=name]'), 'SSO');
      await assertAccessible(page, 'the Features page');
      await fitsPhone(page, 'features');
    });

    test('the plan editor: a plan created with features, a config one with its JSON value', async () => {
      await nav('Plans & prices').click();
      await heading(page, 'Plans & prices');
      const plan = page.locator('form', { hasText: 'Included balances' });
      await plan.getByLabel('Name', { exact: true }).fill('Pro');
      await plan.getByLabel('Monthly fee (USD cents)').fill('1000');
      await plan.getByLabel('Denomination', { exact: true }).fill('tokens');
      await plan.getByLabel('Included units').fill('1000');
      await plan.getByLabel('Overage (cents/unit)').fill('1');
      await plan.getByRole('checkbox', { name: /^sso/ }).check();
      assert.equal(await plan.getByLabel('Value of seats (JSON)').count(), 0, 'a value only once seats is chosen');
      await plan.getByRole('checkbox', { name: /^seats/ }).check();
      const value = plan.getByLabel('Value of seats (JSON)');
      await value.fill('{max_seats: 5}');
      await plan.getByRole('button', { name: 'Create plan' }).click();
      await seeText(plan, '.field-error', 'Not valid JSON');
      assert.match(await describedBy(value), /Not valid JSON/);
      const before = await get(`/v1/companies/${companyId}/plans`);
      assert.deepEqual(before.data, [], 'nothing was created');
      await value.fill('{"max_seats": 5}');
      await plan.getByRole('button', { name: 'Create plan' }).click();
      await seeText(page, '[role=status]', /Plan Pro created/);
      const row = page.locator('[data-table=plans] tbody tr', { hasText: 'Pro' });
      await hasText(row.locator('[data-field=features]'), 'seats = {"max_seats":5}, sso');
      const plans = (await get(`/v1/companies/${companyId}/plans`)).data;
      planId = plans[0].plan_id;
      assert.deepEqual(plans[0].features, [
        { feature: 'seats', value: { max_seats: 5 } },
        { feature: 'sso', value: null },
      ]);

      // The Features page says which plans include each feature.
      await nav('Features').click();
      await heading(page, 'Features');
      await hasText(featureRow('sso').locator('[data-field=plans]'), 'Pro');
      await hasText(featureRow('seats').locator('[data-field=plans]'), 'Pro: {"max_seats":5}');
      await hasText(featureRow('gpt4').locator('[data-field=plans]'), 'none');
    });

    test('an account on the plan: entitlements from the plan; an override off, then removed', async () => {
      const acc = await post(`/v1/companies/${companyId}/accounts`, { name: 'Ada Lovelace', plan_id: planId });
      accountId = acc.data.account_id;
      await post(`/v1/companies/${companyId}/accounts`, { name: 'Grace Hopper' });
      await openFeaturesTab();
      await hasText(entRow('sso').locator('[data-field=source]'), 'plan');
      assert.equal(await entRow('sso').getAttribute('data-access'), 'yes');
      assert.equal(await entRow('sso').locator('[data-field=access]').textContent(), 'Yes');
      assert.equal(await entRow('seats').locator('[data-field=value]').textContent(), '{"max_seats":5}');
      assert.equal(await entRow('seats').locator('[data-field=source]').textContent(), 'plan');
      assert.equal(await entRow('gpt4').getAttribute('data-access'), 'no');
      assert.equal(await entRow('gpt4').locator('[data-field=source]').textContent(), '—');
      assert.equal(await entRow('gpt4').locator('[data-field=kind]').textContent(), 'metered');

      // sso off for this account, until a day of 2099.
      const form = page.getByRole('form', { name: 'Set an override' });
      await form.getByLabel('Feature').selectOption('sso');
      await form.getByLabel('Access').selectOption('off');
      assert.equal(await form.getByLabel('Value (JSON, optional)').count(), 0, 'no value for a feature taken away');
      await form.getByLabel('Ends at (UTC, optional)').fill('2099-01-31T09:30');
      await form.getByRole('button', { name: 'Set override' }).click();
      await seeText(
        page,
        '[role=status]',
        'Override set: sso is off, from the override until 2099-01-31 09:30:00 UTC.',
      );
      await hasText(entRow('sso').locator('[data-field=source]'), 'override');
      assert.equal(await entRow('sso').getAttribute('data-access'), 'no');
      assert.equal(await entRow('sso').locator('[data-field=access]').textContent(), 'No');
      assert.equal(await entRow('sso').locator('[data-field=expires_at]').textContent(), '2099-01-31 09:30:00 UTC');
      const sso = (await get(`/v1/accounts/${accountId}/entitlements`)).data.find((e: Ent) => e.feature === 'sso');
      assert.deepEqual(sso, {
        feature: 'sso',
        kind: 'boolean',
        has_access: false,
        value: null,
        source: 'override',
        expires_at: '2099-01-31T09:30:00.000Z',
      });

      // seats on with a value of its own: bad JSON is said before asking, then it wins over the plan's.
      await form.getByLabel('Feature').selectOption('seats');
      await form.getByLabel('Access').selectOption('on');
      const value = form.getByLabel('Value (JSON, optional)');
      await value.fill('ten');
      await form.getByRole('button', { name: 'Set override' }).click();
      await seeText(form, '.field-error', 'Not valid JSON');
      assert.match(await describedBy(value), /Not valid JSON/);
      await value.fill('{"max_seats": 10}');
      await form.getByRole('button', { name: 'Set override' }).click();
      await seeText(page, '[role=status]', 'Override set: seats is on (value {"max_seats":10}), from the override.');
      await hasText(entRow('seats').locator('[data-field=value]'), '{"max_seats":10}');
      assert.equal(await entRow('seats').locator('[data-field=source]').textContent(), 'override');
      await assertAccessible(page, 'the account page’s Features tab');
      await fitsPhone(page, 'account-features');

      // The sso override removed after asking: the plan decides again.
      await entRow('sso').getByRole('button', { name: 'Remove override' }).click();
      await seeText(entRow('sso'), '.confirm', 'Remove the override of “sso”? The plan decides again.');
      await entRow('sso').getByRole('button', { name: 'Cancel' }).click();
      assert.equal((await entitlements()).sso?.source, 'override', 'cancelled: nothing removed');
      await entRow('sso').getByRole('button', { name: 'Remove override' }).click();
      await entRow('sso').getByRole('button', { name: 'Yes, remove' }).click();
      await seeText(page, '[role=status]', 'Removed the override: sso is on, from the plan.');
      await hasText(entRow('sso').locator('[data-field=source]'), 'plan');
      assert.equal(await entRow('sso').getAttribute('data-access'), 'yes');
      assert.equal(await entRow('sso').locator('[data-field=expires_at]').textContent(), '—');
      assert.equal(await entRow('sso').getByRole('button', { name: 'Remove override' }).count(), 0);
      assert.deepEqual(await entitlements(), {
        gpt4: { has_access: false, value: null, source: null },
        seats: { has_access: true, value: { max_seats: 10 }, source: 'override' },
        sso: { has_access: true, value: null, source: 'plan' },
      });
    });

    test('a plan’s features replaced: a refused entry said next to it; the account’s entitlements follow', async () => {
      // The account's tab stays open in a second tab: it follows the plan without a reload.
      const watcher = await context.newPage();
      await watcher.goto(h.url + accountPath());
      await heading(watcher, 'Ada Lovelace');
      await watcher.getByRole('tab', { name: 'Features' }).click();
      const watched = (key: string) => watcher.locator(`.entitlement-list li[data-feature="${key}"]`);
      await hasText(watched('sso').locator('[data-field=source]'), 'plan');

      await nav('Plans & prices').click();
      await heading(page, 'Plans & prices');
      await page.getByRole('button', { name: 'Edit features of Pro' }).click();
      const editor = page.getByRole('form', { name: 'Features of “Pro”' });
      const box = (key: string) => editor.getByRole('checkbox', { name: new RegExp(`^${key}`) });
      assert.equal(await box('sso').isChecked(), true);
      assert.equal(await box('seats').isChecked(), true);
      assert.equal(await box('gpt4').isChecked(), false);
      const value = editor.getByLabel('Value of seats (JSON)');
      assert.equal(await value.inputValue(), '{"max_seats":5}');
      await box('sso').uncheck();
      await box('gpt4').check();
      // More than 4 KB of JSON: the API refuses features[1].value, said next to seats' value.
      await value.fill(JSON.stringify({ note: 'x'.repeat(5000) }));
      await editor.getByRole('button', { name: 'Save features' }).click();
      await seeText(editor, '.field-error', 'a config value is at most 4096 bytes of JSON');
      assert.equal(await value.getAttribute('aria-invalid'), 'true');
      assert.match(await describedBy(value), /a config value is at most 4096 bytes of JSON/);
      assert.equal(await editor.locator('.field-error').count(), 1);
      assert.deepEqual((await get(`/v1/plans/${planId}`)).data.features, [
        { feature: 'seats', value: { max_seats: 5 } },
        { feature: 'sso', value: null },
      ]);
      await assertAccessible(page, 'the plan features editor with a refusal');

      await value.fill('{"max_seats": 8}');
      await editor.getByRole('button', { name: 'Save features' }).click();
      await seeText(editor, '[role=status]', 'Saved: Pro now includes gpt4, seats.');
      assert.equal(await editor.locator('.field-error').count(), 0);
      const row = page.locator('[data-table=plans] tbody tr', { hasText: 'Pro' });
      await hasText(row.locator('[data-field=features]'), 'gpt4, seats = {"max_seats":8}');
      assert.deepEqual((await get(`/v1/plans/${planId}`)).data.features, [
        { feature: 'gpt4', value: null },
        { feature: 'seats', value: { max_seats: 8 } },
      ]);

      // The account: gpt4 now from the plan, sso gone; seats still its own override's value.
      await hasText(watched('gpt4').locator('[data-field=source]'), 'plan');
      assert.equal(await watched('gpt4').getAttribute('data-access'), 'yes');
      await hasText(watched('sso').locator('[data-field=source]'), '—');
      assert.equal(await watched('sso').getAttribute('data-access'), 'no');
      assert.equal(await watched('seats').locator('[data-field=value]').textContent(), '{"max_seats":10}');
      await watcher.close();
      assert.deepEqual(await entitlements(), {
        gpt4: { has_access: true, value: null, source: 'plan' },
        seats: { has_access: true, value: { max_seats: 10 }, source: 'override' },
        sso: { has_access: false, value: null, source: null },
      });
    });

    test('delete: a feature still named is refused in words; a free one is deleted after asking', async () => {
      await nav('Features').click();
      await heading(page, 'Features');
      const seats = featureRow('seats');
      await seats.getByRole('button', { name: 'Delete' }).click();
      await seeText(seats, '.confirm', 'Delete the feature “seats”?');
      await seats.getByRole('button', { name: 'Yes, delete' }).click();
      await seeText(seats, '[role=alert]', 'feature "seats" is named by a plan or an override; remove it there first');
      assert.equal((await h.request('GET', '/v1/features/seats', { auth })).status, 200, 'still there');

      const sso = featureRow('sso');
      await sso.getByRole('button', { name: 'Delete' }).click();
      await sso.getByRole('button', { name: 'Cancel' }).click();
      assert.equal((await h.request('GET', '/v1/features/sso', { auth })).status, 200, 'cancelled: still there');
      await sso.getByRole('button', { name: 'Delete' }).click();
      await sso.getByRole('button', { name: 'Yes, delete' }).click();
      await sso.waitFor({ ...WAIT, state: 'detached' });
      assert.equal((await h.request('GET', '/v1/features/sso', { auth })).status, 404);
      await featureRow('seats').waitFor(WAIT);
      await assertAccessible(page, 'the Features page with a refused deletion');
    });

    test('the Grants page names each account, linking to its page', async () => {
      const expires_at = new Date(Date.now() + 10 * 86_400_000).toISOString();
      await post(`/v1/accounts/${accountId}/balance/tokens/grants`, { amount: 50, name: 'Trial', expires_at });
      await nav('Grants').click();
      await heading(page, 'Grants');
      const row = page.locator('[data-table=expiring] tbody tr', { hasText: 'Trial' });
      await row.waitFor(WAIT);
      const link = row.getByRole('link', { name: /Ada Lovelace/ });
      await link.waitFor(WAIT);
      assert.equal(await link.getAttribute('href'), accountPath());
      assert.equal(await link.locator('code').textContent(), accountId, 'the id, under the name');
      await assertAccessible(page, 'the Grants page');
      await link.click();
      await heading(page, 'Ada Lovelace');
    });

    test('the price check picks its account by name; no form says “Event kind”', async () => {
      const price = await h.request('PUT', '/v1/prices/api_call', {
        auth,
        body: { denomination: 'tokens', unit_amount: '2' },
      });
      assert.equal(price.status, 200, price.text);
      await nav('Plans & prices').click();
      await heading(page, 'Plans & prices');
      const check = page.locator('form', { hasText: 'What would this cost?' });
      await check.getByLabel('Event type').fill('api_call');
      await check.getByLabel('Quantity').fill('5');

      // "o" is in both names: the check asks which.
      await check.getByLabel('Account').fill('o');
      const matches = check.locator('[data-account-matches] button');
      await matches.filter({ hasText: 'Grace Hopper' }).waitFor(WAIT);
      await matches.filter({ hasText: 'Ada Lovelace' }).waitFor(WAIT);
      await check.getByRole('button', { name: 'Check' }).click();
      await seeText(check, '.field-error', 'More than one account matches “o”: choose one in the list.');

      // Typing part of a name lists the account; choosing it is what the check is for.
      await check.getByLabel('Account').fill('lovel');
      await matches.filter({ hasText: 'Grace Hopper' }).waitFor({ ...WAIT, state: 'detached' });
      await check.getByRole('button', { name: /Ada Lovelace/ }).click();
      await seeText(check, `[data-account-chosen="${accountId}"]`, 'Chosen: Ada Lovelace');
      assert.equal(await check.getByLabel('Account').inputValue(), 'Ada Lovelace');
      await assertAccessible(page, 'the price check with an account chosen');
      await check.getByRole('button', { name: 'Check' }).click();
      await seeText(page, '[data-check-result]', 'For Ada Lovelace:');
      await seeText(page, '[data-check-result]', 'Cost: 10 tokens');
      await seeText(page, '[data-check-result]', 'The account can afford it.');
      assert.equal(await check.locator('.field-error').count(), 0);
      const events = await get(`/v1/accounts/${accountId}/events?type=api_call`);
      assert.deepEqual(events.data, [], 'the check wrote nothing');

      // "Event type" in every form that asks for one; "Event kind" nowhere.
      const labels = async () => (await page.locator('label').allTextContents()).join(' | ');
      assert.doesNotMatch(await labels(), /event kind/i);
      assert.equal(await page.getByLabel('Event type', { exact: true }).count(), 2, 'the price form and the check');
      await nav('Features').click();
      await heading(page, 'Features');
      await page.getByLabel('Kind').selectOption('metered');
      await page.getByLabel('Event type', { exact: true }).waitFor(WAIT);
      assert.doesNotMatch(await labels(), /event kind/i);
      await page.goto(h.url + accountPath());
      await heading(page, 'Ada Lovelace');
      await page.getByRole('tab', { name: 'Alerts' }).click();
      await page.getByLabel('Alert when').selectOption('spend');
      await page.getByLabel('Event type (optional)').waitFor(WAIT);
      assert.doesNotMatch(await labels(), /event kind/i);
      assert.equal(await page.getByText(/event kind/i).count(), 0);
      await h.audit();
    });
  });
}
