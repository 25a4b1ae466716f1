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
