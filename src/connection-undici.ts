import { Agent, type Dispatcher, request } from 'undici';
import type { Connection, ConnectionOptions, Outgoing, RawResponse } from './connection.js';

/** Node's fast path: undici's `request` (about 3x less CPU per request than fetch) over a keep-alive agent. */
export class UndiciConnection implements Connection {
  /** Its own agent; absent when the user supplied a dispatcher, which it never closes. */
  readonly #agent: Agent | undefined;
  readonly #dispatcher: Dispatcher;

  constructor({ connections, dispatcher, strictTls }: ConnectionOptions) {
    this.#agent = dispatcher
      ? undefined
      : new Agent({ connections, keepAliveTimeout: 4_000, ...(strictTls ? { connect: { rejectUnauthorized: true } } : {}) });
    this.#dispatcher = dispatcher ?? this.#agent!;
  }

  async send({ url, body, headers, signal }: Outgoing): Promise<RawResponse> {
    const res = await request(url, { method: 'POST', headers, body, signal, dispatcher: this.#dispatcher });
    const retryAfter = res.headers['retry-after'];
    return {
      status: res.statusCode,
      retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
      text: () => res.body.text(),
      discard: () => res.body.dump(),
    };
  }

  async close(force?: boolean): Promise<void> {
    if (this.#agent) await (force ? this.#agent.destroy() : this.#agent.close());
  }
}
