import type { Dispatcher } from 'undici';
import type { Connection, Outgoing, RawResponse } from './connection.js';
import type { FetchLike } from './connection.js';

/** Sends with a fetch-compatible function: the runtime's own outside Node, or the user's. */
export class FetchConnection implements Connection {
  readonly #fetch: FetchLike;
  readonly #dispatcher: Dispatcher | undefined;

  /** @param dispatcher passed on in `init`, for a user's fetch that routes through undici. */
  constructor(fetch: FetchLike, dispatcher?: Dispatcher) {
    this.#fetch = fetch;
    this.#dispatcher = dispatcher;
  }

  async send({ url, body, headers, abort }: Outgoing): Promise<RawResponse> {
    // fetch takes only an AbortSignal; it stays linked while the response is read.
    const controller = new AbortController();
    if (abort.aborted) controller.abort(abort.reason);
    else abort.once('abort', () => controller.abort(abort.reason));
    const { signal } = controller;
    const res = await this.#fetch(url, { method: 'POST', headers, body: body as BodyInit, signal, dispatcher: this.#dispatcher });
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      text: () => res.text(),
      discard: async () => {
        await res.arrayBuffer();
      },
    };
  }

  async close(): Promise<void> {
    // fetch owns its sockets: nothing of ours to release.
  }
}
