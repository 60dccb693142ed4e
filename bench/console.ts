/**
 * `npm run bench:console`: the web console measured in the headless Chromium the tests use, against the
 * real server (SQLite, in-process): the JavaScript and CSS transferred on a first load (compressed, as
 * sent), the time until an account page with 1,000 transactions is interactive (its transactions table
 * and its chart drawn), how many requests the open account page makes per second once it has loaded (and
 * what the browser logs to its console meanwhile) and while usage keeps arriving, and how long a change
 * made through the API takes to show on the open page. Figures are reported, never asserted.
 */
import { assertOk, median } from './console-lib.js';
import { DESKTOP, ensureConsoleBuilt, launchBrowser, newContext } from '../test/support/console.js';
import { signUpCompany, startHarness } from '../test/support/harness.js';

const RUNS = 5;
/** How long the open account page is watched for its requests. */
const WATCH_MS = 10_000;
/** How often a usage event arrives on the busy account. */
const BUSY_EVERY_MS = 250;

await ensureConsoleBuilt();
const h = await startHarness('sqlite');
const { browser, close } = await launchBrowser();
try {
  const co = await signUpCompany(h, 'Bench Co');
  const acc = await h.request('POST', `/v1/companies/${co.companyId}/accounts`, {
    auth: co.auth,
    body: { name: 'Big' },
  });
  assertOk(acc);
  const accountId: string = acc.body.data.account_id;
  assertOk(
    await h.request('POST', `/v1/accounts/${accountId}/balance/tokens`, { auth: co.auth, body: { amount: 1e6 } }),
  );
  const events = Array.from({ length: 999 }, (_, i) => ({
    type: 'api_call',
    cost_override: { amount: 1 + (i % 7), denomination: 'tokens' },
  }));
  assertOk(await h.request('POST', `/v1/accounts/${accountId}/events`, { auth: co.auth, body: events }));
  const transactions = 1000; // the grant and 999 usage transactions

  // First load: a fresh browser context (empty cache), the log-in page.
  const fresh = await newContext(browser, DESKTOP);
  const first = await fresh.newPage();
  await first.goto(`${h.url}/login`);
  await first.getByRole('heading', { name: 'Log in' }).waitFor();
  const transfer = await first.evaluate(() =>
    performance
      .getEntriesByType('resource')
      .map((e) => e as PerformanceResourceTiming)
      .filter((e) => /\.(js|css)$/.test(new URL(e.name).pathname))
      .map((e) => ({
        name: new URL(e.name).pathname,
        transfer: e.transferSize,
        body: e.encodedBodySize,
        raw: e.decodedBodySize,
      })),
  );
  await fresh.close();

  // Log in once; every measured load then opens the account page anew in the same session.
  const ctx = await newContext(browser, DESKTOP);
  const page = await ctx.newPage();
  await page.goto(`${h.url}/login`);
  await page.getByLabel('Email').fill(co.email);
  await page.getByLabel('Password').fill(co.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Accounts' }).waitFor();
  const accountUrl = `${h.url}/c/${co.companyId}/accounts/${accountId}`;
  const ready: number[] = [];
  const complete: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = Date.now();
    await page.goto(accountUrl);
    // Interactive: the balances, the transactions table and the chart are on the page and respond.
    await page.locator('[data-table=transactions] tbody tr').first().waitFor({ timeout: 30_000 });
    await page.locator('[data-denomination=tokens] [data-field=amount]').waitFor();
    await page.locator('.chart [data-points]').first().waitFor();
    ready.push(Date.now() - t0);
    await page.locator(`[data-points="${transactions}"]`).waitFor({ timeout: 30_000 });
    complete.push(Date.now() - t0);
  }

  // Idle: the loaded account page, left open; every request the page makes and every console message.
  const requests: string[] = [];
  const logged: string[] = [];
  const onRequest = (r: { url(): string }) => requests.push(new URL(r.url()).pathname);
  const onConsole = (m: { type(): string; text(): string }) => logged.push(`${m.type()}: ${m.text()}`);
  page.on('console', onConsole);
  await page.goto(accountUrl);
  await page.locator(`[data-points="${transactions}"]`).waitFor({ timeout: 30_000 });
  page.on('request', onRequest);
  await page.waitForTimeout(WATCH_MS);
  page.off('request', onRequest);
  page.off('console', onConsole);
  const byPath = new Map<string, number>();
  for (const p of requests) byPath.set(p, (byPath.get(p) ?? 0) + 1);

  // Live: an adjustment through the API, until the page shows the new amount, then the new transaction.
  const live: number[] = [];
  const liveRow: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const r = await h.request('POST', `/v1/accounts/${accountId}/balance/tokens/adjustments`, {
      auth: co.auth,
      body: { amount: 1, reason: `bench ${i}` },
    });
    assertOk(r);
    const t0 = Date.now();
    const amount = new Intl.NumberFormat('en-US').format(r.body.data.amount);
    await page.locator('[data-denomination=tokens] [data-field=amount]', { hasText: amount }).waitFor();
    live.push(Date.now() - t0);
    await page.locator('[data-table=transactions] tbody tr', { hasText: `bench ${i}` }).waitFor();
    liveRow.push(Date.now() - t0);
  }

  // Busy: a usage event through the API every BUSY_EVERY_MS while the page is open; the requests the page makes
  // meanwhile, and how long after the last event its transaction shows.
  const busy: string[] = [];
  const onBusy = (r: { url(): string }) => busy.push(new URL(r.url()).pathname);
  page.on('request', onBusy);
  const busyStart = Date.now();
  let sent = 0;
  while (Date.now() - busyStart < WATCH_MS) {
    const body = [{ type: 'api_call', id: `busy-${sent}`, cost_override: { amount: 1, denomination: 'tokens' } }];
    assertOk(await h.request('POST', `/v1/accounts/${accountId}/events`, { auth: co.auth, body }));
    sent++;
    await new Promise((r) => setTimeout(r, BUSY_EVERY_MS));
  }
  const busySeconds = (Date.now() - busyStart) / 1000;
  page.off('request', onBusy);
  const lastSent = Date.now();
  await page.locator('[data-table=transactions] tbody tr', { hasText: `event busy-${sent - 1}` }).waitFor();
  const catchUp = Date.now() - lastSent;
  const busyByPath = new Map<string, number>();
  for (const p of busy) busyByPath.set(p, (busyByPath.get(p) ?? 0) + 1);

  const total = (k: 'transfer' | 'body' | 'raw') => transfer.reduce((s, e) => s + e[k], 0);
  console.log('console first load (JS + CSS):');
  for (const e of transfer) console.log(`  ${e.name}: ${e.body} bytes sent compressed (${e.raw} uncompressed)`);
  console.log(
    `  total: ${(total('body') / 1024).toFixed(1)} KiB compressed bodies, ` +
      `${(total('transfer') / 1024).toFixed(1)} KiB with headers, ${(total('raw') / 1024).toFixed(1)} KiB uncompressed`,
  );
  console.log(
    `account page with ${transactions} transactions, navigation until table and chart are drawn (${RUNS} runs):`,
  );
  console.log(`  interactive (balances, table, chart drawn): median ${median(ready)} ms, all: ${ready.join(', ')} ms`);
  console.log(`  chart holds all ${transactions}: median ${median(complete)} ms, all: ${complete.join(', ')} ms`);
  console.log(`open account page, loaded, watched for ${WATCH_MS / 1000} s:`);
  console.log(`  ${(requests.length / (WATCH_MS / 1000)).toFixed(1)} requests/s (${requests.length} requests)`);
  for (const [p, n] of [...byPath].sort()) console.log(`    ${n} × ${p}`);
  console.log(`  console messages from its load on: ${logged.length === 0 ? 'none' : logged.length}`);
  for (const m of logged) console.log(`    ${m}`);
  console.log(`open account page while a usage event arrives every ${BUSY_EVERY_MS} ms (${sent} events):`);
  console.log(`  ${(busy.length / busySeconds).toFixed(1)} requests/s (${busy.length} requests in ${busySeconds} s)`);
  for (const [p, n] of [...busyByPath].sort()) console.log(`    ${n} × ${p}`);
  console.log(`  the last event's transaction in the table ${catchUp} ms after it was sent`);
  console.log(`change through the API until it shows on the open page (${RUNS} runs, 1 s polling):`);
  console.log(`  balance: median ${median(live)} ms, all: ${live.join(', ')} ms`);
  console.log(`  its transaction in the table: median ${median(liveRow)} ms, all: ${liveRow.join(', ')} ms`);
} finally {
  await close();
  await h.close();
}
