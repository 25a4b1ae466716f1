import type { Client } from 'pg';
import type { Reporter } from '../../config/report.js';

/** Waits before connecting again after the listening connection broke, in ms; doubles up to the cap. */
const RECONNECT = { first: 250, most: 10_000 } as const;

/**
 * Keeps one connection `LISTEN`ing on a channel and calls `onNotify` for each notification, and
 * once each time it starts listening (what was notified while it was not is then looked for). The
 * connection is its own, not the pool's: a pooled one is handed to other queries between uses. When
 * it breaks (a server restart, a network cut) it is opened again with growing waits; meanwhile the
 * caller's polling still finds what was notified, only later. Both are reported to `report`
 * (`describe` puts the failure in words).
 */
export class ChannelListener {
  readonly #connect: () => Client;
  readonly #channel: string;
  readonly #onNotify: () => void;
  readonly #describe: (error: unknown) => string;
  readonly #report: Reporter;
  #client: Client | undefined;
  #retry: NodeJS.Timeout | undefined;
  #wait: number = RECONNECT.first;
  #stopped = false;

  constructor(connect: () => Client, channel: string, onNotify: () => void, describe: (error: unknown) => string, report: Reporter) {
    this.#connect = connect;
    this.#channel = channel;
    this.#onNotify = onNotify;
    this.#describe = describe;
    this.#report = report;
  }

  /** Connects and listens. @throws when the first connection fails. */
  async start(): Promise<void> {
    const client = this.#connect();
    client.on('notification', () => this.#onNotify());
    client.on('error', (error) => {
      this.#report.warn('collector: the PostgreSQL connection listening on %s was lost: %s', this.#channel, this.#describe(error));
      this.#reconnectLater(client);
    });
    client.on('end', () => this.#reconnectLater(client));
    this.#client = client;
    await client.connect();
    await client.query(`LISTEN ${this.#channel}`);
    this.#wait = RECONNECT.first;
    this.#onNotify();
  }

  /** Stops listening and closes the connection. Idempotent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retry);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }

  #reconnectLater(broken: Client): void {
    if (this.#stopped || this.#client !== broken || this.#retry !== undefined) return;
    this.#client = undefined;
    void broken.end().catch(() => undefined);
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.start().catch((error: unknown) => {
        this.#report.warn('collector: could not listen on %s again (polling finds the work meanwhile): %s', this.#channel, this.#describe(error));
        this.#wait = Math.min(RECONNECT.most, this.#wait * 2);
        this.#reconnectLater(this.#client!);
      });
    }, this.#wait).unref();
  }
}
