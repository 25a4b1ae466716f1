// The live event debugger (GET /) in real headless Chromium (Debian's `chromium`, driven by
// playwright-core): events appear as they arrive, with routing and each webhook's status.
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Analytics } from 'batched-analytics';
import { CHROMIUM_SKIP, launchChromium } from '../../../../test/helpers/chromium.js';
import { type Collector, startCollector, stopAll, tempDir, writeConfig } from '../../../../test/helpers/collector.js';
import { type Loopback, startLoopback } from '../../../../test/helpers/loopback.js';

describe.skipIf(CHROMIUM_SKIP !== undefined)(`live event page in Chromium${CHROMIUM_SKIP ? ` skipped: ${CHROMIUM_SKIP}` : ''}`, () => {
  const temp = tempDir();
  let closeBrowser: (() => Promise<void>) | undefined;
  let ok: Loopback;
  let down: Loopback;
  let refuse: Loopback;
  let collector: Collector;
  let browser: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    [ok, down, refuse] = await Promise.all([
      startLoopback(),
      startLoopback((_, res) => res.writeHead(503).end()),
      startLoopback((_, res) => res.writeHead(400).end()),
    ]);
    const config = writeConfig(temp.dir, {
      sources: [
        {
          name: 'web',
          writeKey: 'wk_web',
          destinations: {
            Webhooks: { webhooks: [{ url: `${ok.url}/ok`, headers: { authorization: 'Bearer receiver-secret' } }, { url: `${down.url}/down` }], sharedSecret: 'shh' },
          },
        },
        { name: 'app', writeKey: 'wk_app', destinations: { Webhooks: { webhooks: [{ url: `${down.url}/down` }] } } },
        { name: 'shop', writeKey: 'wk_shop', destinations: { Webhooks: { webhooks: [{ url: `${refuse.url}/refuse` }] } } },
      ],
      // Retries far apart, so that "retrying" stays on screen.
      delivery: { minRetryDelay: 60_000, maxRetryDelay: 60_000 },
      adminToken: 'admin-token-0123456789',
    });
    collector = await startCollector(['--config', config, '--port', '0', '--data-dir', `${temp.dir}/data`]);
    ({ browser, close: closeBrowser } = await launchChromium());
    page = await browser.newPage();
  }, 60_000);

  afterAll(async () => {
    await closeBrowser?.();
    await stopAll();
    await Promise.all([ok, down, refuse].map((hook) => hook?.close()));
    temp.remove();
  });

  const row = (event: string) => page.locator('#events tr', { hasText: event });
  const badges = (event: string) => row(event).locator('.webhook .badge');
  const visibleEvents = () => page.locator('#events tr[data-id]:visible .summary').allTextContents();

  async function send(writeKey: string, params: Parameters<Analytics['track']>[0]): Promise<void> {
    const analytics = new Analytics(writeKey, { endpoint: collector.url });
    analytics.track(params);
    expect(await analytics.close()).toMatchObject({ delivered: 1 });
  }

  it('shows events live, with routing, the message status and each webhook: delivered, retrying, failed, not forwarded', async () => {
    await page.goto(`${collector.url}/`);
    await expect.poll(() => page.locator('#state').getAttribute('data-state')).toBe('open');
    await expect.poll(() => page.locator('#events').textContent()).toContain('No events yet');

    await send('wk_web', { userId: 'u1', event: 'Checkout Started' });
    await send('wk_app', { userId: 'u1', event: 'App Opened' });
    await send('wk_shop', { userId: 'u1', event: 'Refused Order' });
    await send('wk_web', { userId: 'u1', event: 'Kept Local', integrations: { All: false } });

    // Delivered to one URL: the message is delivered; the other URL answered 503, so it shows failed
    // (a dead receiver stays visible), and that it is not retried.
    await expect.poll(() => badges('Checkout Started').evaluateAll((els) => els.map((el) => el.getAttribute('data-status')))).toEqual(['delivered', 'failed']);
    expect(await row('Checkout Started').textContent()).toMatch(/HTTP 503/);
    expect(await row('Checkout Started').locator('.message-status').textContent()).toBe('delivered');
    expect(await row('Checkout Started').textContent()).toContain('not needed: another webhook accepted the message');
    expect(await row('Checkout Started').locator('.webhook').first().textContent()).toContain(`${ok.url}/ok`);
    await expect.poll(() => badges('App Opened').getAttribute('data-status')).toBe('retrying');
    expect(await row('App Opened').textContent()).toMatch(/HTTP 503/);
    expect(await row('App Opened').locator('.message-status').textContent()).toBe('retrying');
    // The next retry counts down live (60 s away), rather than a fixed number of ms.
    const countdown = row('App Opened').locator('.countdown');
    const first = await countdown.textContent();
    expect(first).toMatch(/^next attempt in \d+ s$/);
    await expect.poll(() => countdown.textContent(), { timeout: 5_000 }).not.toBe(first);
    await expect.poll(() => badges('Refused Order').getAttribute('data-status')).toBe('failed');
    expect(await row('Refused Order').locator('.message-status').textContent()).toBe('failed');
    expect(await row('Refused Order').textContent()).toMatch(/HTTP 400/);
    await expect.poll(() => row('Kept Local').textContent()).toContain('not forwarded (disabled by the message\'s integrations)');
    expect(await badges('Kept Local').count()).toBe(0);
    expect(await row('Kept Local').locator('.message-status').textContent()).toBe('not forwarded');
    expect(await page.content()).not.toContain('§');
    // Newest first.
    expect(await page.locator('#events tr').first().textContent()).toContain('Kept Local');
  });

  it('shows the recent events to a page opened later', async () => {
    const later = await browser.newPage();
    await later.goto(`${collector.url}/`);
    await expect.poll(() => later.locator('#events tr').count()).toBe(4);
    expect(await later.locator('#events tr[data-type="track"]').count()).toBe(4);
    await later.close();
  });

  it('counts per source and per webhook URL', async () => {
    const counts = (table: string, key: string) =>
      page.locator(`#${table} tr[data-key="${key}"] td`).evaluateAll((cells) => cells.slice(1).map((cell) => cell.textContent));
    await expect.poll(() => counts('by-source', 'web')).toEqual(['1', '0', '0', '2/min']);
    await expect.poll(() => counts('by-source', 'app')).toEqual(['0', '1', '0', '1/min']);
    await expect.poll(() => counts('by-webhook', `${ok.url}/ok`)).toEqual(['1', '0', '0', '1/min']);
    await expect.poll(() => counts('by-webhook', `${refuse.url}/refuse`)).toEqual(['0', '0', '1', '1/min']);
    // The receiver that answers 503 to everything: failed where another URL took the message, retrying alone.
    await expect.poll(() => counts('by-webhook', `${down.url}/down`)).toEqual(['0', '1', '1', '2/min']);
  });

  it('filters by source, type and status and searches ids and event names, all kept in the URL', async () => {
    await send('wk_app', { anonymousId: 'anon-42', event: 'Searchable Thing' });
    await expect.poll(() => page.locator('#events tr[data-id]').count()).toBe(5);

    await page.selectOption('select[name="status"]', 'failed');
    await expect.poll(visibleEvents).toEqual(['Refused Order']);
    expect(new URL(page.url()).searchParams.get('status')).toBe('failed');
    await page.selectOption('select[name="type"]', 'identify');
    await expect.poll(visibleEvents).toEqual([]);
    await page.selectOption('select[name="type"]', 'track');
    await expect.poll(visibleEvents).toEqual(['Refused Order']);
    await page.selectOption('select[name="type"]', '');

    await page.selectOption('select[name="status"]', '');
    await page.selectOption('select[name="source"]', 'web');
    await expect.poll(visibleEvents).toEqual(['Kept Local', 'Checkout Started']);

    await page.fill('input[name="q"]', 'checkout');
    await expect.poll(visibleEvents).toEqual(['Checkout Started']);
    const shared = page.url();
    expect(new URL(shared).search).toBe('?source=web&q=checkout');

    // The shared URL opens the same view.
    const other = await browser.newPage();
    await other.goto(shared);
    await expect.poll(() => other.locator('#events tr[data-id]').count()).toBe(5);
    expect(await other.locator('#events tr[data-id]:visible').count()).toBe(1);
    expect(await other.inputValue('input[name="q"]')).toBe('checkout');
    expect(await other.inputValue('select[name="source"]')).toBe('web');
    await other.close();

    await page.selectOption('select[name="source"]', '');
    await page.fill('input[name="q"]', 'anon-42');
    await expect.poll(visibleEvents).toEqual(['Searchable Thing']);
    await page.fill('input[name="q"]', '');
  });

  it('pauses the stream and shows what was held on resume', async () => {
    await page.click('#pause');
    await send('wk_shop', { userId: 'u9', event: 'Held Back' });
    await expect.poll(() => page.locator('#state').textContent()).toMatch(/held/);
    expect(await row('Held Back').count()).toBe(0);
    await page.click('#pause');
    await expect.poll(() => row('Held Back').count()).toBe(1);
  });

  it('opens a detail view from the keyboard: the exact body, headers with secrets hidden, the signature, every attempt', async () => {
    const delivered = ok.requests.find((request) => request.body.includes('Checkout Started'))!;
    await row('Checkout Started').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#detail').isVisible()).toBe(true);
    expect(await page.locator('#detail .sent-body').textContent()).toBe(delivered.body);
    expect(await page.locator('#detail .signature code').textContent()).toBe(delivered.headers['x-signature']);
    expect(await page.locator('#detail .signature').textContent()).toContain('HMAC-SHA1');
    const headers = await page.locator('#detail .headers').first().textContent();
    expect(headers).toContain('authorization: (hidden');
    expect(headers).not.toContain('receiver-secret');
    expect(await page.locator('#detail').textContent()).not.toContain('shh');
    expect(await page.locator('#detail tbody tr').count()).toBeGreaterThanOrEqual(1);
    expect(await page.locator('#detail tbody').textContent()).toMatch(/HTTP 200/);
    // The README's picture of the debugger: docs/debugger.png is a copy of this one.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: new URL('../../../../.tmp/debugger.png', import.meta.url).pathname });
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('#detail').isVisible()).toBe(false);
  });

  it('fits the Attempts table in the detail panel, error column included, in a wide window and a narrow one', async () => {
    for (const width of [1280, 420]) {
      const view = await browser.newPage();
      await view.setViewportSize({ width, height: 800 });
      await view.goto(`${collector.url}/`);
      await view.locator('#events tr', { hasText: 'App Opened' }).click();
      await expect.poll(() => view.locator('#detail table th', { hasText: 'Error' }).count()).toBe(1);
      const [panel, error] = await Promise.all([view.locator('#detail').boundingBox(), view.locator('#detail table td').last().boundingBox()]);
      expect(error!.x + error!.width, `width ${width}`).toBeLessThanOrEqual(panel!.x + panel!.width);
      expect(await view.locator('#detail').evaluate((node) => node.scrollWidth - node.clientWidth), `width ${width}`).toBeLessThanOrEqual(0);
      await view.close();
    }
  });

  it('shows the whole search placeholder, and says so when no event matches the filters', async () => {
    const cut = await page.locator('input[name="q"]').evaluate((input: HTMLInputElement) => {
      const probe = document.createElement('span');
      probe.style.cssText = `position:absolute;visibility:hidden;white-space:pre;font:${getComputedStyle(input).font}`;
      probe.textContent = input.placeholder;
      document.body.append(probe);
      const style = getComputedStyle(input);
      const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      const needed = probe.getBoundingClientRect().width;
      probe.remove();
      return needed - room;
    });
    expect(cut).toBeLessThanOrEqual(0);
    await page.fill('input[name="q"]', 'nothing-has-this-id');
    await expect.poll(() => page.locator('#no-match').isVisible()).toBe(true);
    expect(await page.locator('#no-match').textContent()).toMatch(/No event matches/);
    await page.fill('input[name="q"]', '');
    await expect.poll(() => page.locator('#no-match').isVisible()).toBe(false);
  });

  it('sends a delivery again from the detail view once signed in with the admin token: same messageId and body', async () => {
    const before = ok.requests.filter((request) => request.body.includes('Checkout Started'));
    await row('Checkout Started').click();
    await expect.poll(() => page.locator('#replay').isVisible()).toBe(true);
    // On loopback the page reads without signing in; sending again needs the admin token, and says so.
    await page.click('#replay');
    await expect.poll(() => page.locator('#replay-result').textContent()).toMatch(/adminToken/);
    await page.click('#replay-result a');
    await page.fill('input[name="token"]', 'admin-token-0123456789');
    await page.click('button[type="submit"]');
    await expect.poll(() => page.locator('#state').getAttribute('data-state')).toBe('open');
    await row('Checkout Started').click();
    await page.click('#replay');
    await expect.poll(() => page.locator('#replay-result').textContent()).toMatch(/queued as event/);
    await expect.poll(() => ok.requests.filter((request) => request.body.includes('Checkout Started')).length).toBe(before.length + 1);
    const again = ok.requests.filter((request) => request.body.includes('Checkout Started')).at(-1)!;
    expect(JSON.parse(again.body).messageId).toBe(JSON.parse(before[0]!.body).messageId);
    expect(again.body).toBe(before[0]!.body);
    await expect.poll(() => page.locator('#events tr', { hasText: 'redelivery' }).count()).toBe(1);
    await page.keyboard.press('Escape');
  });

  it('pages back past the live rows through the history with "Load older events"', async () => {
    const before = await page.locator('#events tr[data-id]').count();
    const analytics = new Analytics('wk_shop', { endpoint: collector.url, flushAt: 100 });
    for (let n = 0; n < 230; n += 1) analytics.track({ userId: 'u1', event: `Bulk ${n}` });
    expect(await analytics.close()).toMatchObject({ delivered: 230 });
    // Each refused for good: a page that connects while some are still attempted also gets their
    // changes, as rows beyond the latest 200 (on a loaded machine, the oldest were still changing).
    await expect.poll(() => page.locator('#events tr[data-status="failed"]', { hasText: 'Bulk' }).count(), { timeout: 15_000 }).toBe(230);
    const fresh = await browser.newPage();
    await fresh.goto(`${collector.url}/`);
    // A page that connects gets the latest 200; the rest it loads on demand.
    await expect.poll(() => fresh.locator('#events tr[data-id]').count()).toBe(200);
    await fresh.click('#older');
    await expect.poll(() => fresh.locator('#events tr[data-id]').count()).toBe(before + 230);
    expect(await fresh.locator('#older').isHidden()).toBe(true);
    expect(await fresh.locator('#events tr[data-id]').last().textContent()).toContain('Checkout Started');
    await fresh.close();
  });

  it('stays readable in a narrow window: no sideways scrolling of the page, the status column kept', async () => {
    const narrow = await browser.newPage();
    await narrow.setViewportSize({ width: 420, height: 800 });
    await narrow.goto(`${collector.url}/`);
    await expect.poll(() => narrow.locator('#events tr[data-id]').count()).toBeGreaterThan(0);
    expect(await narrow.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(420);
    expect(await narrow.locator('#log th', { hasText: 'Routing' }).isVisible()).toBe(false);
    expect(await narrow.locator('#log th', { hasText: 'Status' }).isVisible()).toBe(true);
    await narrow.close();
  });

  it('shows a repeated messageId as a duplicate of the first: not forwarded, in the row and the detail view', async () => {
    await page.goto(`${collector.url}/`);
    await expect.poll(() => page.locator('#state').getAttribute('data-state')).toBe('open');
    await send('wk_web', { userId: 'u1', event: 'Sent Twice', messageId: 'page-twice' });
    await send('wk_web', { userId: 'u1', event: 'Sent Twice', messageId: 'page-twice' });
    await expect.poll(() => row('Sent Twice').count()).toBe(2);
    const [repeat, first] = [row('Sent Twice').first(), row('Sent Twice').last()];
    await expect.poll(() => repeat.textContent()).toContain('not forwarded (a duplicate: messageId "page-twice" was first accepted at ');
    expect(await repeat.locator('.message-status').textContent()).toBe('not forwarded');
    expect(await repeat.locator('.webhook .badge').count()).toBe(0);
    await expect.poll(() => first.locator('.message-status').textContent()).toBe('delivered');
    await repeat.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#detail').isVisible()).toBe(true);
    expect(await page.locator('#detail .note').textContent()).toMatch(/^a duplicate of the message first accepted at .+: not forwarded$/);
    expect(await page.locator('#detail').textContent()).toContain('Not forwarded: no webhook request was made.');
    await page.keyboard.press('Escape');
    expect(ok.requests.filter((request) => request.body.includes('page-twice'))).toHaveLength(1);
  });

  // A bidi override in one field (U+202E) must not reorder the text around it: the arrow of an
  // alias, the other id, what follows in the row.
  it('shows each id of a row on its own, so a right-to-left override in one does not reorder the others', async () => {
    const analytics = new Analytics('wk_web', { endpoint: collector.url });
    analytics.alias({ previousId: 'anon-1\u202E', userId: 'user-2' });
    expect(await analytics.close()).toMatchObject({ delivered: 1 });
    const alias = page.locator('#events tr[data-type="alias"]');
    await expect.poll(() => alias.count()).toBe(1);
    expect(await alias.locator('.summary bdi').allTextContents()).toEqual(['anon-1\u202E', 'user-2']);
    expect(await alias.locator('.origin bdi').allTextContents()).toEqual(['user-2']);
  });
});
