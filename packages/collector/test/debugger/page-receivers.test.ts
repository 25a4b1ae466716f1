// The live page's "Failing receivers" in real headless Chromium: a disabled webhook URL shows with
// an Enable button (which needs the admin token, as the page's other changes), the alert log shows
// what was raised, and enabling from the page delivers what was kept.
import type { Page } from 'playwright-core';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Analytics } from 'batched-analytics';
import { CHROMIUM_SKIP, launchChromium } from '../../../../test/helpers/chromium.js';
import { type Collector, startCollector, stopAll, tempDir, writeConfig } from '../../../../test/helpers/collector.js';
import { type Loopback, startLoopback } from '../../../../test/helpers/loopback.js';

const temp = tempDir();
afterEach(stopAll);
afterAll(() => temp.remove());

describe.skipIf(CHROMIUM_SKIP !== undefined)(`live page: failing receivers in Chromium${CHROMIUM_SKIP ? ` skipped: ${CHROMIUM_SKIP}` : ''}`, () => {
  let healthy = false;
  let page: Page;

  /** One receiver answering 500 until `healthy`, a collector disabling it after half a second, and the page in Chromium. */
  async function setUp(): Promise<{ hook: Loopback; collector: Collector; close: () => Promise<void> }> {
    const hook = await startLoopback((_, res) => res.writeHead(healthy ? 200 : 500).end('{}'));
    const file = writeConfig(temp.dir, {
      sources: [{ name: 'web', writeKey: 'wk_web', destinations: { Webhooks: { webhooks: [{ url: `${hook.url}/in?token=receiver-secret` }] } } }],
      delivery: { minRetryDelay: 20, maxRetryDelay: 50, disableAfter: 500, failingAfter: 2 },
      adminToken: 'admin-token-0123456789',
    });
    const collector = await startCollector(['--config', file, '--port', '0', '--data-dir', `${temp.dir}/data`]);
    const chromium = await launchChromium();
    page = await chromium.browser.newPage();
    return { hook, collector, close: async () => Promise.all([chromium.close(), hook.close()]).then(() => undefined) };
  }

  it('shows a disabled URL (without its query) and the alerts; Enable asks for the admin token, then delivers what was kept', async () => {
    const { hook, collector, close } = await setUp();
    try {
      await page.goto(`${collector.url}/`);
      expect(await page.locator('#receivers').isHidden()).toBe(true);
      const analytics = new Analytics('wk_web', { endpoint: collector.url });
      analytics.track({ userId: 'u1', event: 'Kept Order' });
      expect(await analytics.close()).toMatchObject({ delivered: 1 });

      const disabledRow = page.locator('#urls tr[data-state="disabled"]');
      await expect.poll(() => disabledRow.count(), { timeout: 10_000 }).toBe(1);
      expect(await disabledRow.textContent()).toMatch(/disabled since .* \(last: HTTP 500\)/);
      expect(await disabledRow.locator('code').textContent()).toBe(`${hook.url}/in`);
      await expect.poll(() => page.locator('#alerts li').evaluateAll((items) => items.map((item) => item.getAttribute('data-type')))).toEqual(['endpoint.disabled', 'endpoint.failing']);
      expect(await page.content()).not.toContain('receiver-secret');
      await expect.poll(() => page.locator('#events tr', { hasText: 'Kept Order' }).textContent()).toContain('kept: the URL is disabled');
      const before = hook.requests.length;

      // On loopback the page reads without signing in; enabling needs the admin token, and says so.
      await disabledRow.locator('button.enable').click();
      await expect.poll(() => disabledRow.locator('.enable-result').textContent()).toMatch(/adminToken/);
      await disabledRow.locator('.enable-result a').click();
      await page.fill('input[name="token"]', 'admin-token-0123456789');
      await page.click('button[type="submit"]');
      await expect.poll(() => page.locator('#urls tr[data-state="disabled"]').count()).toBe(1);
      healthy = true;
      await page.locator('#urls tr[data-state="disabled"] button.enable').click();
      await expect.poll(() => page.locator('#urls tr').count()).toBe(0);
      await expect.poll(() => hook.requests.length).toBe(before + 1);
      expect(JSON.parse(hook.requests.at(-1)!.body)).toMatchObject({ type: 'track', event: 'Kept Order' });
      await expect.poll(() => page.locator('#alerts li').first().getAttribute('data-type')).toBe('endpoint.enabled');
      await expect.poll(() => page.locator('#events tr', { hasText: 'Kept Order' }).locator('.message-status').textContent()).toBe('delivered');
    } finally {
      await close();
    }
  }, 60_000);
});
