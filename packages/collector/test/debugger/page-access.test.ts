// The live page's sign-in and its admin action in real headless Chromium: a collector on every
// address shows a sign-in form, sets a session cookie, then the page streams; "Send again" shows the
// collector's answer on the page when the token does not allow it, instead of a browser dialog.
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Analytics } from 'batched-analytics';
import { CHROMIUM_SKIP, launchChromium } from '../../../../test/helpers/chromium.js';
import { type Collector, startCollector, stopAll, tempDir, writeConfig } from '../../../../test/helpers/collector.js';
import { type Loopback, startLoopback } from '../../../../test/helpers/loopback.js';

const ADMIN = 'admin-token-0123456789';
const READER = 'reader-token-0123456789';

describe.skipIf(CHROMIUM_SKIP !== undefined)(`live page sign-in in Chromium${CHROMIUM_SKIP ? ` skipped: ${CHROMIUM_SKIP}` : ''}`, () => {
  const temp = tempDir();
  let hook: Loopback;
  let exposed: Collector;
  let local: Collector;
  let browser: BrowserContext;
  let closeBrowser: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    hook = await startLoopback();
    const sources = [{ name: 'web', writeKey: 'wk_web', destinations: { Webhooks: { webhooks: [{ url: `${hook.url}/in` }] } } }];
    ({ browser, close: closeBrowser } = await launchChromium());
    // Each its own start, so that one refused (an older collector without `readToken`) fails only its own tests.
    [exposed, local] = await Promise.all([
      startCollector(['--config', writeConfig(temp.dir, { adminToken: ADMIN, readToken: READER, sources }, 'exposed.json'), '--host', '0.0.0.0', '--port', '0', '--data-dir', `${temp.dir}/exposed`]).catch(() => undefined!),
      startCollector(['--config', writeConfig(temp.dir, { sources }, 'local.json'), '--port', '0', '--data-dir', `${temp.dir}/local`]),
    ]);
  }, 60_000);

  afterAll(async () => {
    await closeBrowser?.();
    await stopAll();
    await hook?.close();
    temp.remove();
  });

  /** The page on 127.0.0.1 and the collector's port: a client that reaches the port. */
  const pageUrl = (collector: Collector) => `http://127.0.0.1:${new URL(collector.url).port}/`;

  async function send(collector: Collector, event: string): Promise<void> {
    const analytics = new Analytics('wk_web', { endpoint: pageUrl(collector).slice(0, -1) });
    analytics.track({ userId: 'u1', event });
    expect(await analytics.close()).toMatchObject({ delivered: 1 });
  }

  async function signIn(page: Page, token: string): Promise<void> {
    expect(exposed, 'the collector on 0.0.0.0 started').toBeDefined();
    await page.goto(pageUrl(exposed));
    await page.fill('input[name="token"]', token);
    await page.click('button[type="submit"]');
  }

  it('asks for the token with a form, refuses a wrong one on the page, then signs in with a cookie and streams', async () => {
    expect(exposed, 'the collector on 0.0.0.0 started').toBeDefined();
    await browser.clearCookies();
    const page = await browser.newPage();
    await send(exposed, 'Before Sign-in');
    await page.goto(pageUrl(exposed));
    expect(await page.locator('#events').count()).toBe(0);
    expect(await page.content()).not.toContain('Before Sign-in');
    await signIn(page, 'wrong-token-0123456789');
    await expect.poll(() => page.locator('#sign-in-error').textContent()).toMatch(/not a token/);

    await signIn(page, ADMIN);
    await expect.poll(() => page.locator('#state').getAttribute('data-state')).toBe('open');
    await expect.poll(() => page.locator('#events tr', { hasText: 'Before Sign-in' }).count()).toBe(1);
    await send(exposed, 'After Sign-in');
    await expect.poll(() => page.locator('#events tr', { hasText: 'After Sign-in' }).count()).toBe(1);

    const [cookie] = await browser.cookies(pageUrl(exposed));
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', secure: false });
    expect(cookie!.value).not.toContain(ADMIN);
    expect(await page.evaluate(() => document.cookie)).toBe('');

    // Signed in with the admin token, "Send again" works with the cookie alone.
    await page.locator('#events tr', { hasText: 'After Sign-in' }).click();
    await page.click('#replay');
    await expect.poll(() => page.locator('#replay-result').textContent()).toMatch(/queued as event/);
    await page.close();
  });

  it('signed in with the read token, "Send again" shows why it is refused', async () => {
    await browser.clearCookies();
    const page = await browser.newPage();
    await signIn(page, READER);
    await page.locator('#events tr', { hasText: 'Before Sign-in' }).click();
    await page.click('#replay');
    await expect.poll(() => page.locator('#replay-result').textContent(), { timeout: 3_000 }).toMatch(/adminToken/);
    await page.close();
  });

  it('without an adminToken in the config, "Send again" shows the collector\'s message instead of hanging on a dialog', async () => {
    const page = await browser.newPage();
    await send(local, 'Local Event');
    await page.goto(pageUrl(local));
    await page.locator('#events tr', { hasText: 'Local Event' }).click();
    await page.click('#replay');
    await expect.poll(() => page.locator('#replay-result').textContent(), { timeout: 3_000 }).toMatch(/adminToken/);
    await page.close();
  });
});
