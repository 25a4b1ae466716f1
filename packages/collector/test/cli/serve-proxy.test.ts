// The collector's outbound webhook requests honour HTTPS_PROXY and NO_PROXY: a `serve` child process
// with the variables set, a loopback forward proxy, and a TLS receiver it trusts via NODE_EXTRA_CA_CERTS.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../../../../test/helpers/certificate.js';
import { basic, oneWebhookConfig, postJson, startCollector, stopAll, tempDir, waitFor, writeConfig } from '../../../../test/helpers/collector.js';
import { startForwardProxy } from '../../../../test/helpers/proxy.js';
import { startReceiver } from '../../../../test/helpers/receiver.js';

afterEach(stopAll);

describe('serve behind a forward proxy', () => {
  it.each([
    ['tunnels every webhook request through HTTPS_PROXY', {}, true],
    ['sends directly to a receiver NO_PROXY names', { NO_PROXY: '127.0.0.1' }, false],
  ])('%s', async (_, extra: Record<string, string>, proxied) => {
    const temp = tempDir();
    const certificate = selfSignedCertificate();
    const receiver = await startReceiver(undefined, certificate);
    const proxy = await startForwardProxy();
    try {
      const caFile = path.join(temp.dir, 'ca.pem');
      writeFileSync(caFile, certificate.cert);
      const env = { HTTPS_PROXY: proxy.url, NODE_EXTRA_CA_CERTS: caFile, ...extra };
      const args = ['--config', writeConfig(temp.dir, oneWebhookConfig(receiver.url)), '--port', '0', '--data-dir', path.join(temp.dir, 'data')];
      const collector = await startCollector(args, { env });
      for (let n = 0; n < 3; n++) {
        const res = await postJson(`${collector.url}/v1/track`, { userId: `u${n}`, event: 'Proxied' }, { authorization: basic('wk_web') });
        expect(res.status).toBe(200);
      }
      await waitFor(() => receiver.requests.length === 3, 'three webhook requests');
      const throughProxy = receiver.requests.filter((request) => proxy.upstreamPorts.has(request.remotePort));
      expect(throughProxy).toHaveLength(proxied ? 3 : 0);
      expect(proxy.tunnels.length > 0).toBe(proxied);
      if (proxied) expect(new Set(proxy.tunnels)).toEqual(new Set([new URL(receiver.url).host]));
    } finally {
      await stopAll();
      await Promise.all([receiver.close(), proxy.close()]);
      temp.remove();
    }
  });
});
