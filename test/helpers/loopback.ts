import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** A request a loopback server received, body already read. */
export interface LoopbackRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Which TCP connection carried it, numbered from 0. */
  connection: number;
}

type Handler = (request: LoopbackRequest, response: http.ServerResponse) => void;

export interface Loopback {
  url: string;
  requests: LoopbackRequest[];
  connections: () => number;
  close: () => Promise<void>;
}

/** A real HTTP server on 127.0.0.1 and a free port; answers 200 `{"success":true}` unless told otherwise. */
export async function startLoopback(handler: Handler = (_, res) => res.end('{"success":true}')): Promise<Loopback> {
  const requests: LoopbackRequest[] = [];
  const sockets = new WeakMap<object, number>();
  let connections = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const body = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
      const request = { method: req.method!, url: req.url!, headers: req.headers, body, connection: sockets.get(req.socket)! };
      requests.push(request);
      handler(request, res);
    });
  });
  server.on('connection', (socket) => sockets.set(socket, connections++));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A {@link Loopback} that tells webhook deliveries apart by their `messageId`. */
export interface WebhookReceiver extends Loopback {
  /** Requests per messageId. */
  attempts: Map<string, number>;
  /** When each message was first answered 200, by messageId. */
  delivered: Map<string, number>;
}

/** A webhook receiver that answers 503 to the messages `refuses` names (asked on each request) and 200 to the others. */
export async function startWebhookReceiver(refuses: (messageId: string) => boolean): Promise<WebhookReceiver> {
  const attempts = new Map<string, number>();
  const delivered = new Map<string, number>();
  const loopback = await startLoopback((req, res) => {
    const { messageId } = JSON.parse(req.body) as { messageId: string };
    attempts.set(messageId, (attempts.get(messageId) ?? 0) + 1);
    if (refuses(messageId)) return void res.writeHead(503).end();
    if (!delivered.has(messageId)) delivered.set(messageId, Date.now());
    res.writeHead(200).end();
  });
  return { ...loopback, attempts, delivered };
}
