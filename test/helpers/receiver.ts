import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

/** A request a loopback receiver got, with its body exactly as it arrived. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  raw: Buffer;
  /** The port the request came from (a proxy's, when it went through one). */
  remotePort: number;
}

/** Answers the receiver's n-th request (from 0); may never answer, to provoke a timeout. */
export type Reply = (request: ReceivedRequest, res: ServerResponse, n: number) => void;

/** A real receiver on 127.0.0.1. */
export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** Resolves with the n-th request (from 1) once it has arrived. */
  nth(n: number): Promise<ReceivedRequest>;
  close(): Promise<void>;
}

/** Answers every request with `status` and an empty JSON object. */
export const status =
  (code: number, headers: Record<string, string> = {}): Reply =>
  (_request, res) => {
    res.writeHead(code, { 'content-type': 'application/json', ...headers }).end('{}');
  };

/** Answers with the statuses in turn, repeating the last: `sequence(503, 200)`. */
export const sequence =
  (...codes: number[]): Reply =>
  (request, res, n) =>
    status(codes[Math.min(n, codes.length - 1)]!)(request, res, n);

/** Starts a receiver on an ephemeral loopback port; over TLS when given a certificate. */
export async function startReceiver(reply: Reply = status(200), tls?: { cert: string; key: string }): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const waiters: { n: number; resolve: (request: ReceivedRequest) => void }[] = [];
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, raw: Buffer.concat(chunks), remotePort: req.socket.remotePort! };
      requests.push(request);
      for (const waiter of waiters.filter((w) => w.n === requests.length)) waiter.resolve(request);
      reply(request, res, requests.length - 1);
    });
  };
  const server: Server = tls ? createHttpsServer(tls, handler) : createHttpServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}/hook`,
    requests,
    nth: (n) => (requests.length >= n ? Promise.resolve(requests[n - 1]!) : new Promise((resolve) => waiters.push({ n, resolve }))),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * For a test file whose tests start receivers: returns a function that starts one, and closes
 * every one a test started after that test.
 */
export function useReceivers(): (reply?: Reply) => Promise<Receiver> {
  const started: Receiver[] = [];
  afterEach(() => Promise.all(started.splice(0).map((receiver) => receiver.close())));
  return async (reply) => {
    const receiver = await startReceiver(reply);
    started.push(receiver);
    return receiver;
  };
}
