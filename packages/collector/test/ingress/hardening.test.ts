// Hostile and broken clients against a real `batched-analytics serve` process, on the wire.
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, type Collector, postJson, startCollector, stopAll, tempDir, writeConfig } from '../../../../test/helpers/collector.js';
import { type Loopback, startLoopback } from '../../../../test/helpers/loopback.js';

let temp: ReturnType<typeof tempDir>;
let hook: Loopback;
let collector: Collector;
let port: number;

beforeAll(async () => {
  temp = tempDir();
  hook = await startLoopback((_req, res) => void res.writeHead(200).end());
  const config = writeConfig(temp.dir, {
    sources: [{ name: 'web', writeKey: 'wk_web', destinations: { Webhooks: { webhooks: [{ url: hook.url }] } } }],
    server: { headersTimeout: 1_000, requestTimeout: 2_000, maxConnections: 8 },
    allowedHosts: ['collector.internal', '.dev.example'],
  });
  collector = await startCollector(['--config', config, '--port', '0', '--data-dir', `${temp.dir}/data`]);
  port = Number(new URL(collector.url).port);
});
afterAll(async () => {
  await stopAll();
  await hook.close();
  temp.remove();
});

const auth = { authorization: basic('wk_web') };

/** `{"a":{"a":...}}`, `levels` objects deep, built as text. */
function nested(levels: number): string {
  return `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
}

/** `{"a":[[[...]]]}` with 100,000 arrays: 200 kB, under the body limit. */
const HUNDRED_THOUSAND_LEVELS = `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;

/** A raw HTTP/1.1 exchange: what the server sent back until it closed the connection, or `timeout` ms. */
function exchange(write: (socket: net.Socket) => void, timeout = 10_000): Promise<{ text: string; closedAfter: number; error?: string }> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    let error: string | undefined;
    const timer = setTimeout(() => socket.destroy(), timeout);
    socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closedAfter: performance.now() - started, ...(error ? { error } : {}) });
    });
    socket.on('connect', () => write(socket));
  });
}

