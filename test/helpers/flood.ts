import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** How a flooding receiver answers every request. */
export interface FloodReply {
  status: number;
  /** The body's first bytes; the rest is filler (`x`). */
  start: string;
  /** Total body bytes, sent with `Content-Length`; `endless`: chunked, never ended. */
  bytes: number | 'endless';
  /** Writes 100 bytes every this many ms instead of 64 KiB chunks as fast as the reader takes them. */
  trickle?: number;
}

/** A receiver that answers huge or endless bodies, streamed (it never holds more than one chunk). */
export interface Flood {
  url: string;
  /** Requests whose body arrived. */
  requests: () => number;
  /** Body bytes the receiver managed to write, all requests together. */
  written: () => number;
  /** Connections the client closed (or reset) before the body was complete. */
  cut: () => number;
  close: () => Promise<void>;
}

const CHUNK = Buffer.alloc(64 * 1024, 'x');
const DROP = CHUNK.subarray(0, 100);

/** Starts a flooding receiver on 127.0.0.1 and a free port. */
export async function startFlood(reply: FloodReply): Promise<Flood> {
  let requests = 0;
  let written = 0;
  let cut = 0;
  const server = http.createServer((req, res) => {
    req.resume().on('end', () => {
      requests += 1;
      const length = reply.bytes === 'endless' ? {} : { 'content-length': String(reply.bytes) };
      res.writeHead(reply.status, { 'content-type': 'text/plain', ...length });
      let left = reply.bytes === 'endless' ? Infinity : reply.bytes;
      let done = false;
      res.on('close', () => {
        if (!done) cut += 1;
        done = true;
      });
      const send = (chunk: Buffer): boolean => {
        const part = chunk.subarray(0, Math.min(chunk.length, left));
        left -= part.length;
        written += part.length;
        return res.write(part);
      };
      const pump = (): void => {
        while (!done && left > 0) {
          if (reply.trickle) {
            send(DROP);
            return void setTimeout(pump, reply.trickle);
          }
          if (!send(CHUNK)) return void res.once('drain', pump);
        }
        if (!done) {
          done = true;
          res.end();
        }
      };
      send(Buffer.from(reply.start));
      pump();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    written: () => written,
    cut: () => cut,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
