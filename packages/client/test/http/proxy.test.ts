// Proxies from the environment (HTTP_PROXY, HTTPS_PROXY, NO_PROXY), seen by a real loopback forward
// proxy: the client and the Webhooks library in this process (http targets, absolute-form), and
// `batched-analytics import` as a child process (an https target, through a CONNECT tunnel).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { Analytics, type Options } from '../../src/index.js';
import { WebhookDestination } from '../../src/webhooks/index.js';
import { selfSignedCertificate } from '../../../../test/helpers/certificate.js';
import { runCli } from '../../../../test/helpers/cli.js';
import { type ForwardProxy, startForwardProxy } from '../../../../test/helpers/proxy.js';
import { startReceiver } from '../../../../test/helpers/receiver.js';
import { type Sink, startSink } from '../../../../test/helpers/sink.js';

let proxy: ForwardProxy;
let sink: Sink;
beforeEach(async () => {
  proxy = await startForwardProxy();
  sink = await startSink();
  for (const name of ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy']) vi.stubEnv(name, undefined);
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await Promise.all([proxy.close(), sink.close()]);
});

/** Sends three calls in one flush and closes the client. */
async function sendThree(options: Options = {}): Promise<void> {
  const analytics = new Analytics('KEY', { endpoint: sink.url, flushAt: 1, silent: true, ...options });
  for (let n = 0; n < 3; n++) analytics.track({ userId: `u${n}`, event: 'Proxied' });
  const summary = await analytics.close();
  expect(summary).toEqual({ delivered: 3, failed: 0, dropped: 0 });
}

describe('the client', () => {
  it('sends every request through HTTP_PROXY, in absolute form', async () => {
    vi.stubEnv('HTTP_PROXY', proxy.url);
    await sendThree();
    expect(sink.requests()).toBe(3);
    expect(proxy.forwarded).toEqual([`${sink.url}/v1/batch`, `${sink.url}/v1/batch`, `${sink.url}/v1/batch`]);
  });

  it('honours the lower-case http_proxy too', async () => {
    vi.stubEnv('http_proxy', proxy.url);
    await sendThree();
    expect(proxy.forwarded).toHaveLength(3);
  });

  it('sends nothing through the proxy to a host NO_PROXY names', async () => {
    vi.stubEnv('HTTP_PROXY', proxy.url);
    vi.stubEnv('NO_PROXY', 'localhost,127.0.0.1');
    await sendThree();
    expect(sink.requests()).toBe(3);
    expect(proxy.forwarded).toEqual([]);
  });

  it('ignores the environment with proxy: false', async () => {
    vi.stubEnv('HTTP_PROXY', proxy.url);
    await sendThree({ proxy: false });
    expect(proxy.forwarded).toEqual([]);
  });

  it('sends with an explicit dispatcher over the environment', async () => {
    vi.stubEnv('HTTP_PROXY', proxy.url);
    const dispatcher = new Agent();
    await sendThree({ dispatcher });
    await dispatcher.close();
    expect(proxy.forwarded).toEqual([]);
  });

  it('names `proxy` when it is no boolean', () => {
    expect(() => new Analytics('KEY', { proxy: 'yes' as never })).toThrow(expect.objectContaining({ name: 'ConfigError', option: 'proxy' }));
  });
});

describe('the Webhooks library', () => {
  it('delivers through HTTP_PROXY, and directly with proxy: false', async () => {
    vi.stubEnv('HTTP_PROXY', proxy.url);
    const receiver = await startReceiver();
    try {
      const message = { type: 'track', userId: 'u', event: 'Proxied', messageId: 'm1', timestamp: new Date().toISOString(), context: {} } as const;
      const proxied = new WebhookDestination({ webhooks: [{ url: receiver.url }] });
      expect((await proxied.deliver(message)).delivered).toBe(true);
      await proxied.close();
      expect(proxy.forwarded).toEqual([receiver.url]);
      expect(proxy.upstreamPorts.has(receiver.requests[0]!.remotePort)).toBe(true);

      const direct = new WebhookDestination({ webhooks: [{ url: receiver.url }] }, { proxy: false });
      expect((await direct.deliver({ ...message, messageId: 'm2' })).delivered).toBe(true);
      await direct.close();
      expect(proxy.forwarded).toHaveLength(1);
      expect(receiver.requests).toHaveLength(2);
    } finally {
      await receiver.close();
    }
  });

  it('keeps verifying the receiver\'s certificate through a CONNECT tunnel', async () => {
    vi.stubEnv('HTTPS_PROXY', proxy.url);
    vi.stubEnv('NODE_TLS_REJECT_UNAUTHORIZED', '0');
    const receiver = await startReceiver(undefined, selfSignedCertificate());
    try {
      const destination = new WebhookDestination({ webhooks: [{ url: receiver.url }] }, { retryWindow: 0 });
      const message = { type: 'track', userId: 'u', event: 'Proxied', messageId: 'm1', timestamp: new Date().toISOString(), context: {} } as const;
      expect((await destination.deliver(message)).delivered).toBe(false);
      await destination.close();
      expect(proxy.tunnels).toEqual([new URL(receiver.url).host]);
      expect(receiver.requests).toEqual([]);
    } finally {
      await receiver.close();
    }
  });
});

describe('batched-analytics import', () => {
  let dir: string;
  let caFile: string;
  let certificate: { cert: string; key: string };
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'proxy-import-'));
    certificate = selfSignedCertificate();
    caFile = join(dir, 'ca.pem');
    writeFileSync(caFile, certificate.cert);
    const lines = Array.from({ length: 30 }, (_, n) => JSON.stringify({ type: 'track', userId: `u${n}`, event: 'Imported' }));
    writeFileSync(join(dir, 'calls.ndjson'), `${lines.join('\n')}\n`);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['tunnels every request to an https endpoint through HTTPS_PROXY', {}, true],
    ['sends directly to a host NO_PROXY names', { NO_PROXY: '127.0.0.1' }, false],
  ])('%s', async (_, extra: Record<string, string>, proxied) => {
    const receiver = await startReceiver(undefined, certificate);
    try {
      const endpoint = new URL(receiver.url).origin;
      const env = { HTTPS_PROXY: proxy.url, NODE_EXTRA_CA_CERTS: caFile, ...extra };
      const { code, stderr } = await runCli(['import', join(dir, 'calls.ndjson'), '--write-key', 'K', '--endpoint', endpoint, '--flush-at', '10'], { env });
      expect(stderr).not.toMatch(/error/i);
      expect(code).toBe(0);
      expect(receiver.requests).toHaveLength(3);
      const throughProxy = receiver.requests.filter((request) => proxy.upstreamPorts.has(request.remotePort));
      expect(throughProxy).toHaveLength(proxied ? 3 : 0);
      expect(proxy.tunnels.length > 0).toBe(proxied);
      if (proxied) expect(new Set(proxy.tunnels)).toEqual(new Set([new URL(endpoint).host]));
    } finally {
      await receiver.close();
    }
  });
});
