import type { IncomingMessage } from 'node:http';
import type { SourceConfig } from '../config/config.js';
import { RequestError } from './http.js';
import type { ProxyTrust } from './proxy.js';

/**
 * What `GET /v1/projects/<writeKey>/settings` answers: the settings analytics.js (analytics-next)
 * loads from its CDN, reduced to what sends every call back to this collector. It builds each
 * request's URL as `<protocol>://<apiHost>/<t|i|p|s|g|a|b>`, so `apiHost` is host, port and path
 * without the scheme, ending in `/v1`. No other integration is listed (analytics.js would load
 * their code from the CDN), and its own metrics are off (it would post them to the service).
 */
export function projectSettings(source: SourceConfig, url: URL): Record<string, unknown> {
  const path = url.pathname.replace(/\/+$/, '');
  return {
    integrations: {
      'Segment.io': {
        apiKey: source.writeKey,
        apiHost: `${url.host}${path}/v1`,
        protocol: url.protocol.slice(0, -1),
        unbundledIntegrations: [],
        addBundledMetadata: true,
        maybeBundledConfigIds: {},
      },
    },
    plan: {},
    edgeFunction: {},
    analyticsNextEnabled: true,
    middlewareSettings: {},
    enabledMiddleware: {},
    metrics: { sampleRate: 0 },
    legacyVideoPluginsEnabled: false,
    remotePlugins: [],
  };
}

/**
 * The collector's URL as the sender reaches it: `server.publicUrl`, else the request's scheme and `Host`.
 * @throws {RequestError} 400 `ERR_HOST` for a `Host` header that is not a host and port.
 */
export function publicBase(req: IncomingMessage, publicUrl: string | undefined, proxies: ProxyTrust): URL {
  if (publicUrl !== undefined) return new URL(publicUrl);
  const host = req.headers.host ?? '';
  let url: URL | undefined;
  try {
    // Only a host and port: `/`, `?`, `#` or `@` would put a path or credentials into the URL.
    url = /^[^/?#@\s\\]+$/.test(host) ? new URL(`${proxies.scheme(req)}://${host}`) : undefined;
  } catch {
    url = undefined;
  }
  if (url === undefined) {
    throw new RequestError(400, 'ERR_HOST', `Expected a \`Host\` header of a host and port, got ${JSON.stringify(host)}; or set \`server.publicUrl\` in the config`);
  }
  return url;
}
