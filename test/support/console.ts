/**
 * What the console's tests share: a built console (built once, under a lock, when console/ or what it bundles,
 * sdk/typescript/src and the server's pure src/domain and src/lib, changed since the last build), Debian's
 * Chromium driven by playwright-core, an axe-core check and screenshots.
 */
import assert from 'node:assert/strict';
import { test as nodeTest } from 'node:test';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { type Browser, type BrowserContext, type Locator, type Page, chromium } from 'playwright-core';

const CONSOLE = resolve('console');
/** The API client the console bundles from its sources. */
const SDK_SOURCES = resolve('sdk', 'typescript', 'src');
/** The server's pure modules the console bundles too (the prices page computes C(q) with them). */
const SHARED_SOURCES = [resolve('src', 'domain'), resolve('src', 'lib')];
/** The build's pages: the console and the customer portal (each its own entry of console/vite.config.ts). */
const DIST_PAGES = ['index.html', 'portal.html'].map((name) => join(CONSOLE, 'dist', name));
const LOCK = join(CONSOLE, '.build-lock');
export const SCREENSHOTS = resolve('test-results', 'screenshots');
export const CHROMIUM = '/usr/bin/chromium';

function newestSource(dir: string): number {
  let newest = 0;
  for (const name of readdirSync(dir)) {
    if (name === 'dist' || name === 'node_modules' || name.startsWith('.')) continue;
    const p = join(dir, name);
    const s = statSync(p);
    newest = Math.max(newest, s.isDirectory() ? newestSource(p) : s.mtimeMs);
  }
  return newest;
}

/** When the build was made: its oldest page (0 when one is missing, e.g. a build from before the portal's page). */
function builtAt(): number {
  return Math.min(...DIST_PAGES.map((page) => statSync(page, { throwIfNoEntry: false })?.mtimeMs ?? 0));
}

/**
 * Builds console/dist unless each of its pages (the console's and the portal's) is newer than every console source
 * (one builder at a time across processes).
 */
export async function ensureConsoleBuilt(): Promise<void> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      // A lock older than 3 minutes was left by a killed build.
      if (Date.now() - statSync(LOCK, { throwIfNoEntry: false })!.mtimeMs > 180_000)
        rmSync(LOCK, { force: true, recursive: true });
      if (Date.now() > deadline) throw new Error('timed out waiting for another console build');
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    if (builtAt() > Math.max(newestSource(CONSOLE), newestSource(SDK_SOURCES), ...SHARED_SOURCES.map(newestSource)))
      return;
    await promisify(execFile)(
      process.execPath,
      [resolve('node_modules/vite/bin/vite.js'), 'build', 'console', '--logLevel', 'warn'],
      {
        timeout: 170_000,
      },
    );
  } finally {
    rmSync(LOCK, { force: true, recursive: true });
  }
}

/** Chromium with a fresh profile: playwright gives every launch its own new --user-data-dir (and removes it). */
export async function launchBrowser(): Promise<{ browser: Browser; close(): Promise<void> }> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    browser,
    async close() {
      await browser.close();
    },
  };
}

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export async function newContext(browser: Browser, viewport = DESKTOP): Promise<BrowserContext> {
  return browser.newContext({ viewport, locale: 'en-US', timezoneId: 'UTC' });
}

let axeSource: string | undefined;

/** axe-core in the page: no serious or critical violation (the message lists them). */
export async function assertAccessible(page: Page, name: string): Promise<void> {
  axeSource ??= readFileSync(resolve('node_modules/axe-core/axe.min.js'), 'utf8');
  // Evaluated through the DevTools protocol, which the page's Content-Security-Policy does not govern.
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as any).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations
      .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
      .map((v: any) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n: any) => n.target.join(' ')).join('; ')})`);
  });
  assert.deepEqual(violations, [], `accessibility of ${name}`);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const { width, height } = page.viewportSize()!;
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}x${height}.png`), fullPage: true });
}

/** Long enough for a slow shared machine; the live updates themselves are measured by bench/console.ts. */
export const WAIT = { timeout: 15_000 };

export async function seeText(page: Page | Locator, selector: string, text: string | RegExp): Promise<void> {
  await page.locator(selector, { hasText: text }).first().waitFor(WAIT);
}

export async function heading(page: Page, text: string | RegExp): Promise<void> {
  await page.getByRole('heading', { level: 1, name: text }).waitFor(WAIT);
}

/** The message a form control is described by (aria-describedby): its hint and its error, as the person hears it. */
export async function describedBy(control: Locator): Promise<string> {
  const ids = ((await control.getAttribute('aria-describedby')) ?? '').split(' ').filter(Boolean);
  const page = control.page();
  const texts = await Promise.all(ids.map((id) => page.locator(`[id="${id}"]`).textContent()));
  return texts.join(' ');
}

/** Waits until a locator's text is exactly `text` (the page polls: it gets there within a second or two). */
export async function hasText(locator: Locator, text: string): Promise<void> {
  await locator.filter({ hasText: new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }).waitFor(WAIT);
}

export async function fitsPhone(page: Page, name: string): Promise<void> {
  await page.setViewportSize(PHONE);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `${name} fits the phone width (overflow ${overflow}px)`);
  await screenshot(page, name);
  await page.setViewportSize(DESKTOP);
  await screenshot(page, name);
}

/**
 * A browser of its own, logged in to the console at `url` as the user `co` (email and password), on the Accounts
 * page: its context (timeouts of WAIT), page and what closes the browser.
 */
export async function loggedIn(
  url: string,
  co: { email: string; password: string },
): Promise<{ browser: Browser; context: BrowserContext; page: Page; close(): Promise<void> }> {
  const { browser, close } = await launchBrowser();
  const context = await newContext(browser);
  context.setDefaultTimeout(WAIT.timeout);
  const page = await context.newPage();
  await page.goto(`${url}/login`);
  await heading(page, 'Log in');
  await page.getByLabel('Email').fill(co.email);
  await page.getByLabel('Password').fill(co.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await heading(page, 'Accounts');
  return { browser, context, page, close };
}

/**
 * `test` for steps that build on each other: after a failure the rest fail at once instead of timing out one by
 * one, and the failing step leaves a screenshot of `page()` in test-results/failure-<name>.png.
 */
export function steps(name: string, page: () => Page | undefined): (title: string, fn: () => Promise<void>) => void {
  let broken = '';
  return (title, fn) =>
    nodeTest(title, async () => {
      if (broken) throw new Error(`not run: an earlier step failed (${broken})`);
      try {
        await fn();
      } catch (err) {
        broken = title;
        await page()
          ?.screenshot({ path: `test-results/failure-${name}.png`, fullPage: true })
          .catch(() => {});
        throw err;
      }
    });
}
