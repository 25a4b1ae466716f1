import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';

/** A loopback forward proxy, as a corporate network has one. */
export interface ForwardProxy {
  url: string;
  /** `host:port` of each CONNECT tunnel asked for (https targets). */
  tunnels: string[];
  /** The absolute-form target of each plain request forwarded (http targets). */
  forwarded: string[];
  /**
   * Local ports of the proxy's own sockets towards targets: a receiver that sees a request come
   * from one of them got it through the proxy.
   */
  upstreamPorts: Set<number>;
  close: () => Promise<void>;
}

/** Starts a forward proxy on 127.0.0.1: CONNECT tunnels for https targets, absolute-form requests for http ones. */
export async function startForwardProxy(): Promise<ForwardProxy> {
  const tunnels: string[] = [];
  const forwarded: string[] = [];
  const upstreamPorts = new Set<number>();
  const server = http.createServer((req, res) => {
    forwarded.push(req.url!);
    const target = new URL(req.url!);
    const upstream = http.request(
      { host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: req.method, headers: req.headers, agent: false },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('socket', (socket) => socket.once('connect', () => upstreamPorts.add(socket.localPort!)));
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    tunnels.push(req.url!);
    const [host, port] = req.url!.split(':');
    const upstream = net.connect(Number(port), host, () => {
      upstreamPorts.add(upstream.localPort!);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client).pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const sockets = new Set<net.Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    tunnels,
    forwarded,
    upstreamPorts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
