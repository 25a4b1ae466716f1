// The live page of one of two collectors on one PostgreSQL database, in real headless Chromium: it
// shows what the other accepted and delivered, in order of acceptance. Needs Chromium and
// PostgreSQL; skips without either, and fails so under CI=true.
import { afterAll, describe, expect, it } from 'vitest';
import { CHROMIUM_SKIP, launchChromium } from '../../../../test/helpers/chromium.js';
import { basic, postJson, startCollector, stopAll, tempDir, writeConfig } from '../../../../test/helpers/collector.js';
import { POSTGRES_SKIP, useThrowawayCluster } from '../../../../test/helpers/postgres.js';
import { useReceivers } from '../../../../test/helpers/receiver.js';

const SKIP = POSTGRES_SKIP ?? CHROMIUM_SKIP;

const cluster = useThrowawayCluster();
const startReceiver = useReceivers();
const temp = tempDir();
let closeBrowser: (() => Promise<void>) | undefined;
afterAll(async () => {
  await closeBrowser?.();
  await stopAll();
  temp.remove();
});

describe.skipIf(SKIP !== undefined)(`live page of several collectors in Chromium${SKIP ? ` skipped: ${SKIP}` : ''}`, () => {
  it("shows an event another collector accepted and delivered, below a newer one of its own", async () => {
    const database = await cluster().createDatabase();
    // "Earlier" is answered after 600 ms, so the page hears of it after "Later" was shown.
    const receiver = await startReceiver((request, res) => {
      const wait = request.raw.toString('utf8').includes('"Earlier"') ? 600 : 0;
      setTimeout(() => res.writeHead(200).end(), wait);
    });
    const file = writeConfig(temp.dir, {
      sources: [{ name: 'web', writeKey: 'wk_web', destinations: { Webhooks: { webhooks: [{ url: receiver.url }] } } }],
      store: database,
    });
    const [a, b] = await Promise.all([startCollector(['--config', file, '--port', '0']), startCollector(['--config', file, '--port', '0'])]);
    const { browser, close } = await launchChromium();
    closeBrowser = close;
    const page = await browser.newPage();
    await page.goto(`${b!.url}/`);
    await expect.poll(() => page.locator('#state').getAttribute('data-state')).toBe('open');

    const track = (url: string, event: string) => postJson(`${url}/v1/track`, { userId: 'u1', event }, { authorization: basic('wk_web') });
    expect((await track(a!.url, 'Earlier')).status).toBe(200);
    expect((await track(b!.url, 'Later')).status).toBe(200);

    const row = (event: string) => page.locator('#events tr', { hasText: event });
    await expect.poll(() => row('Earlier').locator('.message-status').textContent(), { timeout: 5_000 }).toBe('delivered');
    expect(await row('Earlier').locator('.webhook .badge').getAttribute('data-status')).toBe('delivered');
    await expect.poll(() => row('Later').locator('.message-status').textContent()).toBe('delivered');
    expect(await page.locator('#events tr[data-id] .summary').allTextContents()).toEqual([expect.stringContaining('Later'), expect.stringContaining('Earlier')]);
  }, 60_000);
});
