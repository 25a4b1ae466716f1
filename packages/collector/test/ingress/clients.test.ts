// Real clients as judges: @segment/analytics-next (the npm package's own UMD build) in Chromium on a
// page of another origin, with only `cdnURL` pointing at the collector, in both delivery strategies;
// @segment/analytics-node and @rudderstack/rudder-sdk-node in Node. Every call reaches a loopback
// webhook receiver exactly once, signed, with what the collector adds.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Analytics as SegmentNode } from '@segment/analytics-node';
import RudderNode from '@rudderstack/rudder-sdk-node';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from 'batched-analytics/webhooks';
import { CHROMIUM_SKIP, launchChromium } from '../../../../test/helpers/chromium.js';
import { waitFor } from '../../../../test/helpers/collector.js';
import { SOURCES_SECRET, type SourcesFixture, startSources } from '../../../../test/helpers/sources.js';

/** analytics-next's browser build as npm ships it: a UMD bundle that defines `window.AnalyticsNext`. */
const UMD = fileURLToPath(new URL('../../../../node_modules/@segment/analytics-next/dist/umd/index.js', import.meta.url));

let fixture: SourcesFixture;

beforeAll(async () => {
  fixture = await startSources([
    { name: 'web', writeKey: 'wk_web' },
    { name: 'node', writeKey: 'wk_node' },
  ]);
});

afterAll(() => fixture?.close());

/** The webhook requests that carry `messageId`. */
const requestsOf = (messageId: string) => fixture.hook.requests.filter((request) => (JSON.parse(request.body) as { messageId?: string }).messageId === messageId);

/** Waits until each message arrived, then a moment more, and checks each arrived exactly once, signed. */
async function expectEachOnce(messageIds: string[]): Promise<Record<string, any>[]> {
  await waitFor(() => messageIds.every((id) => requestsOf(id).length > 0), `${messageIds.length} webhooks`, 15_000);
  // A repeat would come from a retry or a second send: give it time to show.
  await new Promise((resolve) => setTimeout(resolve, 500));
  return messageIds.map((id) => {
    const requests = requestsOf(id);
    expect(requests, `webhooks of ${id}`).toHaveLength(1);
    expect(verifySignature(requests[0]!.body, requests[0]!.headers['x-signature'] as string, SOURCES_SECRET)).toBe(true);
    return JSON.parse(requests[0]!.body) as Record<string, any>;
  });
}

