import { afterEach, describe, expect, it } from 'vitest';
import { HttpError, NetworkError, TimeoutError } from '../../src/core/errors.js';
import { openConnection } from '../../src/http/open-connection.js';
import { post } from '../../src/http/transport.js';
import { waitFor } from '../../../../test/helpers/collector.js';
import { type Flood, startFlood } from '../../../../test/helpers/flood.js';
import { type Loopback, startLoopback } from '../../../../test/helpers/loopback.js';

// Both ways a request leaves the process: undici on Node, fetch elsewhere (here Node's own).
const CONNECTIONS = {
  undici: () => openConnection({ connections: 4 }),
  fetch: () => openConnection({ connections: 4, fetch: (url, init) => globalThis.fetch(url, init) }),
};

describe.each(Object.entries(CONNECTIONS))('post over a real socket, through %s', (_kind, open) => {
  let server: Loopback | undefined;
  let connection = open();
  afterEach(async () => {
    await connection.close(true);
    connection = open();
    await server?.close();
    server = undefined;
  });

  const request = (url: string, timeout = 2_000) => ({
    url,
    body: '{"a":1}',
    headers: { 'content-type': 'application/json' },
    timeout,
    connection,
  });

  it('resolves with a 2xx status after sending the exact body and headers', async () => {
    server = await startLoopback((_, res) => {
      res.statusCode = 202;
      res.end();
    });
    expect(await post(request(`${server.url}/in`))).toBe(202);
    expect(server.requests[0]).toMatchObject({ method: 'POST', url: '/in', body: '{"a":1}', headers: { 'content-type': 'application/json' } });
  });

  it('maps an error status to HttpError with the body message and Retry-After', async () => {
    server = await startLoopback((_, res) => {
      res.writeHead(503, { 'retry-after': '7', 'content-type': 'application/json' });
      res.end('{"message":"overloaded"}');
    });
    const error = await post(request(server.url)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ status: 503, body: 'overloaded', retryAfter: 7_000, retryable: true });
  });

  it('keeps the start of a non-JSON error body', async () => {
    server = await startLoopback((_, res) => {
      res.statusCode = 400;
      res.end(`bad request ${'!'.repeat(2_000)}`);
    });
    const error = (await post(request(server.url)).catch((e: unknown) => e)) as HttpError;
    expect(error.retryable).toBe(false);
    expect(error.body.startsWith('bad request !!!')).toBe(true);
    expect(error.body.length).toBe(500);
  });

  it('times out when no response comes', async () => {
    server = await startLoopback(() => {});
    const error = await post(request(server.url, 100)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ code: 'ERR_TIMEOUT', timeout: 100, retryable: true });
  });

  it('reports a refused connection as a retryable NetworkError naming the cause', async () => {
    server = await startLoopback();
    const url = server.url;
    await server.close();
    server = undefined;
    const error = await post(request(url)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).message).toMatch(/ECONNREFUSED/);
    expect((error as NetworkError).retryable).toBe(true);
  });

  it('aborts with the caller signal reason', async () => {
    server = await startLoopback(() => {});
    const controller = new AbortController();
    const pending = post({ ...request(server.url), signal: controller.signal }).catch((e: unknown) => e);
    setTimeout(() => controller.abort(new Error('closing')), 20);
    expect(await pending).toMatchObject({ message: 'closing' });
  });

  it('sends nothing when the caller signal is already aborted', async () => {
    server = await startLoopback();
    const signal = AbortSignal.abort(new Error('closed before'));
    expect(await post({ ...request(server.url), signal }).catch((e: unknown) => e)).toMatchObject({ message: 'closed before' });
    expect(server.requests).toHaveLength(0);
  });

  it('stops reading an error body still arriving at the deadline, and reports the status with what came', async () => {
    server = await startLoopback((_, res) => {
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.write('trickle'); // and never ends
    });
    const error = await post(request(server.url, 150)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ status: 400, body: 'trickle', retryable: false });
  });

  describe('a receiver that answers a huge or endless body', () => {
    let flood: Flood | undefined;
    afterEach(async () => {
      await flood?.close();
      flood = undefined;
    });

    /** Waits until the client closed the receiver's connection mid-body. */
    const cutOff = () => waitFor(() => flood!.cut() === 1, 'the client to close the connection');

    it('reports a 500 with a 200 MB body as HttpError 500 with the body start, reading a bounded part of it', async () => {
      flood = await startFlood({ status: 500, start: 'receiver exploded: ', bytes: 200 * 1024 * 1024 });
      const error = await post(request(flood.url, 10_000)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HttpError);
      expect(error).toMatchObject({ status: 500, retryable: true });
      expect((error as HttpError).body).toMatch(/^receiver exploded: x{400}/);
      await cutOff();
      // What the kernel's socket buffers took besides the limit: far from 200 MB.
      expect(flood.written()).toBeLessThan(16 * 1024 * 1024);
    });

    it('reports a 500 with an endless body at once, and closes that connection', async () => {
      flood = await startFlood({ status: 500, start: '{"message":"down"', bytes: 'endless' });
      const started = performance.now();
      const error = await post(request(flood.url, 10_000)).catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 500, retryable: true });
      expect((error as HttpError).body.startsWith('{"message":"down"xxx')).toBe(true);
      expect(performance.now() - started).toBeLessThan(5_000);
      await cutOff();
    });

    it('counts a 200 with an endless body as delivered, and closes that connection', async () => {
      flood = await startFlood({ status: 200, start: '{"ok":true', bytes: 'endless' });
      expect(await post(request(flood.url, 10_000))).toBe(200);
      await cutOff();
      expect(flood.written()).toBeLessThan(16 * 1024 * 1024);
    });

    it('counts a 200 whose body trickles forever as delivered at its status, and the timeout ends the reading', async () => {
      flood = await startFlood({ status: 200, start: '{"ok":true', bytes: 'endless', trickle: 20 });
      expect(await post(request(flood.url, 300))).toBe(200);
      // Resolved before the timeout ended the body: the connection is still open.
      expect(flood.cut()).toBe(0);
      await cutOff();
    });

    it('reads a short body whole and keeps the connection for the next request', async () => {
      flood = await startFlood({ status: 500, start: 'short', bytes: 5 });
      for (let i = 0; i < 3; i += 1) expect(await post(request(flood.url)).catch((e: unknown) => e)).toMatchObject({ status: 500, body: 'short' });
      expect(flood.cut()).toBe(0);
    });
  });
});
