import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A message as the sink received it. */
export type Received = Record<string, unknown> & { messageId: string; type: string };

/** Chooses the status of a request from its batch and its index (from 0); 200 by default. */
export type StatusFor = (batch: Received[], index: number) => number;

export interface SinkOptions {
  /** Answer each request this many ms after it arrived (a slow endpoint). */
  delay?: number;
  status?: StatusFor;
  /** Keep only `type` and `messageId` of each message (big imports). */
  idsOnly?: boolean;
}

/**
 * A collection endpoint on a real loopback socket: records every message it accepts, counts the
 * requests it is answering at once, and can hold answers back until the test releases them.
 */
export interface Sink {
  /** The endpoint to give the client (it appends `/v1/batch`). */
  url: string;
  /** Messages of requests answered 2xx, in order of arrival. */
  messages: Received[];
  /** Requests received, whatever their answer. */
  requests: () => number;
  /** Requests received but not yet answered. */
  inFlight: () => number;
  /** The largest `inFlight()` seen. */
  peakInFlight: () => number;
  /** Messages answered so far (any status): what the client can have settled. */
  answered: () => number;
  /** Holds answers back until `release()`. */
  hold: () => void;
  /** Answers everything held and stops holding. */
  release: () => void;
  /** Resolves once `predicate` holds, checked whenever a request arrives or is answered. */
  until: (predicate: () => boolean) => Promise<void>;
  close: () => Promise<void>;
}

export async function startSink(options: SinkOptions = {}): Promise<Sink> {
  const messages: Received[] = [];
  let requests = 0;
  let inFlight = 0;
  let peakInFlight = 0;
  let answered = 0;
  let held: (() => void)[] | undefined;
  let watchers: { predicate: () => boolean; resolve: () => void }[] = [];
  const check = (): void => {
    watchers = watchers.filter((watcher) => {
      if (!watcher.predicate()) return true;
      watcher.resolve();
      return false;
    });
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const batch = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { batch: Received[] }).batch;
      const index = requests;
      requests += 1;
      inFlight += 1;
      peakInFlight = Math.max(peakInFlight, inFlight);
      const answer = (): void => {
        const status = options.status?.(batch, index) ?? 200;
        if (status >= 200 && status < 300) {
          for (const { type, messageId, ...rest } of batch) messages.push(options.idsOnly ? { type, messageId } : { type, messageId, ...rest });
        }
        inFlight -= 1;
        answered += batch.length;
        res.writeHead(status, { 'content-type': 'application/json' }).end(status < 300 ? '{"success":true}' : '{"error":"refused"}');
        check();
      };
      const send = options.delay === undefined ? answer : () => setTimeout(answer, options.delay);
      if (held) held.push(send);
      else send();
      check();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    messages,
    requests: () => requests,
    inFlight: () => inFlight,
    peakInFlight: () => peakInFlight,
    answered: () => answered,
    hold: () => {
      held ??= [];
    },
    release: () => {
      const waiting = held ?? [];
      held = undefined;
      for (const send of waiting) send();
    },
    until: (predicate) =>
      predicate() ? Promise.resolve() : new Promise<void>((resolve) => watchers.push({ predicate, resolve })),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** How many times each messageId arrived; ids seen more than once are duplicates. */
export function countIds(messages: readonly Received[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const message of messages) counts.set(message.messageId, (counts.get(message.messageId) ?? 0) + 1);
  return counts;
}