describe.skipIf(CHROMIUM_SKIP !== undefined)(`analytics.js in Chromium${CHROMIUM_SKIP ? ` skipped: ${CHROMIUM_SKIP}` : ''}`, () => {
  let site: http.Server;
  /** The page's origin: `localhost` on another port than the collector's `127.0.0.1`, so another origin. */
  let origin: string;
  let browser: BrowserContext;
  let closeBrowser: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const umd = readFileSync(UMD);
    site = http.createServer((req, res) => {
      if (req.url === '/analytics.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(umd);
      if (req.url === '/favicon.ico') return void res.writeHead(204).end();
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Shop</title><script src="/analytics.js"></script><h1>Shop</h1>');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    origin = `http://localhost:${(site.address() as AddressInfo).port}`;
    ({ browser, close: closeBrowser } = await launchChromium());
  }, 60_000);

  afterAll(async () => {
    await closeBrowser?.();
    await new Promise((resolve) => site?.close(resolve));
  });

  it.each([
    ['standard', {}, ['/v1/t', '/v1/i', '/v1/p', '/v1/s', '/v1/g', '/v1/a']],
    ['batching', { integrations: { 'Segment.io': { deliveryStrategy: { strategy: 'batching', config: { size: 3, timeout: 300 } } } } }, ['/v1/b']],
  ])('sends every call with the %s strategy, from `cdnURL` alone', async (strategy, options, routes) => {
    await browser.clearCookies();
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('requestfailed', (request) => problems.push(`failed: ${request.url()} ${request.failure()?.errorText}`));
    const sentTo = new Set<string>();
    page.on('request', (request) => {
      if (request.url().startsWith(fixture.collector.url)) sentTo.add(`${request.method()} ${new URL(request.url()).pathname}`);
    });
    await page.goto(`${origin}/products/42?ref=mail`);

    const run = `${strategy}-${Date.now()}`;
    const ids = await page.evaluate(
      async ({ cdnURL, options, run }) => {
        // Each strategy starts as a new visitor: the other run's identity stays behind.
        localStorage.clear();
        const { AnalyticsBrowser } = (window as unknown as { AnalyticsNext: { AnalyticsBrowser: any } }).AnalyticsNext;
        const analytics = AnalyticsBrowser.load({ writeKey: 'wk_web', cdnURL }, options);
        // Anonymous first (analytics.js then sends `userId: null`), then identified.
        const calls = [
          await analytics.track('Product Viewed', { run }),
          await analytics.identify(`user-${run}`, { plan: 'pro' }),
          await analytics.page('Catalog', 'Product', { run }),
          await analytics.screen('Mobile', 'Product', { run }),
          await analytics.group(`acme-${run}`, { seats: 5 }),
          await analytics.alias(`member-${run}`),
        ];
        return calls.map((ctx: { event: { messageId: string } }) => ctx.event.messageId);
      },
      { cdnURL: fixture.collector.url, options, run },
    );

    const [track, identify, pageCall, screen, group, alias] = await expectEachOnce(ids);
    expect(track).toMatchObject({ type: 'track', event: 'Product Viewed', properties: { run } });
    expect('userId' in track!).toBe(false);
    expect(identify).toMatchObject({ type: 'identify', userId: `user-${run}`, traits: { plan: 'pro' } });
    expect(pageCall).toMatchObject({ type: 'page', name: 'Product', category: 'Catalog' });
    expect(screen).toMatchObject({ type: 'screen', name: 'Product' });
    expect(group).toMatchObject({ type: 'group', groupId: `acme-${run}`, traits: { seats: 5 } });
    // analytics.js 1.84 itself sends an alias's `userId` as the current user's (not `member-…`): forwarded as sent.
    expect(alias).toMatchObject({ type: 'alias', 'Previous ID': `user-${run}` });
    for (const body of [track, identify, pageCall, screen, group, alias]) {
      expect(body!.context).toMatchObject({
        ip: '127.0.0.1',
        userAgent: expect.stringContaining('Chrome'),
        page: { url: `${origin}/products/42?ref=mail`, path: '/products/42', search: '?ref=mail' },
        library: { name: 'analytics.js' },
      });
      expect(body!.receivedAt).toEqual(expect.any(String));
      expect(body!.originalTimestamp).toEqual(expect.any(String));
    }
    expect([...sentTo]).toEqual(expect.arrayContaining(['GET /v1/projects/wk_web/settings', ...routes.map((route) => `POST ${route}`)]));
    if (strategy === 'batching') expect([...sentTo].filter((sent) => sent.startsWith('POST /v1/') && sent !== 'POST /v1/b')).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});

describe('server libraries', () => {
  it('@segment/analytics-node delivers every call, with its timestamps corrected and no context.ip', async () => {
    const analytics = new SegmentNode({ writeKey: 'wk_node', host: fixture.collector.url, flushAt: 6, maxRetries: 0 });
    const ids: string[] = [];
    const sent = (ctx: { event: { messageId?: string } }) => ids.push(ctx.event.messageId!);
    analytics.track({ userId: 'node-1', event: 'Order Completed', properties: { total: 30 } }, (error, ctx) => sent(ctx!));
    analytics.identify({ userId: 'node-1', traits: { plan: 'pro' } }, (error, ctx) => sent(ctx!));
    analytics.alias({ userId: 'node-1', previousId: 'anon-node' }, (error, ctx) => sent(ctx!));
    await analytics.closeAndFlush({ timeout: 10_000 });
    expect(ids).toHaveLength(3);
    const bodies = await expectEachOnce(ids);
    // The library calls back in no set order, and the collector forwards in none.
    expect(bodies.map((body) => body.type).sort()).toEqual(['alias', 'identify', 'track']);
    for (const body of bodies) {
      expect(body.context.ip).toBeUndefined();
      expect(body.originalTimestamp).toEqual(expect.any(String));
    }
  });

  it('@rudderstack/rudder-sdk-node delivers every call', async () => {
    const rudder = new RudderNode('wk_node', { dataPlaneUrl: fixture.collector.url, flushAt: 20, flushInterval: 60_000, logLevel: 'error' });
    const run = `rudder-${Date.now()}`;
    rudder.track({ userId: run, event: 'Rudder Event', properties: { run } });
    rudder.identify({ userId: run, traits: { plan: 'pro' } });
    rudder.page({ userId: run, name: 'Home', properties: { run } });
    rudder.group({ userId: run, groupId: `group-${run}` });
    await rudder.flush();
    const ours = () => fixture.bodies().filter((body) => body.userId === run);
    await waitFor(() => ours().length >= 4, 'the four rudder calls', 15_000);
    const ids = ours().map((body) => body.messageId as string);
    const bodies = await expectEachOnce(ids);
    expect(bodies.map((body) => body.type).sort()).toEqual(['group', 'identify', 'page', 'track']);
  });
});
