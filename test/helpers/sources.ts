import http from 'node:http';
import { gzipSync } from 'node:zlib';
import { type Collector, startCollector, tempDir, waitFor, writeConfig } from './collector.js';
import { type Loopback, startLoopback } from './loopback.js';

/** An answer as the raw HTTP API gave it. */
export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Record<string, any>;
}

/** What {@link send} sends besides the body. */
export interface RawOptions {
  method?: string;
  headers?: Record<string, string>;
  /** The address the request leaves from, e.g. `127.0.0.2`: any 127/8 address reaches a collector on 127.0.0.1. */
  localAddress?: string;
  gzip?: boolean;
}

/**
 * One request over a fresh connection, as a browser or app would send it: `text/plain` by default
 * (what analytics.js sends), the body a JSON value or a raw string.
 */
export function send(url: string, body: unknown, options: RawOptions = {}): Promise<RawAnswer> {
  const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const payload = text === undefined ? undefined : options.gzip ? gzipSync(text) : Buffer.from(text);
  const headers: Record<string, string> = { ...(payload ? { 'content-type': 'text/plain' } : {}), ...options.headers };
  if (options.gzip) headers['content-encoding'] = 'gzip';
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? 'POST', headers, localAddress: options.localAddress, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode!, headers: res.headers, body: raw === '' ? {} : (JSON.parse(raw) as Record<string, any>) });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** A collector (the real CLI) whose sources forward to one loopback webhook receiver. */
export interface SourcesFixture {
  collector: Collector;
  hook: Loopback;
  /** The webhook bodies received so far, parsed. */
  bodies(): Record<string, any>[];
  /** Waits for the webhook of `messageId` and returns its body. */
  webhookOf(messageId: string): Promise<Record<string, any>>;
  close(): Promise<void>;
}

/** Signs the webhooks of every source of {@link startSources}. */
export const SOURCES_SECRET = 'sources-secret';

/**
 * Starts a collector with `sources` (each `{ name, writeKey, ... }`, forwarding to the fixture's
 * receiver, signed with {@link SOURCES_SECRET}) and `server` entries of the config, listening on
 * `host` (127.0.0.1 by default).
 */
export async function startSources(sources: Record<string, unknown>[], server: Record<string, unknown> = {}, host?: string): Promise<SourcesFixture> {
  const temp = tempDir();
  const hook = await startLoopback();
  const webhooks = { webhooks: [{ url: `${hook.url}/in` }], sharedSecret: SOURCES_SECRET };
  const config = writeConfig(temp.dir, {
    sources: sources.map((source) => ({ destinations: { Webhooks: webhooks }, ...source })),
    server,
  });
  const collector = await startCollector(['--config', config, '--port', '0', '--data-dir', `${temp.dir}/data`, ...(host === undefined ? [] : ['--host', host])]);
  const bodies = () => hook.requests.map((request) => JSON.parse(request.body) as Record<string, any>);
  return {
    collector,
    hook,
    bodies,
    webhookOf: async (messageId) => {
      await waitFor(() => bodies().some((body) => body.messageId === messageId), `the webhook of ${messageId}`);
      return bodies().find((body) => body.messageId === messageId)!;
    },
    close: async () => {
      await collector.stop();
      await hook.close();
      temp.remove();
    },
  };
}