describe('the collector refuses what it cannot take, with a reason', () => {
  // A request target is whatever a client writes after the method: a path that reads as a host
  // (`//`), or an absolute URL that does not parse, must not take the process down.
  it.each(['//', '//[', '//a:b', '//x:99999/', 'http://', '*'])('answers 404 to the request target %s, and goes on answering', async (target) => {
    const { text } = await exchange((socket) => socket.end(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`));
    expect(text).toMatch(/^HTTP\/1\.1 404 /);
    expect(text).toContain('"code":"ERR_NOT_FOUND"');
    expect((await fetch(`${collector.url}/healthz`)).status).toBe(200);
  });

  it.each(['/v1/track', '/v1/batch'])('answers 400 ERR_TOO_DEEP, not 500, to 100,000 levels of nesting in properties on %s', async (route) => {
    const message = `{"userId":"u","event":"Deep","properties":${HUNDRED_THOUSAND_LEVELS}}`;
    const body = route === '/v1/batch' ? `{"batch":[{"type":"track","userId":"u","event":"Fine"},${message.replace('{', '{"type":"track",')}]}` : message;
    const res = await postJson(`${collector.url}${route}`, body, auth);
    expect(res.status).toBe(400);
    const path = route === '/v1/batch' ? 'batch[1].' : '';
    expect(res.body).toMatchObject({ code: 'ERR_TOO_DEEP', field: `${path}properties.a[0]` });
    expect(res.body.error).toContain('at most 64 levels deep');
  });

  it('accepts a message nested exactly as deep as allowed', async () => {
    // The message is level 1 and properties level 2: 63 objects from properties down make 64.
    const res = await postJson(`${collector.url}/v1/track`, `{"userId":"u","event":"Deep enough","properties":${nested(63)}}`, auth);
    expect(res.status).toBe(200);
    const over = await postJson(`${collector.url}/v1/track`, `{"userId":"u","event":"Too deep","properties":${nested(64)}}`, auth);
    expect(over.status).toBe(400);
  });

  it('answers 400 ERR_INVALID_UTF8 to a body that is not UTF-8, instead of storing U+FFFD', async () => {
    const body = Buffer.concat([Buffer.from('{"userId":"u","event":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
    const res = await fetch(`${collector.url}/v1/track`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'ERR_INVALID_UTF8' });
  });

  it('lets a client that sends a chunked body over 500,000 bytes read the 413, not a reset', async () => {
    /** Streams `total` bytes of chunked body as fast as the socket takes them. */
    const send = (total: number) =>
      new Promise<number | string>((resolve) => {
        const req = http.request(`${collector.url}/v1/batch`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth } });
        req.on('response', (res) => res.resume().on('end', () => resolve(res.statusCode!)));
        req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
        const chunk = Buffer.alloc(16_384, 0x20);
        let sent = 0;
        const pump = () => {
          while (sent < total) {
            sent += chunk.length;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
          req.end();
        };
        req.write('{"batch":[');
        pump();
      });
    // 3 MB: the client is still sending long after the collector has refused the body.
    const outcomes = [];
    for (let n = 0; n < 5; n++) outcomes.push(await send(3_000_000));
    expect(outcomes).toEqual([413, 413, 413, 413, 413]);
  });
});

describe('what a refusal counts, and what a client going away is', () => {
  /** `batched_analytics_requests_refused_total` for `source` and `reason`, 0 when absent. */
  async function refused(source: string, reason: string): Promise<number> {
    const text = await (await fetch(`${collector.url}/metrics`)).text();
    const line = text.split('\n').find((row) => row.startsWith(`batched_analytics_requests_refused_total{source="${source}",reason="${reason}"}`));
    return line === undefined ? 0 : Number(line.split(' ').at(-1));
  }

  it('counts a refusal under the source of the write key in the header, even before the body is read', async () => {
    const before = await refused('web', 'ERR_INVALID_JSON');
    expect((await postJson(`${collector.url}/v1/track`, '{"userId":', auth)).status).toBe(400);
    expect(await refused('web', 'ERR_INVALID_JSON')).toBe(before + 1);
  });

  // Phones drop off networks mid-request all day: that is not the collector failing.
  it('counts a client that goes away before its body ends as ERR_REQUEST_ABORTED, with no error line', async () => {
    const internal = await refused('web', 'ERR_INTERNAL');
    const aborted = await refused('web', 'ERR_REQUEST_ABORTED');
    const errorsBefore = collector.stderr().split('\n').filter((line) => line.includes('ERROR')).length;
    await exchange((socket) => {
      socket.write(`POST /v1/track HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth.authorization}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"userId":`);
      setTimeout(() => socket.destroy(), 100);
    });
    let counted = aborted;
    for (const deadline = Date.now() + 5_000; counted === aborted && Date.now() < deadline; counted = await refused('web', 'ERR_REQUEST_ABORTED')) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(counted).toBe(aborted + 1);
    expect(await refused('web', 'ERR_INTERNAL')).toBe(internal);
    expect(collector.stderr().split('\n').filter((line) => line.includes('ERROR'))).toHaveLength(errorsBefore);
  });
});

describe('the collector bounds slow clients and connections', () => {
  it('cuts a client that trickles its headers, after headersTimeout', async () => {
    const result = await exchange((socket) => {
      socket.write('POST /v1/track HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      const drip = setInterval(() => socket.writable && socket.write('X-Slow: a\r\n'), 200);
      socket.on('close', () => clearInterval(drip));
    });
    expect(result.text).toMatch(/^HTTP\/1\.1 408/);
    // 1 s timeout, checked every second: well before Node's default of 60 s.
    expect(result.closedAfter).toBeLessThan(5_000);
  });

  it('cuts a client that trickles its body, after requestTimeout', async () => {
    const result = await exchange((socket) => {
      socket.write(`POST /v1/track HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth.authorization}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`);
      const drip = setInterval(() => socket.writable && socket.write(' '), 200);
      socket.on('close', () => clearInterval(drip));
    });
    expect(result.text).toMatch(/^HTTP\/1\.1 408/);
    expect(result.closedAfter).toBeGreaterThan(1_500);
    expect(result.closedAfter).toBeLessThan(6_000);
  });

  it('closes connections past maxConnections at once, and takes new ones when some close', async () => {
    const held = await Promise.all(
      Array.from({ length: 8 }, () => new Promise<net.Socket>((resolve) => {
        const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
      })),
    );
    try {
      const extra = await exchange((socket) => socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'));
      expect(extra.text).toBe('');
    } finally {
      for (const socket of held) socket.destroy();
    }
    await expect.poll(async () => (await fetch(`${collector.url}/v1/nothing`)).status, { timeout: 5_000 }).toBe(404);
  });
});

describe('the live page and its stream', () => {
  const get = (path: string, host?: string) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path, headers: host === undefined ? {} : { host } }, (res) => {
        resolve({ status: res.statusCode!, headers: res.headers });
        res.destroy();
      });
      req.on('error', reject);
    });

  it.each(['/', '/events'])('sends a CSP, nosniff, no framing and no referrer on %s', async (path) => {
    const { status, headers } = await get(path);
    expect(status).toBe(200);
    expect(headers['content-security-policy']).toMatch(/default-src 'none'/);
    expect(headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['x-frame-options']).toBe('DENY');
    expect(headers['referrer-policy']).toBe('no-referrer');
  });

  it.each(['/', '/events', '/metrics'])('answers %s under its own loopback names and allowedHosts, and refuses other hosts with 403', async (path) => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'collector.internal', 'collector.internal:443', 'a.dev.example', 'dev.example:8080']) {
      expect([host, (await get(path, host)).status]).toEqual([host, 200]);
    }
    for (const host of ['attacker.example', `attacker.example:${port}`, 'localhost', `localhost:${port + 1}`, 'collector.internal.attacker.example', 'xdev.example']) {
      expect([host, (await get(path, host)).status]).toEqual([host, 403]);
    }
  });

  it('tells a browser at a host not in allowedHosts to add it there, in a page; API clients get the JSON error', async () => {
    const read = (headers: http.OutgoingHttpHeaders) =>
      new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
        http.get({ host: '127.0.0.1', port, path: '/', headers }, (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, type: String(res.headers['content-type']), body }));
        }).on('error', reject);
      });
    const host = `192.0.2.7:${port}`;
    const browser = await read({ host, accept: 'text/html,application/xhtml+xml,*/*;q=0.8' });
    expect(browser).toMatchObject({ status: 403, type: 'text/html; charset=utf-8' });
    expect(browser.body).toContain(`<code>192.0.2.7</code> to <code>allowedHosts</code>`);
    // The Host header is the client's: shown escaped.
    const hostile = await read({ host: '<script>x</script>.example', accept: 'text/html' });
    expect(hostile.body).not.toContain('<script>x');
    expect(hostile.body).toContain('&lt;script&gt;x&lt;/script&gt;.example');
    const api = await read({ host, accept: 'application/json' });
    expect(api.status).toBe(403);
    expect(JSON.parse(api.body)).toMatchObject({ code: 'ERR_HOST', error: expect.stringContaining('allowedHosts') });
  });

  it('keeps the ingestion API open under any Host: clients authenticate with their write key', async () => {
    const res = await postJson(`${collector.url}/v1/track`, { userId: 'u', event: 'Any host' }, { ...auth, host: 'api.example' });
    expect(res.status).toBe(200);
  });
});
